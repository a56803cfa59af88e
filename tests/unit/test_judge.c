/*
 * test_judge.c — the trial logic (eval/judge.c) against a fake device in
 * this process: the timing batch never asks for more slots than the device
 * has room for (42 here, not a power of two); the seeded verification
 * inputs follow the device's draw (AVO_DRAW_FLOAT for CUDA, DOUBLE for the
 * CPU); every candidate call sees inputs no earlier call saw; a candidate
 * that skips the work after verification is caught; a device failure is
 * reported as such.  Against an adaptive kernel: no reference runs between
 * the config's first and last timed call (so no gap tells a candidate which
 * calls are compared), outputs are compared from copies taken at the answer
 * (work the candidate does later is never looked at), a kernel wrong on
 * some calls by call count is caught, and only compared samples make the
 * reported time.
 */
#include "eval/judge.h"

#include "core/avo.h"
#include "core/backend.h"
#include "check.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N 64
#define MAX_SLOTS 42
#define MAX_CALLS 100000

/* out = x + y on host buffers, one slot per call. */
typedef struct fake {
    const avo_jobspec *spec;
    float *x, *y, *out; /* MAX_SLOTS * N each */
    size_t slots, most_slots_asked, calls;
    int skip_after;    /* > 0: calls after this many write nothing */
    int fail_timing;   /* run_candidate fails once timing starts */
    int wrong_every;   /* > 0: timed calls whose number is a multiple write -(x + y) */
    int late;          /* timed calls write -(x + y); the "reference" then fixes every slot */
    int cheat_samples; /* timed samples but every 4th: -(x + y), claiming 1000x faster */
    size_t samples_run;
    size_t refs;          /* reference runs */
    size_t ref_calls[64]; /* candidate calls done at each reference run */
    float *seen;          /* x[0] of every call */
    float first_x[N];
} fake;

static int fk_layout(void *self, const avo_config_spec *cfg, size_t nslots, size_t *ret_max,
                     char *why, size_t len)
{
    fake *f = self;
    (void)cfg, (void)why, (void)len;
    if (nslots > f->most_slots_asked)
        f->most_slots_asked = nslots;
    if (ret_max)
        *ret_max = MAX_SLOTS;
    f->slots = nslots > MAX_SLOTS ? MAX_SLOTS : nslots;
    return 0;
}

static unsigned char *fk_data(void *self, size_t slot, size_t arg)
{
    fake *f = self;
    float *base = arg == 1 ? f->x : arg == 2 ? f->y : f->out;
    return (unsigned char *)(base + slot * N);
}

static int fk_guards(void *self, size_t slot, const char **ret_arg)
{
    (void)self, (void)slot;
    *ret_arg = "";
    return 1;
}

static int fk_run(void *self, const avo_config_spec *cfg, size_t nslots, double *ret_s, char *why,
                  size_t len)
{
    fake *f = self;
    (void)cfg;
    if (nslots > f->slots) {
        snprintf(why, len, "asked for %zu slots, %zu laid out", nslots, f->slots);
        return -1;
    }
    if (f->fail_timing && f->calls >= (size_t)f->spec->trials) {
        snprintf(why, len, "the fake device failed");
        return -1;
    }
    int cheat =
        f->cheat_samples && f->calls >= (size_t)f->spec->trials && f->samples_run++ % 4 != 0;
    for (size_t s = 0; s < nslots; s++) {
        if (f->calls == 0)
            memcpy(f->first_x, f->x, sizeof f->first_x);
        if (f->calls < MAX_CALLS)
            f->seen[f->calls] = f->x[s * N];
        f->calls++;
        if (f->skip_after > 0 && f->calls > (size_t)f->skip_after)
            continue;
        int timed = f->calls > (size_t)f->spec->trials;
        float sign =
            cheat || (timed &&
                      ((f->wrong_every > 0 && f->calls % (size_t)f->wrong_every == 0) || f->late))
                ? -1.0f
                : 1.0f;
        for (int i = 0; i < N; i++)
            f->out[s * N + i] = sign * (f->x[s * N + i] + f->y[s * N + i]);
    }
    *ret_s = (cheat ? 1e-10 : 1e-7) * (double)nslots; /* fast: the batch grows to its cap */
    return 0;
}

static int fk_ref(void *self, const avo_config_spec *cfg, void **buffers, char *why, size_t len)
{
    fake *f = self;
    (void)cfg, (void)why, (void)len;
    if (f->refs < 64)
        f->ref_calls[f->refs] = f->calls;
    f->refs++;
    if (f->late) /* the candidate finishing its outputs while the judge is busy */
        for (size_t s = 0; s < f->slots; s++)
            for (int i = 0; i < N; i++)
                f->out[s * N + i] = f->x[s * N + i] + f->y[s * N + i];
    const float *x = buffers[1], *y = buffers[2];
    float *out = buffers[3];
    for (int i = 0; i < N; i++)
        out[i] = x[i] + y[i];
    return 0;
}

/* The spec borrows the job's strings: the caller keeps *ret_job. */
static void parse_spec(avo_jobspec *spec, json_t **ret_job, double check_rate)
{
    json_t *job =
        json_pack("{s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}],"
                  " s:[{s:s, s:{s:i}, s:{s:i, s:i, s:i}, s:f, s:f}],"
                  " s:{s:f, s:f}, s:i, s:i, s:{s:f, s:i, s:i, s:f, s:f}}",
                  "args", "name", "n", "kind", "scalar", "type", "i32", "name", "x", "kind", "in",
                  "type", "f32", "name", "y", "kind", "in", "type", "f32", "name", "out", "kind",
                  "out", "type", "f32", "configs", "name", "c64", "scalars", "n", N, "lengths", "x",
                  N, "y", N, "out", N, "flops", 64.0, "bytes", 768.0, "tolerance", "atol", 1e-6,
                  "rtol", 1e-6, "seed", 7, "trials", 2, "timing", "min_sample_s", 0.01,
                  "min_samples", 5, "max_samples", 8, "target_spread", 0.0, "max_seconds", 5.0);
    json_object_set_new(json_object_get(job, "timing"), "check_rate", json_real(check_rate));
    char err[AVO_ERRLEN] = "";
    int rc = avo_jobspec_parse(job, avo_backend_cpu.rules, spec, err, sizeof err);
    *ret_job = job;
    if (rc < 0) {
        fprintf(stderr, "test job: %s\n", err);
        exit(1);
    }
}

/* Judge config 0 with a fresh fake; returns the outcome, entry and reason. */
static int judge(const avo_jobspec *spec, fake *f, avo_measure_draw draw, json_t **ret_entry,
                 char *reason, size_t len)
{
    f->spec = spec;
    f->x = calloc(MAX_SLOTS * N, sizeof(float));
    f->y = calloc(MAX_SLOTS * N, sizeof(float));
    f->out = calloc(MAX_SLOTS * N, sizeof(float));
    f->seen = calloc(MAX_CALLS, sizeof(float));
    avo_judge_device dev = {.self = f,
                            .layout = fk_layout,
                            .data = fk_data,
                            .guards_intact = fk_guards,
                            .run_candidate = fk_run,
                            .run_reference = fk_ref,
                            .draw = draw};
    *ret_entry = avo_result_config_new(spec->configs[0].name);
    reason[0] = '\0';
    return avo_judge_config(spec, &dev, &spec->configs[0], 1, *ret_entry, reason, len);
}

static void fake_free(fake *f)
{
    free(f->x);
    free(f->y);
    free(f->out);
    free(f->seen);
}

static int cmp_float(const void *a, const void *b)
{
    float u = *(const float *)a, v = *(const float *)b;
    return (u > v) - (u < v);
}

static void test_batch_and_fresh_inputs(const avo_jobspec *spec)
{
    fake f = {0};
    json_t *entry;
    char reason[1024];
    CHECK_INT(judge(spec, &f, AVO_DRAW_FLOAT, &entry, reason, sizeof reason), AVO_JUDGE_OK);
    /* 42 slots of room: batches double to 32, never past 42. */
    CHECK_INT(json_integer_value(json_object_get(entry, "batch")), 32);
    CHECK(f.most_slots_asked <= MAX_SLOTS);
    CHECK(json_is_true(json_object_get(entry, "correct")));
    /* Every call saw a fresh x[0]: repeats among the calls no more than
     * chance gives (2^24 values per draw; the calls a sample makes depend
     * on the machine's speed, and a few thousand meet by chance: the
     * birthday bound, n^2 / 2^25, four times over, plus 3).  Inputs that
     * were not fresh would repeat for nearly every call. */
    size_t n = f.calls < MAX_CALLS ? f.calls : MAX_CALLS;
    CHECK(n > 2 * 32);
    qsort(f.seen, n, sizeof(float), cmp_float);
    size_t repeats = 0;
    for (size_t i = 1; i < n; i++)
        repeats += f.seen[i] == f.seen[i - 1];
    double chance = (double)n * (double)(n - 1) / 2 / 16777216.0;
    if (!((double)repeats <= 4 * chance + 3))
        fprintf(stderr, "%zu repeats among %zu calls (chance gives %.2f)\n", repeats, n, chance);
    CHECK((double)repeats <= 4 * chance + 3);
    json_decref(entry);
    fake_free(&f);
}

static void test_draw(const avo_jobspec *spec)
{
    for (int d = 0; d < 2; d++) {
        avo_measure_draw draw = d ? AVO_DRAW_FLOAT : AVO_DRAW_DOUBLE;
        fake f = {0};
        json_t *entry;
        char reason[1024];
        CHECK_INT(judge(spec, &f, draw, &entry, reason, sizeof reason), AVO_JUDGE_OK);
        /* The first call's x: trial 0 of the seeded stream, x drawn first. */
        float expect[N];
        avo_pcg32 rng;
        avo_measure_trial_rng(&rng, spec->seed, "c64", 0);
        avo_measure_fill_uniform(expect, AVO_DT_F32, -1.0, 1.0, N, &rng, draw);
        CHECK(memcmp(expect, f.first_x, sizeof expect) == 0);
        json_decref(entry);
        fake_free(&f);
    }
}

static void test_skips_after_verification(const avo_jobspec *spec)
{
    fake f = {.skip_after = 2};
    json_t *entry;
    char reason[1024];
    CHECK_INT(judge(spec, &f, AVO_DRAW_FLOAT, &entry, reason, sizeof reason), AVO_JUDGE_WRONG);
    CHECK_CONTAINS(reason, "config c64: timed runs left output out unwritten (work skipped)");
    CHECK(!json_is_true(json_object_get(entry, "correct")));
    json_decref(entry);
    fake_free(&f);
}

static void test_device_failure(const avo_jobspec *spec)
{
    fake f = {.fail_timing = 1};
    json_t *entry;
    char reason[1024];
    CHECK_INT(judge(spec, &f, AVO_DRAW_FLOAT, &entry, reason, sizeof reason), AVO_JUDGE_FAILED);
    CHECK_CONTAINS(reason, "the fake device failed in config c64");
    json_decref(entry);
    fake_free(&f);
}

/* Every reference run after verification comes after the last candidate
 * call, one per compared sample: every sample with check_rate 1, at least
 * min_checks otherwise. */
static void test_no_reference_amid_timing(const avo_jobspec *spec, int all)
{
    fake f = {0};
    json_t *entry;
    char reason[1024];
    CHECK_INT(judge(spec, &f, AVO_DRAW_FLOAT, &entry, reason, sizeof reason), AVO_JUDGE_OK);
    size_t compared = (size_t)json_integer_value(json_object_get(entry, "compared"));
    size_t samples = (size_t)json_integer_value(json_object_get(entry, "samples"));
    CHECK_INT((long long)f.refs, (long long)((size_t)spec->trials + compared));
    for (size_t r = (size_t)spec->trials; r < f.refs && r < 64; r++)
        CHECK_INT((long long)f.ref_calls[r], (long long)f.calls);
    CHECK(compared <= samples);
    CHECK((long long)compared >= spec->min_checks);
    if (all) /* check_rate 1, target_spread 0: max_samples samples, every one compared */
        CHECK_INT((long long)compared, spec->max_samples);
    json_decref(entry);
    fake_free(&f);
}

/* Wrong on every 3rd call by count (the gap- or count-driven cheat): one
 * in three compared calls is wrong, so with 8 compared the chance to pass
 * is (2/3)^8 < 4%; run it 3 times, each must fail with the reference's
 * verdict, or pass (never any other failure). At least one must fail. */
static void test_wrong_by_count(const avo_jobspec *spec)
{
    int caught = 0;
    for (int round = 0; round < 3; round++) {
        fake f = {.wrong_every = 3};
        json_t *entry;
        char reason[1024];
        int rc = judge(spec, &f, AVO_DRAW_FLOAT, &entry, reason, sizeof reason);
        if (rc == AVO_JUDGE_WRONG) {
            CHECK_CONTAINS(reason, "config c64: output of timed runs differs from reference");
            caught++;
        } else {
            CHECK_INT(rc, AVO_JUDGE_OK);
        }
        json_decref(entry);
        fake_free(&f);
    }
    CHECK(caught > 0);
}

/* Outputs fixed after the answer, while the judge runs the reference: the
 * judge compares what the candidate had answered, and it is wrong. */
static void test_work_after_answer(const avo_jobspec *spec)
{
    fake f = {.late = 1};
    json_t *entry;
    char reason[1024];
    CHECK_INT(judge(spec, &f, AVO_DRAW_FLOAT, &entry, reason, sizeof reason), AVO_JUDGE_WRONG);
    CHECK_CONTAINS(reason, "config c64: output of timed runs differs from reference: max error");
    json_decref(entry);
    fake_free(&f);
}

/* Wrong, and 1000x faster, on three samples in four: the median is such a
 * sample and always compared, so even a rate near 0 (min_checks 1) fails it
 * every time. */
static void test_median_compared(const avo_jobspec *spec)
{
    for (int round = 0; round < 5; round++) {
        fake f = {.cheat_samples = 1};
        json_t *entry;
        char reason[1024];
        CHECK_INT(judge(spec, &f, AVO_DRAW_FLOAT, &entry, reason, sizeof reason), AVO_JUDGE_WRONG);
        CHECK_CONTAINS(reason, "config c64: output of timed runs differs from reference");
        json_decref(entry);
        fake_free(&f);
    }
}

int main(void)
{
    avo_jobspec spec, half, rare;
    json_t *job, *half_job, *rare_job;
    parse_spec(&spec, &job, 1.0);
    parse_spec(&half, &half_job, 0.5);
    parse_spec(&rare, &rare_job, 1e-9);
    rare.min_checks = 1;
    test_median_compared(&rare);
    test_batch_and_fresh_inputs(&spec);
    test_draw(&spec);
    test_skips_after_verification(&spec);
    test_device_failure(&spec);
    test_no_reference_amid_timing(&spec, 1);
    test_no_reference_amid_timing(&half, 0);
    test_wrong_by_count(&spec);
    test_work_after_answer(&spec);
    avo_jobspec_free(&spec);
    avo_jobspec_free(&half);
    avo_jobspec_free(&rare);
    json_decref(job);
    json_decref(half_job);
    json_decref(rare_job);
    return check_finish();
}
