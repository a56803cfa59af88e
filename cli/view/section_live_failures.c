/*
 * section_live_failures.c — one section of a run's live page (live.h, `avo serve`):
 * the latest failed evaluations with their reasons, failed LLM calls and log lines.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/live.h"
#include "cli/view/view.h"

/* The latest failed evaluations with their reasons, failed LLM calls and
 * log lines. */
void avo_view_live_failures(avo_strbuf *out, const avo_report_run *r, const json_t *logs)
{
    avo_strbuf_puts(out, "<div><h3 id=\"failures\">Recent failures</h3>\n");
    size_t shown = 0;
    for (size_t i = json_array_size(r->cands); i-- > 0 && shown < AVO_VIEW_RECENT_N;) {
        const json_t *c = json_array_get(r->cands, i);
        const char *status = avo_view_str(c, "status");
        if (!strcmp(status, "ok") || !strcmp(status, "pending"))
            continue;
        if (!shown++)
            avo_strbuf_puts(out, "<table><tr><th>candidate</th><th>operator</th><th>status</th>"
                                 "<th>reason</th></tr>\n");
        avo_strbuf_printf(out, "<tr class=\"failed\" data-failed=\"%lld\"><td>",
                          avo_view_int(c, "id"));
        avo_report_candidate_ref(out, r, avo_view_int(c, "id"));
        avo_strbuf_puts(out, "</td><td>");
        avo_strbuf_html(out, avo_view_str(c, "operator"));
        avo_strbuf_puts(out, "</td><td>");
        avo_strbuf_html(out, status);
        avo_strbuf_puts(out, "</td><td>");
        avo_view_cut(out, avo_view_str(c, "reason"), 400);
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    if (shown)
        avo_strbuf_puts(out, "</table>\n");
    else
        avo_strbuf_puts(out, "<p class=\"muted\">no failed evaluation</p>\n");
    shown = 0;
    for (size_t i = json_array_size(r->calls); i-- > 0 && shown < AVO_VIEW_RECENT_N;) {
        const json_t *c = json_array_get(r->calls, i);
        if (!strcmp(avo_view_str(c, "status"), "ok"))
            continue;
        if (!shown++)
            avo_strbuf_puts(out, "<table><tr><th>failed LLM call</th><th>error</th></tr>\n");
        avo_strbuf_puts(out, "<tr class=\"failed\"><td>");
        avo_strbuf_html(out, avo_view_str(c, "model"));
        avo_strbuf_puts(out, "</td><td>");
        avo_view_cut(out, avo_view_str(c, "error"), 400);
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    if (shown)
        avo_strbuf_puts(out, "</table>\n");
    size_t n = json_array_size(logs);
    if (n) {
        avo_strbuf_puts(out, "<details id=\"recent-log\" open=\"open\"><summary>latest log lines"
                             "</summary><pre class=\"log\">");
        for (size_t i = n > 20 ? n - 20 : 0; i < n; i++) {
            const json_t *e = json_array_get(logs, i);
            avo_view_cut(out, avo_view_str(json_object_get(e, "data"), "message"), 600);
            avo_strbuf_puts(out, "\n");
        }
        avo_strbuf_puts(out, "</pre></details>\n");
    }
    avo_strbuf_puts(out, "</div>\n");
}
