/*
 * vendor.h — the vendor libraries behind the named baselines (baseline.h):
 * cuBLASLt for "cublas", cuDNN's fused flash-attention forward for
 * "cudnn_sdpa".  Both are loaded with dlopen at run time, so avo builds
 * without their headers (vendor.c declares the few types, enums and
 * functions it uses, with the values of cublasLt.h and cudnn_graph_v9.h)
 * and a worker runs without them (a baseline is then `unavailable`).
 *
 * Where a library is looked for, first hit wins:
 *   cuBLASLt  $AVO_CUBLASLT (a file; only it is tried), else
 *             libcublasLt.so.13 then .12 in $CUDA_HOME/lib64,
 *             /usr/local/cuda/lib64, then the loader's search path;
 *   cuDNN     $AVO_CUDNN (a file; only it is tried), else libcudnn.so.9 in
 *             the same places.
 *
 * A *plan* is one baseline's problem for one config, built outside any
 * timed region: cuBLASLt's descriptors, heuristic algorithm and workspace;
 * cuDNN's operation graph, execution plan, workspace and statistics buffer.
 * avo_vendor_plan_bind then prepares one call per argument slot (cuDNN: a
 * variant pack per slot), so avo_vendor_plan_run does no host work beyond
 * the library call itself, on the default stream as candidates launch.
 *
 * Device memory comes from the CUDA driver (cuda_api.h) in the worker's
 * current context; under the CPU emulator device pointers are host pointers
 * and the test tree's mock libraries compute on them directly.
 *
 * Single-threaded use, inside a CUDA worker.  Library tables and handles are
 * process-wide and never freed.
 */
#ifndef AVO_VENDOR_H
#define AVO_VENDOR_H

#include <stddef.h>

#include "eval/baseline.h"
#include "core/jobspec.h"

/* What was loaded for a baseline (strings owned by the process-wide table). */
typedef struct avo_vendor_lib {
    const char *library; /* "cuBLASLt", "cuDNN" */
    const char *path;    /* the file actually opened */
    const char *version; /* "13.1.0", "9.19.0" */
} avo_vendor_lib;

/*
 * Load the library baseline `b` needs (once per process).  Returns 0 with
 * *ret filled, or AVO_ENOTFOUND with a one-line reason in err naming what
 * was tried and what to install (the baseline is unavailable).
 */
int avo_vendor_load(const avo_baseline_info *b, avo_vendor_lib *ret, char *err, size_t errlen);

/*
 * Whether the evaluator's signature and every config of `spec` (timed and
 * check configs) give baseline `b` what it reads (baseline.h): the named
 * arguments with the right kinds and types, positive sizes and buffer
 * lengths consistent with them.  Returns 0 or AVO_EINVAL with the argument
 * (and config) named in err.
 */
int avo_vendor_check(const avo_baseline_info *b, const avo_jobspec *spec, char *err, size_t errlen);

typedef struct avo_vendor_plan avo_vendor_plan;

/*
 * Build baseline `b`'s plan for config `cfg` of `spec` (avo_vendor_check
 * passed; the library is loaded and a CUDA context is current).  Returns 0
 * with *ret (caller frees with avo_vendor_plan_free), or
 *   AVO_EINVAL   the library cannot serve this config (no algorithm, no
 *                execution plan, no handle): err holds the library's
 *                message and the config is unavailable;
 *   AVO_ENOMEM / AVO_EIO   out of host or device memory, a failing driver.
 */
int avo_vendor_plan_new(const avo_baseline_info *b, const avo_jobspec *spec,
                        const avo_config_spec *cfg, avo_vendor_plan **ret, char *err,
                        size_t errlen);

/*
 * Prepare the calls on `nslots` argument slots: ptrs[s * spec->nargs + i] is
 * argument i's device buffer in slot s (0 for scalars).  A later bind
 * replaces the earlier one.  Returns 0 or a negative code with err.
 */
int avo_vendor_plan_bind(avo_vendor_plan *p, size_t nslots, const unsigned long long *ptrs,
                         char *err, size_t errlen);

/* Enqueue the library call on slot `slot` (default stream; no wait).
 * Returns 0 or AVO_EIO with the library's message in err. */
int avo_vendor_plan_run(avo_vendor_plan *p, size_t slot, char *err, size_t errlen);

/*
 * Build cudnn_sdpa's operation graph for config `cfg` and finalize it and
 * its engine heuristics, without a CUDA context or GPU (cuDNN 9 checks each
 * operation's tensors and the graph's connectivity then; engines are listed
 * only on a device).  For tests: proves the library itself accepts the
 * graph.  Returns 0, AVO_ENOTFOUND when cuDNN is missing, or AVO_EINVAL with
 * cuDNN's message.
 */
int avo_vendor_graph_check(const avo_jobspec *spec, const avo_config_spec *cfg, char *err,
                           size_t errlen);

/* Release a plan, its descriptors and its device memory; NULL is fine.
 * `keep_device`: the context hit a sticky error, leave device memory alone. */
void avo_vendor_plan_free(avo_vendor_plan *p, int keep_device);

#endif
