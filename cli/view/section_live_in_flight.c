/*
 * section_live_in_flight.c — one section of a run's live page (live.h, `avo serve`):
 * the candidates waiting for (or in) evaluation, with how long they have waited.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/live.h"
#include "cli/view/view.h"

/* The candidates waiting for (or in) evaluation. */
void avo_view_live_in_flight(avo_strbuf *out, const avo_report_run *r)
{
    size_t i, n = 0;
    const json_t *c;
    double now = avo_now();
    json_array_foreach(r->cands, i, c) n += !strcmp(avo_view_str(c, "status"), "pending");
    avo_strbuf_printf(out,
                      "<div><h3 id=\"in-flight\">In flight (<span class=\"n-pending\">%zu"
                      "</span>)</h3>\n",
                      n);
    if (!n) {
        avo_strbuf_puts(out, "<p class=\"muted\">no candidate being evaluated</p></div>\n");
        return;
    }
    avo_strbuf_puts(out, "<table><tr><th>candidate</th><th>operator</th><th>gen</th>"
                         "<th>parents</th><th>waiting</th></tr>\n");
    json_array_foreach(r->cands, i, c)
    {
        if (strcmp(avo_view_str(c, "status"), "pending") != 0)
            continue;
        avo_strbuf_printf(out, "<tr class=\"pending\" data-pending=\"%lld\"><td>",
                          avo_view_int(c, "id"));
        avo_report_candidate_ref(out, r, avo_view_int(c, "id"));
        avo_strbuf_puts(out, "</td><td>");
        avo_strbuf_html(out, avo_view_str(c, "operator"));
        avo_strbuf_printf(out, "</td><td class=\"num\">%lld</td><td>",
                          avo_view_int(c, "generation"));
        size_t j;
        const json_t *pa;
        json_array_foreach(json_object_get(c, "parents"), j, pa)
        {
            if (j)
                avo_strbuf_puts(out, " ");
            avo_report_candidate_ref(out, r, avo_view_int(pa, "id"));
        }
        double age = now - avo_view_num(c, "created_at");
        avo_strbuf_printf(out, "</td><td class=\"num\">%.0f s</td></tr>\n",
                          isfinite(age) ? age : 0);
    }
    avo_strbuf_puts(out, "</table></div>\n");
}
