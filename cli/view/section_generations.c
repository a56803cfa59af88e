/*
 * section_generations.c — the box plots of the scores per generation, a section of the run's page
 * shared by `avo report` and `avo serve` (report.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/plot.h"
#include "cli/view/view.h"

/*
 * Score distribution per generation: a box (quartiles, median, whiskers to
 * min and max) over the ok candidates of each generation, the candidates
 * themselves as jittered dots, failures as red crosses at the bottom.
 */
typedef struct {
    long long generation;
    size_t index; /* in the run's array: ties keep archive order */
    json_t *cand;
} by_generation;

static int cmp_by_generation(const void *a, const void *b)
{
    const by_generation *x = a, *y = b;
    if (x->generation != y->generation)
        return x->generation < y->generation ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* One generation's box (quartiles, median, whiskers), its candidates as
 * jittered dots and its failures as crosses: the `count` candidates at `slice`,
 * with room for their scores in vals. */
static void plot_generation(avo_strbuf *out, const avo_plot *p, const by_generation *slice,
                            size_t count, double *vals, double box_w, avo_plot_thin *thin)
{
    long long g = slice[0].generation;
    size_t n = 0;
    double x = avo_plot_x(p, (double)g);
    const json_t *c;
    for (size_t k = 0; k < count; k++) {
        c = slice[k].cand;
        if (!avo_view_is_finished(c))
            continue;
        if (!avo_view_is_ok(c)) {
            double xf = x + (double)((avo_view_int(c, "id") * 7) % 11 - 5) * box_w / 12;
            if (avo_plot_thin_keep(thin, p, xf, avo_plot_y(p, p->y_lo) - 5))
                avo_plot_fail_mark(out, xf, avo_plot_y(p, p->y_lo) - 5, c);
            continue;
        }
        vals[n++] = avo_view_num(c, "score");
    }
    if (n == 0)
        return;
    qsort(vals, n, sizeof *vals, avo_view_cmp_double);
    double q1 = avo_view_quantile(vals, n, 0.25), med = avo_view_quantile(vals, n, 0.5),
           q3 = avo_view_quantile(vals, n, 0.75);
    avo_strbuf_printf(out,
                      "<g><title>generation %lld: %zu ok, median %.4g, max %.4g</title>"
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>"
                      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\""
                      " fill=\"#cfe0f1\" stroke=\"#4a78a8\"/>"
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\""
                      " stroke-width=\"2\"/></g>\n",
                      g, n, med, vals[n - 1], x, avo_plot_y(p, vals[0]), x,
                      avo_plot_y(p, vals[n - 1]), x - box_w / 2, avo_plot_y(p, q3), box_w,
                      avo_plot_y(p, q1) - avo_plot_y(p, q3) + 0.5, x - box_w / 2,
                      avo_plot_y(p, med), x + box_w / 2, avo_plot_y(p, med));
    for (size_t k = 0; k < count; k++) {
        c = slice[k].cand;
        if (!avo_view_is_ok(c))
            continue;
        double jitter = (double)((avo_view_int(c, "id") * 7) % 11 - 5) * box_w / 12;
        double y = avo_plot_y(p, avo_view_num(c, "score"));
        if (!avo_plot_thin_keep(thin, p, x + jitter, y))
            continue;
        avo_strbuf_printf(out,
                          "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" fill=\"#333\""
                          " fill-opacity=\"0.5\"><title>#%lld: %.4g</title></circle>\n",
                          x + jitter, y, avo_view_int(c, "id"), avo_view_num(c, "score"));
    }
}

static void plot_generations(avo_strbuf *out, const json_t *cands, const json_t *run)
{
    long long g_max = 0;
    double y_max = 0;
    size_t i;
    json_t *c;
    json_array_foreach(cands, i, c)
    {
        if (avo_view_int(c, "generation") > g_max)
            g_max = avo_view_int(c, "generation");
        if (avo_view_is_ok(c) && avo_view_num(c, "score") > y_max)
            y_max = avo_view_num(c, "score");
    }
    avo_plot p = {.left = 70, .top = 15, .width = 720, .height = 280};
    avo_report_nice_axis(0, y_max > 0 ? y_max * 1.05 : 1, 6, &p.y_lo, &p.y_hi, &p.y_step);
    p.x_lo = -0.5;
    p.x_hi = (double)g_max + 0.5;
    p.x_step = g_max > 20 ? ceil((double)g_max / 20) : 1;
    avo_plot_begin(out, &p, 1080, 350, "score per generation", "generation",
                   avo_view_score_label(run), 1);
    double box_w = p.width / (double)(g_max + 1) * 0.5;
    if (box_w > 40)
        box_w = 40;

    /* The candidates in generation order (then archive order), so each
     * generation is one slice: one pass over the run, not one per
     * generation (a 100,000-candidate ga has 1,000 of them). */
    size_t total = json_array_size(cands);
    double *vals = calloc(total + 1, sizeof *vals);
    by_generation *order = calloc(total + 1, sizeof *order);
    if (!vals || !order) {
        free(vals);
        free(order);
        out->failed = 1;
        return;
    }
    json_array_foreach(cands, i, c) order[i] = (by_generation){avo_view_int(c, "generation"), i, c};
    qsort(order, total, sizeof *order, cmp_by_generation);
    avo_plot_thin thin;
    avo_plot_thin_init(&thin, &p, total);
    for (size_t lo = 0, hi; lo < total; lo = hi) {
        long long g = order[lo].generation;
        for (hi = lo; hi < total && order[hi].generation == g; hi++)
            ;
        plot_generation(out, &p, order + lo, hi - lo, vals, box_w, &thin);
    }
    free(order);
    free(vals);
    avo_plot_legend(out, &p, 0, "#4a78a8", NULL, 0, "quartiles");
    avo_plot_legend(out, &p, 1, "#d62728", NULL, 0, "median");
    avo_plot_legend(out, &p, 2, "#333", NULL, 'o', "candidate");
    avo_plot_legend(out, &p, 3, "#d62728", NULL, 'x', "failed");
    avo_strbuf_puts(out, "</svg>\n");
    avo_plot_thin_note(out, &thin);
    avo_plot_thin_free(&thin);
}

void avo_report_generations(avo_strbuf *out, const avo_report_run *r)
{
    avo_strbuf_puts(out, "<h2 id=\"generations\">Score per generation</h2>\n");
    if (r->n_ok + r->n_failed)
        plot_generations(out, r->cands, r->run);
    else
        avo_strbuf_puts(out, "<p>no finished evaluations</p>\n");
}
