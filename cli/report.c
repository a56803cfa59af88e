/*
 * report.c — the HTML report of a run (see report.h).
 *
 * The page is built in one avo_strbuf.  Data comes from the archive's query
 * functions; every string from the archive goes through avo_strbuf_html().
 * Plots share one frame (struct plot) mapping data to SVG coordinates; each
 * plot function draws axes, marks and a legend and knows nothing of HTML
 * around it.
 */
#include "cli/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/avo.h"
#include "avo_config.h"
#include "cli/compare.h"
#include "cli/paired.h"
#include "core/diff.h"

#define TOP_N 10

/* Colours of the per-config lines, cycled. */
static const char *const palette[] = {"#1f77b4", "#2ca02c", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
#define PALETTE_N (sizeof palette / sizeof palette[0])

static const char style[] =
    "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;"
    "padding:0 1em}"
    "h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}"
    "th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "pre{background:#f8f8f8;border:1px solid #e4e4e4;padding:.6em;overflow-x:auto;"
    "font-size:.85em;line-height:1.3}"
    "span.add{color:#116611;background:#eaffea}span.del{color:#aa1111;background:#ffecec}"
    "span.hunk{color:#555;font-style:italic}"
    ".muted{color:#777}.best{font-weight:bold}ul.tree{list-style:none;padding-left:1.2em;"
    "border-left:1px dotted #bbb}ul.tree li{margin:.15em 0}"
    "section.cand{border:1px solid #e4e4e4;border-radius:4px;padding:.2em 1em;margin:1em 0}"
    "svg{background:#fff;border:1px solid #eee;margin:.5em 0}"
    "svg text{font-family:system-ui,sans-serif;font-size:12px;fill:#333}";

/* ------------------------------------------------------------ accessors */

static double num(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static long long integer(const json_t *obj, const char *key)
{
    return (long long)json_integer_value(json_object_get(obj, key));
}

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static int is_ok(const json_t *c)
{
    return strcmp(str(c, "status"), "ok") == 0;
}

static int is_finished(const json_t *c)
{
    return strcmp(str(c, "status"), "pending") != 0;
}

/* ------------------------------------------------------------ formatting */

void avo_report_nice_axis(double lo, double hi, int target, double *ret_lo, double *ret_hi,
                          double *ret_step)
{
    if (!(hi > lo)) {
        double pad = fabs(lo) > 0 ? fabs(lo) * 0.1 : 1;
        lo -= pad;
        hi += pad;
    }
    if (target < 1)
        target = 1;
    double raw = (hi - lo) / target;
    double mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    double step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
    *ret_lo = floor(lo / step + 1e-9) * step;
    *ret_hi = ceil(hi / step - 1e-9) * step;
    *ret_step = step;
}

/* A tick label: no trailing noise from floating point steps. */
static void tick_label(char *buf, size_t n, double v, double step)
{
    if (fabs(v) < step * 1e-6)
        v = 0;
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (fabs(v) >= 1e6 || (v != 0 && fabs(v) < 1e-4))
        snprintf(buf, n, "%.3g", v);
    else
        snprintf(buf, n, "%.*f", decimals, v);
}

static void html_time(avo_strbuf *out, double t)
{
    if (!isfinite(t)) {
        avo_strbuf_puts(out, "<span class=\"muted\">—</span>");
        return;
    }
    time_t s = (time_t)t;
    struct tm tm;
    char buf[64];
    gmtime_r(&s, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    avo_strbuf_puts(out, buf);
}

static void html_number(avo_strbuf *out, double v)
{
    if (isfinite(v))
        avo_strbuf_printf(out, "%.4g", v);
    else
        avo_strbuf_puts(out, "—");
}

/* Knobs as "NAME=value NAME=value", escaped. */
static void html_knobs(avo_strbuf *out, const json_t *knobs)
{
    const char *key;
    json_t *v;
    int first = 1;
    json_object_foreach((json_t *)knobs, key, v)
    {
        char *text = json_dumps(v, JSON_ENCODE_ANY);
        if (!first)
            avo_strbuf_puts(out, " ");
        avo_strbuf_html(out, key);
        avo_strbuf_puts(out, "=");
        avo_strbuf_html(out, json_is_string(v) ? json_string_value(v) : text);
        free(text);
        first = 0;
    }
    if (first)
        avo_strbuf_puts(out, "<span class=\"muted\">(none)</span>");
}

/* ----------------------------------------------------------------- plots */

/* One plot frame: data ranges and the pixel box they map to. */
typedef struct plot {
    double x_lo, x_hi, x_step;
    double y_lo, y_hi, y_step;
    double left, top, width, height; /* inner box, pixels */
} plot;

static double px(const plot *p, double x)
{
    return p->left + (x - p->x_lo) / (p->x_hi - p->x_lo) * p->width;
}

static double py(const plot *p, double y)
{
    return p->top + p->height - (y - p->y_lo) / (p->y_hi - p->y_lo) * p->height;
}

/* Open an SVG of the given size with a frame for p: grid, ticks, labels. */
static void plot_begin(avo_strbuf *out, const plot *p, double svg_w, double svg_h,
                       const char *title, const char *x_label, const char *y_label, int integer_x)
{
    avo_strbuf_printf(out,
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\""
                      " viewBox=\"0 0 %.0f %.0f\" role=\"img\"><title>",
                      svg_w, svg_h, svg_w, svg_h);
    avo_strbuf_html(out, title);
    avo_strbuf_puts(out, "</title>\n");
    char label[64];
    for (double y = p->y_lo; y <= p->y_hi + p->y_step * 1e-6; y += p->y_step) {
        tick_label(label, sizeof label, y, p->y_step);
        avo_strbuf_printf(out,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                          p->left, py(p, y), p->left + p->width, py(p, y), p->left - 6,
                          py(p, y) + 4, label);
    }
    for (double x = ceil(p->x_lo / p->x_step - 1e-9) * p->x_step; x <= p->x_hi + p->x_step * 1e-6;
         x += p->x_step) {
        if (integer_x && fabs(x - round(x)) > 1e-9)
            continue;
        tick_label(label, sizeof label, x, p->x_step);
        avo_strbuf_printf(out,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                          px(p, x), p->top + p->height, px(p, x), p->top + p->height + 5, px(p, x),
                          p->top + p->height + 18, label);
    }
    avo_strbuf_printf(out,
                      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\""
                      " stroke=\"#999\"/>\n",
                      p->left, p->top, p->width, p->height);
    avo_strbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                      p->left + p->width / 2, p->top + p->height + 36);
    avo_strbuf_html(out, x_label);
    avo_strbuf_printf(out,
                      "</text><text transform=\"translate(16 %.1f) rotate(-90)\""
                      " text-anchor=\"middle\">",
                      p->top + p->height / 2);
    avo_strbuf_html(out, y_label);
    avo_strbuf_puts(out, "</text>\n");
}

/* One legend entry at row `row` right of the plot: a line sample (dash may
 * be NULL) or a marker, and an escaped label. */
static void legend(avo_strbuf *out, const plot *p, int row, const char *color, const char *dash,
                   int marker, const char *label)
{
    double x = p->left + p->width + 14, y = p->top + 10 + row * 18;
    if (marker == 'o')
        avo_strbuf_printf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", x + 10, y,
                          color);
    else if (marker == 'x')
        avo_strbuf_printf(
            out, "<path d=\"M%.1f %.1fl6 6m0 -6l-6 6\" stroke=\"%s\" stroke-width=\"1.5\"/>", x + 7,
            y - 3, color);
    else
        avo_strbuf_printf(out,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\""
                          " stroke-width=\"2\"%s%s%s/>",
                          x, y, x + 20, y, color, dash ? " stroke-dasharray=\"" : "",
                          dash ? dash : "", dash ? "\"" : "");
    avo_strbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 26, y + 4);
    avo_strbuf_html(out, label);
    avo_strbuf_puts(out, "</text>\n");
}

/* A labelled horizontal line across the plot. */
static void hline(avo_strbuf *out, const plot *p, double y, const char *color, const char *label)
{
    avo_strbuf_printf(out,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\""
                      " stroke-dasharray=\"6 4\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\""
                      " fill=\"%s\">",
                      p->left, py(p, y), p->left + p->width, py(p, y), color,
                      p->left + p->width - 4, py(p, y) - 4, color);
    avo_strbuf_html(out, label);
    avo_strbuf_puts(out, "</text>\n");
}

/* A failed evaluation: a red cross at the bottom of the plot. */
static void fail_mark(avo_strbuf *out, double x, double y, const json_t *c)
{
    avo_strbuf_printf(out,
                      "<path d=\"M%.1f %.1fl6 6m0 -6l-6 6\" stroke=\"#d62728\""
                      " stroke-width=\"1.5\"><title>#%lld %s: ",
                      x - 3, y - 3, integer(c, "id"), str(c, "status"));
    avo_strbuf_html(out, str(c, "reason"));
    avo_strbuf_puts(out, "</title></path>\n");
}

/* The names of the configs, in first-seen order over the candidates. */
static json_t *config_names(const json_t *cands)
{
    json_t *names = json_array();
    size_t i, j;
    json_t *c, *cfg;
    json_array_foreach(cands, i, c) json_array_foreach(json_object_get(c, "configs"), j, cfg)
    {
        const char *name = str(cfg, "name");
        size_t k;
        json_t *n;
        int seen = 0;
        json_array_foreach(names, k, n) seen |= strcmp(json_string_value(n), name) == 0;
        if (!seen)
            json_array_append_new(names, json_string(name));
    }
    return names;
}

/* The per-config metric of candidate c for config `name`, NAN if absent. */
static double config_metric(const json_t *c, const char *name, const char **ret_unit)
{
    size_t i;
    json_t *cfg;
    json_array_foreach(json_object_get(c, "configs"), i,
                       cfg) if (strcmp(str(cfg, "name"), name) ==
                                0) return avo_diff_config_metric(cfg, ret_unit);
    return NAN;
}

/* What the scores measure: the unit the run's evaluator recorded
 * (avo_archive_run_summary), or plain "score" for runs without one. */
static const char *score_label(const json_t *run)
{
    const char *unit = str(run, "unit");
    return unit && *unit ? unit : "score";
}

/*
 * The trajectory (AVO paper style): x the evaluation index over finished
 * candidates in id order, y the score (labelled with its unit).  A dot
 * per ok evaluation, a red cross at the bottom per failed one, the running
 * best as a step line, the running best's per-config throughput as thinner
 * step lines, and horizontal baselines (the seed's score and the run
 * config's `baselines`).
 */
static void plot_trajectory(avo_strbuf *out, const json_t *cands, const json_t *run,
                            const json_t *seed)
{
    size_t n = 0, i, k;
    json_t *c;
    double y_max = 0;
    json_t *names = config_names(cands);
    size_t n_names = json_array_size(names);
    json_array_foreach(cands, i, c)
    {
        if (!is_finished(c))
            continue;
        n++;
        if (is_ok(c) && num(c, "score") > y_max)
            y_max = num(c, "score");
        for (k = 0; is_ok(c) && k < n_names; k++) {
            double v = config_metric(c, json_string_value(json_array_get(names, k)), NULL);
            if (isfinite(v) && v > y_max)
                y_max = v;
        }
    }
    const json_t *baselines = json_object_get(json_object_get(run, "config"), "baselines");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)baselines, key,
                        v) if (json_is_number(v) && json_number_value(v) > y_max) y_max =
        json_number_value(v);
    /* The baselines measured in the run (only those with a score) of the
     * best's evaluator: another evaluator's are another workload. */
    json_t *measured = avo_compare_of(json_object_get(run, "baselines"),
                                      json_string_value(json_object_get(run, "best_evaluator")));
    json_array_foreach(measured, i, c)
    {
        if (avo_compare_usable(c) && num(c, "score") > y_max)
            y_max = num(c, "score");
    }

    plot p = {.left = 70, .top = 15, .width = 720, .height = 330};
    avo_report_nice_axis(0, y_max > 0 ? y_max * 1.05 : 1, 6, &p.y_lo, &p.y_hi, &p.y_step);
    avo_report_nice_axis(0, n > 1 ? (double)n : 2, 10, &p.x_lo, &p.x_hi, &p.x_step);
    if (p.x_step < 1)
        p.x_step = 1;
    p.x_lo = 0;
    plot_begin(out, &p, 1080, 400, "score trajectory", "evaluation", score_label(run), 1);

    /* Per-config running-best lines under everything else. */
    for (k = 0; k < n_names; k++) {
        const char *name = json_string_value(json_array_get(names, k));
        const char *unit = NULL;
        double best = -INFINITY, idx = 0;
        avo_strbuf_printf(out, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" d=\"",
                          palette[k % PALETTE_N]);
        int started = 0;
        json_array_foreach(cands, i, c)
        {
            if (!is_finished(c))
                continue;
            idx++;
            if (!is_ok(c) || !(num(c, "score") > best))
                continue;
            best = num(c, "score");
            double y = config_metric(c, name, unit ? NULL : &unit);
            if (!isfinite(y))
                continue;
            if (!started)
                avo_strbuf_printf(out, "M%.1f %.1f", px(&p, idx), py(&p, y));
            else
                avo_strbuf_printf(out, "H%.1fV%.1f", px(&p, idx), py(&p, y));
            started = 1;
        }
        if (started)
            avo_strbuf_printf(out, "H%.1f", px(&p, idx));
        avo_strbuf_puts(out, "\"/>\n");
        char label[160];
        snprintf(label, sizeof label, "%s (%s)", name, unit ? unit : "per config");
        legend(out, &p, 3 + (int)k, palette[k % PALETTE_N], NULL, 0, label);
    }

    /* Baselines. */
    int row = 3 + (int)n_names;
    if (seed) {
        char label[64];
        snprintf(label, sizeof label, "seed #%lld", integer(seed, "id"));
        hline(out, &p, num(seed, "score"), "#ff7f0e", label);
    }
    json_object_foreach((json_t *)baselines, key, v)
    {
        if (!json_is_number(v))
            continue;
        hline(out, &p, json_number_value(v), "#7f7f7f", key);
        legend(out, &p, row++, "#7f7f7f", "6 4", 0, key);
    }
    json_array_foreach(measured, i, c)
    {
        if (!avo_compare_usable(c))
            continue; /* shown in the Baselines section with its status, never as a line at 0 */
        char label[160];
        snprintf(label, sizeof label, "%s (%s)", str(c, "name"), str(c, "device"));
        hline(out, &p, num(c, "score"), "#17becf", label);
        legend(out, &p, row++, "#17becf", "6 4", 0, label);
    }

    /* Every evaluation, then the running best on top. */
    double idx = 0;
    json_array_foreach(cands, i, c)
    {
        if (!is_finished(c))
            continue;
        idx++;
        if (!is_ok(c)) {
            fail_mark(out, px(&p, idx), py(&p, p.y_lo) - 5, c);
            continue;
        }
        avo_strbuf_printf(out,
                          "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.6\" fill=\"#4a78a8\""
                          " fill-opacity=\"0.55\"><title>#%lld ",
                          px(&p, idx), py(&p, num(c, "score")), integer(c, "id"));
        avo_strbuf_html(out, str(c, "operator"));
        avo_strbuf_printf(out, " gen %lld: %.4g</title></circle>\n", integer(c, "generation"),
                          num(c, "score"));
    }
    double best = -INFINITY;
    idx = 0;
    int started = 0;
    avo_strbuf puts_best = {0};
    avo_strbuf_puts(out, "<path fill=\"none\" stroke=\"#d62728\" stroke-width=\"2.2\" d=\"");
    json_array_foreach(cands, i, c)
    {
        if (!is_finished(c))
            continue;
        idx++;
        if (!is_ok(c) || !(num(c, "score") > best))
            continue;
        best = num(c, "score");
        if (!started)
            avo_strbuf_printf(out, "M%.1f %.1f", px(&p, idx), py(&p, best));
        else
            avo_strbuf_printf(out, "H%.1fV%.1f", px(&p, idx), py(&p, best));
        started = 1;
        avo_strbuf_printf(&puts_best,
                          "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#d62728\">"
                          "<title>new best #%lld: %.4g</title></circle>\n",
                          px(&p, idx), py(&p, best), integer(c, "id"), best);
    }
    if (started)
        avo_strbuf_printf(out, "H%.1f", px(&p, idx));
    avo_strbuf_puts(out, "\"/>\n");
    out->failed |= puts_best.failed;
    avo_strbuf_puts(out, avo_strbuf_text(&puts_best));
    avo_strbuf_free(&puts_best);

    legend(out, &p, 0, "#d62728", NULL, 0, "running best");
    legend(out, &p, 1, "#4a78a8", NULL, 'o', "evaluation");
    legend(out, &p, 2, "#d62728", NULL, 'x', "failed");
    if (seed)
        legend(out, &p, row, "#ff7f0e", "6 4", 0, "seed score");
    avo_strbuf_puts(out, "</svg>\n");
    json_decref(names);
    json_decref(measured);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q of sorted v[0..n) by linear interpolation. */
static double quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double f = pos - (double)i;
    return i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

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

static void plot_generations(avo_strbuf *out, const json_t *cands, const json_t *run)
{
    long long g_max = 0;
    double y_max = 0;
    size_t i;
    json_t *c;
    json_array_foreach(cands, i, c)
    {
        if (integer(c, "generation") > g_max)
            g_max = integer(c, "generation");
        if (is_ok(c) && num(c, "score") > y_max)
            y_max = num(c, "score");
    }
    plot p = {.left = 70, .top = 15, .width = 720, .height = 280};
    avo_report_nice_axis(0, y_max > 0 ? y_max * 1.05 : 1, 6, &p.y_lo, &p.y_hi, &p.y_step);
    p.x_lo = -0.5;
    p.x_hi = (double)g_max + 0.5;
    p.x_step = g_max > 20 ? ceil((double)g_max / 20) : 1;
    plot_begin(out, &p, 1080, 350, "score per generation", "generation", score_label(run), 1);
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
    json_array_foreach(cands, i, c) order[i] = (by_generation){integer(c, "generation"), i, c};
    qsort(order, total, sizeof *order, cmp_by_generation);
    for (size_t lo = 0, hi; lo < total; lo = hi) {
        long long g = order[lo].generation;
        for (hi = lo; hi < total && order[hi].generation == g; hi++)
            ;
        size_t n = 0;
        double x = px(&p, (double)g);
        for (size_t k = lo; k < hi; k++) {
            c = order[k].cand;
            if (!is_finished(c))
                continue;
            if (!is_ok(c)) {
                fail_mark(out, x + (double)((integer(c, "id") * 7) % 11 - 5) * box_w / 12,
                          py(&p, p.y_lo) - 5, c);
                continue;
            }
            vals[n++] = num(c, "score");
        }
        if (n == 0)
            continue;
        qsort(vals, n, sizeof *vals, cmp_double);
        double q1 = quantile(vals, n, 0.25), med = quantile(vals, n, 0.5),
               q3 = quantile(vals, n, 0.75);
        avo_strbuf_printf(out,
                          "<g><title>generation %lld: %zu ok, median %.4g, max %.4g</title>"
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>"
                          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\""
                          " fill=\"#cfe0f1\" stroke=\"#4a78a8\"/>"
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\""
                          " stroke-width=\"2\"/></g>\n",
                          g, n, med, vals[n - 1], x, py(&p, vals[0]), x, py(&p, vals[n - 1]),
                          x - box_w / 2, py(&p, q3), box_w, py(&p, q1) - py(&p, q3) + 0.5,
                          x - box_w / 2, py(&p, med), x + box_w / 2, py(&p, med));
        for (size_t k = lo; k < hi; k++) {
            c = order[k].cand;
            if (!is_ok(c))
                continue;
            double jitter = (double)((integer(c, "id") * 7) % 11 - 5) * box_w / 12;
            avo_strbuf_printf(out,
                              "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.2\" fill=\"#333\""
                              " fill-opacity=\"0.5\"><title>#%lld: %.4g</title></circle>\n",
                              x + jitter, py(&p, num(c, "score")), integer(c, "id"),
                              num(c, "score"));
        }
    }
    free(order);
    free(vals);
    legend(out, &p, 0, "#4a78a8", NULL, 0, "quartiles");
    legend(out, &p, 1, "#d62728", NULL, 0, "median");
    legend(out, &p, 2, "#333", NULL, 'o', "candidate");
    legend(out, &p, 3, "#d62728", NULL, 'x', "failed");
    avo_strbuf_puts(out, "</svg>\n");
}

/* ------------------------------------------------------------ sections */

static const json_t *find_by_id(const json_t *arr, long long id)
{
    size_t i;
    json_t *c;
    json_array_foreach(arr, i, c) if (integer(c, "id") == id) return c;
    return NULL;
}

/* A link to a candidate's section or page when it has one (every
 * candidate in the live view, the shown ones in the report), else plain
 * "#id". */
static void cand_ref(avo_strbuf *out, long long id, const avo_report_run *r)
{
    char key[24];
    snprintf(key, sizeof key, "%lld", id);
    if (r->link_all || json_object_get(r->shown, key))
        avo_strbuf_printf(out, "<a href=\"%s%lld\">#%lld</a>", r->cand_href, id, id);
    else
        avo_strbuf_printf(out, "#%lld", id);
}

/* The ancestry of the best candidate as nested lists; a node reached again
 * through another path (crossover) is referred to, not repeated. */
static void lineage_tree(avo_strbuf *out, const json_t *nodes, long long id, const char *role,
                         json_t *seen, const avo_report_run *shown, int depth)
{
    const json_t *n = find_by_id(nodes, id);
    char key[24];
    snprintf(key, sizeof key, "%lld", id);
    avo_strbuf_puts(out, "<li>");
    cand_ref(out, id, shown);
    if (!n) {
        avo_strbuf_puts(out, " <span class=\"muted\">(not in the archive)</span></li>\n");
        return;
    }
    avo_strbuf_puts(out, " ");
    avo_strbuf_html(out, str(n, "operator"));
    avo_strbuf_printf(out, ", gen %lld, ", integer(n, "generation"));
    avo_strbuf_html(out, str(n, "status"));
    avo_strbuf_puts(out, ", score ");
    html_number(out, num(n, "score"));
    if (role && strcmp(role, "parent") != 0) {
        avo_strbuf_puts(out, " <span class=\"muted\">[");
        avo_strbuf_html(out, role);
        avo_strbuf_puts(out, "]</span>");
    }
    if (json_object_get(seen, key) || depth > 200) {
        avo_strbuf_puts(out, " <span class=\"muted\">(shown above)</span></li>\n");
        return;
    }
    json_object_set_new(seen, key, json_true());
    const json_t *parents = json_object_get(n, "parents");
    if (json_array_size(parents)) {
        avo_strbuf_puts(out, "\n<ul class=\"tree\">\n");
        size_t i;
        json_t *p;
        json_array_foreach(parents, i, p)
            lineage_tree(out, nodes, integer(p, "id"), str(p, "role"), seen, shown, depth + 1);
        avo_strbuf_puts(out, "</ul>");
    }
    avo_strbuf_puts(out, "</li>\n");
}

/* A unified diff in <pre>, its lines coloured by kind. */
static void html_patch(avo_strbuf *out, const char *patch)
{
    avo_strbuf_puts(out, "<pre>");
    const char *line = patch;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *copy = strndup(line, len);
        const char *cls = NULL;
        if (!strncmp(line, "+++", 3) || !strncmp(line, "---", 3))
            cls = NULL;
        else if (*line == '+')
            cls = "add";
        else if (*line == '-')
            cls = "del";
        else if (*line == '@')
            cls = "hunk";
        if (cls)
            avo_strbuf_printf(out, "<span class=\"%s\">", cls);
        if (!copy)
            out->failed = 1;
        avo_strbuf_html(out, copy);
        if (cls)
            avo_strbuf_puts(out, "</span>");
        avo_strbuf_puts(out, "\n");
        free(copy);
        line += len + (end ? 1 : 0);
    }
    avo_strbuf_puts(out, "</pre>");
}

/*
 * Render the diff of candidate `id` against parent `pid` as a <details>
 * (open when `open`): knob changes, then the source patch.
 */
static int parent_diff(avo_strbuf *out, avo_archive *ar, long long pid, long long id, int open,
                       char *err, size_t errlen)
{
    size_t i;
    json_t *d = NULL;
    int rc = avo_diff_candidates(ar, pid, id, &d, err, errlen);
    if (rc < 0)
        return rc;
    avo_strbuf_printf(out, "<details%s><summary>diff against parent #%lld</summary>\n",
                      open ? " open=\"open\"" : "", pid);
    const json_t *knobs = json_object_get(d, "knobs");
    json_t *k;
    if (json_array_size(knobs)) {
        avo_strbuf_puts(out, "<p>knobs: ");
        json_array_foreach(knobs, i, k)
        {
            const json_t *old = json_object_get(k, "old"), *new = json_object_get(k, "new");
            char *o = json_is_null(old) ? NULL : json_dumps(old, JSON_ENCODE_ANY);
            char *n = json_is_null(new) ? NULL : json_dumps(new, JSON_ENCODE_ANY);
            if (i)
                avo_strbuf_puts(out, ", ");
            avo_strbuf_html(out, str(k, "name"));
            avo_strbuf_puts(out, " ");
            avo_strbuf_html(out, o ? o : "(absent)");
            avo_strbuf_puts(out, " → ");
            avo_strbuf_html(out, n ? n : "(removed)");
            free(o);
            free(n);
        }
        avo_strbuf_puts(out, "</p>\n");
    }
    const char *patch = str(d, "source_diff");
    if (*patch)
        html_patch(out, patch);
    else
        avo_strbuf_puts(out, "<p class=\"muted\">source identical to the parent's</p>");
    avo_strbuf_puts(out, "</details>\n");
    json_decref(d);
    return 0;
}

/* One candidate's section (see report.h). */
int avo_report_candidate(avo_strbuf *out, const avo_report_run *r, const json_t *c, int full,
                         char *err, size_t errlen)
{
    const avo_report_run *shown = r;
    long long best_id = r->best ? integer(r->best, "id") : 0;
    long long id = integer(c, "id");
    avo_strbuf_printf(out, "<section class=\"cand\" id=\"c%lld\">\n<h3>#%lld ", id, id);
    avo_strbuf_html(out, str(c, "operator"));
    avo_strbuf_printf(out, " (gen %lld) — score ", integer(c, "generation"));
    html_number(out, num(c, "score"));
    if (id == best_id)
        avo_strbuf_puts(out, " <span class=\"best\">(best)</span>");
    avo_strbuf_puts(out, "</h3>\n<p>status ");
    avo_strbuf_html(out, str(c, "status"));
    if (*str(c, "reason")) {
        avo_strbuf_puts(out, " — ");
        avo_strbuf_html(out, str(c, "reason"));
    }
    avo_strbuf_puts(out, "; parents ");
    const json_t *parents = json_object_get(c, "parents");
    size_t i;
    json_t *p;
    json_array_foreach(parents, i, p)
    {
        if (i)
            avo_strbuf_puts(out, ", ");
        cand_ref(out, integer(p, "id"), shown);
        avo_strbuf_puts(out, " (");
        avo_strbuf_html(out, str(p, "role"));
        avo_strbuf_puts(out, ")");
    }
    if (!json_array_size(parents))
        avo_strbuf_puts(out, "none");
    avo_strbuf_puts(out, "<br/>knobs <code>");
    html_knobs(out, json_object_get(c, "knobs"));
    avo_strbuf_puts(out, "</code>");
    if (*str(c, "note")) {
        avo_strbuf_puts(out, "<br/>note: ");
        avo_strbuf_html(out, str(c, "note"));
    }
    /* Libraries the judge saw it load (eval/libraries.h): vendor code doing
     * the work is never hidden behind a score. */
    const json_t *libs = json_object_get(json_object_get(c, "result"), "libraries");
    if (json_array_size(libs)) {
        avo_strbuf_puts(out, "<br/>libraries <code>");
        json_array_foreach(libs, i, p)
        {
            if (i)
                avo_strbuf_puts(out, ", ");
            avo_strbuf_html(out, json_string_value(p) ? json_string_value(p) : "?");
        }
        avo_strbuf_puts(out, "</code>");
    }
    avo_strbuf_puts(out, "</p>\n");

    const json_t *configs = json_object_get(c, "configs");
    if (json_array_size(configs)) {
        avo_strbuf_puts(out,
                        "<table><tr><th>config</th><th>correct</th><th>throughput</th>"
                        "<th>median</th><th>spread</th><th>samples</th><th>max error</th></tr>\n");
        json_t *cfg;
        json_array_foreach(configs, i, cfg)
        {
            const char *unit = NULL;
            double v = avo_diff_config_metric(cfg, &unit);
            avo_strbuf_puts(out, "<tr><td>");
            avo_strbuf_html(out, str(cfg, "name"));
            avo_strbuf_printf(out, "</td><td>%s</td><td class=\"num\">",
                              json_is_true(json_object_get(cfg, "correct")) ? "yes" : "NO");
            html_number(out, v);
            avo_strbuf_printf(out, " %s</td><td class=\"num\">", unit ? unit : "");
            html_number(out, num(cfg, "median_s") * 1e3);
            avo_strbuf_puts(out, " ms</td><td class=\"num\">");
            html_number(out, num(cfg, "spread") * 100);
            avo_strbuf_printf(out, "%%</td><td class=\"num\">%lld</td><td class=\"num\">",
                              integer(cfg, "samples"));
            html_number(out, num(cfg, "max_error"));
            avo_strbuf_puts(out, "</td></tr>\n");
        }
        avo_strbuf_puts(out, "</table>\n");
    }

    avo_strbuf_printf(out, "<details%s><summary>source</summary><pre>",
                      full ? " open=\"open\"" : "");
    avo_strbuf_html(out, str(c, "source"));
    avo_strbuf_puts(out, "</pre></details>\n");

    /* The report diffs against the first parent; a candidate page against
     * each, and shows the worker's log. */
    size_t n_diffs = full ? json_array_size(parents) : json_array_size(parents) > 0;
    for (i = 0; i < n_diffs; i++) {
        int rc = parent_diff(out, r->ar, integer(json_array_get(parents, i), "id"), id, full, err,
                             errlen);
        if (rc < 0)
            return rc;
    }
    if (full) {
        avo_strbuf_puts(out, "<h4>log</h4>\n");
        if (*str(c, "log")) {
            avo_strbuf_puts(out, "<pre class=\"log\">");
            avo_strbuf_html(out, str(c, "log"));
            avo_strbuf_puts(out, "</pre>\n");
        } else {
            avo_strbuf_puts(out, "<p class=\"muted\">no log recorded</p>\n");
        }
    }
    avo_strbuf_puts(out, "</section>\n");
    return 0;
}

static int cmp_score_desc(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    double sx = num(x, "score"), sy = num(y, "score");
    if (sx != sy)
        return sx < sy ? 1 : -1;
    return (integer(x, "id") > integer(y, "id")) - (integer(x, "id") < integer(y, "id"));
}

/* One row of the metadata table; value escaped, NULL shown as a dash. */
static void meta_row(avo_strbuf *out, const char *name, const char *value)
{
    avo_strbuf_printf(out, "<tr><th>%s</th><td>", name);
    if (value && *value)
        avo_strbuf_html(out, value);
    else
        avo_strbuf_puts(out, "<span class=\"muted\">—</span>");
    avo_strbuf_puts(out, "</td></tr>\n");
}

/*
 * The agent's attempts as one row of the run table, as the AVO paper counts
 * them: directions explored against versions committed, then every outcome
 * (re-timings included) with its count.  No row for a run without attempts.
 */
static void attempts_row(avo_strbuf *out, const json_t *attempts)
{
    const json_t *outcomes = json_object_get(attempts, "outcomes");
    if (json_object_size(outcomes) == 0)
        return;
    avo_strbuf_printf(out, "<tr><th>agent attempts</th><td>%lld explored, %lld committed (",
                      integer(attempts, "explored"), integer(attempts, "committed"));
    const char *key;
    json_t *n;
    int first = 1;
    json_object_foreach((json_t *)outcomes, key, n)
    {
        if (!first)
            avo_strbuf_puts(out, ", ");
        first = 0;
        avo_strbuf_html(out, key);
        avo_strbuf_printf(out, " %lld", (long long)json_integer_value(n));
    }
    avo_strbuf_puts(out, ")</td></tr>\n");
}

static void section_metadata(avo_strbuf *out, const json_t *run, size_t n_ok, size_t n_failed)
{
    avo_strbuf_puts(out, "<h2 id=\"run\">Run</h2>\n<table>\n");
    char buf[64];
    snprintf(buf, sizeof buf, "%lld", integer(run, "id"));
    meta_row(out, "run", buf);
    meta_row(out, "script", str(run, "script_path"));
    long long seed = integer(run, "seed");
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
    meta_row(out, "seed", buf);
    meta_row(out, "status", str(run, "status"));
    avo_strbuf_puts(out, "<tr><th>started</th><td>");
    html_time(out, num(run, "started_at"));
    avo_strbuf_puts(out, "</td></tr>\n<tr><th>ended</th><td>");
    html_time(out, num(run, "ended_at"));
    double dur = num(run, "ended_at") - num(run, "started_at");
    if (isfinite(dur))
        avo_strbuf_printf(out, " (%.1f s)", dur);
    avo_strbuf_puts(out, "</td></tr>\n");
    snprintf(buf, sizeof buf, "%zu ok, %zu failed", n_ok, n_failed);
    meta_row(out, "evaluations", buf);
    meta_row(out, "score unit", str(run, "unit"));
    attempts_row(out, json_object_get(run, "attempts"));
    meta_row(out, "engine", str(run, "engine_version"));
    meta_row(out, "compiler", str(run, "compiler"));
    meta_row(out, "host", str(run, "host"));
    char *config =
        json_dumps(json_object_get(run, "config"), JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!config)
        out->failed = 1;
    meta_row(out, "config", config);
    free(config);
    avo_strbuf_puts(out, "</table>\n<details><summary>script source</summary><pre>");
    avo_strbuf_html(out, str(run, "script_source"));
    avo_strbuf_puts(out, "</pre></details>\n");
}

/* "local GPU 2 (H100)", "node7/4242 GPU 0", "node7/4242": who timed a result. */
static void worker_label(const json_t *result, char *buf, size_t len)
{
    const json_t *w = json_object_get(result, "worker");
    const json_t *device = json_object_get(w, "device");
    const char *name = str(w, "name");
    const char *model = str(json_object_get(result, "device"), "name");
    int n = snprintf(buf, len, "%s", name && *name ? name : "local");
    if (json_is_integer(device) && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " GPU %lld", (long long)json_integer_value(device));
    if (model && *model && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " (%s)", model);
}

/*
 * Evaluations per device or remote worker: how many, how many verified, and
 * the median and best score of those, so a slow or failing GPU stands out.
 * Shown only when results name a GPU or a remote worker.
 */
static void section_devices(avo_strbuf *out, const json_t *cands)
{
    json_t *groups = json_object(); /* label -> [scores...], plus counts */
    size_t i;
    const json_t *c;
    int any = 0;
    json_array_foreach(cands, i, c)
    {
        const json_t *result = json_object_get(c, "result");
        const json_t *w = json_object_get(result, "worker");
        if (!w || (!json_object_get(w, "device") && !json_object_get(w, "name")))
            continue;
        any = 1;
        char label[512];
        worker_label(result, label, sizeof label);
        json_t *g = json_object_get(groups, label);
        if (!g) {
            g = json_pack("{s:i, s:[]}", "n", 0, "scores");
            json_object_set_new(groups, label, g);
        }
        json_object_set_new(g, "n", json_integer(integer(g, "n") + 1));
        if (is_ok(c))
            json_array_append_new(json_object_get(g, "scores"), json_real(num(c, "score")));
    }
    if (any) {
        avo_strbuf_puts(out, "<h2 id=\"devices\">Devices</h2>\n<table>\n<tr><th>worker</th>"
                             "<th>evaluations</th><th>verified</th><th>median score</th>"
                             "<th>best score</th></tr>\n");
        const char *label;
        json_t *g;
        json_object_foreach(groups, label, g)
        {
            const json_t *scores = json_object_get(g, "scores");
            size_t n = json_array_size(scores);
            double *v = calloc(n + 1, sizeof *v);
            if (!v) {
                out->failed = 1;
                break;
            }
            for (size_t k = 0; k < n; k++)
                v[k] = json_real_value(json_array_get(scores, k));
            qsort(v, n, sizeof *v, cmp_double);
            avo_strbuf_puts(out, "<tr><td>");
            avo_strbuf_html(out, label);
            avo_strbuf_printf(out, "</td><td>%lld</td><td>%zu</td><td>", integer(g, "n"), n);
            if (n)
                html_number(out, quantile(v, n, 0.5));
            avo_strbuf_puts(out, "</td><td>");
            if (n)
                html_number(out, v[n - 1]);
            avo_strbuf_puts(out, "</td></tr>\n");
            free(v);
        }
        avo_strbuf_puts(out, "</table>\n");
    }
    json_decref(groups);
}


/* Add one to counts[text] (text cut at 300 bytes).  NULL counts: no-op. */
static void count_text(json_t *counts, const char *text)
{
    char key[304];
    snprintf(key, sizeof key, "%s", text);
    if (strlen(text) >= 300)
        strcpy(key + 296, "...");
    json_int_t n = json_integer_value(json_object_get(counts, key));
    json_object_set_new(counts, key, json_integer(n + 1));
}

typedef struct {
    const char *text;
    json_int_t n;
} counted;

static int cmp_counted(const void *a, const void *b)
{
    const counted *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    return strcmp(x->text, y->text);
}

/*
 * A table of `counts` (text -> times), most frequent first, under the
 * heading `title`; nothing when counts is empty.
 */
static void counts_table(avo_strbuf *out, const char *title, const char *what, const json_t *counts)
{
    size_t n = json_object_size(counts), k = 0;
    if (n == 0)
        return;
    counted *rows = calloc(n, sizeof *rows);
    if (!rows) {
        out->failed = 1;
        return;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)counts, key, v)
    {
        rows[k++] = (counted){key, json_integer_value(v)};
    }
    qsort(rows, n, sizeof *rows, cmp_counted);
    avo_strbuf_printf(out, "<h3>%s</h3>\n<table><tr><th>times</th><th>%s</th></tr>\n", title, what);
    for (k = 0; k < n; k++) {
        avo_strbuf_printf(out, "<tr><td class=\"num\">%lld</td><td>", (long long)rows[k].n);
        avo_strbuf_html(out, rows[k].text);
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
    free(rows);
}

/*
 * The LLM section: spend, then the failed calls (model and error) and the
 * operator outcomes that made no child (operator_outcome events: rejected
 * answers and failed calls, with their reasons), each counted.
 */
static void section_llm(avo_strbuf *out, const json_t *spend, const json_t *calls,
                        const json_t *outcomes)
{
    json_t *failed = json_object(), *rejected = json_object();
    size_t i;
    json_t *row;
    json_array_foreach(calls, i, row)
    {
        if (strcmp(str(row, "status"), "ok") == 0)
            continue;
        char text[400];
        snprintf(text, sizeof text, "%s: %s", str(row, "model"), str(row, "error"));
        if (failed)
            count_text(failed, text);
    }
    json_array_foreach(outcomes, i, row)
    {
        const json_t *d = json_object_get(row, "data");
        if (strcmp(str(d, "outcome"), "applied") == 0)
            continue;
        char text[400];
        snprintf(text, sizeof text, "%s — %s: %s", str(d, "operator"), str(d, "outcome"),
                 str(d, "reason"));
        if (rejected)
            count_text(rejected, text);
    }
    if (!failed || !rejected)
        out->failed = 1;
    avo_strbuf_puts(out, "<h2 id=\"llm\">LLM spend</h2>\n");
    if (integer(spend, "calls") == 0) {
        avo_strbuf_puts(out, "<p>no LLM calls</p>\n");
        counts_table(out, "Operators that made no child", "operator — outcome: reason", rejected);
        json_decref(failed);
        json_decref(rejected);
        return;
    }
    avo_strbuf_puts(out, "<table>\n");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)spend, key, v)
    {
        avo_strbuf_puts(out, "<tr><th>");
        avo_strbuf_html(out, key);
        avo_strbuf_puts(out, "</th><td class=\"num\">");
        html_number(out, json_number_value(v));
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
    counts_table(out, "Failed LLM calls", "model: error", failed);
    counts_table(out, "Operators that made no child", "operator — outcome: reason", rejected);
    json_decref(failed);
    json_decref(rejected);
}

/*
 * The baselines measured in the run (lua/avo/baselines.lua): one row per
 * baseline and device with its library, status and score and the best's
 * ratio to it, then per config the best candidate's throughput against
 * each baseline's.  A baseline or config that did not measure shows its
 * status and reason, never a zero.
 */
static void section_baselines(avo_strbuf *out, const json_t *run, const json_t *best)
{
    const json_t *rows = json_object_get(run, "baselines");
    avo_strbuf_puts(out, "<h2 id=\"baselines\">Baselines</h2>\n");
    if (!json_array_size(rows)) {
        avo_strbuf_puts(out, "<p class=\"muted\">the evaluator names no baselines (its"
                             " <code>baselines</code> field), or none was measured</p>\n");
        return;
    }
    /* Only the best's own evaluator's baselines are compared with. */
    const char *evaluator = best ? json_string_value(json_object_get(best, "evaluator")) : NULL;
    avo_strbuf_puts(out, "<table><tr><th>baseline</th><th>evaluator</th><th>device</th>"
                         "<th>library</th><th>version</th><th>status</th><th>score</th>"
                         "<th>best vs it</th></tr>\n");
    size_t i, k;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        avo_strbuf_puts(out, "<tr><td>");
        avo_strbuf_html(out, str(row, "name"));
        avo_strbuf_puts(out, "</td><td>");
        avo_strbuf_html(out, *str(row, "evaluator") ? str(row, "evaluator") : "unknown");
        avo_strbuf_puts(out, "</td><td>");
        avo_strbuf_html(out, str(row, "device"));
        if (*str(row, "device_name")) {
            avo_strbuf_puts(out, " (");
            avo_strbuf_html(out, str(row, "device_name"));
            avo_strbuf_puts(out, ")");
        }
        avo_strbuf_puts(out, "</td><td>");
        avo_strbuf_html(out, str(row, "library"));
        if (*str(row, "path")) {
            avo_strbuf_puts(out, " <span class=\"muted\">");
            avo_strbuf_html(out, str(row, "path"));
            avo_strbuf_puts(out, "</span>");
        }
        avo_strbuf_puts(out, "</td><td><code>");
        /* A content hash is cut short; a library's own version string is not. */
        const char *v = str(row, "version");
        char version[16];
        snprintf(version, sizeof version, "%.12s", v);
        avo_strbuf_html(out, strspn(v, "0123456789abcdef") == strlen(v) ? version : v);
        const json_t *lib = json_object_get(json_object_get(row, "result"), "baseline");
        const char *core = json_string_value(json_object_get(json_object_get(lib, "info"), "core"));
        if (core) {
            avo_strbuf_puts(out, "</code> core ");
            avo_strbuf_html(out, core);
            avo_strbuf_puts(out, "<code>");
        }
        if (json_is_integer(json_object_get(lib, "threads")))
            avo_strbuf_printf(out, "</code> %lld thread(s)<code>", integer(lib, "threads"));
        avo_strbuf_puts(out, "</code></td><td>");
        if (avo_compare_usable(row)) {
            avo_strbuf_puts(out, "ok</td><td class=\"num\">");
            html_number(out, num(row, "score"));
            avo_strbuf_puts(out, "</td><td class=\"num\">");
            if (best && avo_compare_owned(row, evaluator))
                avo_strbuf_printf(out, "%.2fx", num(best, "score") / num(row, "score"));
            else if (best)
                avo_strbuf_puts(out, "another evaluator's");
        } else {
            char text[600];
            avo_compare_describe(row, NULL, text, sizeof text);
            const char *colon = strstr(text, ": ");
            avo_strbuf_html(out, colon ? colon + 2 : text);
            avo_strbuf_puts(out, "</td><td>—</td><td>—");
        }
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
    json_t *own = avo_compare_of(rows, evaluator);
    rows = own;

    /* Per config: the best candidate against each baseline. */
    json_t *names = json_array();
    json_array_foreach(json_object_get(best, "configs"), k, row)
        json_array_append_new(names, json_string(str(row, "name")));
    json_array_foreach(rows, i, row)
    {
        const json_t *cfg;
        json_array_foreach(json_object_get(json_object_get(row, "result"), "configs"), k, cfg)
        {
            size_t m;
            json_t *n;
            int seen = 0;
            json_array_foreach(names, m, n) seen |=
                strcmp(json_string_value(n), str(cfg, "name")) == 0;
            if (!seen)
                json_array_append_new(names, json_string(str(cfg, "name")));
        }
    }
    if (!json_array_size(names) || !json_array_size(rows)) {
        json_decref(names);
        json_decref(own);
        return;
    }
    avo_strbuf_puts(out, "<p>Per config: the best candidate's throughput and each baseline's,"
                         " with the best's ratio to it.</p>\n<table><tr><th>config</th>"
                         "<th>best");
    if (best)
        avo_strbuf_printf(out, " #%lld", integer(best, "id"));
    avo_strbuf_puts(out, "</th>");
    json_array_foreach(rows, i, row)
    {
        avo_strbuf_puts(out, "<th>");
        avo_strbuf_html(out, str(row, "name"));
        avo_strbuf_puts(out, " (");
        avo_strbuf_html(out, str(row, "device"));
        avo_strbuf_puts(out, ")</th>");
    }
    avo_strbuf_puts(out, "</tr>\n");
    json_t *name;
    json_array_foreach(names, k, name)
    {
        const char *config = json_string_value(name);
        const char *unit = NULL;
        double mine = best ? config_metric(best, config, &unit) : NAN;
        avo_strbuf_puts(out, "<tr><td>");
        avo_strbuf_html(out, config);
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        if (isfinite(mine) && mine > 0) {
            html_number(out, mine);
            avo_strbuf_printf(out, " %s", unit ? unit : "");
        } else {
            avo_strbuf_puts(out, "—");
        }
        avo_strbuf_puts(out, "</td>");
        json_array_foreach(rows, i, row)
        {
            double theirs = 0;
            const char *their_unit = NULL;
            char why[600];
            if (avo_compare_config(row, config, &theirs, &their_unit, why, sizeof why)) {
                avo_strbuf_puts(out, "<td class=\"num\">");
                html_number(out, theirs);
                avo_strbuf_printf(out, " %s", their_unit ? their_unit : "");
                if (isfinite(mine) && mine > 0)
                    avo_strbuf_printf(out, " (%.2fx)", mine / theirs);
            } else {
                avo_strbuf_puts(out, "<td>");
                avo_strbuf_html(out, why);
            }
            avo_strbuf_puts(out, "</td>");
        }
        avo_strbuf_puts(out, "</tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
    json_decref(names);
    json_decref(own);
}

/*
 * The bests re-timed at the end of the run (lua/avo/retime.lua, the last
 * "retimed" event's `data`, NULL when the run has none): the ranking after
 * re-timing with each median and its interval (between processes), and the
 * candidates dropped for failing a round.
 */
static void section_retimed(avo_strbuf *out, const json_t *data, const avo_report_run *shown)
{
    avo_strbuf_puts(out, "<h2 id=\"retimed\">Re-timed bests</h2>\n");
    if (!json_is_object(data)) {
        avo_strbuf_puts(out, "<p class=\"muted\">not re-timed (the run did not end, the"
                             " evaluator times nothing, or --retime 0)</p>\n");
        return;
    }
    avo_strbuf_printf(out, "<p>The top %zu of ",
                      json_array_size(json_object_get(data, "ranked")) +
                          json_array_size(json_object_get(data, "dropped")));
    avo_strbuf_html(out, str(data, "evaluator"));
    avo_strbuf_printf(out, " timed again in %lld interleaved rounds, each evaluation a fresh"
                           " process; interval: where another process's measurement falls"
                           " (95%%). A candidate not ok in every round is out.</p>\n",
                      integer(data, "rounds"));
    avo_strbuf_puts(out, "<table><tr><th>rank</th><th>candidate</th><th>re-timed median</th>"
                         "<th>interval</th><th>recorded</th><th>change</th>"
                         "<th>paired per round vs the seed and baselines"
                         " (median [95% interval])</th>"
                         "</tr>\n");
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(data, "ranked"), i, e)
    {
        avo_strbuf_printf(out, "<tr><td class=\"num\">%lld</td><td>", integer(e, "rank"));
        cand_ref(out, integer(e, "id"), shown);
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        html_number(out, num(e, "median"));
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        html_number(out, num(e, "low"));
        avo_strbuf_puts(out, " – ");
        html_number(out, num(e, "high"));
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        html_number(out, num(e, "recorded"));
        avo_strbuf_printf(out, "</td><td class=\"num\">%+.1f%%</td><td>",
                          num(e, "recorded") > 0
                              ? (num(e, "median") / num(e, "recorded") - 1) * 100
                              : 0);
        avo_strbuf text = {0};
        avo_paired_text(&text, e);
        avo_strbuf_html(out, avo_strbuf_text(&text));
        avo_strbuf_free(&text);
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    /* The seed, timed in the same rounds (when it is not ranked above). */
    const json_t *seed = json_object_get(data, "seed");
    if (json_is_object(seed) && !avo_paired_entry(data, integer(seed, "id"))) {
        avo_strbuf_puts(out, "<tr><td>seed</td><td>");
        cand_ref(out, integer(seed, "id"), shown);
        if (json_object_get(seed, "median")) {
            avo_strbuf_puts(out, "</td><td class=\"num\">");
            html_number(out, num(seed, "median"));
            avo_strbuf_puts(out, "</td><td class=\"num\">");
            html_number(out, num(seed, "low"));
            avo_strbuf_puts(out, " – ");
            html_number(out, num(seed, "high"));
            avo_strbuf_puts(out, "</td><td class=\"num\">");
            html_number(out, num(seed, "recorded"));
            avo_strbuf_puts(out, "</td><td colspan=\"2\">timed in the same rounds</td></tr>\n");
        } else {
            avo_strbuf_puts(out, "</td><td colspan=\"5\">");
            avo_strbuf_html(out, str(seed, "why"));
            avo_strbuf_puts(out, "</td></tr>\n");
        }
    }
    json_array_foreach(json_object_get(data, "baselines"), i, e)
    {
        avo_strbuf_puts(out, "<tr><td>baseline</td><td>");
        avo_strbuf_html(out, str(e, "name"));
        if (json_object_get(e, "median")) {
            avo_strbuf_puts(out, "</td><td class=\"num\">");
            html_number(out, num(e, "median"));
            avo_strbuf_puts(out, "</td><td class=\"num\">");
            html_number(out, num(e, "low"));
            avo_strbuf_puts(out, " – ");
            html_number(out, num(e, "high"));
            avo_strbuf_puts(out, "</td><td colspan=\"3\">timed in the same rounds</td></tr>\n");
        } else {
            avo_strbuf_puts(out, "</td><td colspan=\"5\">");
            avo_strbuf_html(out, str(e, "why"));
            avo_strbuf_puts(out, "</td></tr>\n");
        }
    }
    json_array_foreach(json_object_get(data, "dropped"), i, e)
    {
        avo_strbuf_puts(out, "<tr><td>out</td><td>");
        cand_ref(out, integer(e, "id"), shown);
        avo_strbuf_puts(out, "</td><td colspan=\"5\">");
        avo_strbuf_html(out, str(e, "why"));
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
    /* The re-timed #1's paired ratio to each baseline per config. */
    const json_t *p;
    const json_t *first = json_array_get(json_object_get(data, "ranked"), 0);
    json_array_foreach(json_object_get(first, "paired"), i, p)
    {
        const char *against = str(p, "against");
        if (strcmp(against, "seed") == 0 || json_array_size(json_object_get(p, "configs")) == 0)
            continue;
        avo_strbuf text = {0};
        avo_paired_configs_text(&text, p);
        avo_strbuf_puts(out, "<p class=\"per-config\">");
        avo_strbuf_html(out, against);
        avo_strbuf_puts(out, " per config, paired: ");
        avo_strbuf_html(out, avo_strbuf_text(&text));
        avo_strbuf_puts(out, "</p>\n");
        avo_strbuf_free(&text);
    }
}

/* ------------------------------------------------------ the shared parts */

const char *avo_report_css(void)
{
    return style;
}

void avo_report_run_free(avo_report_run *r)
{
    if (!r)
        return;
    free(r->ranked);
    json_decref(r->shown);
    json_decref(r->run);
    json_decref(r->cands);
    json_decref(r->nodes);
    json_decref(r->spend);
    json_decref(r->calls);
    json_decref(r->outcomes);
    json_decref(r->retimed);
    memset(r, 0, sizeof *r);
}

/*
 * Read what the sections show: the run with its summary (unit, attempts,
 * baselines), its candidates (with sources if with_sources), the LLM calls and spend, the
 * operator outcomes and re-timing events, the best candidate's lineage;
 * then rank the verified candidates and pick the ones the report gives a
 * section (the top ones and the best's ancestors).  On failure *ret is
 * left empty (nothing to free).
 */
int avo_report_load(avo_archive *ar, int64_t run_id, int with_sources, avo_report_run *ret,
                    char *err, size_t errlen)
{
    if (!ar || !ret || run_id < 0)
        return avo_error(err, errlen, AVO_EINVAL, "report: bad argument");
    avo_report_run *r = ret;
    memset(r, 0, sizeof *r);
    r->ar = ar;
    r->cand_href = "#c";
    int rc = avo_archive_run_summary(ar, run_id, &r->run, err, errlen);
    if (rc < 0)
        return rc;
    run_id = integer(r->run, "id");
    if ((rc = avo_archive_candidates(ar, run_id, with_sources, &r->cands, err, errlen)) < 0 ||
        (rc = avo_archive_llm_spend(ar, run_id, &r->spend, err, errlen)) < 0 ||
        (rc = avo_archive_llm_calls(ar, run_id, &r->calls, err, errlen)) < 0 ||
        (rc = avo_archive_events(ar, run_id, "operator_outcome", &r->outcomes, err, errlen)) < 0 ||
        (rc = avo_archive_events(ar, run_id, "retimed", &r->retimed, err, errlen)) < 0)
        goto fail;

    size_t i;
    json_t *c;
    r->ranked = calloc(json_array_size(r->cands) + 1, sizeof *r->ranked);
    r->shown = json_object();
    if (!r->ranked || !r->shown) {
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        goto fail;
    }
    json_array_foreach(r->cands, i, c)
    {
        if (!is_finished(c))
            continue;
        if (!is_ok(c)) {
            r->n_failed++;
            continue;
        }
        r->ranked[r->n_ok++] = c;
        if (!r->seed && strcmp(str(c, "operator"), "seed") == 0)
            r->seed = c;
    }
    qsort(r->ranked, r->n_ok, sizeof *r->ranked, cmp_score_desc);
    r->best = r->n_ok ? r->ranked[0] : NULL;
    /* The best of a re-timed run is its re-timed #1 (paired.h). */
    json_int_t first = avo_paired_best(
        json_object_get(json_array_get(r->retimed, json_array_size(r->retimed) - 1), "data"));
    for (i = 0; first && i < r->n_ok; i++)
        if (integer(r->ranked[i], "id") == first)
            r->best = r->ranked[i];
    if (r->best &&
        (rc = avo_archive_lineage(ar, integer(r->best, "id"), &r->nodes, err, errlen)) < 0)
        goto fail;

    char key[24];
    for (i = 0; i < r->n_ok && i < TOP_N; i++) {
        snprintf(key, sizeof key, "%lld", integer(r->ranked[i], "id"));
        json_object_set_new(r->shown, key, json_true());
    }
    json_array_foreach(r->nodes, i, c)
    {
        snprintf(key, sizeof key, "%lld", integer(c, "id"));
        json_object_set_new(r->shown, key, json_true());
    }
    return 0;

fail:
    avo_report_run_free(r);
    return rc;
}

void avo_report_summary(avo_strbuf *out, const avo_report_run *r)
{
    const json_t *best = r->best, *seed = r->seed;
    avo_strbuf_puts(out, "<p class=\"summary\">");
    if (best) {
        avo_strbuf_puts(out, "best ");
        cand_ref(out, integer(best, "id"), r);
        avo_strbuf_puts(out, " (");
        avo_strbuf_html(out, str(best, "operator"));
        avo_strbuf_printf(out, ", generation %lld)", integer(best, "generation"));
        const json_t *data =
            json_object_get(json_array_get(r->retimed, json_array_size(r->retimed) - 1), "data");
        const json_t *e = avo_paired_entry(data, integer(best, "id"));
        if (e) {
            /* The re-timed figures first, paired round by round. */
            avo_strbuf_printf(out, ", re-timed: <span class=\"retimed\">%.4g [%.4g, %.4g]</span>"
                                   " (median of %lld rounds, each a fresh process)",
                              num(e, "median"), num(e, "low"), num(e, "high"),
                              integer(data, "rounds"));
            avo_strbuf text = {0};
            avo_paired_text(&text, e);
            if (text.len) {
                avo_strbuf_puts(out, json_is_true(json_object_get(data, "paired"))
                                         ? "; paired per round (median [95% interval]): "
                                         : "; re-timed before pairing: ");
                avo_strbuf_puts(out, "<span class=\"paired\">");
                avo_strbuf_html(out, avo_strbuf_text(&text));
                avo_strbuf_puts(out, "</span>");
            }
            avo_strbuf_free(&text);
            avo_strbuf_printf(out, ". Recorded in the search (unpaired): score %.4g",
                              num(best, "score"));
        } else {
            avo_strbuf_printf(out, ": score %.4g", num(best, "score"));
        }
        if (seed && num(seed, "score") > 0)
            avo_strbuf_printf(out, ", %.2fx the seed (#%lld: %.4g)",
                              num(best, "score") / num(seed, "score"), integer(seed, "id"),
                              num(seed, "score"));
        json_t *own = avo_compare_of(json_object_get(r->run, "baselines"),
                                     json_string_value(json_object_get(best, "evaluator")));
        const json_t *strongest = avo_compare_strongest(own);
        if (strongest) {
            avo_strbuf_printf(out, ", %.2fx ", num(best, "score") / num(strongest, "score"));
            avo_strbuf_html(out, str(strongest, "name"));
            avo_strbuf_printf(out, " (the strongest baseline: %.4g)", num(strongest, "score"));
        }
        json_decref(own);
        if (!e) {
            avo_strbuf_puts(out, " (<span class=\"unpaired\">");
            avo_strbuf_html(out, AVO_PAIRED_NONE);
            avo_strbuf_puts(out, "</span>)");
        }
        avo_strbuf_puts(out, ". ");
    } else {
        avo_strbuf_puts(out, "no verified candidate. ");
    }
    avo_strbuf_printf(out,
                      "<span class=\"n-evaluations\">%zu</span> evaluations, %zu failed.</p>\n",
                      r->n_ok + r->n_failed, r->n_failed);
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

void avo_report_generations(avo_strbuf *out, const avo_report_run *r)
{
    avo_strbuf_puts(out, "<h2 id=\"generations\">Score per generation</h2>\n");
    if (r->n_ok + r->n_failed)
        plot_generations(out, r->cands, r->run);
    else
        avo_strbuf_puts(out, "<p>no finished evaluations</p>\n");
}

void avo_report_baselines(avo_strbuf *out, const avo_report_run *r)
{
    section_baselines(out, r->run, r->best);
}

void avo_report_retimed(avo_strbuf *out, const avo_report_run *r)
{
    section_retimed(
        out, json_object_get(json_array_get(r->retimed, json_array_size(r->retimed) - 1), "data"),
        r);
}

void avo_report_lineage(avo_strbuf *out, const avo_report_run *r)
{
    avo_strbuf_puts(out, "<h2 id=\"lineage\">Lineage of the best candidate</h2>\n");
    if (!r->best) {
        avo_strbuf_puts(out, "<p>no verified candidate</p>\n");
        return;
    }
    json_t *seen = json_object();
    if (!seen) {
        out->failed = 1;
        return;
    }
    avo_strbuf_puts(out, "<ul class=\"tree\">\n");
    lineage_tree(out, r->nodes, integer(r->best, "id"), NULL, seen, r, 0);
    avo_strbuf_puts(out, "</ul>\n");
    json_decref(seen);
}

void avo_report_top(avo_strbuf *out, const avo_report_run *r)
{
    const json_t *seed = r->seed;
    avo_strbuf_puts(out, "<h2 id=\"top\">Top versions</h2>\n");
    if (!r->n_ok) {
        avo_strbuf_puts(out, "<p>no verified candidate</p>\n");
        return;
    }
    avo_strbuf_puts(out, "<table><tr><th>rank</th><th>candidate</th><th>score</th>"
                         "<th>vs seed</th><th>operator</th><th>gen</th><th>parents</th>"
                         "<th>knobs</th></tr>\n");
    for (size_t i = 0; i < r->n_ok && i < TOP_N; i++) {
        const json_t *c = r->ranked[i];
        avo_strbuf_printf(out, "<tr><td class=\"num\">%zu</td><td>", i + 1);
        cand_ref(out, integer(c, "id"), r);
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        html_number(out, num(c, "score"));
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        if (seed && num(seed, "score") > 0)
            avo_strbuf_printf(out, "%.2fx", num(c, "score") / num(seed, "score"));
        avo_strbuf_puts(out, "</td><td>");
        avo_strbuf_html(out, str(c, "operator"));
        avo_strbuf_printf(out, "</td><td class=\"num\">%lld</td><td>", integer(c, "generation"));
        size_t j;
        json_t *p;
        json_array_foreach(json_object_get(c, "parents"), j, p)
        {
            if (j)
                avo_strbuf_puts(out, " ");
            cand_ref(out, integer(p, "id"), r);
        }
        avo_strbuf_puts(out, "</td><td><code>");
        html_knobs(out, json_object_get(c, "knobs"));
        avo_strbuf_puts(out, "</code></td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
}

void avo_report_devices(avo_strbuf *out, const avo_report_run *r)
{
    section_devices(out, r->cands);
}

void avo_report_metadata(avo_strbuf *out, const avo_report_run *r)
{
    section_metadata(out, r->run, r->n_ok, r->n_failed);
}

void avo_report_llm(avo_strbuf *out, const avo_report_run *r)
{
    section_llm(out, r->spend, r->calls, r->outcomes);
}

void avo_report_time(avo_strbuf *out, double t)
{
    html_time(out, t);
}

void avo_report_number(avo_strbuf *out, double v)
{
    html_number(out, v);
}

void avo_report_candidate_ref(avo_strbuf *out, const avo_report_run *r, long long id)
{
    cand_ref(out, id, r);
}

/*
 * The static page: the sections in order, then a section for each shown
 * candidate, newest first.  Returns the first archive error; out->failed
 * means out of memory.
 */
int avo_report_html(avo_archive *ar, int64_t run_id, avo_strbuf *out, char *err, size_t errlen)
{
    if (!ar || !out || run_id < 0)
        return avo_error(err, errlen, AVO_EINVAL, "report: bad argument");
    avo_report_run r;
    int rc = avo_report_load(ar, run_id, 1, &r, err, errlen);
    if (rc < 0)
        return rc;
    run_id = integer(r.run, "id");

    avo_strbuf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                         "<title>");
    avo_strbuf_printf(out, "avo report: run %lld (", (long long)run_id);
    avo_strbuf_html(out, str(r.run, "script_path"));
    avo_strbuf_printf(out, ")</title>\n<style>%s</style>\n</head>\n<body>\n", style);
    avo_strbuf_printf(out, "<h1>avo report — run %lld: ", (long long)run_id);
    avo_strbuf_html(out, str(r.run, "script_path"));
    avo_strbuf_puts(out, "</h1>\n");
    avo_report_summary(out, &r);
    avo_strbuf_puts(out, "<p><a href=\"#trajectory\">trajectory</a> · <a href=\"#generations\">"
                         "generations</a> · <a href=\"#baselines\">baselines</a> · "
                         "<a href=\"#retimed\">re-timed</a> · "
                         "<a href=\"#lineage\">lineage</a> · <a href=\"#top\">"
                         "top versions</a> · <a href=\"#run\">run</a> · <a href=\"#llm\">LLM "
                         "spend</a></p>\n");
    avo_report_trajectory(out, &r);
    avo_report_generations(out, &r);
    avo_report_baselines(out, &r);
    avo_report_retimed(out, &r);
    avo_report_lineage(out, &r);
    avo_report_top(out, &r);
    /* Sections, highest id first: the newest versions lead. */
    char key[24];
    for (size_t k = json_array_size(r.cands); k-- > 0;) {
        const json_t *c = json_array_get(r.cands, k);
        snprintf(key, sizeof key, "%lld", integer(c, "id"));
        if (!json_object_get(r.shown, key))
            continue;
        if ((rc = avo_report_candidate(out, &r, c, 0, err, errlen)) < 0)
            goto out;
    }
    avo_report_devices(out, &r);
    avo_report_metadata(out, &r);
    avo_report_llm(out, &r);
    avo_strbuf_puts(out, "<p class=\"muted\">generated by avo " AVO_VERSION " at ");
    html_time(out, avo_now());
    avo_strbuf_puts(out, "</p>\n</body>\n</html>\n");
    if (out->failed)
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
out:
    avo_report_run_free(&r);
    return rc;
}
