/*
 * section_experiment_cells.c — every cell of an experiment's report
 * (experiment.h): its state, run, evaluations, best score (as recorded and
 * re-timed) and seconds.
 */
#include <math.h>

#include "cli/view/experiment.h"
#include "cli/view/view.h"

/* "2.76 (#3, 1.02x seed)": a run's re-timed #1, "-" when it re-timed nothing. */
static void retimed_cell(avo_strbuf *out, const json_t *r)
{
    if (!json_is_object(r)) {
        avo_strbuf_puts(out, "-");
        return;
    }
    avo_view_experiment_value(out, avo_view_num(r, "score"), 6);
    avo_strbuf_printf(out, " (#%lld", avo_view_int(r, "id"));
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(r, "paired"), i, p)
    {
        avo_strbuf_puts(out, ", ");
        avo_view_experiment_value(out, avo_view_num(p, "median"), 3);
        avo_strbuf_puts(out, "x ");
        avo_strbuf_html(out, avo_view_str(p, "against"));
    }
    avo_strbuf_puts(out, ")");
}

void avo_view_experiment_section_cells(avo_strbuf *out, const json_t *document)
{
    avo_strbuf_puts(out, "<h2>Cells</h2><table><tr><th class=l>cell</th><th class=l>state</th>"
                         "<th>run</th><th>evaluations</th><th>best</th><th>re-timed best</th>"
                         "<th>seconds</th></tr>");
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(document, "cells"), i, c)
    {
        avo_strbuf_puts(out, "<tr><td class=l>");
        avo_strbuf_html(out, avo_view_str(c, "key"));
        avo_strbuf_puts(out, "</td><td class=l>");
        avo_strbuf_html(out, avo_view_str(c, "state"));
        avo_strbuf_puts(out, "</td><td>");
        avo_view_experiment_run(out, c);
        if (json_is_integer(json_object_get(c, "evaluations")))
            avo_strbuf_printf(out, "</td><td>%lld</td><td>", avo_view_int(c, "evaluations"));
        else
            avo_strbuf_puts(out, "</td><td>-</td><td>");
        avo_view_experiment_value(out, avo_view_num(c, "best"), 6);
        avo_strbuf_puts(out, "</td><td>");
        retimed_cell(out, json_object_get(c, "retimed"));
        double seconds = avo_view_num(c, "seconds");
        if (isnan(seconds))
            avo_strbuf_puts(out, "</td><td>-</td></tr>");
        else
            avo_strbuf_printf(out, "</td><td>%.1f</td></tr>", seconds);
    }
    avo_strbuf_puts(out, "</table>");
}
