/*
 * report.h — one self-contained HTML page about a run: the score
 * trajectory, the score distribution per generation, the best candidate's
 * ancestry, the top versions with their sources and diffs, the run's
 * metadata and its LLM spend.
 *
 * The page needs nothing from the network: plots are inline SVG generated
 * here, styles are inline, and there is no script.  Everything read from
 * the archive is HTML-escaped.  The markup is well-formed XML as well as
 * HTML, so XML tools can read it.
 */
#ifndef AVO_REPORT_H
#define AVO_REPORT_H

#include <stdint.h>

#include "archive.h"
#include "strbuf.h"

/* Append the report of run_id (0: the latest run) to out.  AVO_ENOTFOUND
 * when there is no such run. */
int avo_report_html(avo_archive *ar, int64_t run_id, avo_strbuf *out, char *err, size_t errlen);

/* Ticks for an axis over [lo, hi]: a "nice" step (1, 2 or 5 times a power
 * of ten) giving about `target` intervals, and the range widened to
 * multiples of it.  *ret_lo, *ret_hi and *ret_step get the result. */
void avo_report_nice_axis(double lo, double hi, int target, double *ret_lo, double *ret_hi,
                          double *ret_step);

#endif
