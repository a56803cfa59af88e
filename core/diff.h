/*
 * diff.h — what changed between two candidates: a unified diff of their
 * sources (libgit2's xdiff), their knob changes and their per-config and
 * aggregate score deltas.
 */
#ifndef AVO_DIFF_H
#define AVO_DIFF_H

#include <jansson.h>
#include <stdint.h>


/*
 * Unified diff (3 lines of context) from text a to text b, with file
 * headers "--- a/<name>" and "+++ b/<name>".  *ret_patch is malloc'ed and
 * owned by the caller; "" when the texts are equal.
 */
int avo_diff_sources(const char *a, const char *b, const char *name, char **ret_patch, char *err,
                     size_t errlen);

/*
 * The per-config throughput of a protocol config object: its gflops when
 * positive ("GFLOP/s"), else its gbs when positive ("GB/s"), else NAN.
 * *ret_unit (may be NULL) gets the unit's static name or NULL.
 */
double avo_diff_config_metric(const json_t *config, const char **ret_unit);

/*
 * Compare candidates a and b (candidate_get objects with "source").  *ret:
 *   {"a": id, "b": id, "source_diff": "<unified diff or empty>",
 *    "knobs": [{"name", "old", "new", "change": "changed"|"added"|"removed"}],
 *    "configs": [{"name", "unit", "a", "b", "delta", "ratio",
 *                 "median_s_a", "median_s_b"}],
 *    "score": {"a", "b", "delta", "ratio"}}
 * Knobs are in name order; configs in a's order, then b's extra ones.
 * Missing values, and ratios over zero, are null.  Owned by the caller.
 */
int avo_diff_compare(const json_t *a, const json_t *b, json_t **ret, char *err, size_t errlen);

#endif
