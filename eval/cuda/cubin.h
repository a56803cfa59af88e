/*
 * cubin.h — resource usage and parameter layout of the kernels in a cubin,
 * read from the ELF file itself, so no GPU and no CUDA tool is needed.
 *
 * What a cubin says about each kernel (entry function):
 *   .nv.info            EIATTR_REGCOUNT, EIATTR_FRAME_SIZE, EIATTR_MIN/MAX_STACK_SIZE,
 *                       each {symbol index, value}
 *   .nv.info.<kernel>   EIATTR_KPARAM_INFO, one per parameter {ordinal, offset, size}
 *   .nv.shared.<kernel> static shared memory (NOBITS; its size); on sm_90 and
 *                       later it includes the 1 KiB the driver reserves per block
 *
 * ptxas's own report (`--ptxas-options=-v`, in NVRTC's log) adds spill
 * stores and loads, which the ELF does not record; avo_cubin_merge_ptxas_log
 * folds those in when the log has them.
 */
#ifndef AVO_CUBIN_H
#define AVO_CUBIN_H

#include <stddef.h>

#define AVO_CUBIN_MAX_PARAMS 64
#define AVO_CUBIN_NAME_MAX 512

typedef struct avo_cubin_param {
    unsigned ordinal, offset, size; /* bytes */
} avo_cubin_param;

typedef struct avo_cubin_kernel {
    char name[AVO_CUBIN_NAME_MAX]; /* symbol (mangled unless extern "C") */
    int registers;                 /* per thread; -1 unknown */
    long frame_bytes;              /* local memory (stack frame) per thread; -1 unknown */
    long max_stack_bytes;          /* -1 unknown */
    long shared_section_bytes;     /* size of .nv.shared.<kernel>, 0 when none */
    long static_shared_bytes;      /* user static shared memory */
    long spill_store_bytes;        /* from ptxas's log; -1 unknown */
    long spill_load_bytes;
    int nparams; /* -1 unknown */
    avo_cubin_param params[AVO_CUBIN_MAX_PARAMS];
} avo_cubin_kernel;

/*
 * Parse the kernels of the cubin data[0..len).  On success returns the
 * number of kernels (>= 0) and *ret_kernels (caller frees with free(); NULL
 * when there are none).  A malformed or truncated image returns AVO_EINVAL
 * with a reason in err; nothing is read outside data[0..len).
 */
int avo_cubin_parse(const void *data, size_t len, avo_cubin_kernel **ret_kernels, char *err,
                    size_t errlen);

/*
 * Fold ptxas's verbose report (the NVRTC log) into parsed kernels: spill
 * store/load bytes, and the static shared memory it states ("N bytes smem"),
 * which excludes the driver's reserved part.  Lines for unknown kernels are
 * ignored.  Never fails.
 */
void avo_cubin_merge_ptxas_log(avo_cubin_kernel *kernels, int n, const char *log);

#endif
