/*
 * measure.h — what every backend does with host-side numbers while it
 * verifies and times a candidate (docs/protocol.md): fresh seeded inputs,
 * poisoned outputs, canary guards, the comparison against the reference,
 * and the sampling policy and statistics of timing.
 *
 * Device work stays in the backends: they allocate, copy and launch, then
 * hand host copies of their buffers to these functions.  Pure functions
 * except avo_measure_time, which calls the backend's sampler; none prints.
 */
#ifndef AVO_MEASURE_H
#define AVO_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/jobspec.h"
#include "core/pcg.h"

/* ------------------------------------------------------------------ inputs */

/* The PCG stream "inputs/<config>/<trial>" of the job seed: trial `trial`
 * of config `config` draws its inputs from it, buffer by buffer in argument
 * order. */
void avo_measure_trial_rng(avo_pcg32 *ret, uint64_t seed, const char *config, int trial);

/*
 * How f32 values are drawn.  The CPU backend has always rounded a 53-bit
 * uniform double, the CUDA backend one 24-bit draw per element (also for
 * f16 and bf16); each is part of that backend's seeded input streams, so
 * both stay and a re-evaluation sees the inputs it saw before.
 */
typedef enum avo_measure_draw { AVO_DRAW_DOUBLE, AVO_DRAW_FLOAT } avo_measure_draw;

/*
 * Fill n elements of `type` with uniform values in [lo, hi]: floats by
 * `draw` (f64 always from a double), integers uniform over the integers in
 * [lo, hi] (clamped to the type), one PCG draw each when that range fits in
 * 32 bits, else two.
 */
void avo_measure_fill_uniform(void *buf, avo_dtype type, double lo, double hi, size_t n,
                              avo_pcg32 *rng, avo_measure_draw draw);

/* The integers of `type` in [lo, hi] (clamped to the type; an empty range
 * becomes {lo}): the first, and how many (0 meaning all 2^64). */
void avo_measure_int_range(avo_dtype type, double lo, double hi, int64_t *ret_lo,
                           uint64_t *ret_span);

/* ------------------------------------------------------------------ poison */

/* The poison bit pattern of `type` in the low avo_dtype_size(type) bytes: a
 * quiet NaN with a payload for floats, 0xdead... for integers. */
uint64_t avo_measure_poison_bits(avo_dtype type);

/* Write the poison pattern into n elements. */
void avo_measure_poison(void *buf, avo_dtype type, size_t n);

/* True when element i holds the poison pattern. */
int avo_measure_is_poison(const void *buf, avo_dtype type, size_t i);

/* Element i as a double (halves converted). */
double avo_measure_element(const void *buf, avo_dtype type, size_t i);

/* ------------------------------------------------------------------ guards */

/* Canary bytes around candidate buffers: fill n bytes, or check them. */
void avo_measure_guard_fill(unsigned char *p, size_t n);
int avo_measure_guard_intact(const unsigned char *p, size_t n);

/* The same for bytes at offset `phase` of a longer guarded stretch (the
 * pattern continues across it); checked a word at a time. */
void avo_measure_guard_fill_at(unsigned char *p, size_t n, size_t phase);
int avo_measure_guard_intact_at(const unsigned char *p, size_t n, size_t phase);

/* ----------------------------------------------------------------- checking */

/* Host copies of one argument's buffers after a call. */
typedef struct avo_measure_view {
    const avo_arg_spec *arg;   /* name, kind, type, tolerance */
    size_t length;             /* elements */
    const unsigned char *cand; /* candidate's: guard_bytes, the data, guard_bytes */
    const void *ref;           /* reference's output (out, inout) */
    const void *saved;         /* inputs as generated (in) */
} avo_measure_view;

/*
 * Check the candidate's buffers against the reference in the documented
 * order, each over every argument before the next: guards intact, inputs
 * unmodified, outputs fully written (poison left where the reference wrote),
 * float outputs finite, every element within atol + rtol * |reference|.
 * Scalars are skipped.  *ret_max_error receives the largest absolute error
 * (NaN when the reference has one) once the tolerance pass is reached.
 * Returns 0 when correct, else -1 with a reason such as "max error 1.2e-01 at
 * c[17] exceeds tolerance (atol 1e-05, rtol 1e-05)" in why.
 */
int avo_measure_check(const avo_measure_view *views, size_t n, size_t guard_bytes,
                      double *ret_max_error, char *why, size_t len);

/* ------------------------------------------------------------------ timing */

/* Median of v[0..n) and MAD/median (0 when the median is 0); n >= 1. */
void avo_measure_stats(const double *v, size_t n, double *ret_median, double *ret_spread);

/*
 * One sample: seconds per call of `batch` back-to-back calls in *ret_s.
 * `measured` is 0 for the warm-up and calibration samples (they only size
 * the batch) and 1 for the samples the reported time may be made of.
 * Returns 0 when the sample counts, AVO_MEASURE_UNCOUNTED when it must not
 * be part of the statistics (the judge counts only samples it compares with
 * the reference), negative to stop timing (the sampler has recorded why).
 */
#define AVO_MEASURE_UNCOUNTED 1
typedef int (*avo_measure_sampler)(void *ctx, uint64_t batch, int measured, double *ret_s);

typedef struct avo_measure_timing {
    double median_s, spread;
    size_t samples; /* counted samples, the median's */
    size_t taken;   /* measured samples, counted or not */
    uint64_t batch;
} avo_measure_timing;

/*
 * The sampling policy both backends share: one warm-up sample, a batch size
 * doubled (up to max_batch) until one sample lasts the job's min_sample_s,
 * then measured samples until min_samples are counted and their spread is
 * under target_spread, or max_samples were taken or max_seconds passed, but
 * never fewer than the job's min_checks counted.  Median and spread are of
 * the counted samples only.  Returns 0, AVO_ENOMEM, or the sampler's
 * negative code.
 */
int avo_measure_time(const avo_jobspec *spec, uint64_t max_batch, avo_measure_sampler sample,
                     void *ctx, avo_measure_timing *ret);

#endif
