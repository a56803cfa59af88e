/*
 * section_live_candidates.c — one section of a run's live page (live.h, `avo serve`):
 * every candidate of the run, newest first (the latest AVO_VIEW_CANDIDATES_N).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/live.h"
#include "cli/view/view.h"

/* Every candidate, newest first (the latest AVO_VIEW_CANDIDATES_N). */
void avo_view_live_candidates(avo_strbuf *out, const avo_report_run *r)
{
    size_t n = json_array_size(r->cands);
    avo_strbuf_printf(out,
                      "<h2 id=\"candidates\">Candidates (<span class=\"n-candidates\">%zu"
                      "</span>)</h2>\n",
                      n);
    if (!n) {
        avo_strbuf_puts(out, "<p class=\"muted\">none yet</p>\n");
        return;
    }
    if (n > AVO_VIEW_CANDIDATES_N)
        avo_strbuf_printf(out, "<p class=\"muted\">the latest %d</p>\n", AVO_VIEW_CANDIDATES_N);
    avo_strbuf_puts(out, "<table class=\"cands\"><tr><th>candidate</th><th>gen</th>"
                         "<th>operator</th><th>status</th><th>score</th><th>reason</th>"
                         "<th>evaluated</th></tr>\n");
    for (size_t i = n, shown = 0; i-- > 0 && shown < AVO_VIEW_CANDIDATES_N; shown++) {
        const json_t *c = json_array_get(r->cands, i);
        const char *status = avo_view_str(c, "status");
        avo_strbuf_printf(out, "<tr data-cand=\"%lld\" class=\"%s\"><td>", avo_view_int(c, "id"),
                          !strcmp(status, "pending") ? "pending"
                          : strcmp(status, "ok")     ? "failed"
                                                     : "ok");
        avo_report_candidate_ref(out, r, avo_view_int(c, "id"));
        avo_strbuf_printf(out, "</td><td class=\"num\">%lld</td><td>",
                          avo_view_int(c, "generation"));
        avo_strbuf_html(out, avo_view_str(c, "operator"));
        avo_strbuf_puts(out, "</td><td>");
        avo_strbuf_html(out, status);
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        if (strcmp(status, "pending") != 0)
            avo_view_number(out, avo_view_num(c, "score"));
        avo_strbuf_puts(out, "</td><td>");
        avo_view_cut(out, avo_view_str(c, "reason"), 200);
        avo_strbuf_puts(out, "</td><td>");
        avo_view_time(out, avo_view_num(c, "evaluated_at"));
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
}
