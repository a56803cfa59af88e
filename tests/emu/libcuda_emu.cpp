/*
 * libcuda_emu.cpp — a CUDA driver that runs kernels on the CPU (built as
 * libcuda.so.1 beside the NVRTC shim, libnvrtc_emu.c), so that the whole
 * device side of avo's CUDA backend — buffers, guards, poisoning, the
 * reference, verification, timing, faults — runs real seed kernels on a
 * machine without a GPU.  It answers to the entry points avo uses, with the
 * signatures of cuda.h.
 *
 * Kernels: cuModuleLoadDataEx takes a cubin from the shim, finds the host
 * module the shim built for it (emu_common.h) and loads a private copy of it
 * (one set of __device__ globals per module, as on a GPU).  A launch runs the
 * blocks one after another; the threads of a block are fibers
 * (Boost.Context), switched at __syncthreads and at warp operations, which
 * complete when every live thread of the block (or lane of the warp) has
 * arrived.  Threads waiting at different barriers can never all arrive: that
 * launch ends with CUDA_ERROR_LAUNCH_FAILED and a note on stderr.
 *
 * Checked as a GPU would: launch dimensions and dynamic shared memory
 * against the device limits and the function's opt-in (CUDA_ERROR_INVALID_VALUE);
 * copies and memsets against the allocations.  Memory: every allocation and
 * the block's dynamic shared memory end at an inaccessible page, so a kernel
 * that runs past one faults; a fault (or __trap) is the sticky error a GPU
 * reports — CUDA_ERROR_ILLEGAL_ADDRESS (also for a misaligned vector access,
 * which x86 cannot tell from a wild address), ..._MISALIGNED_ADDRESS (a WMMA
 * or cp.async pointer the hardware refuses), ..._ILLEGAL_INSTRUCTION,
 * ..._LAUNCH_FAILED (__trap, integer division by zero, misused WMMA) — returned by every
 * later call, as the driver does.
 * A kernel that never ends never returns, like on a GPU.
 *
 * Also as on a GPU: a process forked after cuInit that calls into the driver
 * fails — here always, with a note (check_not_forked).
 *
 * A block whose threads need more registers (as the cubin states them) than
 * the 64 Ki of a multiprocessor does not launch:
 * CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES.
 *
 * Not emulated: streams other than the default one (everything is
 * synchronous), PTX (the clock probe gets CUDA_ERROR_NOT_SUPPORTED), and
 * timing: the times are the CPU's.
 */
#include <boost/context/detail/fcontext.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "avo_emu_rt.h"
#include "emu_common.h"
extern "C" {
#include "eval/cuda/cubin.h"
}

namespace bc = boost::context::detail;

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum : CUresult {
    OK = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    NOT_INITIALIZED = 3,
    INVALID_IMAGE = 200,
    NOT_FOUND = 500,
    ILLEGAL_ADDRESS = 700,
    OUT_OF_RESOURCES = 701,
    ILLEGAL_INSTRUCTION = 715,
    MISALIGNED_ADDRESS = 716,
    LAUNCH_FAILED = 719,
    NOT_SUPPORTED = 801,
};

enum {
    MAX_THREADS = 1024,
    MAX_SHARED_DEFAULT = 48 * 1024,
    MAX_SHARED_OPTIN = 227 * 1024,
    STACK_BYTES = 256 * 1024,
};

static CUresult sticky; /* once set, every call fails with it */
static pid_t init_pid;  /* of the process that called cuInit */

/* The driver is not fork-safe: a child forked after cuInit that reaches it
 * may hang or fail on a GPU.  The emulator makes that a certain crash. */
static void check_not_forked(const char *call)
{
    if (init_pid && getpid() != init_pid) {
        fprintf(stderr,
                "avo emulator: %s in process %d, forked from %d after cuInit: the CUDA "
                "driver is not fork-safe\n",
                call, (int)getpid(), (int)init_pid);
        abort();
    }
}

static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("avo emulator: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static size_t page_size(void)
{
    static size_t page;
    if (!page)
        page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* n bytes that end right before an inaccessible page (or NULL). */
static void *guarded_alloc(size_t n, size_t *ret_mapped, void **ret_base)
{
    size_t span = round_up(n ? n : 1, page_size());
    size_t mapped = span + page_size();
    void *base = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    mprotect((char *)base + span, page_size(), PROT_NONE);
    *ret_mapped = mapped;
    *ret_base = base;
    return (char *)base + (span - round_up(n, 256)); /* 256-byte aligned, as cuMemAlloc's */
}

/* ---------------------------------------------------------------- errors */

static const struct error_text {
    CUresult rc;
    const char *name, *text;
} errors[] = {
    {OK, "CUDA_SUCCESS", "no error"},
    {INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION",
     "an illegal instruction was encountered"},
    {MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
    {LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};

static const error_text *error_find(CUresult rc)
{
    for (const error_text &e : errors)
        if (e.rc == rc)
            return &e;
    return NULL;
}

extern "C" CUresult cuGetErrorName(CUresult rc, const char **s)
{
    const error_text *e = error_find(rc);
    *s = e ? e->name : NULL;
    return e ? OK : INVALID_VALUE;
}

extern "C" CUresult cuGetErrorString(CUresult rc, const char **s)
{
    const error_text *e = error_find(rc);
    *s = e ? e->text : NULL;
    return e ? OK : INVALID_VALUE;
}

/* ---------------------------------------------------------------- device */

extern "C" CUresult cuInit(unsigned flags)
{
    check_not_forked("cuInit");
    if (flags)
        return INVALID_VALUE;
    init_pid = getpid();
    return OK;
}
extern "C" CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return OK;
}
extern "C" CUresult cuDeviceGetCount(int *n)
{
    *n = 1;
    return OK;
}
extern "C" CUresult cuDeviceGet(int *d, int ordinal)
{
    check_not_forked("cuDeviceGet");
    *d = ordinal;
    return ordinal == 0 ? OK : INVALID_VALUE;
}

extern "C" CUresult cuDeviceGetName(char *name, int len, int dev)
{
    (void)dev;
    snprintf(name, (size_t)len, "avo CPU emulator");
    return OK;
}

/* CUdevice_attribute values the emulated device answers; others read 0. */
static const struct {
    int attr, value;
} attributes[] = {
    {1, MAX_THREADS},        /* threads per block */
    {2, 1024},               /* block x */
    {3, 1024},               /* block y */
    {4, 64},                 /* block z */
    {5, 2147483647},         /* grid x */
    {6, 65535},              /* grid y */
    {7, 65535},              /* grid z */
    {8, MAX_SHARED_DEFAULT}, /* shared memory per block */
    {16, 1},                 /* SMs: one CPU core */
    {38, 4 * 1024 * 1024},   /* "L2": sizes avo's flush buffer */
    {75, 9},                 /* compute capability 9.0: NVRTC targets sm_90 */
    {76, 0},                 /* (minor) */
    {97, MAX_SHARED_OPTIN},  /* shared memory per block with the opt-in */
};

extern "C" CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
    (void)dev;
    *v = 0;
    for (const auto &a : attributes)
        if (a.attr == attr)
            *v = a.value;
    return OK;
}

extern "C" CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
    (void)dev;
    *bytes = 16ull << 30;
    return OK;
}

static int context_tag;
extern "C" CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    check_not_forked("cuDevicePrimaryCtxRetain");
    (void)dev;
    *ctx = &context_tag;
    return OK;
}
extern "C" CUresult cuCtxSetCurrent(void *ctx)
{
    return ctx == &context_tag ? sticky : INVALID_VALUE;
}
extern "C" CUresult cuCtxSynchronize(void)
{
    return sticky;
}

/* ---------------------------------------------------------------- memory */

struct allocation {
    size_t bytes, mapped;
    void *base;
};
static std::map<uintptr_t, allocation> allocations; /* by device pointer */

/* Whether [p, p + n) lies inside one allocation. */
static bool in_allocation(CUdeviceptr p, size_t n)
{
    auto it = allocations.upper_bound((uintptr_t)p);
    if (it == allocations.begin())
        return false;
    --it;
    return p >= it->first && p + n <= it->first + it->second.bytes;
}

extern "C" CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    check_not_forked("cuMemAlloc");
    if (sticky)
        return sticky;
    if (!bytes)
        return INVALID_VALUE;
    allocation a = {bytes, 0, NULL};
    void *ptr = guarded_alloc(bytes, &a.mapped, &a.base);
    if (!ptr)
        return OUT_OF_MEMORY;
    allocations[(uintptr_t)ptr] = a;
    *p = (CUdeviceptr)(uintptr_t)ptr;
    return OK;
}

extern "C" CUresult cuMemFree_v2(CUdeviceptr p)
{
    auto it = allocations.find((uintptr_t)p);
    if (it == allocations.end())
        return INVALID_VALUE;
    munmap(it->second.base, it->second.mapped);
    allocations.erase(it);
    return sticky;
}

extern "C" CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    if (sticky)
        return sticky;
    if (!in_allocation(dst, n))
        return INVALID_VALUE;
    memcpy((void *)(uintptr_t)dst, src, n);
    return OK;
}

extern "C" CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    if (sticky)
        return sticky;
    if (!in_allocation(src, n))
        return INVALID_VALUE;
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return OK;
}

template <class T> static CUresult memset_device(CUdeviceptr p, T v, size_t n)
{
    if (sticky)
        return sticky;
    if (!in_allocation(p, n * sizeof(T)))
        return INVALID_VALUE;
    T *d = (T *)(uintptr_t)p;
    for (size_t i = 0; i < n; i++)
        d[i] = v;
    return OK;
}

extern "C" CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n)
{
    return memset_device(p, v, n);
}
extern "C" CUresult cuMemsetD16_v2(CUdeviceptr p, unsigned short v, size_t n)
{
    return memset_device(p, v, n);
}
extern "C" CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned v, size_t n)
{
    return memset_device(p, v, n);
}
extern "C" CUresult cuMemsetD32Async(CUdeviceptr p, unsigned v, size_t n, void *stream)
{
    (void)stream;
    return memset_device(p, v, n);
}

/* ---------------------------------------------------------------- events */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

extern "C" CUresult cuEventCreate(double **e, unsigned flags)
{
    (void)flags;
    *e = (double *)calloc(1, sizeof **e);
    return *e ? OK : OUT_OF_MEMORY;
}
extern "C" CUresult cuEventRecord(double *e, void *stream)
{
    (void)stream;
    *e = now_s();
    return sticky;
}
extern "C" CUresult cuEventSynchronize(double *e)
{
    (void)e;
    return sticky;
}
extern "C" CUresult cuEventElapsedTime_v2(float *ms, double *a, double *b)
{
    *ms = (float)((*b - *a) * 1e3);
    return sticky;
}
extern "C" CUresult cuEventElapsedTime(float *ms, double *a, double *b)
{
    return cuEventElapsedTime_v2(ms, a, b);
}
extern "C" CUresult cuEventDestroy_v2(double *e)
{
    free(e);
    return OK;
}

/* --------------------------------------------------------------- modules */

struct function {
    std::string name;
    void (*entry)(void **);
    avo_emu_ctx **current; /* the module's avo_emu_current */
    int registers;         /* per thread, from the cubin; -1 unknown */
    int static_shared, max_dynamic;
};

struct module {
    void *handle;
    std::vector<function *> functions;
};

extern "C" CUresult cuModuleLoadDataEx(module **out, const void *image, unsigned n, int *o,
                                       void **v)
{
    check_not_forked("cuModuleLoadDataEx");
    (void)n, (void)o, (void)v;
    if (sticky)
        return sticky;
    size_t elf = avo_emu_elf_size(image);
    if (!elf) {
        /* PTX (avo's clock probe): the emulator runs only what the shim built. */
        return NOT_SUPPORTED;
    }
    char path[1200], dir[900], copy[1100];
    if (avo_emu_module_path(image, elf, path, sizeof path) < 0 || access(path, R_OK) < 0) {
        note("no host module for this cubin (%s): it was not compiled through the emulator's "
             "NVRTC (a cubin from another AVO_CACHE?)",
             path);
        return INVALID_IMAGE;
    }
    if (!avo_emu_module_current(path, AVO_EMU_INCLUDE)) {
        /* avo's cache had the cubin, so NVRTC (which rebuilds it) never ran. */
        note("the host module %s is older than the emulator's headers (%s): remove the cached "
             "cubins ($AVO_CACHE/cuda) so that NVRTC compiles the program again",
             path, AVO_EMU_INCLUDE);
        return INVALID_IMAGE;
    }
    /* A private copy: dlopen of the same file twice would share its globals. */
    avo_emu_dir(dir, sizeof dir);
    snprintf(copy, sizeof copy, "%s/load.XXXXXX.so", dir);
    int out_fd = mkstemps(copy, 3), in_fd = open(path, O_RDONLY);
    bool copied = out_fd >= 0 && in_fd >= 0;
    char buf[65536];
    ssize_t got;
    while (copied && (got = read(in_fd, buf, sizeof buf)) > 0)
        copied = write(out_fd, buf, (size_t)got) == got;
    if (in_fd >= 0)
        close(in_fd);
    if (out_fd >= 0)
        close(out_fd);
    void *h = copied ? dlopen(copy, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (out_fd >= 0)
        unlink(copy);
    if (!h) {
        note("cannot load %s: %s", path, copied ? dlerror() : "copy failed");
        return INVALID_IMAGE;
    }
    auto *kernels = (const avo_emu_kernel *)dlsym(h, "avo_emu_kernels");
    auto **current = (avo_emu_ctx **)dlsym(h, "avo_emu_current");
    if (!kernels || !current) {
        note("%s is not an emulator module", path);
        dlclose(h);
        return INVALID_IMAGE;
    }
    /* Registers and static shared memory, as the driver reads them from the cubin. */
    avo_cubin_kernel *resources = NULL;
    char err[256];
    int nresources = avo_cubin_parse(image, elf, &resources, err, sizeof err);
    module *m = new module{h, {}};
    for (const avo_emu_kernel *k = kernels; k->name; k++) {
        int registers = -1, shared = 0;
        for (int i = 0; i < nresources; i++)
            if (strcmp(resources[i].name, k->name) == 0) {
                registers = resources[i].registers;
                shared =
                    (int)(resources[i].static_shared_bytes > 0 ? resources[i].static_shared_bytes
                                                               : 0);
            }
        m->functions.push_back(new function{k->name, k->entry, current, registers, shared,
                                            MAX_SHARED_DEFAULT - shared});
    }
    free(resources);
    *out = m;
    return OK;
}

extern "C" CUresult cuModuleUnload(module *m)
{
    if (!m)
        return INVALID_VALUE;
    for (function *f : m->functions)
        delete f;
    dlclose(m->handle);
    delete m;
    return sticky;
}

extern "C" CUresult cuModuleGetFunction(function **fn, module *m, const char *name)
{
    if (sticky)
        return sticky;
    for (function *f : m->functions)
        if (f->name == name) {
            *fn = f;
            return OK;
        }
    return NOT_FOUND;
}

extern "C" CUresult cuFuncGetAttribute(int *v, int attr, function *fn)
{
    switch (attr) {
    case 0:
        *v = MAX_THREADS;
        return OK; /* max threads per block */
    case 1:
        *v = fn->static_shared;
        return OK; /* static shared bytes */
    case 4:
        *v = fn->registers > 0 ? fn->registers : 0;
        return OK; /* registers per thread */
    case 8:
        *v = fn->max_dynamic;
        return OK; /* max dynamic shared bytes */
    default:
        return NOT_SUPPORTED; /* local memory and the rest: unknown here */
    }
}

extern "C" CUresult cuFuncSetAttribute(function *fn, int attr, int v)
{
    if (attr != 8)
        return NOT_SUPPORTED;
    if (v < 0 || v + fn->static_shared > MAX_SHARED_OPTIN)
        return INVALID_VALUE;
    fn->max_dynamic = v;
    return OK;
}

/* ------------------------------------------------------------ execution */

enum thread_state { READY, AT_BLOCK, AT_WARP, DONE };

struct thread {
    avo_emu_ctx ctx; /* first: the runtime's callbacks get &ctx */
    bc::fcontext_t fc;
    thread_state state;
    unsigned long long deposit, *out;
    unsigned present;
};

static struct launch_state {
    function *fn;
    void **params;
    std::vector<thread> threads;
    std::vector<void *> stacks; /* STACK_BYTES each, a guard page below */
    bc::fcontext_t scheduler;   /* where a fiber returns to */
    sigjmp_buf fault;           /* where a fault or trap ends the launch */
    volatile sig_atomic_t in_kernel;
    char trap_what[256];
} L;

static void yield_to_scheduler(void)
{
    bc::transfer_t t = bc::jump_fcontext(L.scheduler, NULL);
    L.scheduler = t.fctx;
}

static void rt_sync_block(avo_emu_ctx *self)
{
    ((thread *)self)->state = AT_BLOCK;
    yield_to_scheduler();
}

static unsigned rt_warp_exchange(avo_emu_ctx *self, unsigned long long mine,
                                 unsigned long long *all)
{
    thread *t = (thread *)self;
    t->state = AT_WARP;
    t->deposit = mine;
    t->out = all;
    yield_to_scheduler();
    return t->present;
}

static long long rt_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 2000000000ll + (long long)ts.tv_nsec * 2; /* "2 GHz" */
}

static void rt_trap(avo_emu_ctx *self, const char *what)
{
    (void)self;
    snprintf(L.trap_what, sizeof L.trap_what, "%s", what);
    siglongjmp(L.fault, -1);
}

static void rt_misaligned(avo_emu_ctx *self, const char *what)
{
    (void)self;
    snprintf(L.trap_what, sizeof L.trap_what, "%s", what);
    siglongjmp(L.fault, -2);
}

static const avo_emu_rt runtime = {rt_sync_block, rt_warp_exchange, rt_clock, rt_trap,
                                   rt_misaligned};

static void thread_main(bc::transfer_t from)
{
    L.scheduler = from.fctx;
    thread *self = (thread *)from.data;
    L.fn->entry(L.params);
    self->state = DONE;
    yield_to_scheduler(); /* never resumed */
    abort();
}

static void *stack_top(size_t i)
{
    while (L.stacks.size() <= i) {
        size_t mapped = STACK_BYTES + page_size();
        char *base = (char *)mmap(NULL, mapped, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED)
            return NULL;
        mprotect(base, page_size(), PROT_NONE); /* stacks grow down into the guard */
        L.stacks.push_back(base + mapped);
    }
    return L.stacks[i];
}

/* Runs one block to its end; returns 0, or -1 (with a note) when its threads
 * wait at barriers that can never complete. */
static int run_block(avo_emu_index block, avo_emu_index bdim, avo_emu_index gdim, void *shared)
{
    static unsigned long long serial;
    const unsigned n = bdim.x * bdim.y * bdim.z;
    L.threads.resize(n);
    serial++;
    for (unsigned i = 0; i < n; i++) {
        thread &t = L.threads[i];
        t.ctx.thread_idx = {i % bdim.x, i / bdim.x % bdim.y, i / (bdim.x * bdim.y)};
        t.ctx.block_idx = block;
        t.ctx.block_dim = bdim;
        t.ctx.grid_dim = gdim;
        t.ctx.lane = i % 32;
        t.ctx.warp = i / 32;
        t.ctx.dynamic_shared = shared;
        t.ctx.rt = &runtime;
        t.ctx.block_serial = serial;
        t.state = READY;
        void *top = stack_top(i);
        if (!top) {
            note("out of memory for thread stacks");
            return -1;
        }
        t.fc = bc::make_fcontext(top, STACK_BYTES, thread_main);
    }
    const unsigned warps = (n + 31) / 32;
    for (;;) {
        bool progress = false;
        for (unsigned i = 0; i < n; i++) {
            thread &t = L.threads[i];
            if (t.state != READY)
                continue;
            *L.fn->current = &t.ctx;
            t.fc = bc::jump_fcontext(t.fc, &t).fctx;
            progress = true;
        }
        unsigned live = 0, at_block = 0;
        for (unsigned w = 0; w < warps; w++) {
            unsigned first = w * 32, last = first + 32 < n ? first + 32 : n;
            unsigned waiting = 0, alive = 0, present = 0;
            for (unsigned i = first; i < last; i++) {
                thread &t = L.threads[i];
                alive += t.state != DONE;
                at_block += t.state == AT_BLOCK;
                if (t.state == AT_WARP) {
                    waiting++;
                    present |= 1u << (i - first);
                }
            }
            live += alive;
            if (!waiting || waiting != alive)
                continue;
            static unsigned long long exchanges;
            exchanges++;
            unsigned long long all[32] = {0};
            for (unsigned i = first; i < last; i++)
                if (L.threads[i].state == AT_WARP)
                    all[i - first] = L.threads[i].deposit;
            for (unsigned i = first; i < last; i++) {
                thread &t = L.threads[i];
                if (t.state != AT_WARP)
                    continue;
                memcpy(t.out, all, sizeof all);
                t.present = present;
                t.ctx.exchange_serial = exchanges;
                t.state = READY;
            }
            progress = true;
        }
        if (live == 0)
            return 0;
        if (at_block && at_block == live) {
            for (unsigned i = 0; i < n; i++)
                if (L.threads[i].state == AT_BLOCK)
                    L.threads[i].state = READY;
            progress = true;
        }
        if (!progress) {
            unsigned warp_waits = 0;
            for (unsigned i = 0; i < n; i++)
                warp_waits += L.threads[i].state == AT_WARP;
            note("block (%u,%u,%u) cannot go on: %u threads wait at __syncthreads, %u at a warp "
                 "operation, %u have exited (a barrier in divergent code?)",
                 block.x, block.y, block.z, at_block, warp_waits, n - live);
            return -1;
        }
    }
}

static void on_fault(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    if (!L.in_kernel) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    const char *what = sig == SIGSEGV  ? "segmentation fault"
                       : sig == SIGBUS ? "bus error"
                       : sig == SIGFPE ? "arithmetic fault (integer division by zero?)"
                                       : "illegal instruction";
    /* x86 reports a non-canonical address (far outside any allocation) and a
     * misaligned vector access alike, as a general protection fault. */
    snprintf(L.trap_what, sizeof L.trap_what, "%s at address %p%s", what, info->si_addr,
             sig == SIGSEGV && info->si_code == SI_KERNEL
                 ? " (general protection: a wild address or a misaligned vector access)"
                 : "");
    siglongjmp(L.fault, sig);
}

extern "C" CUresult cuLaunchKernel(function *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                   unsigned by, unsigned bz, unsigned shared_bytes, void *stream,
                                   void **params, void **extra)
{
    check_not_forked("cuLaunchKernel");
    (void)stream;
    if (sticky)
        return sticky;
    if (!fn || extra || !bx || !by || !bz || !gx || !gy || !gz || bx > 1024 || by > 1024 ||
        bz > 64 || (unsigned long long)bx * by * bz > MAX_THREADS || gy > 65535 || gz > 65535 ||
        gx > 2147483647u || (int)shared_bytes > fn->max_dynamic)
        return INVALID_VALUE;

    /* The register file of a block, as the GPU allocates it: per warp, in
     * units of 256 registers, 64 Ki in all. */
    if (fn->registers > 0) {
        unsigned long long warps = ((unsigned long long)bx * by * bz + 31) / 32;
        unsigned long long per_warp = (fn->registers * 32ull + 255) / 256 * 256;
        if (warps * per_warp > 65536)
            return OUT_OF_RESOURCES;
    }

    size_t mapped = 0;
    void *base = NULL;
    void *shared = guarded_alloc(shared_bytes, &mapped, &base);
    if (!shared)
        return OUT_OF_MEMORY;
    /* 128-byte aligned (as a GPU's dynamic shared memory is, at least), and
     * as close to the guard page as that allows. */
    shared = (char *)shared + (round_up(shared_bytes, 256) - round_up(shared_bytes, 128));

    static char alt_stack[64 * 1024];
    stack_t ss = {}, old_ss;
    ss.ss_sp = alt_stack;
    ss.ss_size = sizeof alt_stack;
    sigaltstack(&ss, &old_ss);
    struct sigaction sa = {}, old[4];
    const int sigs[4] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 4; i++)
        sigaction(sigs[i], &sa, &old[i]);

    L.fn = fn;
    L.params = params;
    volatile CUresult rc = OK;
    int why = sigsetjmp(L.fault, 1);
    if (why == 0) {
        L.in_kernel = 1;
        const avo_emu_index gdim = {gx, gy, gz}, bdim = {bx, by, bz};
        for (unsigned z = 0; z < gz && rc == OK; z++)
            for (unsigned y = 0; y < gy && rc == OK; y++)
                for (unsigned x = 0; x < gx && rc == OK; x++) {
                    memset(shared, 0xff, shared_bytes); /* what a block finds there: NaNs */
                    if (run_block({x, y, z}, bdim, gdim, shared) < 0)
                        rc = LAUNCH_FAILED;
                }
        L.in_kernel = 0;
    } else {
        L.in_kernel = 0;
        note("kernel %s: %s", fn->name.c_str(), L.trap_what);
        rc = why == SIGILL                     ? ILLEGAL_INSTRUCTION
             : why == SIGSEGV || why == SIGBUS ? ILLEGAL_ADDRESS
             : why == -2                       ? MISALIGNED_ADDRESS
                                               : LAUNCH_FAILED; /* __trap, SIGFPE */
    }
    for (int i = 0; i < 4; i++)
        sigaction(sigs[i], &old[i], NULL);
    sigaltstack(&old_ss, NULL);
    munmap(base, mapped);
    if (rc != OK)
        sticky = rc; /* reported by the next synchronize and every call after, as on a GPU */
    return OK;
}

/* NVRTC opens libcuda.so.1 and asks for the driver's private tables; the
 * emulator has none, which NVRTC accepts. */
extern "C" CUresult cuGetExportTable(const void **table, const void *id)
{
    check_not_forked("cuGetExportTable");
    (void)id;
    *table = NULL;
    return NOT_INITIALIZED;
}
