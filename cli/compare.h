/*
 * compare.h — how a run's best compares with the baselines measured in the
 * same run (archive table `baselines`, lua/avo/baselines.lua), for every
 * place that shows them: `avo runs`, `avo show`/`best`, `avo report`.
 *
 * A baseline row is the object avo_archive_baselines gives (name, device,
 * status, reason, score, result, ...).  Only a row with status "ok" and a
 * score > 0 is ever compared with; every other row (missing library,
 * failure, wrong answers, a config the library could not serve) is shown
 * by its status and reason, never as a zero or a 0x ratio.
 */
#ifndef AVO_COMPARE_H
#define AVO_COMPARE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store/archive.h"

/* The row with the highest score among the comparable rows of `baselines`
 * (a JSON array, borrowed), or NULL when none is comparable. */
const json_t *avo_compare_strongest(const json_t *baselines);

/* Whether baseline `row` belongs to the evaluator named `evaluator` (NULL:
 * unknown, as in archives migrated from before evaluators were recorded):
 * its "evaluator" equals it, both absent counting as equal.  A candidate is
 * compared only with its own evaluator's baselines. */
int avo_compare_owned(const json_t *row, const char *evaluator);

/* A new array (caller owns) of the rows of `baselines` (borrowed) that
 * belong to `evaluator` (avo_compare_owned); NULL only when out of memory. */
json_t *avo_compare_of(const json_t *baselines, const char *evaluator);

/* Whether `row` can be compared with: status ok and a score > 0. */
int avo_compare_usable(const json_t *row);

/*
 * Write what `row` says into buf (always terminated): "cublas 12.3" for a
 * comparable row (score with %.4g, then " unit" when unit is not NULL),
 * else "cublas: unavailable (libcublasLt.so.13 not found)", "kernel: wrong
 * (config n1000: ...)" or, for an ok row without a score, "cublas: partial
 * (reason)".
 */
void avo_compare_describe(const json_t *row, const char *unit, char *buf, size_t len);

/*
 * The short form for one column: "0.41x cudnn_sdpa" (best_score over the
 * strongest comparable row's score; without a best, the strongest's name
 * and score), "cublas unavailable" when none is comparable (the first row's
 * status), "-" without baselines.
 */
void avo_compare_column(const json_t *baselines, double best_score, int have_best, char *buf,
                        size_t len);

/*
 * The throughput of config `name` in baseline `row`'s result: returns 1 with
 * *ret_value and *ret_unit (avo_diff_config_metric), or 0 with *ret_why set
 * to what it is instead ("unavailable (reason)", "wrong (reason)", "not
 * measured", "no time"), written into why (always terminated).
 */
int avo_compare_config(const json_t *row, const char *name, double *ret_value,
                       const char **ret_unit, char *why, size_t why_len);

/*
 * Candidate `cand` (a candidate_get object: run_id, evaluator, status,
 * score, configs) against the baselines among `baselines` (borrowed) of its
 * own run and evaluator that can be compared with: a new object (caller
 * owns) {name: {"score": ratio, "configs": {config: ratio}}}, a config
 * present only where both have a throughput in the same unit.  {} when the
 * candidate is not ok or none compares; NULL only when out of memory.
 */
json_t *avo_compare_ratios(const json_t *cand, const json_t *baselines);

/* avo_diff_compare() of candidates id_a and id_b read from the archive;
 * AVO_ENOTFOUND (err names the id) when either is missing. */
int avo_diff_candidates(avo_archive *ar, int64_t id_a, int64_t id_b, json_t **ret, char *err,
                        size_t errlen);

#endif
