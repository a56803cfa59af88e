/*
 * test_measure.c — the host-side verification and timing shared by the
 * backends: seeded fills (ranges, integer bounds, reproducible streams),
 * poison patterns per type, guards, the checker's verdicts in their
 * documented order, sample statistics and the timing policy.
 */
#include "eval/measure.h"

#include "check.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define GUARD 16

static void test_fill(void)
{
    float f[1000];
    int32_t ints[1000];
    uint16_t halves[100];
    avo_pcg32 a, b;
    avo_measure_trial_rng(&a, 7, "small", 0);
    avo_measure_fill_uniform(f, AVO_DT_F32, -2.0, 3.0, 1000, &a, AVO_DRAW_DOUBLE);
    int in_range = 1;
    for (int i = 0; i < 1000; i++)
        in_range &= f[i] >= -2.0f && f[i] <= 3.0f;
    CHECK(in_range);
    /* Same seed, config and trial: the same inputs; another trial: others. */
    float again[1000], other[1000];
    avo_measure_trial_rng(&b, 7, "small", 0);
    avo_measure_fill_uniform(again, AVO_DT_F32, -2.0, 3.0, 1000, &b, AVO_DRAW_DOUBLE);
    CHECK(memcmp(f, again, sizeof f) == 0);
    avo_measure_trial_rng(&b, 7, "small", 1);
    avo_measure_fill_uniform(other, AVO_DT_F32, -2.0, 3.0, 1000, &b, AVO_DRAW_DOUBLE);
    CHECK(memcmp(f, other, sizeof f) != 0);
    /* The two draws are different streams. */
    avo_measure_trial_rng(&b, 7, "small", 0);
    avo_measure_fill_uniform(other, AVO_DT_F32, -2.0, 3.0, 1000, &b, AVO_DRAW_FLOAT);
    CHECK(memcmp(f, other, sizeof f) != 0);

    /* Integers: inclusive bounds, both reached. */
    avo_measure_fill_uniform(ints, AVO_DT_I32, -1.5, 2.5, 1000, &a, AVO_DRAW_DOUBLE);
    int lo = 0, hi = 0, ok = 1;
    for (int i = 0; i < 1000; i++) {
        ok &= ints[i] >= -1 && ints[i] <= 2;
        lo |= ints[i] == -1;
        hi |= ints[i] == 2;
    }
    CHECK(ok && lo && hi);
    avo_measure_fill_uniform(halves, AVO_DT_BF16, 0.0, 1.0, 100, &a, AVO_DRAW_FLOAT);
    ok = 1;
    for (int i = 0; i < 100; i++) {
        double v = avo_measure_element(halves, AVO_DT_BF16, (size_t)i);
        ok &= v >= 0.0 && v <= 1.0;
    }
    CHECK(ok);
}

static void test_poison(void)
{
    static const avo_dtype types[] = {AVO_DT_F32, AVO_DT_F64, AVO_DT_I32,
                                      AVO_DT_I64, AVO_DT_F16, AVO_DT_BF16};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        uint64_t buf[4] = {0, 0, 0, 0};
        avo_measure_poison(buf, types[t], 3);
        CHECK(avo_measure_is_poison(buf, types[t], 0));
        CHECK(avo_measure_is_poison(buf, types[t], 2));
        CHECK(!avo_measure_is_poison(buf, types[t], 3 * 8 / avo_dtype_size(types[t])));
        if (avo_dtype_is_float(types[t])) /* poison is a NaN: never a valid result */
            CHECK(isnan(avo_measure_element(buf, types[t], 1)));
    }
    CHECK(avo_measure_poison_bits(AVO_DT_F32) == 0x7fc0deadu);
    CHECK(avo_measure_poison_bits(AVO_DT_I64) == 0xdeadbeefdeadbeefull);
}

static void test_guards(void)
{
    unsigned char g[40];
    avo_measure_guard_fill(g, sizeof g);
    CHECK(avo_measure_guard_intact(g, sizeof g));
    g[39] ^= 1;
    CHECK(!avo_measure_guard_intact(g, sizeof g));
}

/* One input x and one output y of four floats; the candidate's buffers
 * carry GUARD bytes on both sides. */
typedef struct fixture {
    avo_arg_spec args[3];
    unsigned char cand_x[GUARD + 16 + GUARD], cand_y[GUARD + 16 + GUARD];
    float saved_x[4], ref_y[4];
    avo_measure_view views[3];
} fixture;

static float *data(unsigned char *cand)
{
    return (float *)(void *)(cand + GUARD);
}

static void fixture_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    f->args[0] = (avo_arg_spec){.name = "n", .kind = AVO_ARG_SCALAR, .type = AVO_DT_I32};
    f->args[1] = (avo_arg_spec){.name = "x", .kind = AVO_ARG_IN, .type = AVO_DT_F32};
    f->args[2] = (avo_arg_spec){
        .name = "y", .kind = AVO_ARG_OUT, .type = AVO_DT_F32, .atol = 1e-3, .rtol = 0};
    avo_measure_guard_fill(f->cand_x, sizeof f->cand_x);
    avo_measure_guard_fill(f->cand_y, sizeof f->cand_y);
    for (int i = 0; i < 4; i++) {
        f->saved_x[i] = (float)i;
        data(f->cand_x)[i] = (float)i;
        f->ref_y[i] = 2.0f * (float)i;
        data(f->cand_y)[i] = 2.0f * (float)i;
    }
    f->views[0] = (avo_measure_view){.arg = &f->args[0]};
    f->views[1] =
        (avo_measure_view){.arg = &f->args[1], .length = 4, .cand = f->cand_x, .saved = f->saved_x};
    f->views[2] =
        (avo_measure_view){.arg = &f->args[2], .length = 4, .cand = f->cand_y, .ref = f->ref_y};
}

static int run_check(fixture *f, double *max_error, char *why)
{
    return avo_measure_check(f->views, 3, GUARD, max_error, why, 256);
}

static void test_check(void)
{
    fixture f;
    char why[256] = "";
    double err = -1;

    fixture_init(&f);
    data(f.cand_y)[1] += 5e-4f;
    CHECK_INT(run_check(&f, &err, why), 0);
    CHECK(err > 4e-4 && err < 6e-4);

    fixture_init(&f);
    data(f.cand_y)[2] += 0.5f;
    CHECK_INT(run_check(&f, &err, why), -1);
    CHECK_STR(why, "max error 5.0e-01 at y[2] exceeds tolerance (atol 0.001, rtol 0)");
    CHECK(err == 0.5);

    fixture_init(&f);
    f.cand_y[GUARD + 16] ^= 0xff;
    CHECK_INT(run_check(&f, &err, why), -1);
    CHECK_STR(why, "wrote out of bounds of buffer y");

    fixture_init(&f);
    data(f.cand_x)[3] = 9;
    CHECK_INT(run_check(&f, &err, why), -1);
    CHECK_STR(why, "modified input buffer x");

    fixture_init(&f);
    avo_measure_poison(data(f.cand_y) + 3, AVO_DT_F32, 1);
    CHECK_INT(run_check(&f, &err, why), -1);
    CHECK_STR(why, "output not fully written (element y[3])");

    fixture_init(&f);
    data(f.cand_y)[0] = INFINITY;
    CHECK_INT(run_check(&f, &err, why), -1);
    CHECK_STR(why, "non-finite value at y[0]");

    /* The documented order: an overrun is reported before a wrong value. */
    fixture_init(&f);
    data(f.cand_y)[0] = 100;
    f.cand_y[0] ^= 1;
    CHECK_INT(run_check(&f, &err, why), -1);
    CHECK_STR(why, "wrote out of bounds of buffer y");
}

static void test_stats(void)
{
    double med, spread;
    const double odd[] = {5, 1, 3};
    avo_measure_stats(odd, 3, &med, &spread);
    CHECK(med == 3 && fabs(spread - 2.0 / 3.0) < 1e-12);
    const double even[] = {4, 1, 2, 3};
    avo_measure_stats(even, 4, &med, &spread);
    CHECK(med == 2.5 && spread == 1.0 / 2.5);
    const double zero[] = {0, 0};
    avo_measure_stats(zero, 2, &med, &spread);
    CHECK(med == 0 && spread == 0);
}

/* A fake device: a call costs 1 ms; counts what it was asked for.  With
 * count_every > 0 only every count_every-th measured sample counts, and the
 * others claim 1 us (a kernel skipping work on samples it was told are not
 * compared): they must not move the median. */
typedef struct fake {
    int calls, measured;
    uint64_t last_batch;
    int fail_at, count_every;
} fake;

static int fake_sample(void *ctx, uint64_t batch, int measured, double *ret_s)
{
    fake *f = ctx;
    f->calls++;
    f->last_batch = batch;
    if (f->fail_at && f->calls == f->fail_at)
        return -7;
    *ret_s = 1e-3;
    if (!measured || f->count_every <= 0)
        return 0;
    if (++f->measured % f->count_every == 0)
        return 0;
    *ret_s = 1e-6;
    return AVO_MEASURE_UNCOUNTED;
}

static void test_time(void)
{
    avo_jobspec spec = {.min_sample_s = 0.004,
                        .min_samples = 3,
                        .max_samples = 10,
                        .target_spread = 0.01,
                        .max_seconds = 10};
    fake f = {0};
    avo_measure_timing t;
    CHECK_INT(avo_measure_time(&spec, 1024, fake_sample, &f, &t), 0);
    CHECK_INT(t.batch, 4); /* 1 ms per call: four calls last min_sample_s */
    CHECK(t.median_s == 1e-3 && t.spread == 0);
    CHECK_INT(t.samples, 3); /* the spread is under target once min_samples are in */
    f = (fake){.fail_at = 4};
    CHECK_INT(avo_measure_time(&spec, 1024, fake_sample, &f, &t), -7);
    f = (fake){0};
    CHECK_INT(avo_measure_time(&spec, 2, fake_sample, &f, &t), 0);
    CHECK_INT(t.batch, 2); /* max_batch caps the calibration */

    /* Only counted samples make the statistics. */
    f = (fake){.count_every = 3};
    CHECK_INT(avo_measure_time(&spec, 1024, fake_sample, &f, &t), 0);
    CHECK(t.median_s == 1e-3 && t.spread == 0);
    CHECK_INT(t.samples, 3);
    CHECK_INT(t.taken, 9);
    /* max_samples (10 taken) ends timing, but not before min_checks count. */
    spec.min_checks = 5;
    spec.target_spread = 0; /* never reached: the limits end it */
    f = (fake){.count_every = 4};
    CHECK_INT(avo_measure_time(&spec, 1024, fake_sample, &f, &t), 0);
    CHECK_INT(t.samples, 5);
    CHECK_INT(t.taken, 20);
    CHECK(t.median_s == 1e-3);
}

int main(void)
{
    test_fill();
    test_poison();
    test_guards();
    test_check();
    test_stats();
    test_time();
    return check_finish();
}
