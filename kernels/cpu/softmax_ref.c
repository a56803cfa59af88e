/*
 * Trusted softmax reference: each row of a row-major fp32 [rows, cols] matrix
 * becomes exp(x - max) / sum exp(x - max), computed in double and rounded
 * once, so its error is far below that of any fp32 candidate. Needs -lm.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

void softmax_ref(int32_t rows, int32_t cols, const float *X, float *Y)
{
    for (int32_t r = 0; r < rows; r++) {
        const float *x = X + (size_t)r * cols;
        float *y = Y + (size_t)r * cols;
        double m = -INFINITY;
        for (int32_t j = 0; j < cols; j++)
            m = x[j] > m ? x[j] : m;
        double s = 0.0;
        for (int32_t j = 0; j < cols; j++)
            s += exp((double)x[j] - m);
        for (int32_t j = 0; j < cols; j++)
            y[j] = (float)(exp((double)x[j] - m) / s);
    }
}
