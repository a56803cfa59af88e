/*
 * softmax seed kernel: Y[r,:] = exp(X[r,:] - max X[r,:]) / sum exp(X[r,:] - max X[r,:])
 * for every row r of a row-major fp32 [rows, cols] matrix. Subtracting the row
 * maximum keeps exp from overflowing for any finite input.
 *
 * The seed (first value of every knob) is the textbook version: three passes,
 * exp computed twice per element by libm, one serial accumulator, a division
 * per output. Every combination of knob values is correct for every size.
 *
 * Knobs:
 *   ALGO  0 = three passes: max; sum of exp; y = exp(x - max) / sum
 *             (two exp per element, X read three times).
 *         1 = three passes, exp stored: max; y = exp(x - max) and sum; y /= sum
 *             (one exp per element; the last pass re-reads Y from cache).
 *         2 = two passes, online: running max and sum in one pass, the sum
 *             rescaled by exp(old max - new max) as the max grows; then
 *             y = exp(x - max) / sum (three exp per element, X read twice).
 *   EXP   0 = expf from libm (a call per element: the loops cannot vectorise);
 *         1 = inline polynomial exp (Cephes, ~2 ulp), vectorisable.
 *   ACC   independent max/sum accumulators per row (1 = serial). Without
 *         -ffast-math the compiler may not reorder a float reduction itself,
 *         so lanes are what lets the reductions vectorise.
 *   NORM  0 = divide each output by the sum; 1 = multiply by 1/sum.
 *
 * EXP 0 calls expf from libm: link with -lm (EXP 1 needs no libm).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

// avo:param ALGO 0 1 2
// avo:param EXP 0 1
// avo:param ACC 1 4 8 16
// avo:param NORM 0 1

#ifndef ALGO
#define ALGO 0
#endif
#ifndef EXP
#define EXP 0
#endif
#ifndef ACC
#define ACC 1
#endif
#ifndef NORM
#define NORM 0
#endif

/* Upper bound of ACC; sizes the lane arrays. */
#define MAX_ACC 16

/*
 * exp(x) for finite x, relative error ~2 ulp. Below -87 it returns 0: the
 * true value is under 1.7e-38, below any tolerance on a softmax output, and
 * flushing keeps denormals (slow on x86) out of the sums and outputs. Above
 * 88 it saturates at exp(88); softmax only calls it with x <= 0.
 */
static inline float exp_poly(float x)
{
    float xc = x < -87.0f ? -87.0f : x;
    xc = xc > 88.0f ? 88.0f : xc;
    /* n = round(x / ln2). rintf is inlined (vroundps); a float-to-int
       conversion of the clamped value here makes GCC 12 split the loop body
       into branches and give up vectorising. */
    float n = rintf(xc * 1.44269504088896341f);
    /* r = x - n*ln2 in two steps (ln2 = C1 - C2, C1 exact in few bits). */
    float r = xc - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    uint32_t bits = (uint32_t)((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    float result = p * scale; /* computed unconditionally, so the select below vectorises */
    return x < -87.0f ? 0.0f : result;
}

static inline float exp_knob(float x)
{
    return EXP == 1 ? exp_poly(x) : expf(x);
}

static inline float max2(float a, float b)
{
    return a > b ? a : b;
}

static float row_max(int cols, const float *restrict x)
{
    float lane[MAX_ACC];
    for (int l = 0; l < ACC; l++)
        lane[l] = -INFINITY;
    int j = 0;
    for (; j + ACC <= cols; j += ACC)
        for (int l = 0; l < ACC; l++)
            lane[l] = max2(lane[l], x[j + l]);
    for (; j < cols; j++)
        lane[0] = max2(lane[0], x[j]);
    float m = lane[0];
    for (int l = 1; l < ACC; l++)
        m = max2(m, lane[l]);
    return m;
}

/*
 * Sum of exp(x - m); with ALGO 1 the exponentials are also written to y. (A
 * constant, not a parameter: a conditional store stops the vectoriser.)
 */
static float row_exp_sum(int cols, const float *restrict x, float m, float *restrict y)
{
    float lane[MAX_ACC];
    for (int l = 0; l < ACC; l++)
        lane[l] = 0.0f;
    int j = 0;
    for (; j + ACC <= cols; j += ACC) {
        for (int l = 0; l < ACC; l++) {
            float e = exp_knob(x[j + l] - m);
            if (ALGO == 1)
                y[j + l] = e;
            lane[l] += e;
        }
    }
    for (; j < cols; j++) {
        float e = exp_knob(x[j] - m);
        if (ALGO == 1)
            y[j] = e;
        lane[0] += e;
    }
    float s = 0.0f;
    for (int l = 0; l < ACC; l++)
        s += lane[l];
    return s;
}

/*
 * One pass for the max and the sum: each lane keeps its own running max and
 * a sum relative to it; lanes are merged at the end.
 */
static void row_online(int cols, const float *restrict x, float *ret_max, float *ret_sum)
{
    float lane_max[MAX_ACC], lane_sum[MAX_ACC];
    for (int l = 0; l < ACC; l++) {
        lane_max[l] = -INFINITY;
        lane_sum[l] = 0.0f;
    }
    int j = 0;
    for (; j + ACC <= cols; j += ACC) {
        for (int l = 0; l < ACC; l++) {
            float v = x[j + l];
            float mnew = max2(lane_max[l], v);
            lane_sum[l] = lane_sum[l] * exp_knob(lane_max[l] - mnew) + exp_knob(v - mnew);
            lane_max[l] = mnew;
        }
    }
    for (; j < cols; j++) {
        float v = x[j];
        float mnew = max2(lane_max[0], v);
        lane_sum[0] = lane_sum[0] * exp_knob(lane_max[0] - mnew) + exp_knob(v - mnew);
        lane_max[0] = mnew;
    }
    float m = lane_max[0];
    for (int l = 1; l < ACC; l++)
        m = max2(m, lane_max[l]);
    float s = 0.0f;
    for (int l = 0; l < ACC; l++) /* a lane that saw no element has sum 0 */
        if (lane_sum[l] > 0.0f)
            s += lane_sum[l] * exp_knob(lane_max[l] - m);
    *ret_max = m;
    *ret_sum = s;
}

void softmax(int32_t rows, int32_t cols, const float *X, float *Y)
{
    for (int32_t r = 0; r < rows; r++) {
        const float *restrict x = X + (size_t)r * cols;
        float *restrict y = Y + (size_t)r * cols;
        float m, s;
        if (ALGO == 1) {
            m = row_max(cols, x);
            s = row_exp_sum(cols, x, m, y);
            float inv = 1.0f / s;
            if (NORM == 1)
                for (int j = 0; j < cols; j++)
                    y[j] *= inv;
            else
                for (int j = 0; j < cols; j++)
                    y[j] /= s;
            continue;
        }
        if (ALGO == 2) {
            row_online(cols, x, &m, &s);
        } else {
            m = row_max(cols, x);
            s = row_exp_sum(cols, x, m, y);
        }
        float inv = 1.0f / s;
        if (NORM == 1)
            for (int j = 0; j < cols; j++)
                y[j] = exp_knob(x[j] - m) * inv;
        else
            for (int j = 0; j < cols; j++)
                y[j] = exp_knob(x[j] - m) / s;
    }
}
