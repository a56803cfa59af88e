/*
 * judge.h — the trusted side of an evaluation: for each config, fresh
 * inputs, poisoned outputs, reference and candidate runs, the checks, and
 * timing that a candidate cannot game (docs/threat-model.md).
 *
 * The judge owns the reference outputs and the verdict; the candidate only
 * ever sees its argument buffers.  How buffers are laid out and how the
 * candidate and the reference run is the backend's: it passes an
 * avo_judge_device.  The judge never prints and never exits.
 *
 * Per config:
 *   1. verification: `trials` runs on inputs of the job's seeded stream
 *      (reproducible), each compared with the reference on the same inputs;
 *   2. timing (timed configs): avo_measure_time's policy, where each sample
 *      runs the candidate once on each of `batch` slots holding inputs drawn
 *      from a CSPRNG (never seen before, never predictable from the seed),
 *      outputs poisoned; after every sample all slots are checked (guards,
 *      inputs untouched, outputs written and finite), and of each measured
 *      sample one slot picked afterwards is copied; after the config's
 *      last timed call, the copies of the median's samples, of each other
 *      sample with probability timing.check_rate (secret draws) and of
 *      more until timing.min_checks are compared with the reference, so
 *      skipping work on timed calls, caching across calls, answering from
 *      a clock or learning from the judge's rhythm fails the candidate or
 *      gains nothing;
 *      With a yardstick (the job's "yardstick": the evaluator's seed), every
 *      sample also runs it on the same inputs right after the candidate's
 *      checks, and the entry gets yardstick_s (its median time per call)
 *      and vs_yardstick (the median over the counted samples of the
 *      yardstick's time over the candidate's in the same sample: a paired
 *      speed-up, which what slows the machine for a moment slows alike);
 *   3. check configs: sizes outside the listed configs, verified like (1).
 */
#ifndef AVO_JUDGE_H
#define AVO_JUDGE_H

#include <jansson.h>
#include <stddef.h>

#include "core/jobspec.h"
#include "eval/measure.h"

/* What a backend provides.  Every function returns 0, or a negative code
 * with a one-line reason in why (a failure of the candidate, such as a
 * crash or a protocol violation, or of the device).
 *
 * The slots the judge reads and writes through `data` need not be the
 * memory the candidate runs on: a device whose buffers the host cannot
 * address (a GPU) keeps host mirrors, copies slots [0, nslots) to the device
 * in run_candidate before it starts its clock and back after it stops, so
 * the judge sees the slots exactly as the candidate left them. */
typedef struct avo_judge_device {
    void *self;
    /*
     * Lay out `nslots` slots for config `cfg`, every byte outside the
     * argument data filled with the guard pattern.  A later call with the
     * same config and more slots keeps nothing.  *ret_max_slots (may be
     * NULL) receives how many slots of this config fit at all.
     */
    int (*layout)(void *self, const avo_config_spec *cfg, size_t nslots, size_t *ret_max_slots,
                  char *why, size_t len);
    /* Argument i's data in slot s, as the judge reads and writes it. */
    unsigned char *(*data)(void *self, size_t slot, size_t arg);
    /* True when every guard byte of slot s is intact; else *ret_arg names
     * the argument whose guard broke ("" for none in particular). */
    int (*guards_intact)(void *self, size_t slot, const char **ret_arg);
    /* Run the candidate once on each of slots [0, nslots) and wait for it;
     * *ret_s: seconds for all of them, as the device measures them (wall
     * time on the CPU, CUDA events around the launches on a GPU). */
    int (*run_candidate)(void *self, const avo_config_spec *cfg, size_t nslots, double *ret_s,
                         char *why, size_t len);
    /* Run the reference on buffers the judge owns (one per argument). */
    int (*run_reference)(void *self, const avo_config_spec *cfg, void **buffers, char *why,
                         size_t len);
    /* The yardstick, NULL when the job has none: a trusted kernel the
     * device runs on slots of its own (laid out by `layout` like the
     * candidate's; ys_data is argument i's data in slot s, as the judge
     * fills it), once on each of slots [0, nslots); *ret_s as in
     * run_candidate, on the same kind of clock. */
    unsigned char *(*ys_data)(void *self, size_t slot, size_t arg);
    int (*run_yardstick)(void *self, const avo_config_spec *cfg, size_t nslots, double *ret_s,
                         char *why, size_t len);
    /* How the seeded verification inputs draw floats: each backend keeps
     * its own historical stream (measure.h); AVO_DRAW_DOUBLE when unset. */
    avo_measure_draw draw;
} avo_judge_device;

/* How a config ended. */
typedef enum avo_judge_outcome {
    AVO_JUDGE_OK = 0,
    AVO_JUDGE_WRONG = -1, /* reason names the check that failed */
    AVO_JUDGE_FAILED = -2 /* the device reported a failure (reason from it) */
} avo_judge_outcome;

/*
 * Verify (and, when `timed` and the job times, time) config `cfg`.  Fills
 * `entry` (avo_result_config_new's fields: correct, max_error, median_s,
 * spread, samples, gflops, gbs, reason).  Returns an avo_judge_outcome with
 * a reason naming the config in `reason`.
 */
int avo_judge_config(const avo_jobspec *spec, const avo_judge_device *dev,
                     const avo_config_spec *cfg, int timed, json_t *entry, char *reason,
                     size_t len);

/* Fill n elements of `type` uniform in [lo, hi] from a CSPRNG (ChaCha20
 * keyed from getrandom): values no seed predicts.  Returns 0 or -errno. */
int avo_judge_fill_secret(void *buf, avo_dtype type, double lo, double hi, size_t n);

#endif
