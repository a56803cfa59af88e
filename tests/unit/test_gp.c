/*
 * test_gp.c — the surrogate's Gaussian process (core/gp.h) against a
 * direct computation: means, deviations and the expected improvement of
 * the candidate it picks match a dense solve of K^-1 (its bound pruning
 * loses nothing); a model grown row by row (extend) is the model made at
 * once (fit), bit for bit; pop gives back the model before the add; a
 * singular covariance is refused; a floor above every candidate gives none.
 */
#include "core/gp.h"

#include "check.h"

#include <math.h>
#include <stdlib.h>

#include "core/avo.h"
#include "core/pcg.h"

enum { KNOBS = 4, N = 12, CANDS = 60 };
static const int SPANS[KNOBS] = {4, 3, 5, 2};

static void draw(avo_pcg32 *rng, int *x)
{
    for (int d = 0; d < KNOBS; d++)
        x[d] = 1 + (int)avo_pcg32_bounded(rng, (uint32_t)SPANS[d]);
}

/* The covariance of two encodings, straight from gp.h's formula. */
static double cov(const int *a, const int *b, const avo_gp_hyper *h)
{
    double cat = 0, ord = 0;
    for (int d = 0; d < KNOBS; d++) {
        double step = fabs((double)(a[d] - b[d])) / (SPANS[d] - 1);
        cat += a[d] != b[d];
        ord += h->shape == 2 ? step * step : step;
    }
    return exp(-(h->w * cat + (1 - h->w) * ord) / h->scale);
}

/* Solves A z = b by Gauss-Jordan with partial pivoting (A, b destroyed). */
static void solve(double A[N][N], double *b, int n)
{
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(A[r][c]) > fabs(A[p][c]))
                p = r;
        for (int k = 0; k < n; k++) {
            double t = A[c][k];
            A[c][k] = A[p][k];
            A[p][k] = t;
        }
        double t = b[c];
        b[c] = b[p];
        b[p] = t;
        for (int r = 0; r < n; r++) {
            if (r == c)
                continue;
            double f = A[r][c] / A[c][c];
            for (int k = c; k < n; k++)
                A[r][k] -= f * A[c][k];
            b[r] -= f * b[c];
        }
    }
    for (int c = 0; c < n; c++)
        b[c] /= A[c][c];
}

/* Mean and deviation at x of the model of (xs, y) under h, directly. */
static void direct(int xs[N][KNOBS], const double *y, int n, const avo_gp_hyper *h, const int *x,
                   double *mean, double *sd)
{
    double K[N][N], alpha[N], k[N], v[N];
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            K[i][j] = cov(xs[i], xs[j], h) + (i == j ? h->noise : 0);
        alpha[i] = y[i];
        k[i] = v[i] = cov(x, xs[i], h);
    }
    solve(K, alpha, n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            K[i][j] = cov(xs[i], xs[j], h) + (i == j ? h->noise : 0);
    solve(K, v, n);
    *mean = 0;
    double var = 1;
    for (int i = 0; i < n; i++) {
        *mean += k[i] * alpha[i];
        var -= k[i] * v[i];
    }
    *sd = sqrt(var > 1e-12 ? var : 1e-12);
}

static double ei(double mean, double sd, double best, double xi)
{
    double gain = mean - best - xi, z = gain / sd;
    return gain * 0.5 * (1 + erf(z / sqrt(2))) +
           sd * exp(-0.5 * z * z) / sqrt(2 * 3.141592653589793);
}

static void test_against_direct(int shape, double w)
{
    avo_gp_hyper h = {.scale = 0.25 * KNOBS, .w = w, .shape = shape, .noise = 1e-2};
    avo_pcg32 rng;
    avo_pcg32_seed(&rng, 7u, (uint64_t)shape * 10 + (uint64_t)(w * 2));
    avo_gp *gp = avo_gp_new(KNOBS, SPANS);
    CHECK(gp != NULL);
    int xs[N][KNOBS];
    double y[N];
    for (int i = 0; i < N; i++) {
        draw(&rng, xs[i]);
        y[i] = avo_pcg32_double(&rng) * 2 - 1;
        CHECK_INT(avo_gp_add(gp, xs[i]), 0);
    }
    CHECK_INT(avo_gp_size(gp), N);
    double loglik;
    CHECK_INT(avo_gp_fit(gp, y, &h, &loglik), 0);
    CHECK(avo_gp_has_model(gp, &h));

    int cands[CANDS * KNOBS];
    double top_ei = -INFINITY, best = 0.5, xi = 0.01;
    for (int c = 0; c < CANDS; c++) {
        draw(&rng, cands + c * KNOBS);
        double m, s;
        direct(xs, y, N, &h, cands + c * KNOBS, &m, &s);
        double e = ei(m, s, best, xi);
        if (e > top_ei)
            top_ei = e;
        /* One candidate alone: its mean and improvement, the model's. */
        int index;
        double mean, got;
        CHECK_INT(avo_gp_best(gp, cands + c * KNOBS, 1, best, xi, -INFINITY, &index, &mean, &got),
                  0);
        CHECK_INT(index, 0);
        CHECK(fabs(mean - m) < 1e-9);
        CHECK(fabs(got - e) < 1e-6 * (1 + fabs(e)));
    }
    int index;
    double mean, got;
    CHECK_INT(avo_gp_best(gp, cands, CANDS, best, xi, -INFINITY, &index, &mean, &got), 0);
    CHECK(index >= 0 && index < CANDS);
    CHECK(fabs(got - top_ei) < 1e-6 * (1 + fabs(top_ei))); /* the pruning lost nothing */

    /* A floor above every candidate: none. */
    CHECK_INT(avo_gp_best(gp, cands, CANDS, best, xi, top_ei + 1, &index, &mean, &got), 0);
    CHECK_INT(index, -1);
    avo_gp_free(gp);
}

/* Six positions fitted, six more added and extended: the same picks, bit for
 * bit, as twelve fitted at once; a pop after an add gives back the model. */
static void test_extend_and_pop(void)
{
    avo_gp_hyper h = {.scale = 0.12 * KNOBS, .w = 0.5, .shape = 2, .noise = 1e-4};
    avo_pcg32 rng;
    avo_pcg32_seed(&rng, 3u, 1u);
    int xs[N][KNOBS], cands[CANDS * KNOBS];
    double y[N];
    for (int i = 0; i < N; i++) {
        draw(&rng, xs[i]);
        y[i] = avo_pcg32_double(&rng);
    }
    for (int c = 0; c < CANDS; c++)
        draw(&rng, cands + c * KNOBS);
    avo_gp *once = avo_gp_new(KNOBS, SPANS), *grown = avo_gp_new(KNOBS, SPANS);
    for (int i = 0; i < N; i++)
        avo_gp_add(once, xs[i]);
    CHECK_INT(avo_gp_fit(once, y, &h, NULL), 0);
    for (int i = 0; i < N / 2; i++)
        avo_gp_add(grown, xs[i]);
    CHECK_INT(avo_gp_fit(grown, y, &h, NULL), 0);
    int i1, i2;
    double m1, m2, e1, e2;
    CHECK_INT(avo_gp_best(grown, cands, CANDS, 0, 0, -INFINITY, &i1, &m1, &e1), 0);
    for (int i = N / 2; i < N; i++)
        avo_gp_add(grown, xs[i]);
    CHECK_INT(avo_gp_extend(grown, y), 0);
    CHECK_INT(avo_gp_best(once, cands, CANDS, 0, 0, -INFINITY, &i1, &m1, &e1), 0);
    CHECK_INT(avo_gp_best(grown, cands, CANDS, 0, 0, -INFINITY, &i2, &m2, &e2), 0);
    CHECK_INT(i1, i2);
    CHECK(m1 == m2 && e1 == e2);

    /* A believed pick added, extended, then popped: the model before it. */
    avo_gp_add(grown, cands);
    double y2[N + 1];
    for (int i = 0; i < N; i++)
        y2[i] = y[i];
    y2[N] = 5;
    CHECK_INT(avo_gp_extend(grown, y2), 0);
    avo_gp_pop(grown);
    CHECK_INT(avo_gp_size(grown), N);
    CHECK_INT(avo_gp_extend(grown, y), 0);
    CHECK_INT(avo_gp_best(grown, cands, CANDS, 0, 0, -INFINITY, &i2, &m2, &e2), 0);
    CHECK_INT(i1, i2);
    CHECK(m1 == m2 && e1 == e2);

    /* clear drops the model. */
    avo_gp_clear(grown);
    CHECK_INT(avo_gp_size(grown), 0);
    CHECK(!avo_gp_has_model(grown, &h));
    CHECK_INT(avo_gp_best(grown, cands, CANDS, 0, 0, -INFINITY, &i2, &m2, &e2), AVO_EINVAL);
    CHECK_INT(avo_gp_extend(grown, y), AVO_EINVAL);
    avo_gp_free(once);
    avo_gp_free(grown);
}

/* The same position twice without noise: singular, refused; with noise, fine. */
static void test_singular(void)
{
    avo_gp *gp = avo_gp_new(KNOBS, SPANS);
    int x[KNOBS] = {1, 2, 3, 1};
    avo_gp_add(gp, x);
    avo_gp_add(gp, x);
    double y[2] = {0, 1}, loglik;
    avo_gp_hyper exact = {.scale = 1, .w = 1, .shape = 1, .noise = 0};
    avo_gp_hyper noisy = {.scale = 1, .w = 1, .shape = 1, .noise = 1e-2};
    CHECK_INT(avo_gp_loglik(gp, y, &exact, &loglik), AVO_EINVAL);
    CHECK_INT(avo_gp_fit(gp, y, &exact, &loglik), AVO_EINVAL);
    CHECK(!avo_gp_has_model(gp, &exact));
    CHECK_INT(avo_gp_loglik(gp, y, &noisy, &loglik), 0);
    double fitted;
    CHECK_INT(avo_gp_fit(gp, y, &noisy, &fitted), 0);
    CHECK(loglik == fitted);
    CHECK(!avo_gp_has_model(gp, &exact));
    CHECK(avo_gp_has_model(gp, &noisy));
    avo_gp_free(gp);
    avo_gp_free(NULL);
}

int main(void)
{
    test_against_direct(1, 0);
    test_against_direct(2, 0.5);
    test_against_direct(1, 1);
    test_extend_and_pop();
    test_singular();
    return check_finish();
}
