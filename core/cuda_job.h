/*
 * cuda_job.h — the CUDA backend's internal view of one job, shared by the
 * compile side (cuda.c) and the device side (cuda_device.c).  Not a public
 * interface: the job message itself is documented in docs/protocol.md.
 */
#ifndef AVO_CUDA_JOB_H
#define AVO_CUDA_JOB_H

#include <jansson.h>

#include "cubin.h"
#include "cuda.h"

typedef enum { CUDA_KIND_SCALAR, CUDA_KIND_IN, CUDA_KIND_OUT, CUDA_KIND_INOUT } cuda_arg_kind;

typedef struct cuda_arg_spec {
    const char *name; /* borrowed from the job */
    cuda_arg_kind kind;
    avo_dtype type;
    double lo, hi;     /* input range */
    double atol, rtol; /* tolerance for this output's element type */
} cuda_arg_spec;

typedef struct cuda_config_spec {
    const char *name;
    avo_cuda_arg *scalars; /* per argument; set for scalars */
    size_t *lengths;       /* per argument; element counts of buffers */
    double flops, bytes;
    avo_cuda_launch launch, ref_launch;
} cuda_config_spec;

typedef struct cuda_job {
    const char *source, *entry, *ref_source, *ref_entry; /* borrowed */
    const char *arch;                                    /* borrowed; NULL: the device's */
    int compile_only;
    cuda_arg_spec *args;
    size_t nargs;
    cuda_config_spec *configs;
    size_t nconfigs;
    const char **options; /* evaluator's NVRTC options, borrowed strings */
    size_t noptions;
    const char **header_names, **header_texts; /* evaluator's headers, borrowed */
    size_t nheaders;
    const char **name_exprs; /* extra name expressions, borrowed */
    size_t nname_exprs;
    char **knobs; /* "-DNAME=VALUE", owned */
    size_t nknobs;
    uint64_t seed;
    int trials, timing;
    double min_sample_s, target_spread, max_seconds;
    int min_samples, max_samples;
    double timeout_s, compile_timeout_s;
    char *cache_dir; /* owned */
} cuda_job;

/* One compiled program: its cubin and what NVRTC and the cubin say about it. */
typedef struct cuda_build {
    unsigned char *cubin; /* owned */
    size_t cubin_len;
    char *log;           /* owned, "" when empty */
    char *lowered_entry; /* owned: the entry's symbol */
    avo_cubin_kernel *kernels; /* owned */
    int nkernels;
    const avo_cubin_kernel *entry_kernel; /* into kernels, NULL if not found */
    int cache_hit;
} cuda_build;

/*
 * Verify and time the candidate on the device (cuda_device.c).  Fills status,
 * reason and configs of `result`.  Sets *ret_retire when the context hit a
 * sticky error and this worker must be replaced.
 */
void avo_cuda_device_run(const cuda_job *job, const cuda_build *cand, const cuda_build *ref,
                         json_t *result, int *ret_retire);

/* True once this process holds a CUDA context (cuda_device.c). */
int avo_cuda_device_active(void);

/* Set status and a printf-formatted reason on a result (cuda.c). */
void avo_cuda_result_fail(json_t *result, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A JSON string of arbitrary bytes (invalid UTF-8 becomes '?'); new reference. */
json_t *avo_cuda_json_text(const char *s, size_t n);

#endif
