/*
 * cuda_api.h — NVRTC and the CUDA Driver API, loaded with dlopen at run time.
 *
 * avo builds without CUDA headers and runs without CUDA: this header declares
 * only the few types, constants and functions avo uses, with the values and
 * signatures of the public CUDA headers (cuda.h, nvrtc.h; stable ABI since
 * CUDA 11).  Each library is opened at most once per process, on first use:
 *
 *   libnvrtc   $AVO_NVRTC (that file and nothing else), else the first of:
 *              versioned names (libnvrtc.so.13, .12, .11.2, libnvrtc.so) in
 *              the loader's path, $CUDA_HOME/lib64, $CUDA_PATH/lib64,
 *              /usr/local/cuda/lib64 (a toolkit), then NVIDIA's pip wheels
 *              ($AVO_CUDA_WHEELS, default /opt/avo/cuda-wheels, at
 *              nvidia/cu13/lib).  Needed to compile; no GPU needed.
 *   libcuda    the driver's libcuda.so.1 (never the toolkit's stub), then
 *              libcuda.so.  Needed to load, launch and time.
 *
 * The tables returned are process-wide, read-only and never freed.  CUresult
 * and nvrtcResult are translated into names and messages in one function per
 * library (avo_cuda_driver_error, avo_cuda_nvrtc_error).
 */
#ifndef AVO_CUDA_API_H
#define AVO_CUDA_API_H

#include <stddef.h>

/* ---------------------------------------------------------------- NVRTC */

typedef int nvrtcResult; /* NVRTC_SUCCESS == 0 */
typedef struct _nvrtcProgram *nvrtcProgram;

enum {
    AVO_NVRTC_SUCCESS = 0,
    AVO_NVRTC_ERROR_COMPILATION = 6,
};

typedef struct avo_nvrtc_api {
    char path[512];   /* the library actually opened */
    char source[600]; /* where it was found: "$AVO_NVRTC", "the toolkit in /usr/local/cuda", ... */
    const char *(*GetErrorString)(nvrtcResult);
    nvrtcResult (*Version)(int *major, int *minor);
    nvrtcResult (*GetNumSupportedArchs)(int *n);
    nvrtcResult (*GetSupportedArchs)(int *archs);
    nvrtcResult (*CreateProgram)(nvrtcProgram *prog, const char *src, const char *name,
                                 int num_headers, const char *const *headers,
                                 const char *const *include_names);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *prog);
    nvrtcResult (*CompileProgram)(nvrtcProgram prog, int num_options, const char *const *options);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram prog, size_t *size);
    nvrtcResult (*GetCUBIN)(nvrtcProgram prog, char *cubin);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram prog, size_t *size);
    nvrtcResult (*GetProgramLog)(nvrtcProgram prog, char *log);
    nvrtcResult (*AddNameExpression)(nvrtcProgram prog, const char *name_expression);
    nvrtcResult (*GetLoweredName)(nvrtcProgram prog, const char *name_expression,
                                  const char **lowered_name);
} avo_nvrtc_api;

/* ------------------------------------------------------------ Driver API */

typedef int CUresult; /* CUDA_SUCCESS == 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
    AVO_CUDA_SUCCESS = 0,
    AVO_CUDA_ERROR_INVALID_VALUE = 1,
    AVO_CUDA_ERROR_OUT_OF_MEMORY = 2,
    AVO_CUDA_ERROR_NOT_INITIALIZED = 3,
    AVO_CUDA_ERROR_NO_DEVICE = 100,
    AVO_CUDA_ERROR_INVALID_IMAGE = 200,
    AVO_CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    AVO_CUDA_ERROR_ECC_UNCORRECTABLE = 214,
    AVO_CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    AVO_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    AVO_CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    AVO_CUDA_ERROR_ASSERT = 710,
    AVO_CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    AVO_CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    AVO_CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    AVO_CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
    AVO_CUDA_ERROR_INVALID_PC = 718,
    AVO_CUDA_ERROR_LAUNCH_FAILED = 719,
    AVO_CUDA_ERROR_UNKNOWN = 999,
};

/* CUdevice_attribute values used by avo. */
enum {
    AVO_CU_DEV_MAX_THREADS_PER_BLOCK = 1,
    AVO_CU_DEV_MAX_BLOCK_DIM_X = 2,
    AVO_CU_DEV_MAX_BLOCK_DIM_Y = 3,
    AVO_CU_DEV_MAX_BLOCK_DIM_Z = 4,
    AVO_CU_DEV_MAX_GRID_DIM_X = 5,
    AVO_CU_DEV_MAX_GRID_DIM_Y = 6,
    AVO_CU_DEV_MAX_GRID_DIM_Z = 7,
    AVO_CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    AVO_CU_DEV_CLOCK_RATE = 13, /* kHz; may be unsupported on new drivers */
    AVO_CU_DEV_MULTIPROCESSOR_COUNT = 16,
    AVO_CU_DEV_L2_CACHE_SIZE = 38,
    AVO_CU_DEV_COMPUTE_CAPABILITY_MAJOR = 75,
    AVO_CU_DEV_COMPUTE_CAPABILITY_MINOR = 76,
    AVO_CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

/* CUfunction_attribute values used by avo. */
enum {
    AVO_CU_FUNC_MAX_THREADS_PER_BLOCK = 0,
    AVO_CU_FUNC_SHARED_SIZE_BYTES = 1,
    AVO_CU_FUNC_LOCAL_SIZE_BYTES = 3,
    AVO_CU_FUNC_NUM_REGS = 4,
    AVO_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

typedef struct avo_driver_api {
    char path[512];
    CUresult (*GetErrorName)(CUresult, const char **);
    CUresult (*GetErrorString)(CUresult, const char **);
    CUresult (*Init)(unsigned flags);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*DeviceGetCount)(int *count);
    CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*DeviceGetName)(char *name, int len, CUdevice dev);
    CUresult (*DeviceGetAttribute)(int *value, int attribute, CUdevice dev);
    CUresult (*DeviceTotalMem)(size_t *bytes, CUdevice dev);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*CtxSetCurrent)(CUcontext ctx);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadDataEx)(CUmodule *mod, const void *image, unsigned num_options,
                                 int *options, void **option_values);
    CUresult (*ModuleUnload)(CUmodule mod);
    CUresult (*ModuleGetFunction)(CUfunction *fn, CUmodule mod, const char *name);
    CUresult (*FuncGetAttribute)(int *value, int attribute, CUfunction fn);
    CUresult (*FuncSetAttribute)(CUfunction fn, int attribute, int value);
    CUresult (*LaunchKernel)(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned shared_bytes, CUstream stream,
                             void **params, void **extra);
    CUresult (*MemAlloc)(CUdeviceptr *ptr, size_t bytes);
    CUresult (*MemFree)(CUdeviceptr ptr);
    CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
    CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
    CUresult (*MemsetD8)(CUdeviceptr dst, unsigned char value, size_t n);
    CUresult (*MemsetD16)(CUdeviceptr dst, unsigned short value, size_t n);
    CUresult (*MemsetD32)(CUdeviceptr dst, unsigned value, size_t n);
    CUresult (*MemsetD32Async)(CUdeviceptr dst, unsigned value, size_t n, CUstream stream);
    CUresult (*EventCreate)(CUevent *event, unsigned flags);
    CUresult (*EventRecord)(CUevent event, CUstream stream);
    CUresult (*EventSynchronize)(CUevent event);
    CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
    CUresult (*EventDestroy)(CUevent event);
} avo_driver_api;

/*
 * The NVRTC table, loading the library on first call.  Returns NULL with a
 * one-line reason (what was tried, what to install) in err when libnvrtc
 * cannot be opened or lacks a function.  The table is process-wide.
 */
const avo_nvrtc_api *avo_cuda_nvrtc(char *err, size_t errlen);

/* The folder of the CUDA headers kernels may include (cuda_fp16.h,
 * cuda_bf16.h, mma.h, cuda_pipeline.h) for `nvrtc`: the first of the include
 * folder beside the library (.../lib64/libnvrtc.so.13 -> .../include),
 * $CUDA_HOME/include, /usr/local/cuda/include and the pip wheels'
 * nvidia/cu13/include that holds cuda_fp16.h and cuda_bf16.h.  Writes it
 * into dir (len bytes) and returns 0, or AVO_ENOTFOUND with the folders
 * tried in err. */
int avo_cuda_include_dir(const avo_nvrtc_api *nvrtc, char *dir, size_t len, char *err,
                         size_t errlen);

/*
 * The Driver API table, loading libcuda and calling cuInit(0) on first call.
 * Returns NULL with a reason in err when there is no driver, cuInit fails
 * (no device, driver/kernel-module mismatch) or a function is missing.
 */
const avo_driver_api *avo_cuda_driver(char *err, size_t errlen);

/* Whether this process has called cuInit.  The driver is not fork-safe: a
 * child forked after it must not reach libcuda, and NVRTC does (it asks the
 * driver for its export tables), so compiles exec a fresh process then. */
int avo_cuda_driver_initialized(void);

/* "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"
 * for a CUresult, into buf; works (with a built-in table) without a driver. */
const char *avo_cuda_driver_error(CUresult rc, char *buf, size_t len);

/* "NVRTC_ERROR_COMPILATION" for an nvrtcResult, into buf. */
const char *avo_cuda_nvrtc_error(nvrtcResult rc, char *buf, size_t len);

/* Short name of a CUresult ("CUDA_ERROR_ILLEGAL_ADDRESS", or "CUresult 123");
 * static storage for known codes, `buf` otherwise. */
const char *avo_cuda_driver_error_name(CUresult rc, char *buf, size_t len);

/*
 * True for errors after which the context is unusable and the process must
 * be replaced (illegal address, misaligned address, illegal instruction,
 * launch failure, hardware stack error, assert, ECC, timeout, ...).
 */
int avo_cuda_error_is_sticky(CUresult rc);

#endif
