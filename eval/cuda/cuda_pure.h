/*
 * cuda_pure.h — the CUDA backend's parts that need no GPU and no CUDA library:
 * launch specs and their validation against device limits, kernel argument
 * packing, and the #include gate (element types: dtype.h).  The backend itself is
 * avo_backend_cuda (backend.h); docs/protocol.md describes its jobs.
 *
 * These are pure functions (no I/O, no globals) so that the unit tests check
 * every rule a candidate or an evaluator can break without a device.
 */
#ifndef AVO_CUDA_PURE_H
#define AVO_CUDA_PURE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "eval/cuda/cubin.h"
#include "core/dtype.h"
#include "core/jobspec.h"

/* One kernel launch: grid and block in three dimensions, dynamic shared memory. */
typedef struct avo_cuda_launch {
    unsigned grid[3], block[3];
    unsigned shared_bytes;
} avo_cuda_launch;

/* What a device allows (cuDeviceGetAttribute), or a compile-time target's
 * architectural limits when there is no device. */
typedef struct avo_cuda_limits {
    int max_threads_per_block;
    int max_block[3];
    long max_grid[3];
    long max_shared_default; /* per block without opt-in (48 KiB) */
    long max_shared_optin;   /* per block with opt-in */
} avo_cuda_limits;

/* Limits of compute capability sm_<cc> (e.g. 90) as documented by NVIDIA; for
 * checks without a device. */
void avo_cuda_limits_for_arch(int cc, avo_cuda_limits *ret);

/*
 * Parse {"grid": [x,y,z] | x, "block": [x,y,z] | x, "shared_bytes": n} into
 * *ret.  Missing y/z are 1, missing shared_bytes is 0.  Every value must be a
 * positive integer (shared_bytes >= 0): a fractional grid ("grid[1] = 12.5")
 * or a negative count is AVO_EINVAL with the offending field named.
 */
int avo_cuda_launch_parse(const json_t *spec, avo_cuda_launch *ret, char *err, size_t errlen);

/*
 * Check a launch against device limits and the kernel's static shared
 * memory: threads per block, each block and grid dimension, and static +
 * dynamic shared memory against the opt-in maximum.  Returns 0, or
 * AVO_EINVAL with a reason that names the limit.  *ret_needs_optin is set
 * when the dynamic part exceeds the default 48 KiB window.
 */
int avo_cuda_launch_check(const avo_cuda_launch *l, long static_shared,
                          const avo_cuda_limits *lim, int *ret_needs_optin, char *err,
                          size_t errlen);

/* One kernel argument's value: a device pointer, or a scalar of `type`. */
typedef struct avo_cuda_arg {
    const char *name;
    int is_pointer;
    avo_dtype type; /* of the scalar, or of the buffer's elements */
    union {
        uint64_t ptr;
        float f32;
        double f64;
        int32_t i32;
        int64_t i64;
        uint16_t bits16; /* f16 / bf16 scalar */
    } v;
} avo_cuda_arg;

/* The kernel argument for `spec`: a device pointer `ptr` when it is a
 * buffer, else the config's `scalar` value of the argument's type. */
avo_cuda_arg avo_cuda_arg_make(const avo_arg_spec *spec, const avo_scalar *scalar, uint64_t ptr);

/*
 * Lay the arguments out as the kernel expects them: each at its natural
 * alignment in buf (buflen bytes), ret_params[i] pointing at argument i (the
 * kernelParams array of cuLaunchKernel).  When `kernel` is given (its
 * parameter list read from the cubin), the count and every size must match,
 * else AVO_EINVAL names the first mismatch ("kernel takes 5 parameters, the
 * evaluator gives 6").  Returns the bytes used.
 */
int avo_cuda_pack_args(const avo_cuda_arg *args, size_t nargs, const avo_cubin_kernel *kernel,
                       unsigned char *buf, size_t buflen, void **ret_params, char *err,
                       size_t errlen);

/*
 * The #include gate: every #include (also in comments-free, line-spliced
 * form, with raw strings and digit separators understood) in `source` must
 * name one of allowed[0..nallowed) exactly, in quotes or angle brackets.
 * Computed includes, #include_next, #import and __has_include are refused.
 * `what` names the source in the message ("kernel", "header util.h").
 * Returns 0, or AVO_EINVAL with "kernel line 3: #include </etc/passwd> is not
 * a header the evaluator provides (...)".  When ret_used is non-NULL, names
 * used are reported through it: used[i] set to 1 for allowed[i].
 */
int avo_cuda_check_includes(const char *source, const char *what, const char *const *allowed,
                            size_t nallowed, int *ret_used, char *err, size_t errlen);

/* Compute capability from "sm_90a" / "sm_80" / "compute_90": 90, 80; -1 if malformed. */
int avo_cuda_arch_cc(const char *arch);

#endif
