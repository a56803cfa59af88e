/*
 * section_trajectory.c — the score trajectory: every finished evaluation, the running best per
 * config, the seed and the baselines, a section of the run's page shared by `avo report` and `avo
 * serve` (report.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/compare.h"
#include "cli/report.h"
#include "cli/view/plot.h"
#include "cli/view/view.h"

/* Colours of the per-config lines, cycled. */
static const char *const palette[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
#define PALETTE_N (sizeof palette / sizeof palette[0])

/* The names of the configs, in first-seen order over the candidates. */
static json_t *config_names(const json_t *cands)
{
    json_t *names = json_array();
    size_t i, j;
    json_t *c, *cfg;
    json_array_foreach(cands, i, c) json_array_foreach(json_object_get(c, "configs"), j, cfg)
    {
        const char *name = avo_view_str(cfg, "name");
        size_t k;
        json_t *n;
        int seen = 0;
        json_array_foreach(names, k, n) seen |= strcmp(json_string_value(n), name) == 0;
        if (!seen)
            json_array_append_new(names, json_string(name));
    }
    return names;
}

/*
 * The trajectory (AVO paper style): x the evaluation index over finished
 * candidates in id order, y the score (labelled with its unit).  A dot
 * per ok evaluation, a red cross at the bottom per failed one, the running
 * best as a step line, the running best's per-config throughput as thinner
 * step lines, and horizontal baselines (the seed's score and the run
 * config's `baselines`).
 */
/* The highest score, per-config metric and baseline of the plot; the
 * finished evaluations' count into *ret_n. */
static double trajectory_top(const json_t *cands, const json_t *names, const json_t *baselines,
                             const json_t *measured, size_t *ret_n)
{
    size_t n = 0, i, k;
    json_t *c;
    double y_max = 0;
    size_t n_names = json_array_size(names);
    json_array_foreach(cands, i, c)
    {
        if (!avo_view_is_finished(c))
            continue;
        n++;
        if (avo_view_is_ok(c) && avo_view_num(c, "score") > y_max)
            y_max = avo_view_num(c, "score");
        for (k = 0; avo_view_is_ok(c) && k < n_names; k++) {
            double v = avo_view_config_metric(c, json_string_value(json_array_get(names, k)), NULL);
            if (isfinite(v) && v > y_max)
                y_max = v;
        }
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)baselines, key, v)
    {
        if (json_is_number(v) && json_number_value(v) > y_max)
            y_max = json_number_value(v);
    }
    json_array_foreach(measured, i, c)
    {
        if (avo_compare_usable(c) && avo_view_num(c, "score") > y_max)
            y_max = avo_view_num(c, "score");
    }
    *ret_n = n;
    return y_max;
}

/* Config `k` of names: its running best's line and legend entry. */
static void config_line(avo_strbuf *out, const avo_plot *p, const json_t *cands,
                        const json_t *names, size_t k)
{
    const char *name = json_string_value(json_array_get(names, k));
    const char *unit = NULL;
    double best = -INFINITY, idx = 0;
    avo_strbuf_printf(out, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" d=\"",
                      palette[k % PALETTE_N]);
    int started = 0;
    size_t i;
    json_t *c;
    json_array_foreach(cands, i, c)
    {
        if (!avo_view_is_finished(c))
            continue;
        idx++;
        if (!avo_view_is_ok(c) || !(avo_view_num(c, "score") > best))
            continue;
        best = avo_view_num(c, "score");
        double y = avo_view_config_metric(c, name, unit ? NULL : &unit);
        if (!isfinite(y))
            continue;
        if (!started)
            avo_strbuf_printf(out, "M%.1f %.1f", avo_plot_x(p, idx), avo_plot_y(p, y));
        else
            avo_strbuf_printf(out, "H%.1fV%.1f", avo_plot_x(p, idx), avo_plot_y(p, y));
        started = 1;
    }
    if (started)
        avo_strbuf_printf(out, "H%.1f", avo_plot_x(p, idx));
    avo_strbuf_puts(out, "\"/>\n");
    char label[160];
    snprintf(label, sizeof label, "%s (%s)", name, unit ? unit : "per config");
    avo_plot_legend(out, p, 3 + (int)k, palette[k % PALETTE_N], NULL, 0, label);
}

/* The seed's, the configured and the measured baselines' lines, their
 * legend entries from `row` on; returns the next free legend row. */
static int baseline_lines(avo_strbuf *out, const avo_plot *p, const json_t *seed,
                          const json_t *baselines, const json_t *measured, int row)
{
    if (seed) {
        char label[64];
        snprintf(label, sizeof label, "seed #%lld", avo_view_int(seed, "id"));
        avo_plot_hline(out, p, avo_view_num(seed, "score"), "#ff7f0e", label);
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)baselines, key, v)
    {
        if (!json_is_number(v))
            continue;
        avo_plot_hline(out, p, json_number_value(v), "#7f7f7f", key);
        avo_plot_legend(out, p, row++, "#7f7f7f", "6 4", 0, key);
    }
    size_t i;
    json_array_foreach(measured, i, v)
    {
        if (!avo_compare_usable(v))
            continue; /* shown in the Baselines section with its status, never as a line at 0 */
        char label[160];
        snprintf(label, sizeof label, "%s (%s)", avo_view_str(v, "name"),
                 avo_view_str(v, "device"));
        avo_plot_hline(out, p, avo_view_num(v, "score"), "#17becf", label);
        avo_plot_legend(out, p, row++, "#17becf", "6 4", 0, label);
    }
    return row;
}

/* Every finished evaluation: a dot, or a cross when it failed (thinned
 * past AVO_PLOT_THIN_FROM, plot.h). */
static void evaluation_marks(avo_strbuf *out, const avo_plot *p, const json_t *cands,
                             avo_plot_thin *thin)
{
    double idx = 0;
    size_t i;
    json_t *c;
    json_array_foreach(cands, i, c)
    {
        if (!avo_view_is_finished(c))
            continue;
        idx++;
        double x = avo_plot_x(p, idx);
        if (!avo_view_is_ok(c)) {
            if (avo_plot_thin_keep(thin, p, x, avo_plot_y(p, p->y_lo) - 5))
                avo_plot_fail_mark(out, x, avo_plot_y(p, p->y_lo) - 5, c);
            continue;
        }
        double y = avo_plot_y(p, avo_view_num(c, "score"));
        if (!avo_plot_thin_keep(thin, p, x, y))
            continue;
        avo_strbuf_printf(out,
                          "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.6\" fill=\"#4a78a8\""
                          " fill-opacity=\"0.55\"><title>#%lld ",
                          x, y, avo_view_int(c, "id"));
        avo_strbuf_html(out, avo_view_str(c, "operator"));
        avo_strbuf_printf(out, " gen %lld: %.4g</title></circle>\n", avo_view_int(c, "generation"),
                          avo_view_num(c, "score"));
    }
}

/* The running best: a step line, then a dot at each new best on top. */
static void running_best(avo_strbuf *out, const avo_plot *p, const json_t *cands)
{
    double best = -INFINITY, idx = 0;
    int started = 0;
    avo_strbuf puts_best = {0};
    size_t i;
    json_t *c;
    avo_strbuf_puts(out, "<path fill=\"none\" stroke=\"#d62728\" stroke-width=\"2.2\" d=\"");
    json_array_foreach(cands, i, c)
    {
        if (!avo_view_is_finished(c))
            continue;
        idx++;
        if (!avo_view_is_ok(c) || !(avo_view_num(c, "score") > best))
            continue;
        best = avo_view_num(c, "score");
        if (!started)
            avo_strbuf_printf(out, "M%.1f %.1f", avo_plot_x(p, idx), avo_plot_y(p, best));
        else
            avo_strbuf_printf(out, "H%.1fV%.1f", avo_plot_x(p, idx), avo_plot_y(p, best));
        started = 1;
        avo_strbuf_printf(&puts_best,
                          "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#d62728\">"
                          "<title>new best #%lld: %.4g</title></circle>\n",
                          avo_plot_x(p, idx), avo_plot_y(p, best), avo_view_int(c, "id"), best);
    }
    if (started)
        avo_strbuf_printf(out, "H%.1f", avo_plot_x(p, idx));
    avo_strbuf_puts(out, "\"/>\n");
    out->failed |= puts_best.failed;
    avo_strbuf_puts(out, avo_strbuf_text(&puts_best));
    avo_strbuf_free(&puts_best);
}

static void plot_trajectory(avo_strbuf *out, const json_t *cands, const json_t *run,
                            const json_t *seed)
{
    json_t *names = config_names(cands);
    size_t n_names = json_array_size(names);
    const json_t *baselines = json_object_get(json_object_get(run, "config"), "baselines");
    /* The baselines measured in the run (only those with a score) of the
     * best's evaluator: another evaluator's are another workload. */
    json_t *measured = avo_compare_of(json_object_get(run, "baselines"),
                                      json_string_value(json_object_get(run, "best_evaluator")));
    size_t n;
    double y_max = trajectory_top(cands, names, baselines, measured, &n);

    avo_plot p = {.left = 70, .top = 15, .width = 720, .height = 330};
    avo_report_nice_axis(0, y_max > 0 ? y_max * 1.05 : 1, 6, &p.y_lo, &p.y_hi, &p.y_step);
    avo_report_nice_axis(0, n > 1 ? (double)n : 2, 10, &p.x_lo, &p.x_hi, &p.x_step);
    if (p.x_step < 1)
        p.x_step = 1;
    p.x_lo = 0;
    avo_plot_begin(out, &p, 1080, 400, "score trajectory", "evaluation", avo_view_score_label(run),
                   1);
    /* Per-config running-best lines under everything else. */
    for (size_t k = 0; k < n_names; k++)
        config_line(out, &p, cands, names, k);
    int row = baseline_lines(out, &p, seed, baselines, measured, 3 + (int)n_names);
    avo_plot_thin thin;
    avo_plot_thin_init(&thin, &p, n);
    evaluation_marks(out, &p, cands, &thin);
    running_best(out, &p, cands);

    avo_plot_legend(out, &p, 0, "#d62728", NULL, 0, "running best");
    avo_plot_legend(out, &p, 1, "#4a78a8", NULL, 'o', "evaluation");
    avo_plot_legend(out, &p, 2, "#d62728", NULL, 'x', "failed");
    if (seed)
        avo_plot_legend(out, &p, row, "#ff7f0e", "6 4", 0, "seed score");
    avo_strbuf_puts(out, "</svg>\n");
    avo_plot_thin_note(out, &thin);
    avo_plot_thin_free(&thin);
    json_decref(names);
    json_decref(measured);
}

void avo_report_trajectory(avo_strbuf *out, const avo_report_run *r)
{
    avo_strbuf_puts(out, "<h2 id=\"trajectory\">Trajectory</h2>\n");
    if (r->n_ok + r->n_failed) {
        plot_trajectory(out, r->cands, r->run, r->seed);
        avo_strbuf_puts(out, "<p class=\"muted\">x: finished evaluations in submission order;"
                             " thin lines: the running best's score on each config.</p>\n");
    } else {
        avo_strbuf_puts(out, "<p>no finished evaluations</p>\n");
    }
}
