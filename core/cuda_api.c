/*
 * cuda_api.c — dlopen of libnvrtc and libcuda, and the translation of their
 * result codes (see cuda_api.h).  Single-threaded use: workers and the CLI.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avo.h"
#include "cuda_api.h"

/* Where libnvrtc is looked for, newest first; bare names go through the
 * loader's search path (LD_LIBRARY_PATH, ld.so.cache). */
static const char *const nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                          "libnvrtc.so"};
static const char *const nvrtc_dirs_env[] = {"CUDA_HOME", "CUDA_PATH"};
static const char nvrtc_default_dir[] = "/usr/local/cuda/lib64";

/* Path of the object behind a dlopen handle, or "" when unknown. */
static void handle_path(void *handle, char *buf, size_t len)
{
    struct link_map *map = NULL;
    buf[0] = '\0';
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
        snprintf(buf, len, "%s", map->l_name);
}

static void *try_open(const char *path)
{
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/* Open libnvrtc from the first place that has it; NULL when none does. */
static void *open_nvrtc(void)
{
    void *h;
    for (size_t i = 0; i < sizeof nvrtc_names / sizeof nvrtc_names[0]; i++)
        if ((h = try_open(nvrtc_names[i])))
            return h;
    char path[1024];
    for (size_t d = 0; d < sizeof nvrtc_dirs_env / sizeof nvrtc_dirs_env[0] + 1; d++) {
        const char *dir = d < 2 ? getenv(nvrtc_dirs_env[d]) : NULL;
        char tmp[900];
        if (d < 2) {
            if (!dir || !*dir)
                continue;
            snprintf(tmp, sizeof tmp, "%s/lib64", dir);
            dir = tmp;
        } else {
            dir = nvrtc_default_dir;
        }
        for (size_t i = 0; i < sizeof nvrtc_names / sizeof nvrtc_names[0]; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, nvrtc_names[i]);
            if ((h = try_open(path)))
                return h;
        }
    }
    return NULL;
}

/* Resolve `name` into *slot; returns 0 or -1 with err naming the symbol. */
static int bind(void *handle, const char *name, void *slot, char *err, size_t errlen)
{
    void *sym = dlsym(handle, name);
    if (!sym) {
        avo_error(err, errlen, AVO_ENOTFOUND, "%s has no %s (too old?)", "the CUDA library", name);
        return -1;
    }
    memcpy(slot, &sym, sizeof sym); /* object to function pointer, as POSIX allows */
    return 0;
}

const avo_nvrtc_api *avo_cuda_nvrtc(char *err, size_t errlen)
{
    static avo_nvrtc_api api;
    static int state; /* 0 untried, 1 loaded, -1 failed */
    static char failure[AVO_ERRLEN];
    if (state == 1)
        return &api;
    if (state == -1) {
        avo_error(err, errlen, AVO_ENOTFOUND, "%s", failure);
        return NULL;
    }
    void *h = open_nvrtc();
    if (!h) {
        snprintf(failure, sizeof failure,
                 "cannot load libnvrtc (tried libnvrtc.so.13/.12/.11.2 and libnvrtc.so in the "
                 "loader path, $CUDA_HOME/lib64 and %s); install the CUDA toolkit's NVRTC "
                 "(Debian: nvidia-cuda-toolkit or cuda-nvrtc-13-0) or set CUDA_HOME",
                 nvrtc_default_dir);
        state = -1;
        avo_error(err, errlen, AVO_ENOTFOUND, "%s", failure);
        return NULL;
    }
    struct {
        const char *name;
        void *slot;
    } syms[] = {
        {"nvrtcGetErrorString", &api.GetErrorString},
        {"nvrtcVersion", &api.Version},
        {"nvrtcGetNumSupportedArchs", &api.GetNumSupportedArchs},
        {"nvrtcGetSupportedArchs", &api.GetSupportedArchs},
        {"nvrtcCreateProgram", &api.CreateProgram},
        {"nvrtcDestroyProgram", &api.DestroyProgram},
        {"nvrtcCompileProgram", &api.CompileProgram},
        {"nvrtcGetCUBINSize", &api.GetCUBINSize},
        {"nvrtcGetCUBIN", &api.GetCUBIN},
        {"nvrtcGetProgramLogSize", &api.GetProgramLogSize},
        {"nvrtcGetProgramLog", &api.GetProgramLog},
        {"nvrtcAddNameExpression", &api.AddNameExpression},
        {"nvrtcGetLoweredName", &api.GetLoweredName},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (bind(h, syms[i].name, syms[i].slot, failure, sizeof failure) < 0) {
            dlclose(h);
            state = -1;
            avo_error(err, errlen, AVO_ENOTFOUND, "libnvrtc: %s", failure);
            return NULL;
        }
    handle_path(h, api.path, sizeof api.path);
    state = 1;
    return &api;
}

static int driver_initialized; /* cuInit has run in this process */

int avo_cuda_driver_initialized(void)
{
    return driver_initialized;
}

const avo_driver_api *avo_cuda_driver(char *err, size_t errlen)
{
    static avo_driver_api api;
    static int state;
    static char failure[AVO_ERRLEN];
    if (state == 1)
        return &api;
    if (state == -1) {
        avo_error(err, errlen, AVO_ENOTFOUND, "%s", failure);
        return NULL;
    }
    /* The driver's own library first; the toolkit's stubs/libcuda.so only
     * answers CUDA_ERROR_STUB_LIBRARY and is never looked for. */
    void *h = try_open("libcuda.so.1");
    if (!h)
        h = try_open("libcuda.so");
    if (!h) {
        snprintf(failure, sizeof failure,
                 "no NVIDIA driver: cannot load libcuda.so.1 (install the NVIDIA driver, "
                 "e.g. Debian's nvidia-driver, on a machine with a GPU)");
        state = -1;
        avo_error(err, errlen, AVO_ENOTFOUND, "%s", failure);
        return NULL;
    }
    struct {
        const char *name, *fallback;
        void *slot;
    } syms[] = {
        {"cuGetErrorName", NULL, &api.GetErrorName},
        {"cuGetErrorString", NULL, &api.GetErrorString},
        {"cuInit", NULL, &api.Init},
        {"cuDriverGetVersion", NULL, &api.DriverGetVersion},
        {"cuDeviceGetCount", NULL, &api.DeviceGetCount},
        {"cuDeviceGet", NULL, &api.DeviceGet},
        {"cuDeviceGetName", NULL, &api.DeviceGetName},
        {"cuDeviceGetAttribute", NULL, &api.DeviceGetAttribute},
        {"cuDeviceTotalMem_v2", NULL, &api.DeviceTotalMem},
        {"cuDevicePrimaryCtxRetain", NULL, &api.DevicePrimaryCtxRetain},
        {"cuCtxSetCurrent", NULL, &api.CtxSetCurrent},
        {"cuCtxSynchronize", NULL, &api.CtxSynchronize},
        {"cuModuleLoadDataEx", NULL, &api.ModuleLoadDataEx},
        {"cuModuleUnload", NULL, &api.ModuleUnload},
        {"cuModuleGetFunction", NULL, &api.ModuleGetFunction},
        {"cuFuncGetAttribute", NULL, &api.FuncGetAttribute},
        {"cuFuncSetAttribute", NULL, &api.FuncSetAttribute},
        {"cuLaunchKernel", NULL, &api.LaunchKernel},
        {"cuMemAlloc_v2", NULL, &api.MemAlloc},
        {"cuMemFree_v2", NULL, &api.MemFree},
        {"cuMemcpyHtoD_v2", NULL, &api.MemcpyHtoD},
        {"cuMemcpyDtoH_v2", NULL, &api.MemcpyDtoH},
        {"cuMemsetD8_v2", NULL, &api.MemsetD8},
        {"cuMemsetD16_v2", NULL, &api.MemsetD16},
        {"cuMemsetD32_v2", NULL, &api.MemsetD32},
        {"cuMemsetD32Async", NULL, &api.MemsetD32Async},
        {"cuEventCreate", NULL, &api.EventCreate},
        {"cuEventRecord", NULL, &api.EventRecord},
        {"cuEventSynchronize", NULL, &api.EventSynchronize},
        {"cuEventElapsedTime_v2", "cuEventElapsedTime", &api.EventElapsedTime},
        {"cuEventDestroy_v2", NULL, &api.EventDestroy},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        if (syms[i].fallback && !dlsym(h, syms[i].name)) {
            if (bind(h, syms[i].fallback, syms[i].slot, failure, sizeof failure) == 0)
                continue;
        } else if (bind(h, syms[i].name, syms[i].slot, failure, sizeof failure) == 0) {
            continue;
        }
        dlclose(h);
        state = -1;
        avo_error(err, errlen, AVO_ENOTFOUND, "libcuda: %s", failure);
        return NULL;
    }
    handle_path(h, api.path, sizeof api.path);
    driver_initialized = 1; /* even a failed cuInit may leave driver state behind */
    CUresult rc = api.Init(0);
    if (rc != AVO_CUDA_SUCCESS) {
        char why[256];
        snprintf(failure, sizeof failure, "cuInit failed: %s%s",
                 avo_cuda_driver_error(rc, why, sizeof why),
                 rc == AVO_CUDA_ERROR_NO_DEVICE ? " (no CUDA-capable GPU is visible)" : "");
        state = -1;
        avo_error(err, errlen, AVO_EIO, "%s", failure);
        return NULL;
    }
    state = 1;
    return &api;
}

/* Names and messages of the codes avo reports, for use without a driver
 * (and for drivers that do not know a code). */
static const struct {
    CUresult rc;
    const char *name, *text;
} driver_codes[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER", "CUDA driver version is insufficient"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
    {710, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", "operation not supported on global/shared address space"},
    {718, "CUDA_ERROR_INVALID_PC", "invalid program counter"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const char *avo_cuda_driver_error_name(CUresult rc, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof driver_codes / sizeof driver_codes[0]; i++)
        if (driver_codes[i].rc == rc)
            return driver_codes[i].name;
    snprintf(buf, len, "CUresult %d", rc);
    return buf;
}

const char *avo_cuda_driver_error(CUresult rc, char *buf, size_t len)
{
    char scratch[AVO_ERRLEN];
    const avo_driver_api *api = avo_cuda_driver(scratch, sizeof scratch);
    const char *name = NULL, *text = NULL;
    if (api) {
        if (api->GetErrorName(rc, &name) != AVO_CUDA_SUCCESS)
            name = NULL;
        if (api->GetErrorString(rc, &text) != AVO_CUDA_SUCCESS)
            text = NULL;
    }
    for (size_t i = 0; (!name || !text) && i < sizeof driver_codes / sizeof driver_codes[0]; i++)
        if (driver_codes[i].rc == rc) {
            name = name ? name : driver_codes[i].name;
            text = text ? text : driver_codes[i].text;
        }
    if (name && text)
        snprintf(buf, len, "%s: %s", name, text);
    else
        snprintf(buf, len, "CUresult %d", rc);
    return buf;
}

const char *avo_cuda_nvrtc_error(nvrtcResult rc, char *buf, size_t len)
{
    static const char *const names[] = {
        "NVRTC_SUCCESS",
        "NVRTC_ERROR_OUT_OF_MEMORY",
        "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
        "NVRTC_ERROR_INVALID_INPUT",
        "NVRTC_ERROR_INVALID_PROGRAM",
        "NVRTC_ERROR_INVALID_OPTION",
        "NVRTC_ERROR_COMPILATION",
        "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
        "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
        "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
        "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
        "NVRTC_ERROR_INTERNAL_ERROR",
    };
    char scratch[AVO_ERRLEN];
    const avo_nvrtc_api *api = avo_cuda_nvrtc(scratch, sizeof scratch);
    const char *name = api ? api->GetErrorString(rc) : NULL;
    if (!name && rc >= 0 && (size_t)rc < sizeof names / sizeof names[0])
        name = names[rc];
    if (name)
        snprintf(buf, len, "%s", name);
    else
        snprintf(buf, len, "nvrtcResult %d", rc);
    return buf;
}

int avo_cuda_error_is_sticky(CUresult rc)
{
    switch (rc) {
    case AVO_CUDA_ERROR_ECC_UNCORRECTABLE:
    case AVO_CUDA_ERROR_ILLEGAL_ADDRESS:
    case AVO_CUDA_ERROR_LAUNCH_TIMEOUT:
    case AVO_CUDA_ERROR_ASSERT:
    case AVO_CUDA_ERROR_HARDWARE_STACK_ERROR:
    case AVO_CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case AVO_CUDA_ERROR_MISALIGNED_ADDRESS:
    case AVO_CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case AVO_CUDA_ERROR_INVALID_PC:
    case AVO_CUDA_ERROR_LAUNCH_FAILED:
    case AVO_CUDA_ERROR_UNKNOWN:
        return 1;
    default:
        return 0;
    }
}
