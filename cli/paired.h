/*
 * paired.h — the re-timed figures every view of a run shows (`avo best`,
 * `avo show`, `avo report`, the exports), read from what the end of the run
 * stored: the last event of kind "retimed" (lua/avo/retime.lua computes
 * them, once).  Its `ranked` entries are the candidates re-timed ok in
 * every round, fastest first; entry.paired holds the paired ratios to the
 * seed and to each baseline timed in the same rounds (per round
 * candidate/baseline, median and 95% interval over the rounds).  An event
 * from before pairing has no `paired`: its `vs` ratios are ratios of
 * medians, and are shown as such.
 *
 * The best of a re-timed run is its re-timed #1; a run without such an
 * event has only unpaired search-time figures, and the views say so.
 */
#ifndef AVO_PAIRED_H
#define AVO_PAIRED_H

#include <jansson.h>
#include <stdint.h>

#include "store/archive.h"
#include "core/strbuf.h"

/* What a view says where a run has no re-timing. */
#define AVO_PAIRED_NONE                                                                            \
    "unpaired: the run was not re-timed (--retime 0, the evaluator times nothing, or the run "     \
    "did not end); these are the search's own measurements"

/* The data of run_id's last "retimed" event (a new reference the caller
 * frees), or NULL when it has none or it cannot be read. */
json_t *avo_paired_load(avo_archive *ar, int64_t run_id);

/* The ranked entry of candidate `id` in `data` (borrowed), or NULL. */
const json_t *avo_paired_entry(const json_t *data, json_int_t id);

/* The id of the re-timed #1 of `data`, or 0 when none re-timed ok. */
json_int_t avo_paired_best(const json_t *data);

/* Append entry `e`'s ratios as every view prints them: "8.13x seed #1
 * [7.90, 8.40], 0.22x openblas [0.20, 0.24]" (paired: median [95%
 * interval] of the per-round ratios); an entry from before pairing gives
 * "0.22x openblas (ratio of medians)".  Appends nothing when it has none. */
void avo_paired_text(avo_strbuf *out, const json_t *e);

/* Append the per-config paired ratios of one ratio `p` (an element of
 * entry.paired): "128x128x128 0.24x [0.21, 0.27], ..." */
void avo_paired_configs_text(avo_strbuf *out, const json_t *p);

/* Append the lines `avo best` and `avo show` print for candidate `id` of a
 * run whose re-timing is `data` (NULL: none): its re-timed median and
 * interval, rank, paired ratios and per-config ratios to each baseline, or
 * why there are none; `unit` may be NULL. */
void avo_paired_lines(avo_strbuf *out, const json_t *data, json_int_t id, const char *unit);

/* The object a candidate's JSON carries as "retimed" (a new reference), for
 * candidate `id` of a run whose re-timing is `data`: {paired, rounds, set,
 * rank, of, best, median, low, high, recorded, ratios: [...]} when it
 * re-timed ok, {paired: false, why} otherwise. */
json_t *avo_paired_json(const json_t *data, json_int_t id);

#endif
