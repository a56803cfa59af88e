/*
 * gp.c — the Gaussian process of strategies/surrogate.lua (gp.h).
 *
 * Storage: the training encodings row after row; the pairwise distances
 * (count of knobs that differ, sums of position steps and of their
 * squares) and the Cholesky factors packed as lower triangles, row a at
 * a * (a + 1) / 2, so growing the capacity keeps every row where it was;
 * the covariance factors of the model, factors[a][offset[d] + v - 1]: knob
 * d's factor of the covariance between value position v and training
 * position a, so a prediction is one product per knob and position.
 *
 * Every loop keeps the order of the Lua it replaced (strategies/
 * surrogate.lua before issue 31): the same sums in the same order, the
 * same products, the same tie-breaks, so the picks do not change.
 */
#include "core/gp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"

/* Lua's math.pi. */
#define PI 3.141592653589793238462643383279502884

struct avo_gp {
    int knobs;
    int *spans;             /* values per knob */
    int *offset;            /* knob d's first column in a row of factors */
    int width;              /* sum of spans: the columns of factors */
    int n, cap;             /* training positions held and room for */
    int *x;                 /* cap x knobs encodings */
    int *cat;               /* packed: knobs that differ */
    double *ord, *ord2;     /* packed: sums of steps and of squared steps */
    double *factor, *spare; /* packed: the model's factor; fit's work space */
    double *alpha, *z, *k;  /* cap each: weights, solve and covariance scratch */
    double *factors;        /* cap x width: the model's covariance factors */
    int factors_n;          /* positions whose factors are computed */
    int model_n;            /* rows of the factor (0: no model) */
    int has_model;
    avo_gp_hyper hyper;      /* the model's */
    struct candidate *order; /* avo_gp_best's, order_cap of them */
    int order_cap;
};

struct candidate {
    double bound, mean;
    int index;
};

static size_t tri(int a)
{
    return (size_t)a * (size_t)(a + 1) / 2;
}

avo_gp *avo_gp_new(int knobs, const int *spans)
{
    avo_gp *gp = calloc(1, sizeof *gp);
    if (!gp)
        return NULL;
    gp->knobs = knobs;
    gp->spans = malloc(sizeof(int) * (size_t)(knobs > 0 ? knobs : 1));
    gp->offset = malloc(sizeof(int) * (size_t)(knobs > 0 ? knobs : 1));
    if (!gp->spans || !gp->offset) {
        avo_gp_free(gp);
        return NULL;
    }
    for (int d = 0; d < knobs; d++) {
        gp->spans[d] = spans[d];
        gp->offset[d] = gp->width;
        gp->width += spans[d];
    }
    return gp;
}

void avo_gp_free(avo_gp *gp)
{
    if (!gp)
        return;
    free(gp->spans);
    free(gp->offset);
    free(gp->x);
    free(gp->cat);
    free(gp->ord);
    free(gp->ord2);
    free(gp->factor);
    free(gp->spare);
    free(gp->alpha);
    free(gp->z);
    free(gp->k);
    free(gp->factors);
    free(gp->order);
    free(gp);
}

int avo_gp_knobs(const avo_gp *gp)
{
    return gp->knobs;
}

int avo_gp_size(const avo_gp *gp)
{
    return gp->n;
}

/* realloc `*p` to `count` elements of `size`; on failure *p is unchanged. */
static int grow_array(void *p, size_t count, size_t size)
{
    void **slot = p;
    void *q = realloc(*slot, count * size);
    if (!q)
        return AVO_ENOMEM;
    *slot = q;
    return 0;
}

/* Room for one more training position.  Arrays already grown stay grown
 * when a later one fails: cap only moves when all have. */
static int reserve(avo_gp *gp)
{
    if (gp->n < gp->cap)
        return 0;
    int cap = gp->cap ? gp->cap * 2 : 16;
    size_t packed = tri(cap), wide = (size_t)(gp->width > 0 ? gp->width : 1);
    size_t row = (size_t)(gp->knobs > 0 ? gp->knobs : 1);
    if (grow_array(&gp->x, (size_t)cap * row, sizeof(int)) < 0 ||
        grow_array(&gp->cat, packed, sizeof(int)) < 0 ||
        grow_array(&gp->ord, packed, sizeof(double)) < 0 ||
        grow_array(&gp->ord2, packed, sizeof(double)) < 0 ||
        grow_array(&gp->factor, packed, sizeof(double)) < 0 ||
        grow_array(&gp->spare, packed, sizeof(double)) < 0 ||
        grow_array(&gp->alpha, (size_t)cap, sizeof(double)) < 0 ||
        grow_array(&gp->z, (size_t)cap, sizeof(double)) < 0 ||
        grow_array(&gp->k, (size_t)cap, sizeof(double)) < 0 ||
        grow_array(&gp->factors, (size_t)cap * wide, sizeof(double)) < 0)
        return AVO_ENOMEM;
    gp->cap = cap;
    return 0;
}

int avo_gp_add(avo_gp *gp, const int *x)
{
    int rc = reserve(gp);
    if (rc < 0)
        return rc;
    int a = gp->n;
    int *xa = gp->x + (size_t)a * (size_t)gp->knobs;
    memcpy(xa, x, sizeof(int) * (size_t)gp->knobs);
    for (int b = 0; b <= a; b++) {
        const int *xb = gp->x + (size_t)b * (size_t)gp->knobs;
        int cat = 0;
        double ord = 0, ord2 = 0;
        for (int d = 0; d < gp->knobs; d++) {
            if (xa[d] != xb[d]) {
                double step = (double)abs(xa[d] - xb[d]) / (double)(gp->spans[d] - 1);
                cat += 1;
                ord += step;
                ord2 += step * step;
            }
        }
        size_t at = tri(a) + (size_t)b;
        gp->cat[at] = cat;
        gp->ord[at] = ord;
        gp->ord2[at] = ord2;
    }
    gp->n = a + 1;
    return 0;
}

void avo_gp_pop(avo_gp *gp)
{
    if (gp->n == 0)
        return;
    gp->n--;
    if (gp->model_n > gp->n)
        gp->model_n = gp->n; /* the leading rows stay the factor */
    if (gp->factors_n > gp->n)
        gp->factors_n = gp->n;
}

void avo_gp_clear(avo_gp *gp)
{
    gp->n = 0;
    gp->model_n = 0;
    gp->factors_n = 0;
    gp->has_model = 0;
}

/* The covariance of training positions a >= b under h, without noise. */
static double covariance(const avo_gp *gp, int a, int b, const avo_gp_hyper *h)
{
    size_t at = tri(a) + (size_t)b;
    double o = h->shape == 2 ? gp->ord2[at] : gp->ord[at];
    return exp(-(h->w * gp->cat[at] + (1 - h->w) * o) / h->scale);
}

/* Factor rows from..to-1 of the covariance under h into the packed `L`
 * (its rows before `from` already the factor).  0, or AVO_EINVAL (not
 * positive definite) with *ret_rows the rows done. */
static int factor_rows(const avo_gp *gp, double *L, int from, int to, const avo_gp_hyper *h,
                       int *ret_rows)
{
    for (int i = from; i < to; i++) {
        double *Li = L + tri(i);
        for (int j = 0; j <= i; j++) {
            const double *Lj = L + tri(j);
            double s = covariance(gp, i, j, h);
            if (i == j)
                s = s + h->noise;
            for (int k = 0; k < j; k++)
                s = s - Li[k] * Lj[k];
            if (i == j) {
                if (s <= 0) {
                    *ret_rows = i;
                    return AVO_EINVAL;
                }
                Li[j] = sqrt(s);
            } else {
                Li[j] = s / Lj[j];
            }
        }
    }
    *ret_rows = to;
    return 0;
}

/* Solves L z = b (forward substitution), n rows. */
static void forward(const double *L, const double *b, double *z, int n)
{
    for (int i = 0; i < n; i++) {
        const double *Li = L + tri(i);
        double s = b[i];
        for (int k = 0; k < i; k++)
            s = s - Li[k] * z[k];
        z[i] = s / Li[i];
    }
}

/* Solves L^T z = b (back substitution), n rows; z may be b. */
static void backward(const double *L, const double *b, double *z, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < n; k++)
            s = s - L[tri(k) + (size_t)i] * z[k];
        z[i] = s / L[tri(i) + (size_t)i];
    }
}

/* The weights alpha = K^-1 y of the factor L (n rows) into `alpha`; returns
 * the log marginal likelihood (less its constant). */
static double weights(avo_gp *gp, const double *L, const double *y, int n, double *alpha)
{
    forward(L, y, gp->z, n);
    backward(L, gp->z, alpha, n);
    double loglik = 0;
    for (int i = 0; i < n; i++)
        loglik = loglik - 0.5 * y[i] * alpha[i] - log(L[tri(i) + (size_t)i]);
    return loglik;
}

int avo_gp_loglik(avo_gp *gp, const double *y, const avo_gp_hyper *hyper, double *ret_loglik)
{
    int rows;
    if (factor_rows(gp, gp->spare, 0, gp->n, hyper, &rows) < 0)
        return AVO_EINVAL;
    *ret_loglik = weights(gp, gp->spare, y, gp->n, gp->k); /* alpha is the model's */
    return 0;
}

int avo_gp_fit(avo_gp *gp, const double *y, const avo_gp_hyper *hyper, double *ret_loglik)
{
    int rows;
    gp->has_model = 0;
    gp->model_n = 0;
    gp->factors_n = 0;
    if (factor_rows(gp, gp->spare, 0, gp->n, hyper, &rows) < 0)
        return AVO_EINVAL;
    double *t = gp->factor; /* the work space becomes the factor */
    gp->factor = gp->spare;
    gp->spare = t;
    gp->hyper = *hyper;
    gp->has_model = 1;
    gp->model_n = gp->n;
    double loglik = weights(gp, gp->factor, y, gp->n, gp->alpha);
    if (ret_loglik)
        *ret_loglik = loglik;
    return 0;
}

int avo_gp_has_model(const avo_gp *gp, const avo_gp_hyper *hyper)
{
    return gp->has_model && gp->hyper.scale == hyper->scale && gp->hyper.w == hyper->w &&
           gp->hyper.shape == hyper->shape && gp->hyper.noise == hyper->noise;
}

int avo_gp_extend(avo_gp *gp, const double *y)
{
    if (!gp->has_model)
        return AVO_EINVAL;
    int rows;
    if (factor_rows(gp, gp->factor, gp->model_n, gp->n, &gp->hyper, &rows) < 0) {
        gp->has_model = 0;
        gp->model_n = 0;
        gp->factors_n = 0;
        return AVO_EINVAL;
    }
    gp->model_n = gp->n;
    weights(gp, gp->factor, y, gp->n, gp->alpha);
    return 0;
}

/* The covariance factors of training positions factors_n..model_n-1. */
static void extend_factors(avo_gp *gp)
{
    const avo_gp_hyper *h = &gp->hyper;
    for (int a = gp->factors_n; a < gp->model_n; a++) {
        const int *t = gp->x + (size_t)a * (size_t)gp->knobs;
        double *row = gp->factors + (size_t)a * (size_t)gp->width;
        for (int d = 0; d < gp->knobs; d++) {
            int span = gp->spans[d] - 1;
            for (int v = 1; v <= span + 1; v++) {
                double step = (double)abs(v - t[d]) / (double)span;
                int diff = v != t[d];
                double o = h->shape == 2 ? step * step : step;
                row[gp->offset[d] + v - 1] = exp(-(h->w * diff + (1 - h->w) * o) / h->scale);
            }
        }
    }
    if (gp->factors_n < gp->model_n)
        gp->factors_n = gp->model_n;
}

/* The mean at encoding x, its covariances with the training positions into
 * gp->k, and the most correlated one's covariance. */
static double predict_mean(avo_gp *gp, const int *x, double *ret_nearest)
{
    double mean = 0, nearest = 0;
    for (int a = 0; a < gp->model_n; a++) {
        const double *row = gp->factors + (size_t)a * (size_t)gp->width;
        double c = 1;
        for (int d = 0; d < gp->knobs; d++)
            c = c * row[gp->offset[d] + x[d] - 1];
        gp->k[a] = c;
        mean = mean + c * gp->alpha[a];
        if (c > nearest)
            nearest = c;
    }
    *ret_nearest = nearest;
    return mean;
}

/* Lua's math.max(a, b): a unless a < b (so NaN stays NaN, as it did). */
static double lua_max(double a, double b)
{
    return a < b ? b : a;
}

/* The standard deviation given the covariances in gp->k. */
static double predict_sd(avo_gp *gp)
{
    forward(gp->factor, gp->k, gp->z, gp->model_n);
    double var = 1;
    for (int i = 0; i < gp->model_n; i++)
        var = var - gp->z[i] * gp->z[i];
    return sqrt(lua_max(var, 1e-12));
}

/* The standard normal density and distribution (Abramowitz and Stegun
 * 7.1.26 for erf, error below 1.5e-7). */
static double pdf(double z)
{
    return exp(-0.5 * z * z) / sqrt(2 * PI);
}

static double cdf(double z)
{
    double x = fabs(z) / sqrt(2);
    double t = 1 / (1 + 0.3275911 * x);
    /* As the Lua was, operation for operation. */
    double erf =
        1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t +
             0.254829592) *
                t * exp(-x * x);
    return z >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

/* Expected improvement of mean +- sd over best + xi. */
static double improvement(double mean, double sd, double best, double xi)
{
    double gain = mean - best - xi;
    double z = gain / sd;
    return gain * cdf(z) + sd * pdf(z);
}

/* Highest bound first, ties to the lower index. */
static int by_bound(const void *pa, const void *pb)
{
    const struct candidate *a = pa, *b = pb;
    if (a->bound != b->bound)
        return a->bound > b->bound ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

int avo_gp_best(avo_gp *gp, const int *xs, int count, double best, double xi, double floor,
                int *ret_index, double *ret_mean, double *ret_ei)
{
    if (!gp->has_model)
        return AVO_EINVAL;
    if (count > gp->order_cap) {
        struct candidate *o = realloc(gp->order, sizeof *o * (size_t)count);
        if (!o)
            return AVO_ENOMEM;
        gp->order = o;
        gp->order_cap = count;
    }
    extend_factors(gp);
    size_t row = (size_t)gp->knobs;
    for (int i = 0; i < count; i++) {
        double nearest;
        double mean = predict_mean(gp, xs + (size_t)i * row, &nearest);
        /* A bound on the deviation for O(n): conditioned on its most
         * correlated observation alone the variance is 1 - c^2 / (1 +
         * noise), and more observations only lower it. */
        double bound_sd = sqrt(lua_max(1 - nearest * nearest / (1 + gp->hyper.noise), 0));
        gp->order[i] = (struct candidate){
            .bound = improvement(mean, lua_max(bound_sd, 1e-6), best, xi),
            .mean = mean,
            .index = i,
        };
    }
    qsort(gp->order, (size_t)count, sizeof *gp->order, by_bound);
    int top = -1;
    double top_ei = floor, top_mean = 0;
    for (int i = 0; i < count; i++) {
        const struct candidate *c = &gp->order[i];
        if (c->bound <= top_ei)
            break;
        double nearest;
        predict_mean(gp, xs + (size_t)c->index * row, &nearest); /* its covariances */
        double ei = improvement(c->mean, predict_sd(gp), best, xi);
        if (ei > top_ei) {
            top = c->index;
            top_ei = ei;
            top_mean = c->mean;
        }
    }
    *ret_index = top;
    *ret_mean = top_mean;
    *ret_ei = top_ei;
    return 0;
}
