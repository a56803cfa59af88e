/*
 * cuda_job.h — the CUDA backend's internal view of one job, shared by the
 * compile side (cuda.c) and the device side (cuda_device.c).  Not a public
 * interface: the job message itself is documented in docs/protocol.md.
 */
#ifndef AVO_CUDA_JOB_H
#define AVO_CUDA_JOB_H

#include <jansson.h>

#include "eval/baseline.h"
#include "eval/cuda/cubin.h"
#include "eval/cuda/cuda_pure.h"
#include "core/jobspec.h"

/* The shared part of a job (jobspec.h) and what only this backend reads. */
typedef struct cuda_job {
    avo_jobspec spec;
    const char *source, *entry, *ref_source, *ref_entry; /* borrowed */
    const char *arch;                                    /* borrowed; NULL: the device's */
    int compile_only;
    avo_cuda_launch *launches, *ref_launches;             /* per config, owned */
    avo_cuda_launch *check_launches, *check_ref_launches; /* per check config, owned */
    const char **options; /* evaluator's NVRTC options, borrowed strings */
    size_t noptions;
    const char **header_names, **header_texts; /* evaluator's headers, borrowed */
    size_t nheaders;
    const char **name_exprs; /* extra name expressions, borrowed */
    size_t nname_exprs;
    /* A baseline job (docs/protocol.md): the vendor library in place of a
     * candidate; source, entry and candidate launches are then unset. */
    const avo_baseline_info *baseline;
} cuda_job;

/* One compiled program: its cubin and what NVRTC and the cubin say about it. */
typedef struct cuda_build {
    unsigned char *cubin; /* owned */
    size_t cubin_len;
    char *log;                 /* owned, "" when empty */
    char *lowered_entry;       /* owned: the entry's symbol */
    avo_cubin_kernel *kernels; /* owned */
    int nkernels;
    const avo_cubin_kernel *entry_kernel; /* into kernels, NULL if not found */
    int cache_hit;
    int cache_repaired; /* a tampered cache entry was deleted and rebuilt */
} cuda_build;

/*
 * Verify and time the candidate on the device (cuda_device.c), then verify
 * it on the check configs.  Fills status, reason, configs and checks of
 * `result`.  For a baseline job `cand` is NULL and the baseline's library
 * call takes the candidate launch's place; a config the library cannot
 * serve is listed with "unavailable" and the others still run.  Sets *ret_retire when the context
 * hit a sticky error and this worker must be replaced.
 */
void avo_cuda_device_run(const cuda_job *job, const cuda_build *cand, const cuda_build *ref,
                         json_t *result, int *ret_retire);

/* True once this process holds a CUDA context (cuda_device.c). */
int avo_cuda_device_active(void);

#endif
