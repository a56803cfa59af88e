/*
 * jobspec.h — the backend-independent part of a job message (docs/protocol.md)
 * parsed once into C values: knobs as compiler flags, the argument list, the
 * configs (scalars, buffer lengths, flops, bytes), tolerances, trials, timing,
 * limits, seed and the compile cache directory.
 *
 * What differs between backends (accepted element types, buffer lengths,
 * defaults, per-type tolerances) is a table of rules the backend passes in;
 * what only one backend reads (cflags, launch geometry, NVRTC options, ...)
 * it parses itself.
 *
 * Ownership: an avo_jobspec borrows every string it points at (names) from
 * the job, which must outlive it; it owns its arrays, the knob flags and the
 * cache directory, all released by avo_jobspec_free.
 */
#ifndef AVO_JOBSPEC_H
#define AVO_JOBSPEC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"

/* How a kernel uses an argument. */
typedef enum avo_arg_kind { AVO_ARG_SCALAR, AVO_ARG_IN, AVO_ARG_OUT, AVO_ARG_INOUT } avo_arg_kind;

/* A scalar argument's value, in the member its type names (f16/bf16: bits16). */
typedef union avo_scalar {
    float f32;
    double f64;
    int32_t i32;
    int64_t i64;
    uint16_t bits16;
} avo_scalar;

/* One argument of the kernel's signature. */
typedef struct avo_arg_spec {
    const char *name; /* borrowed from the job */
    avo_arg_kind kind;
    avo_dtype type;    /* of the scalar, or of the buffer's elements */
    double lo, hi;     /* input range, default [-1, 1] */
    double atol, rtol; /* tolerance this output is checked with */
} avo_arg_spec;

/* One config: a value for every scalar, a length for every buffer. */
typedef struct avo_config_spec {
    const char *name;    /* borrowed from the job */
    avo_scalar *scalars; /* per argument; set for scalars */
    size_t *lengths;     /* per argument; element counts of buffers */
    double flops, bytes;
} avo_config_spec;

#define AVO_JOBSPEC_MAX_ARGS 64     /* arguments of a kernel */
#define AVO_JOBSPEC_MAX_THREADS 256 /* threads an evaluator may allow a kernel */
#define AVO_JOBSPEC_CHECK_RATE 0.25 /* default timing.check_rate */
#define AVO_JOBSPEC_MIN_CHECKS 3    /* default timing.min_checks */

typedef struct avo_jobspec {
    const char *source, *entry;         /* the candidate (borrowed) */
    const char *ref_source, *ref_entry; /* the trusted reference (borrowed) */
    avo_arg_spec *args;
    size_t nargs;
    avo_config_spec *configs; /* verified and timed */
    size_t nconfigs;
    avo_config_spec *check_configs; /* extra sizes, verified only */
    size_t ncheck_configs;
    int threads;  /* threads the kernel may start (1: none beyond the caller's) */
    char **knobs; /* "-DNAME=VALUE", sorted by name */
    size_t nknobs;
    /* The yardstick, timed beside the candidate (NULL source: none): the
     * evaluator's seed, trusted like the reference (source borrowed). */
    const char *ys_source;
    char **ys_knobs;
    size_t ys_nknobs;
    uint64_t seed;
    int trials, timing;
    double min_sample_s, target_spread, max_seconds;
    int min_samples, max_samples;
    /* Timed samples compared with the reference: the median's, each other
     * with probability check_rate (secret draws), at least min_checks per
     * config (eval/judge.c). */
    double check_rate;
    int min_checks;
    double timeout_s, compile_timeout_s;
    double cpu_s, memory_mb; /* only when the rules' process_limits is set */
    char *cache_dir;
} avo_jobspec;

/* What one backend accepts, and its defaults for absent fields. */
typedef struct avo_jobspec_rules {
    const char *cache_name;          /* last component of the cache directory: "cpu" */
    avo_dtype last_type;             /* types up to this one are accepted (AVO_DT_I64: no halves) */
    uint64_t min_length, max_length; /* accepted buffer lengths, in elements */
    int per_type_tolerance;          /* tolerance.<type> {atol, rtol} overrides the job's */
    int process_limits;              /* limits.cpu_s and limits.memory_mb are read */
    int max_trials, max_samples_cap;
    int yardstick; /* the backend times a "yardstick" beside the candidate */
    /* Defaults. */
    double min_sample_s, target_spread, max_seconds;
    int min_samples, max_samples;
    double timeout_s, compile_timeout_s, cpu_s, memory_mb;
} avo_jobspec_rules;

/*
 * Fill *ret from `job` under `rules`, in this order: source, entry and
 * reference, knobs, args (and, with
 * per_type_tolerance, each argument's tolerance), configs and check_configs
 * (names unique across both), then tolerance,
 * trials, timing and limits, seed, threads and cache_dir.  Absent or null fields take
 * the rules' defaults; trials and sample counts are clamped to the rules'
 * caps.  cache_dir follows the compile cache's folder rule (avo_cache_dir,
 * below) for rules->cache_name.
 *
 * Returns 0, or a negative AVO_E* code with one line in err naming what is
 * wrong ("knob name '1X' is not a C identifier", "config 'small': length
 * of buffer 'x' is missing or invalid").  On failure *ret is half filled
 * and must still be released with avo_jobspec_free.
 */
int avo_jobspec_parse(const json_t *job, const avo_jobspec_rules *rules, avo_jobspec *ret,
                      char *err, size_t errlen);

/* 0 when the job names its kernel's source and entry point and, with
 * need_reference, its reference's; else AVO_EINVAL with the missing field
 * named in err. */
int avo_jobspec_need_sources(const avo_jobspec *s, int need_reference, char *err, size_t errlen);

/* Release what a (possibly half-filled) spec owns and zero it; NULL is fine. */
void avo_jobspec_free(avo_jobspec *s);

/*
 * A number field of `obj` (which may be NULL), or `fallback` when it is
 * absent or null.  Returns 0, or -1 when the field is not a number.
 */
int avo_jobspec_number(const json_t *obj, const char *key, double fallback, double *ret);

/* True when `name` is a C identifier (what a knob becomes: -DNAME=...). */
int avo_jobspec_identifier_ok(const char *name);

/*
 * The cache folder of `backend` ("cpu", "cuda"), the one rule for the
 * engine, the worker and a remote worker node: `given` (a job's
 * "cache_dir") when non-empty, where a given ".../cpu" names the engine's
 * CPU cache, so another backend uses the sibling ".../<backend>"; else
 * <root>/<backend> with root $AVO_CACHE, else $XDG_CACHE_HOME/avo, else
 * $HOME/.cache/avo, else /tmp/avo-cache-<uid>.  Returns a new string
 * (caller frees), NULL when out of memory.
 */
char *avo_cache_dir(const char *given, const char *backend);

#endif
