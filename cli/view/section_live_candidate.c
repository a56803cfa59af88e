/*
 * section_live_candidate.c — a candidate's live page (live.h, `avo serve`):
 * the report's candidate section in full (source, diffs to every parent,
 * per-config results, log), the worker's result and the children.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/live.h"
#include "cli/view/view.h"
#include "core/avo.h"

void avo_view_live_candidate(avo_strbuf *out, const avo_report_run *r, const json_t *c)
{
    char err[AVO_ERRLEN];
    int rc = avo_report_candidate(out, r, c, 1, err, sizeof err);
    if (rc < 0) {
        avo_strbuf_puts(out, "<p class=\"status-failed\">");
        avo_strbuf_html(out, err);
        avo_strbuf_puts(out, "</p>\n");
    }
    const json_t *result = json_object_get(c, "result");
    if (result) {
        char *text = json_dumps(result, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        avo_strbuf_puts(out, "<details id=\"result\"><summary>the worker's result</summary><pre>");
        avo_strbuf_html(out, text ? text : "");
        avo_strbuf_puts(out, "</pre></details>\n");
        free(text);
    }
    const json_t *children = json_object_get(c, "children");
    if (json_array_size(children)) {
        avo_strbuf_puts(out, "<p>children: ");
        size_t i;
        const json_t *ch;
        json_array_foreach(children, i, ch)
        {
            if (i)
                avo_strbuf_puts(out, " ");
            avo_report_candidate_ref(out, r, (long long)json_integer_value(ch));
        }
        avo_strbuf_puts(out, "</p>\n");
    }
}
