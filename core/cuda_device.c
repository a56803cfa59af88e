/*
 * cuda_device.c — the device side of the CUDA backend: load the cubins into
 * the worker's long-lived primary context, then verify and time the
 * candidate config by config (docs/protocol.md).
 *
 * Verification, per config:
 *   - candidate buffers are separate allocations with GUARD_BYTES of canary
 *     pattern before and after; reference buffers are separate allocations
 *     that the candidate never sees;
 *   - every trial draws fresh inputs from the PCG stream
 *     "inputs/<config>/<trial>" of the job seed and poisons every output (a
 *     NaN pattern) of candidate and reference before the launch;
 *   - at least two trials, so the candidate runs at least twice on different
 *     inputs; after each: guards intact, inputs unmodified, outputs fully
 *     written, finite, within the per-dtype tolerance of the reference;
 *   - timing (CUDA events, L2 flushed before every sample) ends with one more
 *     launch on fresh inputs and poisoned outputs, and the outputs of the
 *     timed launches and of that launch are checked again.
 *
 * Faults: a sticky error (illegal address, misaligned address, illegal
 * instruction, launch failure, ...) leaves the context unusable: the result
 * is `crashed` with the error's name and *ret_retire asks the worker to exit
 * after answering, so the pool starts a fresh one.  Launch out of resources
 * is `invalid`.  A hang is the pool's business: it kills the worker at the
 * job's deadline (`timeout`).
 *
 * Device state (context, flush buffer, events, clock probe) lives for the
 * worker's lifetime; modules and buffers live for one job.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avo.h"
#include "backend.h"
#include "cuda.h"
#include "cuda_api.h"
#include "cuda_job.h"
#include "measure.h"
#include "pcg.h"

#define GUARD_BYTES 256        /* canary before and after each candidate buffer */
#define MIN_FLUSH_BYTES (64u << 20)
#define PROBE_NS 2000000ull    /* clock probe spin: 2 ms */
#define MAX_BATCH 4096

/* Measures the SM clock: spins PROBE_NS on %globaltimer, counting %clock64. */
static const char probe_ptx[] =
    ".version 7.0\n"
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
            snprintf((f)->what, sizeof (f)->what, __VA_ARGS__);                                    \
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
fail: {
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
/* Buffers                                                                  */

typedef struct buffers {
    CUdeviceptr *cand_base; /* allocation including both guards */
    CUdeviceptr *ref;
    void **saved;           /* host: inputs as generated */
    void **host_cand;       /* host: candidate allocation read back, guards included */
    void **host_ref;        /* host: reference output read back */
    size_t *bytes;
    avo_measure_view *views; /* the host copies, as the checker reads them */
} buffers;

static void buffers_free(buffers *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (b->cand_base && b->cand_base[i])
            D.cu->MemFree(b->cand_base[i]);
        if (b->ref && b->ref[i])
            D.cu->MemFree(b->ref[i]);
        if (b->saved)
            free(b->saved[i]);
        if (b->host_cand)
            free(b->host_cand[i]);
        if (b->host_ref)
            free(b->host_ref[i]);
    }
    free(b->cand_base);
    free(b->ref);
    free(b->saved);
    free(b->host_cand);
    free(b->host_ref);
    free(b->bytes);
    free(b->views);
    memset(b, 0, sizeof *b);
}

static CUdeviceptr cand_ptr(const buffers *b, size_t i)
{
    return b->cand_base[i] + GUARD_BYTES;
}

/* Poison a device buffer of n elements (avo_measure_poison_bits; memset for
 * 2- and 4-byte patterns, a host copy in scratch for 8-byte ones). */
static CUresult poison_device(CUdeviceptr p, avo_dtype t, size_t n, void *scratch)
{
    uint64_t bits = avo_measure_poison_bits(t);
    switch (avo_dtype_size(t)) {
    case 2:
        return D.cu->MemsetD16(p, (unsigned short)bits, n);
    case 4:
        return D.cu->MemsetD32(p, (unsigned)bits, n);
    default:
        avo_measure_poison(scratch, t, n);
        return D.cu->MemcpyHtoD(p, scratch, n * 8);
    }
}

/* ------------------------------------------------------------------------ */
/* One config                                                               */

typedef struct run_ctx {
    const cuda_job *job;
    const avo_cuda_launch *launch, *ref_launch; /* of the config being run */
    CUfunction cand_fn, ref_fn;
    long cand_static_shared, ref_static_shared;
    const avo_cubin_kernel *cand_kernel, *ref_kernel;
    json_t *result;
    int retire;
} run_ctx;

/* Turn a failed driver call into the result's status.  Sticky errors crash
 * the candidate (or, in the reference, are infrastructure errors) and retire
 * the worker. */
static void report_fault(run_ctx *ctx, const fault *f, const char *config, int in_candidate)
{
    char text[256], name[64];
    avo_cuda_driver_error(f->rc, text, sizeof text);
    const char *short_name = avo_cuda_driver_error_name(f->rc, name, sizeof name);
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

/* Kernel arguments of one side (candidate or reference) for config c. */
static int pack(run_ctx *ctx, const avo_config_spec *c, const buffers *b, int candidate,
                unsigned char *storage, size_t len, void **params, char *err, size_t errlen)
{
    const avo_jobspec *spec = &ctx->job->spec;
    avo_cuda_arg *args = calloc(spec->nargs, sizeof *args);
    if (!args)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < spec->nargs; i++) {
        int buffer = spec->args[i].kind != AVO_ARG_SCALAR;
        args[i] = avo_cuda_arg_make(&spec->args[i], &c->scalars[i],
                                    !buffer     ? 0
                                    : candidate ? cand_ptr(b, i)
                                                : b->ref[i]);
    }
    int rc = avo_cuda_pack_args(args, spec->nargs, candidate ? ctx->cand_kernel : ctx->ref_kernel,
                                storage, len, params, err, errlen);
    free(args);
    return rc < 0 ? rc : 0;
}

static CUresult launch(CUfunction fn, const avo_cuda_launch *l, void **params)
{
    return D.cu->LaunchKernel(fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                              l->block[2], l->shared_bytes, NULL, params, NULL);
}

/*
 * Check the candidate against the reference after a launch (see
 * avo_measure_check): reads the device buffers back first.  Returns 1 when
 * correct, 0 with a reason in why, or -1 with *f set when reading back
 * failed.
 */
static int check(run_ctx *ctx, buffers *b, double *max_error, char *why, size_t len, fault *f)
{
    const avo_jobspec *spec = &ctx->job->spec;
    for (size_t i = 0; i < spec->nargs; i++) {
        if (spec->args[i].kind == AVO_ARG_SCALAR)
            continue;
        CU_TRY(f, D.cu->MemcpyDtoH(b->host_cand[i], b->cand_base[i], b->bytes[i] + 2 * GUARD_BYTES),
               "reading back buffer %s", spec->args[i].name);
        if (spec->args[i].kind != AVO_ARG_IN)
            CU_TRY(f, D.cu->MemcpyDtoH(b->host_ref[i], b->ref[i], b->bytes[i]),
                   "reading back reference buffer %s", spec->args[i].name);
    }
    return avo_measure_check(b->views, spec->nargs, GUARD_BYTES, max_error, why, len) == 0;
fail:
    return -1;
}

/* Fresh inputs for `trial` into saved, candidate and reference buffers;
 * outputs of both poisoned.  Returns 0 or -1 with *f set. */
static int prepare_trial(run_ctx *ctx, const avo_config_spec *c, buffers *b, int trial, fault *f)
{
    const avo_jobspec *spec = &ctx->job->spec;
    avo_pcg32 rng;
    avo_measure_trial_rng(&rng, spec->seed, c->name, trial);
    for (size_t i = 0; i < spec->nargs; i++) {
        const avo_arg_spec *a = &spec->args[i];
        if (a->kind == AVO_ARG_SCALAR)
            continue;
        if (a->kind == AVO_ARG_OUT) {
            CU_TRY(f, poison_device(cand_ptr(b, i), a->type, c->lengths[i], b->host_ref[i]),
                   "poisoning %s", a->name);
            CU_TRY(f, poison_device(b->ref[i], a->type, c->lengths[i], b->host_ref[i]),
                   "poisoning %s", a->name);
            continue;
        }
        avo_measure_fill_uniform(b->saved[i], a->type, a->lo, a->hi, c->lengths[i], &rng,
                                 AVO_DRAW_FLOAT);
        CU_TRY(f, D.cu->MemcpyHtoD(cand_ptr(b, i), b->saved[i], b->bytes[i]), "uploading %s",
               a->name);
        CU_TRY(f, D.cu->MemcpyHtoD(b->ref[i], b->saved[i], b->bytes[i]), "uploading %s", a->name);
    }
    return 0;
fail:
    return -1;
}

static int buffers_alloc(run_ctx *ctx, const avo_config_spec *c, buffers *b, fault *f)
{
    const avo_jobspec *spec = &ctx->job->spec;
    size_t n = spec->nargs;
    unsigned char guard[GUARD_BYTES];
    avo_measure_guard_fill(guard, GUARD_BYTES);
    b->cand_base = calloc(n, sizeof *b->cand_base);
    b->ref = calloc(n, sizeof *b->ref);
    b->saved = calloc(n, sizeof *b->saved);
    b->host_cand = calloc(n, sizeof *b->host_cand);
    b->host_ref = calloc(n, sizeof *b->host_ref);
    b->bytes = calloc(n, sizeof *b->bytes);
    b->views = calloc(n, sizeof *b->views);
    if (!b->cand_base || !b->ref || !b->saved || !b->host_cand || !b->host_ref || !b->bytes ||
        !b->views) {
        f->rc = AVO_CUDA_ERROR_OUT_OF_MEMORY;
        snprintf(f->what, sizeof f->what, "host allocation");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const avo_arg_spec *a = &spec->args[i];
        b->views[i].arg = a;
        if (a->kind == AVO_ARG_SCALAR)
            continue;
        size_t bytes = c->lengths[i] * avo_dtype_size(a->type);
        b->bytes[i] = bytes;
        CU_TRY(f, D.cu->MemAlloc(&b->cand_base[i], bytes + 2 * GUARD_BYTES), "cuMemAlloc (%s)",
               a->name);
        CU_TRY(f, D.cu->MemAlloc(&b->ref[i], bytes), "cuMemAlloc (reference %s)", a->name);
        CU_TRY(f, D.cu->MemcpyHtoD(b->cand_base[i], guard, GUARD_BYTES), "writing guards");
        CU_TRY(f, D.cu->MemcpyHtoD(b->cand_base[i] + GUARD_BYTES + bytes, guard, GUARD_BYTES),
               "writing guards");
        b->saved[i] = malloc(bytes);
        b->host_cand[i] = malloc(bytes + 2 * GUARD_BYTES);
        b->host_ref[i] = malloc(bytes);
        if (!b->saved[i] || !b->host_cand[i] || !b->host_ref[i]) {
            f->rc = AVO_CUDA_ERROR_OUT_OF_MEMORY;
            snprintf(f->what, sizeof f->what, "host allocation for %s", a->name);
            return -1;
        }
        b->views[i] = (avo_measure_view){.arg = a,
                                         .length = c->lengths[i],
                                         .cand = b->host_cand[i],
                                         .ref = b->host_ref[i],
                                         .saved = b->saved[i]};
    }
    return 0;
fail:
    return -1;
}

/* One timing sample (avo_measure_sampler): flush L2, then `batch`
 * back-to-back launches between events; seconds per launch into *ret_s.
 * Returns 0, or -1 with the fault in the sampler's state. */
typedef struct sampler {
    run_ctx *ctx;
    void **params;
    fault *f;
} sampler;

static int sample(void *opaque, uint64_t batch, double *ret_s)
{
    sampler *smp = opaque;
    fault *f = smp->f;
    float ms = 0;
    CU_TRY(f, D.cu->MemsetD32Async(D.flush, D.flush_value++, D.flush_words, NULL), "L2 flush");
    CU_TRY(f, D.cu->EventRecord(D.start, NULL), "cuEventRecord");
    for (uint64_t i = 0; i < batch; i++)
        CU_TRY(f, launch(smp->ctx->cand_fn, smp->ctx->launch, smp->params),
               "launching the candidate (timing)");
    CU_TRY(f, D.cu->EventRecord(D.stop, NULL), "cuEventRecord");
    CU_TRY(f, D.cu->EventSynchronize(D.stop), "the candidate (timing)");
    CU_TRY(f, D.cu->EventElapsedTime(&ms, D.start, D.stop), "cuEventElapsedTime");
    *ret_s = ms * 1e-3 / (double)batch;
    return 0;
fail:
    return -1;
}

/*
 * Time the candidate on the inputs in its buffers (avo_measure_time; the
 * batch grows to at most MAX_BATCH launches for microsecond kernels).
 * Fills median_s, spread, samples and batch of entry.  Returns 0 or -1 (*f).
 */
static int time_candidate(run_ctx *ctx, void **params, json_t *entry, double *ret_median, fault *f)
{
    sampler smp = {.ctx = ctx, .params = params, .f = f};
    avo_measure_timing t;
    if (avo_measure_time(&ctx->job->spec, MAX_BATCH, sample, &smp, &t) < 0)
        return -1;
    json_object_set_new(entry, "median_s", json_real(t.median_s));
    json_object_set_new(entry, "spread", json_real(t.spread));
    json_object_set_new(entry, "samples", json_integer((json_int_t)t.samples));
    json_object_set_new(entry, "batch", json_integer((json_int_t)t.batch));
    *ret_median = t.median_s;
    return 0;
}

/* Candidate launch and synchronize, then check; shared by trials and the
 * final re-check.  Returns 1 correct, 0 wrong (why), -1 fault (*f, *in_cand). */
static int run_and_check(run_ctx *ctx, const avo_config_spec *c, buffers *b, void **cand_params,
                         void **ref_params, int trial, double *max_error, char *why, size_t len,
                         fault *f, int *in_cand)
{
    *in_cand = 0;
    if (prepare_trial(ctx, c, b, trial, f) < 0)
        return -1;
    CU_TRY(f, launch(ctx->ref_fn, ctx->ref_launch, ref_params), "launching the reference");
    CU_TRY(f, D.cu->CtxSynchronize(), "the reference kernel");
    *in_cand = 1;
    CU_TRY(f, launch(ctx->cand_fn, ctx->launch, cand_params), "launching the candidate");
    CU_TRY(f, D.cu->CtxSynchronize(), "the candidate kernel");
    *in_cand = 0;
    double error = 0;
    int ok = check(ctx, b, &error, why, len, f);
    if (error > *max_error || isnan(error))
        *max_error = error;
    return ok;
fail:
    return -1;
}

/* Verify and time config ci; fills `entry`.  Returns 0 when correct, else -1
 * with the result's status and reason set. */
static int run_config(run_ctx *ctx, size_t ci, json_t *entry)
{
    const avo_jobspec *spec = &ctx->job->spec;
    const avo_config_spec *c = &spec->configs[ci];
    ctx->launch = &ctx->job->launches[ci];
    ctx->ref_launch = &ctx->job->ref_launches[ci];
    buffers b = {0};
    fault f = {0};
    char why[512], err[512];
    double max_error = 0;
    int rc = -1, in_cand = 0;
    unsigned char cand_storage[4096], ref_storage[4096];
    void **cand_params = calloc(spec->nargs, sizeof *cand_params);
    void **ref_params = calloc(spec->nargs, sizeof *ref_params);
    if (!cand_params || !ref_params) {
        avo_result_fail(ctx->result, "error", "out of memory");
        goto done;
    }

    int optin = 0, ref_optin = 0;
    if (avo_cuda_launch_check(ctx->launch, ctx->cand_static_shared, &D.lim, &optin, err,
                              sizeof err) < 0) {
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

    if (buffers_alloc(ctx, c, &b, &f) < 0) {
        report_fault(ctx, &f, c->name, 0);
        goto done;
    }
    if (pack(ctx, c, &b, 1, cand_storage, sizeof cand_storage, cand_params, err, sizeof err) < 0) {
        avo_result_fail(ctx->result, "invalid", "config %s: %s", c->name, err);
        goto done;
    }
    if (pack(ctx, c, &b, 0, ref_storage, sizeof ref_storage, ref_params, err, sizeof err) < 0) {
        avo_result_fail(ctx->result, "invalid", "config %s: reference: %s", c->name, err);
        goto done;
    }

    for (int trial = 0; trial < spec->trials; trial++) {
        int ok = run_and_check(ctx, c, &b, cand_params, ref_params, trial, &max_error, why,
                               sizeof why, &f, &in_cand);
        json_object_set_new(entry, "max_error", json_real(max_error));
        if (ok < 0) {
            report_fault(ctx, &f, c->name, in_cand);
            goto done;
        }
        if (!ok) {
            avo_result_fail(ctx->result, "wrong", "config %s: %s", c->name, why);
            goto done;
        }
    }

    if (spec->timing) {
        double med = 0;
        in_cand = 1;
        if (time_candidate(ctx, cand_params, entry, &med, &f) < 0) {
            report_fault(ctx, &f, c->name, 1);
            goto done;
        }
        /* The timed launches' own output (inout buffers have changed under
         * repeated launches, so those are judged by the launch below). */
        int has_inout = 0;
        for (size_t i = 0; i < spec->nargs; i++)
            has_inout |= spec->args[i].kind == AVO_ARG_INOUT;
        if (!has_inout) {
            double error = 0;
            int ok = check(ctx, &b, &error, why, sizeof why, &f);
            if (ok < 0) {
                report_fault(ctx, &f, c->name, 0);
                goto done;
            }
            if (!ok) {
                avo_result_fail(ctx->result, "wrong",
                                "config %s: output of timed runs differs from reference: %s",
                                c->name, why);
                goto done;
            }
        }
        /* And once more on fresh inputs with poisoned outputs: a kernel that
         * stops working after its first calls shows here. */
        int ok = run_and_check(ctx, c, &b, cand_params, ref_params, spec->trials, &max_error, why,
                               sizeof why, &f, &in_cand);
        json_object_set_new(entry, "max_error", json_real(max_error));
        if (ok < 0) {
            report_fault(ctx, &f, c->name, in_cand);
            goto done;
        }
        if (!ok) {
            avo_result_fail(ctx->result, "wrong", "config %s: wrong after the timed runs: %s",
                            c->name, why);
            goto done;
        }
        if (med > 0) {
            json_object_set_new(entry, "gflops", json_real(c->flops / med / 1e9));
            json_object_set_new(entry, "gbs", json_real(c->bytes / med / 1e9));
            json_object_set_new(entry, "tflops", json_real(c->flops / med / 1e12));
        }
        double mhz = probe_clock_mhz();
        if (mhz > 0)
            json_object_set_new(entry, "sm_clock_mhz", json_real(mhz));
    }
    json_object_set_new(entry, "correct", json_true());
    rc = 0;
done:
    if (rc < 0)
        json_object_set(entry, "reason", json_object_get(ctx->result, "reason"));
    if (!ctx->retire)
        buffers_free(&b, spec->nargs); /* after a sticky error the context is gone anyway */
    free(cand_params);
    free(ref_params);
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
    run_ctx ctx = {.job = job, .result = result,
                   .cand_kernel = cand->entry_kernel, .ref_kernel = ref->entry_kernel};
    CUmodule cand_mod = NULL, ref_mod = NULL;
    fault f = {0};
    CU_TRY(&f, D.cu->ModuleLoadDataEx(&ref_mod, ref->cubin, 0, NULL, NULL),
           "loading the reference cubin");
    CU_TRY(&f, D.cu->ModuleGetFunction(&ctx.ref_fn, ref_mod, ref->lowered_entry),
           "finding reference kernel %s", ref->lowered_entry);
    CU_TRY(&f, D.cu->ModuleLoadDataEx(&cand_mod, cand->cubin, 0, NULL, NULL),
           "loading the candidate cubin (compiled for another GPU?)");
    CU_TRY(&f, D.cu->ModuleGetFunction(&ctx.cand_fn, cand_mod, cand->lowered_entry),
           "finding kernel %s", cand->lowered_entry);
    ctx.cand_static_shared = func_attr(ctx.cand_fn, AVO_CU_FUNC_SHARED_SIZE_BYTES);
    ctx.ref_static_shared = func_attr(ctx.ref_fn, AVO_CU_FUNC_SHARED_SIZE_BYTES);

    json_t *configs = json_object_get(result, "configs");
    for (size_t i = 0; i < job->spec.nconfigs; i++) {
        json_t *entry = avo_result_config_new(job->spec.configs[i].name);
        int rc = run_config(&ctx, i, entry);
        json_array_append_new(configs, entry);
        if (rc < 0)
            break;
    }
    *ret_retire = ctx.retire;
    if (!ctx.retire) {
        D.cu->ModuleUnload(cand_mod);
        D.cu->ModuleUnload(ref_mod);
    }
    return;
fail: {
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
