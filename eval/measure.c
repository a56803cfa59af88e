/*
 * measure.c — inputs, poison, guards, the reference comparison and the
 * timing policy shared by the backends (see measure.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"
#include "eval/measure.h"

void avo_measure_trial_rng(avo_pcg32 *ret, uint64_t seed, const char *config, int trial)
{
    char name[512];
    snprintf(name, sizeof name, "inputs/%s/%d", config, trial);
    avo_pcg32_derive(ret, seed, name);
}

/* One uniform float in [lo, hi] by `draw`. */
static float uniform_f32(double lo, double hi, avo_pcg32 *rng, avo_measure_draw draw)
{
    if (draw == AVO_DRAW_DOUBLE)
        return (float)(lo + (hi - lo) * avo_pcg32_double(rng));
    return (float)(lo + (hi - lo) * avo_pcg32_float(rng));
}

void avo_measure_int_range(avo_dtype type, double lo, double hi, int64_t *ret_lo,
                           uint64_t *ret_span)
{
    int64_t ilo = (int64_t)ceil(lo), ihi = (int64_t)floor(hi);
    if (type == AVO_DT_I32) {
        ilo = ilo < INT32_MIN ? INT32_MIN : ilo;
        ihi = ihi > INT32_MAX ? INT32_MAX : ihi;
    }
    if (ihi < ilo)
        ihi = ilo;
    *ret_lo = ilo;
    *ret_span = (uint64_t)ihi - (uint64_t)ilo + 1; /* 0 means all of 2^64 */
}

void avo_measure_fill_uniform(void *buf, avo_dtype type, double lo, double hi, size_t n,
                              avo_pcg32 *rng, avo_measure_draw draw)
{
    switch (type) {
    case AVO_DT_F64:
        for (size_t i = 0; i < n; i++)
            ((double *)buf)[i] = lo + (hi - lo) * avo_pcg32_double(rng);
        return;
    case AVO_DT_F32:
        for (size_t i = 0; i < n; i++)
            ((float *)buf)[i] = uniform_f32(lo, hi, rng, draw);
        return;
    case AVO_DT_F16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)buf)[i] = avo_f32_to_f16(uniform_f32(lo, hi, rng, draw));
        return;
    case AVO_DT_BF16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)buf)[i] = avo_f32_to_bf16(uniform_f32(lo, hi, rng, draw));
        return;
    default:
        break;
    }
    int64_t ilo;
    uint64_t span;
    avo_measure_int_range(type, lo, hi, &ilo, &span);
    for (size_t i = 0; i < n; i++) {
        uint64_t r;
        if (span != 0 && span <= UINT32_MAX)
            r = avo_pcg32_bounded(rng, (uint32_t)span);
        else {
            r = (uint64_t)avo_pcg32_next(rng) << 32 | avo_pcg32_next(rng);
            if (span)
                r %= span; /* bias below 2^-32 for such wide ranges */
        }
        int64_t v = (int64_t)((uint64_t)ilo + r);
        if (type == AVO_DT_I32)
            ((int32_t *)buf)[i] = (int32_t)v;
        else
            ((int64_t *)buf)[i] = v;
    }
}

uint64_t avo_measure_poison_bits(avo_dtype type)
{
    switch (type) {
    case AVO_DT_BF16:
        return 0x7fa1u;
    case AVO_DT_F16:
        return 0x7e01u;
    case AVO_DT_F32:
        return 0x7fc0deadu;
    case AVO_DT_I32:
        return 0xdeadbeefu;
    case AVO_DT_F64:
        return 0x7ff80000deadbeefull;
    default:
        return 0xdeadbeefdeadbeefull;
    }
}

void avo_measure_poison(void *buf, avo_dtype type, size_t n)
{
    uint64_t bits = avo_measure_poison_bits(type);
    switch (avo_dtype_size(type)) {
    case 2:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)buf)[i] = (uint16_t)bits;
        break;
    case 4:
        for (size_t i = 0; i < n; i++)
            ((uint32_t *)buf)[i] = (uint32_t)bits;
        break;
    default:
        for (size_t i = 0; i < n; i++)
            ((uint64_t *)buf)[i] = bits;
    }
}

int avo_measure_is_poison(const void *buf, avo_dtype type, size_t i)
{
    uint64_t bits = avo_measure_poison_bits(type);
    switch (avo_dtype_size(type)) {
    case 2:
        return ((const uint16_t *)buf)[i] == (uint16_t)bits;
    case 4:
        return ((const uint32_t *)buf)[i] == (uint32_t)bits;
    default:
        return ((const uint64_t *)buf)[i] == bits;
    }
}

double avo_measure_element(const void *buf, avo_dtype type, size_t i)
{
    switch (type) {
    case AVO_DT_F32:
        return ((const float *)buf)[i];
    case AVO_DT_F64:
        return ((const double *)buf)[i];
    case AVO_DT_I32:
        return ((const int32_t *)buf)[i];
    case AVO_DT_I64:
        return (double)((const int64_t *)buf)[i];
    case AVO_DT_F16:
        return avo_f16_to_f32(((const uint16_t *)buf)[i]);
    default:
        return avo_bf16_to_f32(((const uint16_t *)buf)[i]);
    }
}

static const unsigned char guard_pattern[8] = {0xa7, 0x5c, 0x3e, 0x91, 0xd2, 0x48, 0x6b, 0xf0};

void avo_measure_guard_fill_at(unsigned char *p, size_t n, size_t phase)
{
    for (size_t i = 0; i < n; i++)
        p[i] = guard_pattern[(phase + i) % sizeof guard_pattern];
}

int avo_measure_guard_intact_at(const unsigned char *p, size_t n, size_t phase)
{
    size_t i = 0;
    for (; i < n && (phase + i) % 8 != 0; i++)
        if (p[i] != guard_pattern[(phase + i) % 8])
            return 0;
    uint64_t word; /* from an 8-aligned phase on, the pattern is one word */
    memcpy(&word, guard_pattern, 8);
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        if (v != word)
            return 0;
    }
    for (; i < n; i++)
        if (p[i] != guard_pattern[(phase + i) % 8])
            return 0;
    return 1;
}

void avo_measure_guard_fill(unsigned char *p, size_t n)
{
    avo_measure_guard_fill_at(p, n, 0);
}

int avo_measure_guard_intact(const unsigned char *p, size_t n)
{
    return avo_measure_guard_intact_at(p, n, 0);
}

static int is_output(const avo_arg_spec *arg)
{
    return arg->kind == AVO_ARG_OUT || arg->kind == AVO_ARG_INOUT;
}

int avo_measure_check(const avo_measure_view *views, size_t n, size_t guard_bytes,
                      double *ret_max_error, char *why, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        const avo_measure_view *v = &views[i];
        size_t bytes = v->length * avo_dtype_size(v->arg->type);
        if (v->arg->kind != AVO_ARG_SCALAR &&
            (!avo_measure_guard_intact(v->cand, guard_bytes) ||
             !avo_measure_guard_intact(v->cand + guard_bytes + bytes, guard_bytes))) {
            snprintf(why, len, "wrote out of bounds of buffer %s", v->arg->name);
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const avo_measure_view *v = &views[i];
        if (v->arg->kind == AVO_ARG_IN && memcmp(v->cand + guard_bytes, v->saved,
                                                 v->length * avo_dtype_size(v->arg->type)) != 0) {
            snprintf(why, len, "modified input buffer %s", v->arg->name);
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const avo_measure_view *v = &views[i];
        if (v->arg->kind != AVO_ARG_OUT)
            continue;
        for (size_t e = 0; e < v->length; e++)
            if (avo_measure_is_poison(v->cand + guard_bytes, v->arg->type, e) &&
                !avo_measure_is_poison(v->ref, v->arg->type, e)) {
                snprintf(why, len, "output not fully written (element %s[%zu])", v->arg->name, e);
                return -1;
            }
    }
    for (size_t i = 0; i < n; i++) {
        const avo_measure_view *v = &views[i];
        if (!is_output(v->arg) || !avo_dtype_is_float(v->arg->type))
            continue;
        for (size_t e = 0; e < v->length; e++)
            if (!isfinite(avo_measure_element(v->cand + guard_bytes, v->arg->type, e))) {
                snprintf(why, len, "non-finite value at %s[%zu]", v->arg->name, e);
                return -1;
            }
    }

    double worst = 0, worst_bad = -1;
    const avo_arg_spec *bad = NULL;
    size_t bad_index = 0;
    for (size_t i = 0; i < n; i++) {
        const avo_measure_view *v = &views[i];
        if (!is_output(v->arg))
            continue;
        for (size_t e = 0; e < v->length; e++) {
            double x = avo_measure_element(v->cand + guard_bytes, v->arg->type, e);
            double r = avo_measure_element(v->ref, v->arg->type, e);
            double error = fabs(x - r);
            if (!(error <= worst))
                worst = error; /* NaN from a broken reference propagates */
            if (!(error <= v->arg->atol + v->arg->rtol * fabs(r)) && !(error <= worst_bad)) {
                worst_bad = error;
                bad = v->arg;
                bad_index = e;
            }
        }
    }
    *ret_max_error = worst;
    if (bad) {
        snprintf(why, len, "max error %.1e at %s[%zu] exceeds tolerance (atol %g, rtol %g)",
                 worst_bad, bad->name, bad_index, bad->atol, bad->rtol);
        return -1;
    }
    return 0;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n), n >= 1; sorts v. */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void avo_measure_stats(const double *v, size_t n, double *ret_median, double *ret_spread)
{
    double *tmp = malloc(n * sizeof *tmp);
    if (!tmp) {
        *ret_median = v[n - 1];
        *ret_spread = 0;
        return;
    }
    memcpy(tmp, v, n * sizeof *tmp);
    double m = median(tmp, n);
    for (size_t i = 0; i < n; i++)
        tmp[i] = fabs(v[i] - m);
    double mad = median(tmp, n);
    free(tmp);
    *ret_median = m;
    *ret_spread = m > 0 ? mad / m : 0;
}

int avo_measure_time(const avo_jobspec *spec, uint64_t max_batch, avo_measure_sampler sample,
                     void *ctx, avo_measure_timing *ret)
{
    double start = avo_monotonic(), t = 0;
    uint64_t batch = 1;
    int rc;
    memset(ret, 0, sizeof *ret);
    if ((rc = sample(ctx, 1, 0, &t)) < 0) /* warm-up */
        return rc;
    if ((rc = sample(ctx, 1, 0, &t)) < 0)
        return rc;
    while (t * (double)batch < spec->min_sample_s && batch < max_batch &&
           avo_monotonic() - start < spec->max_seconds) {
        batch *= 2;
        if ((rc = sample(ctx, batch, 0, &t)) < 0)
            return rc;
    }
    ret->batch = batch;
    size_t cap = spec->max_samples > 0 ? (size_t)spec->max_samples : 1;
    size_t least = spec->min_checks < 1 ? 1 : (size_t)spec->min_checks;
    if (least > cap)
        least = cap;
    double *samples = malloc(cap * sizeof *samples);
    if (!samples)
        return AVO_ENOMEM;
    /* Neither max_samples nor max_seconds ends timing before `least`
     * samples count: which ones count is the sampler's secret, and the
     * reported time is made of them alone. */
    size_t n = 0;
    while (n < cap &&
           (n < least || (ret->taken < cap && avo_monotonic() - start < spec->max_seconds))) {
        if (n >= (size_t)spec->min_samples && n >= least) {
            avo_measure_stats(samples, n, &ret->median_s, &ret->spread);
            if (ret->spread < spec->target_spread)
                break;
        }
        double s = 0;
        if ((rc = sample(ctx, batch, 1, &s)) < 0) {
            free(samples);
            return rc;
        }
        ret->taken++;
        if (rc != AVO_MEASURE_UNCOUNTED)
            samples[n++] = s;
    }
    avo_measure_stats(samples, n, &ret->median_s, &ret->spread);
    ret->samples = n;
    free(samples);
    return 0;
}
