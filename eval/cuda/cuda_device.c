/*
 * cuda_device.c — the device side of the CUDA backend: load the cubins into
 * the worker's long-lived primary context, then hand each config, and then
 * each check config (verified only), to the judge (eval/judge.c), for which this file is the device
 * (judge.h), as eval/cpu/device.c is for the CPU backend (docs/threat-model.md).
 *
 * The judge decides what runs on which inputs and checks every result; this
 * file only moves bytes and launches:
 *   - the candidate's argument slots: one device allocation with canary
 *     bytes around every buffer (a GPU has no guard pages), mirrored on the
 *     host, where the judge fills inputs and poisons outputs; run_candidate
 *     uploads the slots, flushes L2, launches the candidate once per slot
 *     between two CUDA events (that time is the sample), and downloads the
 *     slots again, canaries included, for the judge to check;
 *   - the reference runs in device buffers of its own; its outputs are read
 *     back into the judge's host buffers and the device buffers zeroed
 *     before anything else runs, so no candidate launch can find a reference
 *     result in device memory;
 *   - verification inputs are the job's seeded stream, drawn as the CUDA
 *     backend always has (AVO_DRAW_FLOAT); timed launches each get a slot of
 *     fresh inputs from getrandom that no launch has seen before.
 *
 * Faults: a sticky error (illegal address, misaligned address, illegal
 * instruction, launch failure, ...) leaves the context unusable: the result
 * is `crashed` with the error's name and *ret_retire asks the worker to exit
 * after answering, so the pool starts a fresh one.  Launch out of resources
 * is `invalid`.  A hang is the pool's business: it kills the worker at the
 * job's deadline (`timeout`).
 *
 * Baseline jobs: the vendor library's call (vendor.h) takes the candidate
 * launch's place between the same events, on the same slots, under the same
 * judge; its plan is built per config before the judge starts, outside every
 * timed region.  A config the library cannot serve is `unavailable` and the
 * others still run.
 *
 * Device state (context, flush buffer, events, clock probe) lives for the
 * worker's lifetime; modules live for one job, buffers for one config.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"
#include "core/backend.h"
#include "eval/cuda/cuda_api.h"
#include "eval/cuda/cuda_job.h"
#include "eval/cuda/cuda_pure.h"
#include "eval/judge.h"
#include "eval/measure.h"
#include "core/pcg.h"
#include "eval/cuda/vendor.h"

#define GUARD_BYTES 256  /* canary before each buffer and after the last; data padded to it */
#define SLOTS_MAX_MB 256 /* candidate argument slots of one config, at most */
#define PARAM_BYTES (AVO_JOBSPEC_MAX_ARGS * 8) /* packed kernel arguments of one launch */
#define MIN_FLUSH_BYTES (64u << 20)
#define PROBE_NS 2000000ull /* clock probe spin: 2 ms */
#define MAX_BATCH 4096      /* launches per timing sample, at most */

/* Measures the SM clock: spins PROBE_NS on %globaltimer, counting %clock64. */
static const char probe_ptx[] = ".version 7.0\n"
                                ".target sm_70\n"
                                ".address_size 64\n"
                                ".visible .entry avo_clock_probe(.param .u64 out, .param .u64 ns)\n"
                                "{\n"
                                "  .reg .u64 %rd<9>;\n"
                                "  .reg .pred %p1;\n"
                                "  ld.param.u64 %rd1, [out];\n"
                                "  ld.param.u64 %rd2, [ns];\n"
                                "  cvta.to.global.u64 %rd1, %rd1;\n"
                                "  mov.u64 %rd3, %globaltimer;\n"
                                "  mov.u64 %rd4, %clock64;\n"
                                "SPIN:\n"
                                "  mov.u64 %rd5, %globaltimer;\n"
                                "  sub.u64 %rd6, %rd5, %rd3;\n"
                                "  setp.lt.u64 %p1, %rd6, %rd2;\n"
                                "  @%p1 bra SPIN;\n"
                                "  mov.u64 %rd7, %clock64;\n"
                                "  sub.u64 %rd8, %rd7, %rd4;\n"
                                "  st.global.u64 [%rd1], %rd8;\n"
                                "  st.global.u64 [%rd1+8], %rd6;\n"
                                "  ret;\n"
                                "}\n";

static struct device {
    int ready;
    const avo_driver_api *cu;
    CUdevice dev;
    CUcontext ctx;
    avo_cuda_limits lim;
    int sm_count, cc;
    long l2_bytes;
    char name[256];
    CUdeviceptr flush;
    size_t flush_words;
    unsigned flush_value;
    CUevent start, stop;
    CUmodule probe_module;
    CUfunction probe;
    CUdeviceptr probe_out;
} D;

/* A failed driver call: what it was and its code. */
typedef struct fault {
    CUresult rc;
    char what[160];
} fault;

#define CU_TRY(f, call, ...)                                                                       \
    do {                                                                                           \
        CUresult rc_ = (call);                                                                     \
        if (rc_ != AVO_CUDA_SUCCESS) {                                                             \
            (f)->rc = rc_;                                                                         \
            snprintf((f)->what, sizeof(f)->what, __VA_ARGS__);                                     \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

static int device_attr(int attr, int fallback)
{
    int v = 0;
    return D.cu->DeviceGetAttribute(&v, attr, D.dev) == AVO_CUDA_SUCCESS ? v : fallback;
}

/* Set up the worker's device state once.  Returns 0 or -1 with err filled. */
static int device_init(char *err, size_t errlen)
{
    if (D.ready)
        return 0;
    fault f = {0};
    D.cu = avo_cuda_driver(err, errlen);
    if (!D.cu)
        return -1;
    const char *ordinal = getenv("AVO_CUDA_DEVICE");
    CU_TRY(&f, D.cu->DeviceGet(&D.dev, ordinal ? atoi(ordinal) : 0), "cuDeviceGet");
    CU_TRY(&f, D.cu->DevicePrimaryCtxRetain(&D.ctx, D.dev), "cuDevicePrimaryCtxRetain");
    CU_TRY(&f, D.cu->CtxSetCurrent(D.ctx), "cuCtxSetCurrent");
    D.cu->DeviceGetName(D.name, sizeof D.name, D.dev);
    D.cc = device_attr(AVO_CU_DEV_COMPUTE_CAPABILITY_MAJOR, 0) * 10 +
           device_attr(AVO_CU_DEV_COMPUTE_CAPABILITY_MINOR, 0);
    avo_cuda_limits_for_arch(D.cc, &D.lim);
    D.lim.max_threads_per_block = device_attr(AVO_CU_DEV_MAX_THREADS_PER_BLOCK, 1024);
    D.lim.max_block[0] = device_attr(AVO_CU_DEV_MAX_BLOCK_DIM_X, 1024);
    D.lim.max_block[1] = device_attr(AVO_CU_DEV_MAX_BLOCK_DIM_Y, 1024);
    D.lim.max_block[2] = device_attr(AVO_CU_DEV_MAX_BLOCK_DIM_Z, 64);
    D.lim.max_grid[0] = device_attr(AVO_CU_DEV_MAX_GRID_DIM_X, 2147483647);
    D.lim.max_grid[1] = device_attr(AVO_CU_DEV_MAX_GRID_DIM_Y, 65535);
    D.lim.max_grid[2] = device_attr(AVO_CU_DEV_MAX_GRID_DIM_Z, 65535);
    D.lim.max_shared_default = device_attr(AVO_CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK, 48 * 1024);
    D.lim.max_shared_optin =
        device_attr(AVO_CU_DEV_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, (int)D.lim.max_shared_default);
    D.sm_count = device_attr(AVO_CU_DEV_MULTIPROCESSOR_COUNT, 0);
    D.l2_bytes = device_attr(AVO_CU_DEV_L2_CACHE_SIZE, 0);

    /* The L2 flush buffer: at least twice the L2 size, written before every sample. */
    size_t flush = (size_t)D.l2_bytes * 2;
    if (flush < MIN_FLUSH_BYTES)
        flush = MIN_FLUSH_BYTES;
    D.flush_words = flush / 4;
    CU_TRY(&f, D.cu->MemAlloc(&D.flush, D.flush_words * 4), "cuMemAlloc (L2 flush buffer)");
    CU_TRY(&f, D.cu->EventCreate(&D.start, 0), "cuEventCreate");
    CU_TRY(&f, D.cu->EventCreate(&D.stop, 0), "cuEventCreate");

    /* The clock probe is optional: without it no SM clock is recorded. */
    if (D.cu->ModuleLoadDataEx(&D.probe_module, probe_ptx, 0, NULL, NULL) == AVO_CUDA_SUCCESS &&
        D.cu->ModuleGetFunction(&D.probe, D.probe_module, "avo_clock_probe") == AVO_CUDA_SUCCESS &&
        D.cu->MemAlloc(&D.probe_out, 16) == AVO_CUDA_SUCCESS)
        ;
    else
        D.probe = NULL;
    D.ready = 1;
    return 0;
fail : {
    char text[256];
    avo_error(err, errlen, AVO_EIO, "%s failed: %s", f.what,
              avo_cuda_driver_error(f.rc, text, sizeof text));
    return -1;
}
}

int avo_cuda_device_active(void)
{
    return D.ready || D.ctx != NULL;
}

/* SM clock in MHz measured by the probe, or 0 when unreadable. */
static double probe_clock_mhz(void)
{
    if (!D.probe)
        return 0;
    unsigned long long ns = PROBE_NS, out[2] = {0, 0};
    void *params[2] = {&D.probe_out, &ns};
    if (D.cu->LaunchKernel(D.probe, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL) != AVO_CUDA_SUCCESS ||
        D.cu->CtxSynchronize() != AVO_CUDA_SUCCESS ||
        D.cu->MemcpyDtoH(out, D.probe_out, sizeof out) != AVO_CUDA_SUCCESS || out[1] == 0)
        return 0;
    return (double)out[0] / (double)out[1] * 1e3;
}

/* ------------------------------------------------------------------------ */
/* The judge's device (judge.h)                                             */

/*
 * One config's state.  The candidate's argument slots are one device
 * allocation of nslots * slot_bytes and its host mirror of the same layout,
 * which the judge reads and writes: run_candidate uploads the mirror of the
 * slots it runs, launches, and downloads them again.  Within a slot each
 * buffer's data starts GUARD_BYTES after the previous one's padded end (the
 * first GUARD_BYTES into the slot), is padded to a multiple of GUARD_BYTES,
 * and the slot ends with GUARD_BYTES more; every byte outside the data holds
 * the canary pattern (a GPU has no guard pages).  The reference runs in
 * buffers of its own, zeroed as soon as its outputs are read back.
 */
typedef struct run_ctx {
    const cuda_job *job;
    const avo_config_spec *cfg;
    const avo_cuda_launch *launch, *ref_launch; /* of the config being run */
    CUfunction cand_fn, ref_fn;
    long cand_static_shared, ref_static_shared;
    const avo_cubin_kernel *cand_kernel, *ref_kernel;
    json_t *result;
    int retire;
    int reported; /* the result's status and reason are set */

    size_t offset[AVO_JOBSPEC_MAX_ARGS], bytes[AVO_JOBSPEC_MAX_ARGS];
    size_t slot_bytes, nslots;
    CUdeviceptr slots;      /* nslots * slot_bytes */
    unsigned char *mirror;  /* host copy of the slots */
    unsigned char *storage; /* nslots * PARAM_BYTES: packed arguments per slot */
    void **params;          /* nslots * nargs */
    CUdeviceptr ref[AVO_JOBSPEC_MAX_ARGS];
    unsigned char ref_storage[PARAM_BYTES];
    void *ref_params[AVO_JOBSPEC_MAX_ARGS];
    avo_vendor_plan *plan; /* a baseline job's plan for the config being run */
} run_ctx;

static unsigned char guard_pattern[8];

/* Turn a failed driver call into the result's status.  Sticky errors crash
 * the candidate (or, in the reference, are infrastructure errors) and retire
 * the worker. */
static void report_fault(run_ctx *ctx, const fault *f, const char *config, int in_candidate)
{
    char text[256], name[64];
    avo_cuda_driver_error(f->rc, text, sizeof text);
    const char *short_name = avo_cuda_driver_error_name(f->rc, name, sizeof name);
    ctx->reported = 1;
    if (avo_cuda_error_is_sticky(f->rc)) {
        ctx->retire = 1;
        if (in_candidate)
            avo_result_fail(ctx->result, "crashed", "crashed with %s in config %s (%s)", short_name,
                            config, text);
        else
            avo_result_fail(ctx->result, "error", "config %s: %s failed: %s", config, f->what,
                            text);
    } else if (f->rc == AVO_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES && in_candidate) {
        avo_result_fail(ctx->result, "invalid",
                        "config %s: launch out of resources (%d registers per thread; "
                        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)",
                        config, ctx->cand_kernel ? ctx->cand_kernel->registers : -1);
    } else {
        avo_result_fail(ctx->result, in_candidate ? "invalid" : "error", "config %s: %s failed: %s",
                        config, f->what, text);
    }
}

/* A fault inside one of the device's functions: the result gets its status
 * (report_fault), the judge the reason.  Returns -1. */
static int device_fault(run_ctx *ctx, const fault *f, int in_candidate, char *why, size_t len)
{
    report_fault(ctx, f, ctx->cfg->name, in_candidate);
    snprintf(why, len, "%s", json_string_value(json_object_get(ctx->result, "reason")));
    return -1;
}

/* Kernel arguments of one side for the config being run, buffers at
 * ptrs[i] (scalars from the config).  Returns 0 or AVO_EINVAL (err). */
static int pack(run_ctx *ctx, int candidate, const CUdeviceptr *ptrs, unsigned char *storage,
                void **params, char *err, size_t errlen)
{
    const avo_jobspec *spec = &ctx->job->spec;
    avo_cuda_arg args[AVO_JOBSPEC_MAX_ARGS];
    for (size_t i = 0; i < spec->nargs; i++) {
        int buffer = spec->args[i].kind != AVO_ARG_SCALAR;
        args[i] = avo_cuda_arg_make(&spec->args[i], &ctx->cfg->scalars[i], buffer ? ptrs[i] : 0);
    }
    int rc = avo_cuda_pack_args(args, spec->nargs, candidate ? ctx->cand_kernel : ctx->ref_kernel,
                                storage, PARAM_BYTES, params, err, errlen);
    return rc < 0 ? rc : 0;
}

static CUresult launch(CUfunction fn, const avo_cuda_launch *l, void **params)
{
    return D.cu->LaunchKernel(fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                              l->block[2], l->shared_bytes, NULL, params, NULL);
}

static void slots_free(run_ctx *ctx)
{
    if (ctx->slots && !ctx->retire)
        D.cu->MemFree(ctx->slots);
    ctx->slots = 0;
    free(ctx->mirror);
    free(ctx->storage);
    free(ctx->params);
    ctx->mirror = ctx->storage = NULL;
    ctx->params = NULL;
    ctx->nslots = 0;
}

static void ref_free(run_ctx *ctx)
{
    for (size_t i = 0; i < ctx->job->spec.nargs; i++) {
        if (ctx->ref[i] && !ctx->retire)
            D.cu->MemFree(ctx->ref[i]);
        ctx->ref[i] = 0;
    }
}

/* Where each buffer of the config being run lies in a slot (run_ctx). */
static void layout_compute(run_ctx *ctx)
{
    const avo_jobspec *spec = &ctx->job->spec;
    size_t at = 0;
    for (size_t i = 0; i < spec->nargs; i++) {
        ctx->offset[i] = ctx->bytes[i] = 0;
        if (spec->args[i].kind == AVO_ARG_SCALAR)
            continue;
        size_t bytes = ctx->cfg->lengths[i] * avo_dtype_size(spec->args[i].type);
        at += GUARD_BYTES;
        ctx->offset[i] = at;
        ctx->bytes[i] = bytes;
        at += (bytes + GUARD_BYTES - 1) / GUARD_BYTES * GUARD_BYTES;
        if (bytes == 0)
            at += GUARD_BYTES;
    }
    ctx->slot_bytes = at + GUARD_BYTES;
}

/* The reference's buffers for the config being run, allocated once per
 * config, and its packed arguments. */
static int ref_alloc(run_ctx *ctx, char *why, size_t len)
{
    const avo_jobspec *spec = &ctx->job->spec;
    fault f = {0};
    for (size_t i = 0; i < spec->nargs; i++) {
        if (spec->args[i].kind == AVO_ARG_SCALAR || ctx->ref[i])
            continue;
        CU_TRY(&f, D.cu->MemAlloc(&ctx->ref[i], ctx->bytes[i] ? ctx->bytes[i] : 1),
               "cuMemAlloc (reference %s)", spec->args[i].name);
        CU_TRY(&f, D.cu->MemsetD8(ctx->ref[i], 0, ctx->bytes[i] ? ctx->bytes[i] : 1),
               "clearing reference %s", spec->args[i].name);
    }
    char err[512];
    if (pack(ctx, 0, ctx->ref, ctx->ref_storage, ctx->ref_params, err, sizeof err) < 0) {
        ctx->reported = 1;
        avo_result_fail(ctx->result, "invalid", "config %s: reference: %s", ctx->cfg->name, err);
        snprintf(why, len, "reference: %s", err);
        return -1;
    }
    return 0;
fail:
    return device_fault(ctx, &f, 0, why, len);
}

/* A baseline's calls on the slots just laid out (vendor.h). */
static int bind_plan(run_ctx *ctx, char *why, size_t len)
{
    size_t nargs = ctx->job->spec.nargs;
    unsigned long long *ptrs = calloc(ctx->nslots * (nargs ? nargs : 1), sizeof *ptrs);
    char err[512];
    int rc = ptrs ? 0 : avo_error(err, sizeof err, AVO_ENOMEM, "out of memory");
    for (size_t s = 0; ptrs && s < ctx->nslots; s++)
        for (size_t i = 0; i < nargs; i++)
            if (ctx->job->spec.args[i].kind != AVO_ARG_SCALAR)
                ptrs[s * nargs + i] = ctx->slots + s * ctx->slot_bytes + ctx->offset[i];
    if (rc == 0)
        rc = avo_vendor_plan_bind(ctx->plan, ctx->nslots, ptrs, err, sizeof err);
    free(ptrs);
    if (rc < 0) {
        ctx->reported = 1;
        avo_result_fail(ctx->result, "error", "config %s: %s", ctx->cfg->name, err);
        snprintf(why, len, "%s", err);
        return -1;
    }
    return 0;
}

static int dev_layout(void *self, const avo_config_spec *cfg, size_t nslots, size_t *ret_max_slots,
                      char *why, size_t len)
{
    run_ctx *ctx = self;
    const avo_jobspec *spec = &ctx->job->spec;
    fault f = {0};
    ctx->cfg = cfg;
    layout_compute(ctx);
    size_t max_slots = ((size_t)SLOTS_MAX_MB << 20) / ctx->slot_bytes;
    if (max_slots > MAX_BATCH)
        max_slots = MAX_BATCH;
    if (max_slots < 1)
        max_slots = 1;
    if (ret_max_slots)
        *ret_max_slots = max_slots;
    if (nslots > max_slots)
        nslots = max_slots;
    if (ref_alloc(ctx, why, len) < 0)
        return -1;
    slots_free(ctx);
    size_t total = ctx->slot_bytes * nslots;
    ctx->mirror = malloc(total);
    ctx->storage = malloc(nslots * PARAM_BYTES);
    ctx->params = calloc(nslots * (spec->nargs ? spec->nargs : 1), sizeof *ctx->params);
    if (!ctx->mirror || !ctx->storage || !ctx->params) {
        f.rc = AVO_CUDA_ERROR_OUT_OF_MEMORY;
        snprintf(f.what, sizeof f.what, "host allocation (%zu argument slots)", nslots);
        goto fail;
    }
    CU_TRY(&f, D.cu->MemAlloc(&ctx->slots, total), "cuMemAlloc (%zu argument slots, %zu bytes)",
           nslots, total);
    avo_measure_guard_fill(ctx->mirror, total);
    ctx->nslots = nslots;
    if (ctx->plan)
        return bind_plan(ctx, why, len);
    for (size_t s = 0; s < nslots; s++) {
        CUdeviceptr ptrs[AVO_JOBSPEC_MAX_ARGS];
        for (size_t i = 0; i < spec->nargs; i++)
            ptrs[i] = ctx->slots + s * ctx->slot_bytes + ctx->offset[i];
        char err[512];
        if (pack(ctx, 1, ptrs, ctx->storage + s * PARAM_BYTES, ctx->params + s * spec->nargs, err,
                 sizeof err) < 0) {
            ctx->reported = 1;
            avo_result_fail(ctx->result, "invalid", "config %s: %s", cfg->name, err);
            snprintf(why, len, "%s", err);
            return -1;
        }
    }
    return 0;
fail:
    return device_fault(ctx, &f, 0, why, len);
}

static unsigned char *dev_data(void *self, size_t slot, size_t arg)
{
    run_ctx *ctx = self;
    return ctx->mirror + slot * ctx->slot_bytes + ctx->offset[arg];
}

/* The first byte in [from, to) of a slot that is not the canary, or `to`. */
static size_t first_broken(const unsigned char *slot, size_t from, size_t to)
{
    for (size_t k = from; k < to; k++)
        if (slot[k] != guard_pattern[k % sizeof guard_pattern])
            return k;
    return to;
}

/* Every byte of slot s (as downloaded) outside the data holds the canary.
 * A broken byte is blamed on the buffer whose data lies nearest to it. */
static int dev_guards_intact(void *self, size_t slot, const char **ret_arg)
{
    run_ctx *ctx = self;
    const avo_jobspec *spec = &ctx->job->spec;
    const unsigned char *p = ctx->mirror + slot * ctx->slot_bytes;
    size_t from = 0;
    const avo_arg_spec *prev = NULL;
    *ret_arg = "";
    for (size_t i = 0; i <= spec->nargs; i++) {
        const avo_arg_spec *next = i < spec->nargs ? &spec->args[i] : NULL;
        if (next && next->kind == AVO_ARG_SCALAR)
            continue;
        size_t to = next ? ctx->offset[i] : ctx->slot_bytes;
        size_t k = first_broken(p, from, to);
        if (k < to) {
            const avo_arg_spec *blame = !prev                ? next
                                        : !next              ? prev
                                        : k - from <= to - k ? prev
                                                             : next;
            *ret_arg = blame ? blame->name : "";
            return 0;
        }
        if (next)
            from = ctx->offset[i] + ctx->bytes[i];
        prev = next;
    }
    return 1;
}

/*
 * Upload slots [0, nslots), flush L2, launch the candidate once per slot
 * between two events, wait, download the slots.  *ret_s: the events' time
 * for all launches.
 */
static int dev_run_candidate(void *self, const avo_config_spec *cfg, size_t nslots, double *ret_s,
                             char *why, size_t len)
{
    run_ctx *ctx = self;
    fault f = {0};
    int in_cand = 0;
    float ms = 0;
    (void)cfg;
    if (nslots > ctx->nslots) {
        snprintf(why, len, "the judge asked for %zu slots of %zu", nslots, ctx->nslots);
        ctx->reported = 1;
        avo_result_fail(ctx->result, "error", "config %s: %s", ctx->cfg->name, why);
        return -1;
    }
    size_t nargs = ctx->job->spec.nargs;
    CU_TRY(&f, D.cu->MemcpyHtoD(ctx->slots, ctx->mirror, nslots * ctx->slot_bytes),
           "uploading the arguments");
    CU_TRY(&f, D.cu->MemsetD32Async(D.flush, D.flush_value++, D.flush_words, NULL), "L2 flush");
    CU_TRY(&f, D.cu->EventRecord(D.start, NULL), "cuEventRecord");
    in_cand = 1;
    if (ctx->plan) {
        /* A baseline: one library call per slot, prepared by bind_plan. */
        char err[512];
        for (size_t s = 0; s < nslots; s++)
            if (avo_vendor_plan_run(ctx->plan, s, err, sizeof err) < 0) {
                /* What ran before may have broken the context: then retire. */
                if (avo_cuda_error_is_sticky(D.cu->CtxSynchronize()))
                    ctx->retire = 1;
                ctx->reported = 1;
                avo_result_fail(ctx->result, "crashed", "config %s: %s", ctx->cfg->name, err);
                snprintf(why, len, "%s", err);
                return -1;
            }
    }
    for (size_t s = 0; !ctx->plan && s < nslots; s++)
        CU_TRY(&f, launch(ctx->cand_fn, ctx->launch, ctx->params + s * nargs),
               "launching the candidate");
    CU_TRY(&f, D.cu->EventRecord(D.stop, NULL), "cuEventRecord");
    CU_TRY(&f, D.cu->EventSynchronize(D.stop), "the candidate kernel");
    in_cand = 0;
    CU_TRY(&f, D.cu->EventElapsedTime(&ms, D.start, D.stop), "cuEventElapsedTime");
    CU_TRY(&f, D.cu->MemcpyDtoH(ctx->mirror, ctx->slots, nslots * ctx->slot_bytes),
           "reading back the arguments");
    *ret_s = ms * 1e-3;
    return 0;
fail:
    return device_fault(ctx, &f, in_cand, why, len);
}

/*
 * The reference on the judge's buffers: uploaded into the reference's own
 * device buffers, run, its outputs read back into the judge's buffers, and
 * every reference buffer zeroed before anything else runs, so no candidate
 * launch ever finds a reference result in device memory.
 */
static int dev_run_reference(void *self, const avo_config_spec *cfg, void **buffers, char *why,
                             size_t len)
{
    run_ctx *ctx = self;
    const avo_jobspec *spec = &ctx->job->spec;
    fault f = {0};
    (void)cfg;
    for (size_t i = 0; i < spec->nargs; i++)
        if (spec->args[i].kind != AVO_ARG_SCALAR && ctx->bytes[i])
            CU_TRY(&f, D.cu->MemcpyHtoD(ctx->ref[i], buffers[i], ctx->bytes[i]),
                   "uploading reference %s", spec->args[i].name);
    CU_TRY(&f, launch(ctx->ref_fn, ctx->ref_launch, ctx->ref_params), "launching the reference");
    CU_TRY(&f, D.cu->CtxSynchronize(), "the reference kernel");
    for (size_t i = 0; i < spec->nargs; i++) {
        const avo_arg_spec *a = &spec->args[i];
        if ((a->kind == AVO_ARG_OUT || a->kind == AVO_ARG_INOUT) && ctx->bytes[i])
            CU_TRY(&f, D.cu->MemcpyDtoH(buffers[i], ctx->ref[i], ctx->bytes[i]),
                   "reading back reference buffer %s", a->name);
    }
    for (size_t i = 0; i < spec->nargs; i++)
        if (spec->args[i].kind != AVO_ARG_SCALAR && ctx->bytes[i])
            CU_TRY(&f, D.cu->MemsetD8(ctx->ref[i], 0, ctx->bytes[i]), "clearing reference %s",
                   spec->args[i].name);
    return 0;
fail:
    return device_fault(ctx, &f, 0, why, len);
}

/* ------------------------------------------------------------------------ */
/* One config                                                               */

/* Verify and, for a timed config, time config c (launched as `l`, the
 * reference as `rl`) through the judge; fills `entry`.  Returns 0 when
 * correct, else -1 with the result's status and reason set; for a baseline
 * job, 1 when its library cannot serve the config (the entry says why in
 * "unavailable", the result's status is untouched). */
static int run_config(run_ctx *ctx, const avo_config_spec *c, const avo_cuda_launch *l,
                      const avo_cuda_launch *rl, int timed, json_t *entry)
{
    const avo_jobspec *spec = &ctx->job->spec;
    ctx->cfg = c;
    ctx->launch = l;
    ctx->ref_launch = rl;
    ctx->reported = 0;
    char err[512], reason[1024];
    int rc = -1;

    int optin = 0, ref_optin = 0;
    int baseline = ctx->job->baseline != NULL;
    if (!baseline && avo_cuda_launch_check(ctx->launch, ctx->cand_static_shared, &D.lim, &optin,
                                           err, sizeof err) < 0) {
        avo_result_fail(ctx->result, "invalid", "config %s: %s", c->name, err);
        goto done;
    }
    if (avo_cuda_launch_check(ctx->ref_launch, ctx->ref_static_shared, &D.lim, &ref_optin, err,
                              sizeof err) < 0) {
        avo_result_fail(ctx->result, "invalid", "config %s: reference %s", c->name, err);
        goto done;
    }
    if (optin && D.cu->FuncSetAttribute(ctx->cand_fn, AVO_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        (int)ctx->launch->shared_bytes) != AVO_CUDA_SUCCESS) {
        avo_result_fail(ctx->result, "invalid",
                        "config %s: the device refuses %u bytes of dynamic shared memory", c->name,
                        ctx->launch->shared_bytes);
        goto done;
    }
    if (ref_optin)
        D.cu->FuncSetAttribute(ctx->ref_fn, AVO_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               (int)ctx->ref_launch->shared_bytes);

    /* The argument lists, checked before anything is allocated. */
    CUdeviceptr none[AVO_JOBSPEC_MAX_ARGS] = {0};
    unsigned char storage[PARAM_BYTES];
    void *params[AVO_JOBSPEC_MAX_ARGS];
    if (!baseline && pack(ctx, 1, none, storage, params, err, sizeof err) < 0) {
        avo_result_fail(ctx->result, "invalid", "config %s: %s", c->name, err);
        goto done;
    }
    if (pack(ctx, 0, none, storage, params, err, sizeof err) < 0) {
        avo_result_fail(ctx->result, "invalid", "config %s: reference: %s", c->name, err);
        goto done;
    }

    if (baseline) {
        /* The library's plan, outside every timed region. */
        int prc = avo_vendor_plan_new(ctx->job->baseline, spec, c, &ctx->plan, err, sizeof err);
        if (prc == AVO_EINVAL) {
            json_object_set_new(entry, "unavailable", json_string(err));
            json_object_set_new(entry, "reason", json_string(err));
            rc = 1;
            goto done;
        }
        if (prc < 0) {
            avo_result_fail(ctx->result, "error", "config %s: %s", c->name, err);
            goto done;
        }
    }
    avo_judge_device dev = {.self = ctx,
                            .layout = dev_layout,
                            .data = dev_data,
                            .guards_intact = dev_guards_intact,
                            .run_candidate = dev_run_candidate,
                            .run_reference = dev_run_reference,
                            .draw = AVO_DRAW_FLOAT};
    int outcome = avo_judge_config(spec, &dev, c, timed, entry, reason, sizeof reason);
    if (outcome == AVO_JUDGE_WRONG) {
        avo_result_fail(ctx->result, "wrong", "%s", reason);
        goto done;
    }
    if (outcome != AVO_JUDGE_OK) {
        if (!ctx->reported)
            avo_result_fail(ctx->result, "error", "%s", reason);
        goto done;
    }
    double med = json_real_value(json_object_get(entry, "median_s"));
    if (timed && spec->timing && med > 0)
        json_object_set_new(entry, "tflops", json_real(c->flops / med / 1e12));
    if (timed && spec->timing) {
        double mhz = probe_clock_mhz();
        if (mhz > 0)
            json_object_set_new(entry, "sm_clock_mhz", json_real(mhz));
    }
    rc = 0;
done:
    if (rc < 0)
        json_object_set(entry, "reason", json_object_get(ctx->result, "reason"));
    avo_vendor_plan_free(ctx->plan, ctx->retire);
    ctx->plan = NULL;
    slots_free(ctx); /* after a sticky error the context is gone anyway: host memory only */
    ref_free(ctx);
    return rc;
}

static int func_attr(CUfunction fn, int attr)
{
    int v = 0;
    return D.cu->FuncGetAttribute(&v, attr, fn) == AVO_CUDA_SUCCESS ? v : 0;
}

void avo_cuda_device_run(const cuda_job *job, const cuda_build *cand, const cuda_build *ref,
                         json_t *result, int *ret_retire)
{
    char err[AVO_ERRLEN];
    *ret_retire = 0;
    if (device_init(err, sizeof err) < 0) {
        avo_result_fail(result, "error", "%s", err);
        return;
    }
    json_object_set_new(result, "device",
                        json_pack("{s:s, s:i, s:i, s:I}", "name", D.name, "cc", D.cc, "sms",
                                  D.sm_count, "l2_bytes", (json_int_t)D.l2_bytes));
    avo_measure_guard_fill(guard_pattern, sizeof guard_pattern);
    run_ctx ctx = {.job = job,
                   .result = result,
                   .cand_kernel = cand ? cand->entry_kernel : NULL,
                   .ref_kernel = ref->entry_kernel};
    CUmodule cand_mod = NULL, ref_mod = NULL;
    fault f = {0};
    CU_TRY(&f, D.cu->ModuleLoadDataEx(&ref_mod, ref->cubin, 0, NULL, NULL),
           "loading the reference cubin");
    CU_TRY(&f, D.cu->ModuleGetFunction(&ctx.ref_fn, ref_mod, ref->lowered_entry),
           "finding reference kernel %s", ref->lowered_entry);
    if (cand) {
        CU_TRY(&f, D.cu->ModuleLoadDataEx(&cand_mod, cand->cubin, 0, NULL, NULL),
               "loading the candidate cubin (compiled for another GPU?)");
        CU_TRY(&f, D.cu->ModuleGetFunction(&ctx.cand_fn, cand_mod, cand->lowered_entry),
               "finding kernel %s", cand->lowered_entry);
        ctx.cand_static_shared = func_attr(ctx.cand_fn, AVO_CU_FUNC_SHARED_SIZE_BYTES);
    }
    ctx.ref_static_shared = func_attr(ctx.ref_fn, AVO_CU_FUNC_SHARED_SIZE_BYTES);

    json_t *configs = json_object_get(result, "configs");
    int rc = 0, ran = 0;
    const char *first_unavailable = NULL;
    for (size_t i = 0; i < job->spec.nconfigs && rc <= 0; i++) {
        const avo_config_spec *c = &job->spec.configs[i];
        json_t *entry = avo_result_config_new(c->name);
        rc = run_config(&ctx, c, &job->launches[i], &job->ref_launches[i], 1, entry);
        json_array_append_new(configs, entry);
        if (rc == 1 && !first_unavailable)
            first_unavailable = json_string_value(json_object_get(entry, "unavailable"));
        ran += rc == 0;
        rc = rc == 1 ? 0 : rc;
        if (rc < 0)
            break;
    }
    /* Check configs: verified only, listed under "checks". */
    json_t *checks = job->spec.ncheck_configs && rc == 0 ? json_array() : NULL;
    for (size_t i = 0; checks && i < job->spec.ncheck_configs && rc == 0; i++) {
        const avo_config_spec *c = &job->spec.check_configs[i];
        json_t *entry = avo_result_config_new(c->name);
        rc = run_config(&ctx, c, &job->check_launches[i], &job->check_ref_launches[i], 0, entry);
        json_array_append_new(checks, entry);
        rc = rc == 1 ? 0 : rc;
    }
    if (checks)
        json_object_set_new(result, "checks", checks);
    if (rc == 0 && job->baseline && ran == 0)
        avo_result_fail(result, "unavailable", "%s cannot serve any config: %s",
                        job->baseline->library, first_unavailable ? first_unavailable : "?");
    *ret_retire = ctx.retire;
    if (!ctx.retire) {
        if (cand_mod)
            D.cu->ModuleUnload(cand_mod);
        D.cu->ModuleUnload(ref_mod);
    }
    return;
fail : {
    char text[256];
    avo_cuda_driver_error(f.rc, text, sizeof text);
    if (avo_cuda_error_is_sticky(f.rc))
        *ret_retire = 1;
    avo_result_fail(result, f.rc == AVO_CUDA_ERROR_NO_BINARY_FOR_GPU ? "invalid" : "error",
                    "%s failed: %s", f.what, text);
    if (ref_mod && !*ret_retire)
        D.cu->ModuleUnload(ref_mod);
    if (cand_mod && !*ret_retire)
        D.cu->ModuleUnload(cand_mod);
}
}
