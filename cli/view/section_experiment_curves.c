/*
 * section_experiment_curves.c — the learning curves of one workload and
 * budget of an experiment's report (experiment.h): per arm, the median best
 * score so far over its seeds with the interquartile band, against
 * evaluations and against wall time, as inline SVG.  Its frame is its own
 * (not plot.c's): 640 x 300, ticks of 1, 2 or 5 x 10^k, as the report has
 * always drawn it.
 */
#include <math.h>
#include <stdlib.h>

#include "cli/view/experiment.h"
#include "cli/view/view.h"

enum { W = 640, H = 300, L = 64, R = 150, T = 16, B = 40 };

static const char *const PALETTE[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                      "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

/* The data box of one plot: x from 0 to x_max, y from y_lo to y_hi. */
typedef struct frame {
    double x_max, y_lo, y_hi;
} frame;

static double px(const frame *f, double x)
{
    return L + (W - L - R) * x / f->x_max;
}

static double py(const frame *f, double y)
{
    return T + (H - T - B) * (1 - (y - f->y_lo) / (f->y_hi - f->y_lo));
}

/* The ticks over [lo, hi]: a step of 1, 2 or 5 x 10^k giving about
 * `target`; calls tick(t) for each.  The first tick is a whole number of
 * steps (never -0). */
static void ticks(double lo, double hi, int target,
                  void (*tick)(avo_strbuf *, const frame *, double), avo_strbuf *out,
                  const frame *f)
{
    static const double steps[] = {1, 2, 5, 10};
    if (hi <= lo)
        hi = lo + 1;
    double raw = (hi - lo) / target;
    double mag = pow(10, floor(log10(raw)));
    double step = mag;
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        if (raw <= steps[i] * mag) {
            step = steps[i] * mag;
            break;
        }
    }
    double first = ceil(lo / step);
    if (fabs(first) < 9e15)
        first = (double)(long long)first;
    for (double t = first * step; t <= hi + step * 1e-9; t += step)
        tick(out, f, t);
}

static void x_tick(avo_strbuf *out, const frame *f, double t)
{
    avo_strbuf_printf(out,
                      "\n<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\"/>"
                      "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>",
                      px(f, t), H - B, px(f, t), H - B + 4, px(f, t), H - B + 16, t);
}

static void y_tick(avo_strbuf *out, const frame *f, double t)
{
    if (t < f->y_lo || t > f->y_hi)
        return;
    avo_strbuf_printf(out,
                      "\n<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
                      "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>",
                      L, py(f, t), W - R, py(f, t), L - 4, py(f, t) + 4, t);
}

/* The data box of `field` over the arms of g; 0 when there is nothing to
 * plot. */
static int frame_of(const json_t *g, const char *field, frame *f)
{
    f->x_max = 0;
    f->y_lo = HUGE_VAL;
    f->y_hi = -HUGE_VAL;
    size_t i, j;
    const json_t *a, *p;
    json_array_foreach(json_object_get(g, "arms"), i, a)
    {
        json_array_foreach(json_object_get(a, field), j, p)
        {
            f->x_max = fmax(f->x_max, avo_view_num(p, "x"));
            f->y_lo = fmin(f->y_lo, avo_view_num(p, "lo"));
            f->y_hi = fmax(f->y_hi, avo_view_num(p, "hi"));
        }
    }
    if (f->x_max == 0 || f->y_lo == HUGE_VAL)
        return 0;
    if (f->y_hi == f->y_lo) {
        f->y_hi += 0.5;
        f->y_lo -= 0.5;
    }
    double pad = (f->y_hi - f->y_lo) * 0.05;
    f->y_lo -= pad;
    f->y_hi += pad;
    return 1;
}

/* One arm's band (upper edge forwards, lower edge back) and median line. */
static void arm_band(avo_strbuf *out, const frame *f, const json_t *pts, const char *color)
{
    size_t n = json_array_size(pts);
    if (n == 0)
        return;
    avo_strbuf_puts(out, "\n<polygon points=\"");
    for (size_t k = 0; k < n; k++) {
        const json_t *p = json_array_get(pts, k);
        avo_strbuf_printf(out, "%s%.1f,%.1f", k ? " " : "", px(f, avo_view_num(p, "x")),
                          py(f, avo_view_num(p, "hi")));
    }
    for (size_t k = n; k-- > 0;) {
        const json_t *p = json_array_get(pts, k);
        avo_strbuf_printf(out, " %.1f,%.1f", px(f, avo_view_num(p, "x")),
                          py(f, avo_view_num(p, "lo")));
    }
    avo_strbuf_printf(out, "\" fill=\"%s\" fill-opacity=\"0.15\" stroke=\"none\"/>", color);
    avo_strbuf_puts(out, "\n<polyline points=\"");
    for (size_t k = 0; k < n; k++) {
        const json_t *p = json_array_get(pts, k);
        avo_strbuf_printf(out, "%s%.1f,%.1f", k ? " " : "", px(f, avo_view_num(p, "x")),
                          py(f, avo_view_num(p, "med")));
    }
    avo_strbuf_printf(out, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"/>", color);
}

/* One plot of curve `field` of each arm of g, against x_label. */
static void plot(avo_strbuf *out, const json_t *g, const char *field, const char *x_label)
{
    frame f;
    if (!frame_of(g, field, &f)) {
        avo_strbuf_puts(out, "<p>no evaluations to plot</p>");
        return;
    }
    avo_strbuf_printf(out,
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                      "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">"
                      "\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                      "stroke=\"#999\"/>",
                      W, H, W, H, L, T, W - L - R, H - T - B);
    ticks(0, f.x_max, 6, x_tick, out, &f);
    ticks(f.y_lo, f.y_hi, 5, y_tick, out, &f);
    avo_strbuf_printf(out, "\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (L + W - R) / 2,
                      H - 6);
    avo_strbuf_html(out, x_label);
    avo_strbuf_printf(out,
                      "</text>\n<text x=\"12\" y=\"%d\" transform=\"rotate(-90 12 %d)\" "
                      "text-anchor=\"middle\">best so far (",
                      (T + H - B) / 2, (T + H - B) / 2);
    avo_strbuf_html(out, avo_view_experiment_unit(g));
    avo_strbuf_puts(out, ")</text>");
    size_t i;
    const json_t *a;
    json_array_foreach(json_object_get(g, "arms"), i, a)
    {
        const char *color = PALETTE[i % (sizeof PALETTE / sizeof *PALETTE)];
        int y = T + 10 + 16 * (int)i;
        arm_band(out, &f, json_object_get(a, field), color);
        avo_strbuf_printf(out,
                          "\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                          "stroke-width=\"3\"/><text x=\"%d\" y=\"%d\">",
                          W - R + 10, y, W - R + 28, y, color, W - R + 32, y + 4);
        avo_strbuf_html(out, avo_view_str(a, "arm"));
        avo_strbuf_puts(out, "</text>");
    }
    avo_strbuf_puts(out, "\n</svg>");
}

void avo_view_experiment_section_curves(avo_strbuf *out, const json_t *group)
{
    avo_strbuf_puts(out, "<h3>Learning curves (median and interquartile band over seeds)</h3>");
    plot(out, group, "curve_evals", "evaluations");
    plot(out, group, "curve_time", "wall time (s)");
}
