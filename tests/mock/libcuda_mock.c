/*
 * libcuda_mock.c — a stand-in for the NVIDIA driver (built as libcuda.so.1)
 * so the device side of the CUDA backend (buffers, guards, poisoning,
 * verification, timing, fault handling, worker replacement) runs in CI
 * without a GPU.  "Device" memory is host memory; modules accept any image;
 * kernels are host functions chosen by name.  The candidate "vadd" misbehaves
 * on purpose depending on its block size (set by the test evaluator's MODE
 * knob, block = 256 - MODE):
 *   256 correct, 255 wrong values, 254 writes past the end, 253 computes only
 *   on its first launch (stale output), 252 wrong from its second launch on,
 *   251 illegal address (sticky), 250 launch out of resources, 249 copies the
 *   reference's output instead of computing (as device code that found the
 *   reference's buffers would), 248 skips the work when its inputs equal the
 *   previous launch's (a cache keyed on input contents; it says so on stderr),
 *   247 skips the work from its third launch on (after verification), 246
 *   adds 1 to every element from its third launch on, 245 is right only at
 *   the evaluator's timed sizes (n = 1000 or 1 << 20), 244 also writes the
 *   element before its output.
 * AVO_MOCK_DEVICES=N exposes N devices (default 1), named "avo mock GPU" and
 * "avo mock GPU 1", ...  With AVO_MOCK_DEVICE_DIR set, a process that
 * retains a device's context holds an exclusive lock on DIR/gpuN.lock for
 * its lifetime; finding it held (two timing processes on one GPU) appends
 * a line to DIR/shared.
 * Only the entry points avo uses exist; their signatures follow cuda.h.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum { OK = 0, INVALID_VALUE = 1, NOT_FOUND = 500, ILLEGAL_ADDRESS = 700, OUT_OF_RESOURCES = 701 };

static CUresult sticky;       /* once set, every call fails with it */
static unsigned long long launches; /* of the candidate in this process */
static const float *ref_out;        /* output buffer of the last reference launch */
static int ref_n;
static float *seen_x, *seen_y;      /* inputs of the previous candidate launch (mode 248) */
static int seen_n;

typedef struct mock_function {
    char name[64];
} mock_function;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

CUresult cuGetErrorName(CUresult rc, const char **s)
{
    switch (rc) {
    case OK: *s = "CUDA_SUCCESS"; return OK;
    case INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return OK;
    case NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return OK;
    case ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; return OK;
    case OUT_OF_RESOURCES: *s = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"; return OK;
    default: *s = NULL; return INVALID_VALUE;
    }
}

CUresult cuGetErrorString(CUresult rc, const char **s)
{
    switch (rc) {
    case ILLEGAL_ADDRESS: *s = "an illegal memory access was encountered"; return OK;
    case OUT_OF_RESOURCES: *s = "too many resources requested for launch"; return OK;
    default: return cuGetErrorName(rc, s);
    }
}

CUresult cuInit(unsigned flags) { (void)flags; return OK; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
static int device_count(void)
{
    const char *n = getenv("AVO_MOCK_DEVICES");
    return n && atoi(n) >= 0 ? atoi(n) : 1;
}

CUresult cuDeviceGetCount(int *n) { *n = device_count(); return OK; }

CUresult cuDeviceGet(int *d, int ordinal)
{
    *d = ordinal;
    return ordinal >= 0 && ordinal < device_count() ? OK : INVALID_VALUE;
}

CUresult cuDeviceGetName(char *name, int len, int dev)
{
    if (dev == 0)
        snprintf(name, (size_t)len, "avo mock GPU");
    else
        snprintf(name, (size_t)len, "avo mock GPU %d", dev);
    return OK;
}

/* Hold DIR/gpuN.lock while this process has device N's context. */
static void claim_device(int dev)
{
    const char *dir = getenv("AVO_MOCK_DEVICE_DIR");
    static int claimed[64];
    if (!dir || dev < 0 || dev >= 64 || claimed[dev])
        return;
    claimed[dev] = 1;
    char path[4096];
    snprintf(path, sizeof path, "%s/gpu%d.lock", dir, dev);
    int fd = open(path, O_WRONLY | O_CREAT, 0600); /* kept open: the lock lives with us */
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
        return;
    snprintf(path, sizeof path, "%s/shared", dir);
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "gpu %d shared by pid %d\n", dev, (int)getpid());
        fclose(f);
    }
}

CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
    (void)dev;
    switch (attr) {
    case 1: *v = 1024; break;                          /* threads per block */
    case 2: case 3: *v = 1024; break;
    case 4: *v = 64; break;
    case 5: *v = 2147483647; break;
    case 6: case 7: *v = 65535; break;
    case 8: *v = 48 * 1024; break;
    case 16: *v = 132; break;                          /* SMs */
    case 38: *v = 50 * 1024 * 1024; break;             /* L2 */
    case 75: *v = 9; break;
    case 76: *v = 0; break;
    case 97: *v = 227 * 1024; break;
    default: *v = 0;
    }
    return OK;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev) { (void)dev; *bytes = 80ull << 30; return OK; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    claim_device(dev);
    *ctx = (void *)&sticky;
    return OK;
}
CUresult cuCtxSetCurrent(void *ctx) { (void)ctx; return sticky; }
CUresult cuCtxSynchronize(void) { return sticky; }

CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *o, void **v)
{
    (void)image, (void)n, (void)o, (void)v;
    if (sticky)
        return sticky;
    *mod = malloc(1);
    return OK;
}

CUresult cuModuleUnload(void *mod) { free(mod); return sticky; }

CUresult cuModuleGetFunction(mock_function **fn, void *mod, const char *name)
{
    (void)mod;
    if (strcmp(name, "vadd") && strcmp(name, "vadd_ref") && strcmp(name, "avo_clock_probe"))
        return NOT_FOUND;
    *fn = calloc(1, sizeof **fn);
    strncpy((*fn)->name, name, sizeof (*fn)->name - 1);
    return OK;
}

CUresult cuFuncGetAttribute(int *v, int attr, mock_function *fn) { (void)attr, (void)fn; *v = 0; return OK; }
CUresult cuFuncSetAttribute(mock_function *fn, int attr, int v) { (void)fn, (void)attr, (void)v; return OK; }

CUresult cuLaunchKernel(mock_function *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, void *stream, void **params,
                        void **extra)
{
    (void)gy, (void)gz, (void)by, (void)bz, (void)smem, (void)stream, (void)extra;
    if (sticky)
        return sticky;
    if (strcmp(fn->name, "avo_clock_probe") == 0) {
        unsigned long long *out = (unsigned long long *)(uintptr_t)*(CUdeviceptr *)params[0];
        unsigned long long ns = *(unsigned long long *)params[1];
        out[0] = ns * 1980 / 1000; /* 1980 MHz */
        out[1] = ns;
        return OK;
    }
    int n = *(int *)params[0];
    const float *x = (const float *)(uintptr_t)*(CUdeviceptr *)params[1];
    const float *y = (const float *)(uintptr_t)*(CUdeviceptr *)params[2];
    float *out = (float *)(uintptr_t)*(CUdeviceptr *)params[3];
    int mode = strcmp(fn->name, "vadd_ref") == 0 ? 256 : (int)bx;
    if (strcmp(fn->name, "vadd_ref") == 0) {
        ref_out = out;
        ref_n = n;
    }
    if (mode == 249) {
        for (int i = 0; i < n && i < ref_n; i++)
            out[i] = ref_out[i];
        return OK;
    }
    if (mode == 248) {
        if (seen_n == n && memcmp(seen_x, x, (size_t)n * 4) == 0 &&
            memcmp(seen_y, y, (size_t)n * 4) == 0) {
            fprintf(stderr, "mock vadd: cache hit, work skipped\n");
            return OK;
        }
        free(seen_x);
        free(seen_y);
        seen_x = malloc((size_t)n * 4);
        seen_y = malloc((size_t)n * 4);
        if (!seen_x || !seen_y)
            return 2;
        memcpy(seen_x, x, (size_t)n * 4);
        memcpy(seen_y, y, (size_t)n * 4);
        seen_n = n;
    }
    if ((unsigned long long)gx * bx < (unsigned long long)n && mode == 256 &&
        strcmp(fn->name, "vadd") == 0)
        return INVALID_VALUE; /* the test evaluator's grid must cover n */
    if (mode == 250)
        return OUT_OF_RESOURCES;
    if (mode == 251) {
        sticky = ILLEGAL_ADDRESS;
        return OK; /* reported by the next synchronize, as on a GPU */
    }
    unsigned long long call = strcmp(fn->name, "vadd") == 0 ? launches++ : 0;
    if (mode == 253 && call > 0)
        return OK;
    if (mode == 247 && call > 1)
        return OK;
    for (int i = 0; i < n; i++) {
        float v = x[i] + y[i];
        if (mode == 255)
            v += 0.01f;
        if (mode == 252 && call > 0)
            v = x[i] - y[i];
        if (mode == 246 && call > 1)
            v += 1.0f;
        if (mode == 245 && n != 1000 && n != 1 << 20)
            v += 1.0f;
        out[i] = v;
    }
    if (mode == 254)
        for (int i = 0; i < 4; i++)
            out[n + i] = 0.0f;
    if (mode == 244)
        out[-1] = 0.0f;
    return OK;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    void *m = NULL;
    if (sticky)
        return sticky;
    if (posix_memalign(&m, 256, bytes ? bytes : 1))
        return 2;
    memset(m, 0x5a, bytes);
    *p = (CUdeviceptr)(uintptr_t)m;
    return OK;
}

CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); return sticky; }

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    if (sticky)
        return sticky;
    memcpy((void *)(uintptr_t)dst, src, n);
    return OK;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    if (sticky)
        return sticky;
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return OK;
}

CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n)
{
    memset((void *)(uintptr_t)p, v, n);
    return sticky;
}

CUresult cuMemsetD16_v2(CUdeviceptr p, unsigned short v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ((unsigned short *)(uintptr_t)p)[i] = v;
    return sticky;
}

/* Fill n words by doubling copies (the L2 flush writes 100 MB per run). */
CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned v, size_t n)
{
    unsigned char *d = (unsigned char *)(uintptr_t)p;
    size_t bytes = n * 4, done = n ? 4 : 0;
    if (n)
        memcpy(d, &v, 4);
    while (done < bytes) {
        size_t k = done < bytes - done ? done : bytes - done;
        memcpy(d + done, d, k);
        done += k;
    }
    return sticky;
}

CUresult cuMemsetD32Async(CUdeviceptr p, unsigned v, size_t n, void *stream)
{
    (void)stream;
    return cuMemsetD32_v2(p, v, n);
}

CUresult cuEventCreate(double **e, unsigned flags) { (void)flags; *e = calloc(1, sizeof **e); return OK; }
CUresult cuEventRecord(double *e, void *stream) { (void)stream; *e = now_s(); return sticky; }
CUresult cuEventSynchronize(double *e) { (void)e; return sticky; }

CUresult cuEventElapsedTime_v2(float *ms, double *a, double *b)
{
    *ms = (float)((*b - *a) * 1e3);
    return sticky;
}

CUresult cuEventDestroy_v2(double *e) { free(e); return OK; }

/* NVRTC itself opens libcuda.so.1 and asks for the driver's private tables;
 * the mock has none, which NVRTC accepts. */
CUresult cuGetExportTable(const void **table, const void *id)
{
    (void)id;
    *table = NULL;
    return 3; /* CUDA_ERROR_NOT_INITIALIZED */
}
