/*
 * cuda_api.c — dlopen of libnvrtc and libcuda, and the translation of their
 * result codes (see cuda_api.h).  Single-threaded use: workers and the CLI.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/avo.h"
#include "eval/cuda/cuda_api.h"

/* Where libnvrtc is looked for (open_nvrtc): the versioned names below,
 * through the loader's search path (LD_LIBRARY_PATH, ld.so.cache) and in
 * each toolkit folder, then NVIDIA's pip wheels. */
static const char *const nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                          "libnvrtc.so"};
static const char *const toolkit_env[] = {"CUDA_HOME", "CUDA_PATH"};
static const char toolkit_default[] = "/usr/local/cuda";
/* The wheels nvidia-cuda-nvrtc, -runtime and -crt (CUDA 13) installed with
 * `pip install --target DIR` (tools/install-deps --tests: the default DIR),
 * or into a venv (DIR = its site-packages): DIR/nvidia/cu13/{lib,include}. */
static const char wheels_default[] = "/opt/avo/cuda-wheels";
static const char wheels_subdir[] = "nvidia/cu13";

static const char *wheels_dir(void)
{
    const char *dir = getenv("AVO_CUDA_WHEELS");
    return dir && *dir ? dir : wheels_default;
}

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

/* The first of nvrtc_names that loads from folder `dir`; NULL when none. */
static void *open_nvrtc_in(const char *dir)
{
    char path[1200];
    for (size_t i = 0; i < sizeof nvrtc_names / sizeof nvrtc_names[0]; i++) {
        snprintf(path, sizeof path, "%.1000s/%s", dir, nvrtc_names[i]);
        void *h = try_open(path);
        if (h)
            return h;
    }
    return NULL;
}

/*
 * Open libnvrtc from the first place that has it, in this order:
 *   1. $AVO_NVRTC, the library file itself; when it is set nothing else is
 *      tried, so a wrong path is an error rather than another NVRTC;
 *   2. a toolkit: the versioned names through the loader's path (the
 *      emulator's LD_LIBRARY_PATH, Debian's nvidia-cuda-toolkit, a toolkit
 *      registered with ldconfig), then $CUDA_HOME/lib64, $CUDA_PATH/lib64
 *      and /usr/local/cuda/lib64;
 *   3. NVIDIA's pip wheels: $AVO_CUDA_WHEELS (default /opt/avo/cuda-wheels)
 *      /nvidia/cu13/lib.
 * Returns the handle with api->source saying which place it came from, or
 * NULL with the reason (what was tried, what to install) in err.
 */
static void *open_nvrtc(avo_nvrtc_api *api, char *err, size_t errlen)
{
    const char *explicit = getenv("AVO_NVRTC");
    if (explicit && *explicit) {
        void *h = try_open(explicit);
        if (!h) {
            const char *why = dlerror();
            avo_error(err, errlen, AVO_ENOTFOUND, "cannot load $AVO_NVRTC (%s): %s", explicit,
                      why ? why : "dlopen failed");
            return NULL;
        }
        snprintf(api->source, sizeof api->source, "$AVO_NVRTC");
        return h;
    }
    void *h;
    for (size_t i = 0; i < sizeof nvrtc_names / sizeof nvrtc_names[0]; i++)
        if ((h = try_open(nvrtc_names[i]))) {
            snprintf(api->source, sizeof api->source,
                     "a toolkit in the loader's path (LD_LIBRARY_PATH, ld.so.cache)");
            return h;
        }
    char dir[1100];
    for (size_t e = 0; e < sizeof toolkit_env / sizeof toolkit_env[0]; e++) {
        const char *home = getenv(toolkit_env[e]);
        if (!home || !*home)
            continue;
        snprintf(dir, sizeof dir, "%.1000s/lib64", home);
        if ((h = open_nvrtc_in(dir))) {
            snprintf(api->source, sizeof api->source, "the toolkit in $%s", toolkit_env[e]);
            return h;
        }
    }
    snprintf(dir, sizeof dir, "%s/lib64", toolkit_default);
    if ((h = open_nvrtc_in(dir))) {
        snprintf(api->source, sizeof api->source, "the toolkit in %s", toolkit_default);
        return h;
    }
    snprintf(dir, sizeof dir, "%.1000s/%s/lib", wheels_dir(), wheels_subdir);
    if ((h = open_nvrtc_in(dir))) {
        snprintf(api->source, sizeof api->source, "the pip wheels in %.500s", wheels_dir());
        return h;
    }
    avo_error(err, errlen, AVO_ENOTFOUND,
              "cannot load libnvrtc (tried libnvrtc.so.13/.12/.11.2 and libnvrtc.so in the "
              "loader's path, $CUDA_HOME/lib64, $CUDA_PATH/lib64, %s/lib64 and the pip wheels "
              "in %s); install NVIDIA's NVRTC wheels (tools/install-deps --tests) or the CUDA "
              "toolkit, or name the library in AVO_NVRTC",
              toolkit_default, dir);
    return NULL;
}

/* 1 when `dir` holds cuda_fp16.h and cuda_bf16.h, the headers every include
 * folder avo takes must have. */
static int has_fp16_headers(const char *dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%.1000s/cuda_fp16.h", dir);
    if (access(path, R_OK) != 0)
        return 0;
    snprintf(path, sizeof path, "%.1000s/cuda_bf16.h", dir);
    return access(path, R_OK) == 0;
}

int avo_cuda_include_dir(const avo_nvrtc_api *nvrtc, char *dir, size_t len, char *err,
                         size_t errlen)
{
    char dirs[4][1100];
    int n = 0;
    /* beside the library: .../lib64/libnvrtc.so.13 -> .../include */
    snprintf(dirs[n], sizeof dirs[n], "%s", nvrtc && nvrtc->path[0] ? nvrtc->path : "");
    char *slash = strrchr(dirs[n], '/');
    if (slash) {
        *slash = '\0';
        slash = strrchr(dirs[n], '/');
    }
    if (slash) {
        strcpy(slash, "/include");
        n++;
    }
    const char *home = getenv("CUDA_HOME");
    if (home && *home)
        snprintf(dirs[n++], sizeof dirs[0], "%.1000s/include", home);
    snprintf(dirs[n++], sizeof dirs[0], "%s/include", toolkit_default);
    snprintf(dirs[n++], sizeof dirs[0], "%.1000s/%s/include", wheels_dir(), wheels_subdir);
    char tried[4500] = "";
    for (int i = 0; i < n; i++) {
        if (has_fp16_headers(dirs[i])) {
            if (strlen(dirs[i]) >= len)
                return avo_error(err, errlen, AVO_EINVAL, "include folder name too long: %s",
                                 dirs[i]);
            memcpy(dir, dirs[i], strlen(dirs[i]) + 1);
            return 0;
        }
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof tried - used, "%s%s", i ? ", " : "", dirs[i]);
    }
    return avo_error(err, errlen, AVO_ENOTFOUND,
                     "the CUDA headers cuda_fp16.h and cuda_bf16.h are in none of %s; install "
                     "NVIDIA's wheels (tools/install-deps --tests) or the CUDA toolkit",
                     tried);
}

/* NVRTC opens libnvrtc-builtins.so.MAJOR.MINOR by name when it compiles;
 * outside the loader's path (the pip wheels, $AVO_NVRTC) that fails unless
 * the one beside libnvrtc is loaded first, which makes the name resolve to
 * it.  The handle is kept for the life of the process. */
static void preload_builtins(const char *nvrtc_path, int major, int minor)
{
    const char *slash = strrchr(nvrtc_path, '/');
    if (!slash)
        return; /* found by name: the loader finds the builtins likewise */
    char path[1200];
    snprintf(path, sizeof path, "%.*s/libnvrtc-builtins.so.%d.%d", (int)(slash - nvrtc_path),
             nvrtc_path, major, minor);
    (void)try_open(path); /* missing: NVRTC's own error names it at compile time */
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
    void *h = open_nvrtc(&api, failure, sizeof failure);
    if (!h) {
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
    /* A library with the symbols that cannot say its version is not a
     * working NVRTC (the emulator's stand-in without a real one behind it). */
    int major = 0, minor = 0;
    nvrtcResult rc = api.Version(&major, &minor);
    if (rc != AVO_NVRTC_SUCCESS) {
        snprintf(failure, sizeof failure,
                 "%.300s (from %.300s) does not work: nvrtcVersion returned %d", api.path,
                 api.source, rc);
        dlclose(h);
        state = -1;
        avo_error(err, errlen, AVO_ENOTFOUND, "%s", failure);
        return NULL;
    }
    preload_builtins(api.path, major, minor);
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
