/*
 * view.h — what every view of the archive shares: `avo report`
 * (cli/report.c), the live view `avo serve` (cli/serve.c) and the sections
 * they both render (cli/view/section_*.c).
 *
 * Accessors read a field of a JSON object as the archive's summaries hold
 * it, with a neutral value when it is missing; the formatters append HTML
 * to a caller-owned avo_strbuf, escaping every string that came from the
 * archive.
 */
#ifndef AVO_VIEW_H
#define AVO_VIEW_H

#include <jansson.h>
#include <stddef.h>

#include "core/strbuf.h"

/* obj[key] as a string ("" when missing or not a string; borrowed from
 * obj), an integer (0 when missing) or a number (NaN when missing). */
const char *avo_view_str(const json_t *obj, const char *key);
long long avo_view_int(const json_t *obj, const char *key);
double avo_view_num(const json_t *obj, const char *key);

/* A candidate's status: "ok"; anything but "pending". */
int avo_view_is_ok(const json_t *c);
int avo_view_is_finished(const json_t *c);

/* s escaped, cut to at most `max` bytes (at a UTF-8 boundary) with an
 * ellipsis when cut. */
void avo_view_cut(avo_strbuf *out, const char *s, size_t max);
/* A time as "YYYY-MM-DD HH:MM:SS UTC"; a number with 4 significant digits
 * (each a dash when not finite). */
void avo_view_time(avo_strbuf *out, double t);
void avo_view_number(avo_strbuf *out, double v);
/* Knobs as "NAME=value NAME=value", escaped; "(none)" when empty. */
void avo_view_knobs(avo_strbuf *out, const json_t *knobs);

/* Candidate c's metric for the config called `name` (NaN when it has no
 * such config); its unit into *ret_unit unless NULL. */
double avo_view_config_metric(const json_t *c, const char *name, const char **ret_unit);
/* qsort's comparison of doubles, ascending; quantile q of sorted v[0..n)
 * by linear interpolation (n > 0). */
int avo_view_cmp_double(const void *a, const void *b);
double avo_view_quantile(const double *v, size_t n, double q);
/* What the scores measure: the unit the run's evaluator recorded
 * (avo_archive_run_summary), or plain "score" for runs without one. */
const char *avo_view_score_label(const json_t *run);
/* The CSS class of a run's or an experiment cell's status
 * ("status-running", "status-failed" or ""). */
const char *avo_view_status_class(const char *status);

#endif
