/*
 * section_experiment_excluded.c — the cells of an experiment's report
 * (experiment.h) that are not in its statistics: failed, unfinished or
 * missing, each with its reason; and, when cells are missing or
 * unfinished, how to finish the experiment.
 */
#include <string.h>

#include "cli/view/experiment.h"
#include "cli/view/view.h"

void avo_view_experiment_section_excluded(avo_strbuf *out, const json_t *document)
{
    const json_t *counts = json_object_get(document, "counts");
    const json_t *cells = json_object_get(document, "cells");
    long long incomplete = avo_view_int(counts, "missing") + avo_view_int(counts, "unfinished");
    if (incomplete <= 0 && avo_view_int(counts, "failed") <= 0)
        return;
    avo_strbuf_puts(out, "<h2>Cells not in the statistics</h2>");
    if (incomplete > 0) {
        const char *path =
            json_string_value(json_object_get(json_object_get(document, "experiment"), "path"));
        avo_strbuf_printf(out,
                          "<p class=\"bad\">The experiment is incomplete: %lld of %zu cells are "
                          "missing or unfinished; re-run <code>avo experiment ",
                          incomplete, json_array_size(cells));
        avo_strbuf_html(out, path ? path : "FILE.lua");
        avo_strbuf_puts(out, "</code> to finish it.</p>");
    }
    avo_strbuf_puts(out, "<table><tr><th class=l>cell</th><th class=l>state</th><th>run</th>"
                         "<th class=l>reason</th></tr>");
    size_t i;
    const json_t *c;
    json_array_foreach(cells, i, c)
    {
        if (strcmp(avo_view_str(c, "state"), "finished") == 0)
            continue;
        avo_strbuf_puts(out, "<tr><td class=l>");
        avo_strbuf_html(out, avo_view_str(c, "key"));
        avo_strbuf_puts(out, "</td><td class='l bad'>");
        avo_strbuf_html(out, avo_view_str(c, "state"));
        avo_strbuf_puts(out, "</td><td>");
        avo_view_experiment_run(out, c);
        avo_strbuf_puts(out, "</td><td class=l>");
        avo_strbuf_html(out, avo_view_str(c, "reason"));
        avo_strbuf_puts(out, "</td></tr>");
    }
    avo_strbuf_puts(out, "</table>");
}
