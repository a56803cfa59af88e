/*
 * section_live_experiment.c — an experiment's live page (live.h, `avo
 * serve`): its file, how many cells were planned and recorded, and each
 * cell with its run and how it ended.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/live.h"
#include "cli/view/view.h"

int avo_view_live_experiment(avo_strbuf *out, size_t k, const json_t *experiment,
                             const json_t *cells)
{
    size_t i;
    const json_t *x;
    avo_strbuf_puts(out, "<p>file ");
    avo_strbuf_html(out, avo_view_str(experiment, "path"));
    avo_strbuf_puts(out, ", created ");
    avo_view_time(out, avo_view_num(experiment, "created_at"));
    const json_t *plan = json_object_get(experiment, "plan");
    const json_t *planned = json_is_array(plan) ? plan : json_object_get(plan, "cells");
    /* Open while a cell runs or a planned one has not started. */
    int open = json_is_array(planned) && json_array_size(planned) > json_array_size(cells);
    json_array_foreach(cells, i, x) open |= !strcmp(avo_view_str(x, "status"), "running");
    if (json_is_array(planned))
        avo_strbuf_printf(out, "; %zu cells planned, %zu recorded", json_array_size(planned),
                          json_array_size(cells));
    avo_strbuf_puts(out, "</p>\n<table><tr><th>cell</th><th>status</th><th>run</th>"
                         "<th>reason</th><th>exit</th><th>updated</th></tr>\n");
    json_array_foreach(cells, i, x)
    {
        avo_strbuf_puts(out, "<tr><td>");
        avo_strbuf_html(out, avo_view_str(x, "cell"));
        avo_strbuf_printf(out, "</td><td class=\"%s\">",
                          avo_view_status_class(avo_view_str(x, "status")));
        avo_strbuf_html(out, avo_view_str(x, "status"));
        avo_strbuf_puts(out, "</td><td>");
        if (json_is_integer(json_object_get(x, "run_id")))
            avo_strbuf_printf(out, "<a href=\"/a/%zu/run/%lld\">run %lld</a>", k,
                              avo_view_int(x, "run_id"), avo_view_int(x, "run_id"));
        avo_strbuf_puts(out, "</td><td>");
        avo_view_cut(out, avo_view_str(x, "reason"), 400);
        avo_strbuf_puts(out, "</td><td>");
        if (json_is_integer(json_object_get(x, "exit_code")))
            avo_strbuf_printf(out, "%lld", avo_view_int(x, "exit_code"));
        avo_strbuf_puts(out, "</td><td>");
        avo_view_time(out, avo_view_num(x, "updated_at"));
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
    return open;
}
