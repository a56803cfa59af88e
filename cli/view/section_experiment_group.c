/*
 * section_experiment_group.c — one workload and budget of an experiment's
 * report (experiment.h): each arm's best scores over its seeds (n, median,
 * quartiles, the bootstrap interval of the median, range; re-timed, with
 * the paired ratios to the seed and the baselines, when every run re-timed
 * its bests) and the pairwise tests between the arms.
 */
#include "cli/view/experiment.h"
#include "cli/view/view.h"

/* "<td>v</td>" with 6 significant digits, "-" when missing. */
static void value_cell(avo_strbuf *out, double v)
{
    avo_strbuf_puts(out, "<td>");
    avo_view_experiment_value(out, v, 6);
    avo_strbuf_puts(out, "</td>");
}

static void arm_row(avo_strbuf *out, const json_t *a, int retimed)
{
    double q1 = avo_view_num(a, "q1"), q3 = avo_view_num(a, "q3");
    avo_strbuf_puts(out, "<tr><td class=l>");
    avo_strbuf_html(out, avo_view_str(a, "arm"));
    avo_strbuf_printf(out, "</td><td>%lld / %lld</td>", avo_view_int(a, "n"),
                      avo_view_int(a, "planned"));
    value_cell(out, avo_view_num(a, "median"));
    value_cell(out, q1);
    value_cell(out, q3);
    value_cell(out, q3 - q1); /* NaN, so "-", without quartiles */
    avo_strbuf_puts(out, "<td>");
    avo_view_experiment_value(out, avo_view_num(a, "ci_low"), 6);
    avo_strbuf_puts(out, " – ");
    avo_view_experiment_value(out, avo_view_num(a, "ci_high"), 6);
    avo_strbuf_puts(out, "</td>");
    value_cell(out, avo_view_num(a, "min"));
    value_cell(out, avo_view_num(a, "max"));
    if (retimed) {
        avo_strbuf_puts(out, "<td class=l>");
        avo_view_experiment_paired(out, a, 1);
        avo_strbuf_puts(out, "</td>");
        value_cell(out, avo_view_num(json_object_get(a, "recorded"), "median"));
    }
    avo_strbuf_puts(out, "</tr>");
}

static void test_row(avo_strbuf *out, const json_t *t)
{
    avo_strbuf_puts(out, "<tr><td class=l>");
    avo_strbuf_html(out, avo_view_str(t, "a"));
    avo_strbuf_puts(out, " vs ");
    avo_strbuf_html(out, avo_view_str(t, "b"));
    avo_strbuf_printf(out, "</td><td>%g</td><td>%.3f</td><td class=l>", avo_view_num(t, "u"),
                      avo_view_num(t, "a12"));
    avo_strbuf_html(out, avo_view_str(t, "magnitude"));
    avo_strbuf_printf(out, "</td><td>%.4g</td><td>%.4g</td><td class=l>", avo_view_num(t, "p"),
                      avo_view_num(t, "p_holm"));
    avo_strbuf_html(out, avo_view_str(t, "method"));
    avo_strbuf_puts(out, "</td></tr>");
}

void avo_view_experiment_section_group(avo_strbuf *out, const json_t *group)
{
    avo_strbuf_puts(out, "<h2>");
    avo_strbuf_html(out, avo_view_str(group, "workload"));
    avo_strbuf_puts(out, ", budget ");
    avo_strbuf_html(out, avo_view_str(group, "budget"));
    int retimed = avo_view_experiment_retimed(group);
    avo_strbuf_puts(out, "</h2><p class=note>best score per run (");
    avo_strbuf_html(out, avo_view_experiment_unit(group));
    avo_strbuf_puts(out, retimed ? "), higher is better: each run's re-timed best (its median in "
                                   "fresh processes, timed in the same rounds as the seed and the "
                                   "baselines); paired: the runs' ratios to them, paired round by "
                                   "round, median [Q1, Q3] over the seeds</p>"
                                 : "), higher is better: the best as recorded in the search, not "
                                   "re-timed and not paired</p>");
    avo_strbuf_puts(out, "<table><tr><th class=l>arm</th><th>n / planned</th><th>median</th>"
                         "<th>Q1</th><th>Q3</th><th>IQR</th><th>95% CI of median</th>"
                         "<th>min</th><th>max</th>");
    if (retimed)
        avo_strbuf_puts(out, "<th class=l>paired</th><th>recorded median</th>");
    avo_strbuf_puts(out, "</tr>");
    size_t i;
    const json_t *a, *t;
    json_array_foreach(json_object_get(group, "arms"), i, a) arm_row(out, a, retimed);
    avo_strbuf_puts(out, "</table>");
    const json_t *tests = json_object_get(group, "tests");
    if (json_array_size(tests) == 0)
        return;
    avo_strbuf_puts(out, "<table><tr><th class=l>A vs B</th><th>U</th><th>A12</th>"
                         "<th class=l>effect</th><th>p</th><th>p (Holm)</th>"
                         "<th class=l>test</th></tr>");
    json_array_foreach(tests, i, t) test_row(out, t);
    avo_strbuf_puts(out, "</table><p class=note>A12: probability that a run of A beats a run "
                         "of B (0.5: no difference).</p>");
}
