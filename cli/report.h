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

#include "store/archive.h"
#include "core/strbuf.h"

/* Append the report of run_id (0: the latest run) to out.  AVO_ENOTFOUND
 * when there is no such run. */
int avo_report_html(avo_archive *ar, int64_t run_id, avo_strbuf *out, char *err, size_t errlen);

/*
 * The parts of the page, shared by `avo report` (avo_report_html) and the
 * live view (`avo serve`, serve.c), so the two never disagree.  A run is
 * loaded once (avo_report_load) and each section renders from it; every
 * string from the archive goes through avo_strbuf_html().
 *
 * cand_href is put before a candidate's id to link to it: "#c" in the
 * report (the candidate's section on the page), a page's path in the live
 * view; link_all links every candidate (the live view has a page for
 * each), else only the report's shown ones (the top versions and the best's
 * ancestors).  The strings are borrowed and must be HTML-safe.
 */
typedef struct avo_report_run {
    avo_archive *ar;           /* borrowed: diffs are read through it */
    json_t *run;               /* avo_archive_run_summary */
    json_t *cands;             /* every candidate in id order: brief rows, full for the shown */
    json_t *spend, *calls;     /* LLM spend and calls */
    json_t *outcomes;          /* operator_outcome events */
    json_t *retimed;           /* retimed events */
    json_t *nodes;             /* the best's lineage (NULL without a best) */
    json_t *shown;             /* id text -> true: candidates with a section in the report */
    const json_t **ranked;     /* verified candidates, best first (n_ok of them) */
    size_t n_ok, n_failed;     /* finished evaluations, verified and not */
    const json_t *seed, *best; /* in cands; NULL when absent */
    const char *cand_href;
    int link_all;
} avo_report_run;

/* Load run_id (0: the latest) of ar into *ret, the candidates' sources
 * only with with_sources (avo_report_candidate shows them; the other
 * sections do not need them); free with avo_report_run_free (which accepts
 * a zeroed or freed one).  AVO_ENOTFOUND when there is no such run.
 * Candidates are brief rows (avo_archive_candidates_brief) except the
 * shown and the pending ones, which are full: a section that reads every
 * candidate reads only the brief keys, and a key it adds must be added
 * there. */
int avo_report_load(avo_archive *ar, int64_t run_id, int with_sources, avo_report_run *ret,
                    char *err, size_t errlen);
void avo_report_run_free(avo_report_run *r);

/* The page's style sheet (CSS text, static). */
const char *avo_report_css(void);

/* The one-line summary: the best and its ratios, evaluations, failures. */
void avo_report_summary(avo_strbuf *out, const avo_report_run *r);
/* Sections, each with its <h2>: the trajectory plot, the box plots per
 * generation, the baselines, the re-timed bests, the best's lineage tree,
 * the top versions, the devices (only when results name one), the run's
 * metadata and the LLM spend with failed calls and rejected answers. */
void avo_report_trajectory(avo_strbuf *out, const avo_report_run *r);
void avo_report_generations(avo_strbuf *out, const avo_report_run *r);
void avo_report_baselines(avo_strbuf *out, const avo_report_run *r);
void avo_report_retimed(avo_strbuf *out, const avo_report_run *r);
void avo_report_lineage(avo_strbuf *out, const avo_report_run *r);
void avo_report_top(avo_strbuf *out, const avo_report_run *r);
void avo_report_devices(avo_strbuf *out, const avo_report_run *r);
void avo_report_metadata(avo_strbuf *out, const avo_report_run *r);
void avo_report_llm(avo_strbuf *out, const avo_report_run *r);

/*
 * One candidate c (from r->cands or avo_archive_candidate_get with its
 * source): header, status and reason, parents, knobs, note, the per-config
 * results, the source, and the diff against its first parent; with `full`
 * (a candidate's own page) the source open, a diff against every parent
 * and the worker's log.  Returns an archive error of a diff.
 */
int avo_report_candidate(avo_strbuf *out, const avo_report_run *r, const json_t *c, int full,
                         char *err, size_t errlen);

/* A link to candidate id as the sections make them (see cand_href). */
void avo_report_candidate_ref(avo_strbuf *out, const avo_report_run *r, long long id);

/* Ticks for an axis over [lo, hi]: a "nice" step (1, 2 or 5 times a power
 * of ten) giving about `target` intervals, and the range widened to
 * multiples of it.  *ret_lo, *ret_hi and *ret_step get the result. */
void avo_report_nice_axis(double lo, double hi, int target, double *ret_lo, double *ret_hi,
                          double *ret_step);

#endif
