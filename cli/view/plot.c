/*
 * plot.c — the SVG frame the report's plots share (see plot.h).
 */
#include "cli/view/plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/view.h"

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

double avo_plot_x(const avo_plot *p, double x)
{
    return p->left + (x - p->x_lo) / (p->x_hi - p->x_lo) * p->width;
}

double avo_plot_y(const avo_plot *p, double y)
{
    return p->top + p->height - (y - p->y_lo) / (p->y_hi - p->y_lo) * p->height;
}

/* Open an SVG of the given size with a frame for p: grid, ticks, labels. */
void avo_plot_begin(avo_strbuf *out, const avo_plot *p, double svg_w, double svg_h,
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
                          p->left, avo_plot_y(p, y), p->left + p->width, avo_plot_y(p, y),
                          p->left - 6, avo_plot_y(p, y) + 4, label);
    }
    for (double x = ceil(p->x_lo / p->x_step - 1e-9) * p->x_step; x <= p->x_hi + p->x_step * 1e-6;
         x += p->x_step) {
        if (integer_x && fabs(x - round(x)) > 1e-9)
            continue;
        tick_label(label, sizeof label, x, p->x_step);
        avo_strbuf_printf(out,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                          avo_plot_x(p, x), p->top + p->height, avo_plot_x(p, x),
                          p->top + p->height + 5, avo_plot_x(p, x), p->top + p->height + 18, label);
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
void avo_plot_legend(avo_strbuf *out, const avo_plot *p, int row, const char *color,
                     const char *dash, int marker, const char *label)
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
void avo_plot_hline(avo_strbuf *out, const avo_plot *p, double y, const char *color,
                    const char *label)
{
    avo_strbuf_printf(out,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\""
                      " stroke-dasharray=\"6 4\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\""
                      " fill=\"%s\">",
                      p->left, avo_plot_y(p, y), p->left + p->width, avo_plot_y(p, y), color,
                      p->left + p->width - 4, avo_plot_y(p, y) - 4, color);
    avo_strbuf_html(out, label);
    avo_strbuf_puts(out, "</text>\n");
}

/* A failed evaluation: a red cross at the bottom of the plot. */
void avo_plot_fail_mark(avo_strbuf *out, double x, double y, const json_t *c)
{
    avo_strbuf_printf(out,
                      "<path d=\"M%.1f %.1fl6 6m0 -6l-6 6\" stroke=\"#d62728\""
                      " stroke-width=\"1.5\"><title>#%lld %s: ",
                      x - 3, y - 3, avo_view_int(c, "id"), avo_view_str(c, "status"));
    avo_strbuf_html(out, avo_view_str(c, "reason"));
    avo_strbuf_puts(out, "</title></path>\n");
}

void avo_plot_thin_init(avo_plot_thin *t, const avo_plot *p, size_t marks)
{
    *t = (avo_plot_thin){0};
    if (marks <= AVO_PLOT_THIN_FROM)
        return;
    /* Crosses of failures sit below the box: a few rows more than it. */
    t->cols = (size_t)(p->width / AVO_PLOT_CELL) + 4;
    t->rows = (size_t)((p->height + 20) / AVO_PLOT_CELL) + 4;
    t->seen = calloc(t->cols * t->rows, 1);
}

int avo_plot_thin_keep(avo_plot_thin *t, const avo_plot *p, double x, double y)
{
    t->total++;
    if (t->seen) {
        double cx = (x - p->left) / AVO_PLOT_CELL + 2, cy = (y - p->top) / AVO_PLOT_CELL + 2;
        /* Outside the box (or not a number): the edge cell. */
        size_t col = !(cx >= 0) ? 0 : cx >= (double)t->cols ? t->cols - 1 : (size_t)cx;
        size_t row = !(cy >= 0) ? 0 : cy >= (double)t->rows ? t->rows - 1 : (size_t)cy;
        if (t->seen[row * t->cols + col])
            return 0;
        t->seen[row * t->cols + col] = 1;
    }
    t->drawn++;
    return 1;
}

void avo_plot_thin_note(avo_strbuf *out, const avo_plot_thin *t)
{
    if (t->drawn < t->total)
        avo_strbuf_printf(out,
                          "<p class=\"muted\">%zu of %zu marks drawn: past %d, marks closer than"
                          " %d px to one already drawn are left out.</p>\n",
                          t->drawn, t->total, AVO_PLOT_THIN_FROM, AVO_PLOT_CELL);
}

void avo_plot_thin_free(avo_plot_thin *t)
{
    free(t->seen);
    t->seen = NULL;
}
