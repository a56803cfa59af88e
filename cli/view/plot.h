/*
 * plot.h — inline SVG plots: one frame (avo_plot) maps data to SVG
 * coordinates; the sections draw marks in it (section_trajectory.c,
 * section_generations.c).  Labels from the archive are escaped.  The axes'
 * ticks come from avo_report_nice_axis (report.h).
 */
#ifndef AVO_VIEW_PLOT_H
#define AVO_VIEW_PLOT_H

#include <jansson.h>

#include "core/strbuf.h"

/* One plot frame: data ranges and the pixel box they map to. */
typedef struct avo_plot {
    double x_lo, x_hi, x_step;
    double y_lo, y_hi, y_step;
    double left, top, width, height; /* inner box, pixels */
} avo_plot;

/* Data coordinates to SVG pixels. */
double avo_plot_x(const avo_plot *p, double x);
double avo_plot_y(const avo_plot *p, double y);
/* Open an SVG of the given size with a frame for p: grid, ticks, labels. */
void avo_plot_begin(avo_strbuf *out, const avo_plot *p, double svg_w, double svg_h,
                    const char *title, const char *x_label, const char *y_label, int integer_x);
/* One legend entry at row `row` right of the plot: a line sample (dash may
 * be NULL) or a marker, and an escaped label. */
void avo_plot_legend(avo_strbuf *out, const avo_plot *p, int row, const char *color,
                     const char *dash, int marker, const char *label);
/* A labelled horizontal line across the plot. */
void avo_plot_hline(avo_strbuf *out, const avo_plot *p, double y, const char *color,
                    const char *label);
/* A failed evaluation c: a red cross at (x, y), titled with its reason. */
void avo_plot_fail_mark(avo_strbuf *out, double x, double y, const json_t *c);

/*
 * Thinning of marks for long runs.  Up to AVO_PLOT_THIN_FROM marks a plot
 * draws every one; past that, one mark per cell of AVO_PLOT_CELL pixels
 * square (a dot is 5 px wide, so the picture is the same), so a plot of
 * 100,000 evaluations is tens of kilobytes, not megabytes.  `drawn` and
 * `total` count the marks for the caption that says so.
 */
#define AVO_PLOT_THIN_FROM 2000
#define AVO_PLOT_CELL 3
typedef struct avo_plot_thin {
    unsigned char *seen; /* a byte per cell; NULL: draw every mark */
    size_t cols, rows, drawn, total;
} avo_plot_thin;

/* Thinning for `marks` marks in p (no thinning when they are few, or when
 * the memory is not there). */
void avo_plot_thin_init(avo_plot_thin *t, const avo_plot *p, size_t marks);
/* Whether the mark at pixel (x, y) is drawn: the first in its cell. */
int avo_plot_thin_keep(avo_plot_thin *t, const avo_plot *p, double x, double y);
/* The caption line for a thinned plot (nothing when every mark was drawn). */
void avo_plot_thin_note(avo_strbuf *out, const avo_plot_thin *t);
void avo_plot_thin_free(avo_plot_thin *t);

#endif
