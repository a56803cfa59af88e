/*
 * Trusted sgemm reference for the large configs of cpu/sgemm_fast: C[M,N] =
 * A[M,K] * B[K,N], fp32 row-major, C overwritten.
 *
 * The same sums as kernels/cpu/sgemm_ref.c (each output accumulated in
 * double over k in order, rounded once), in i-k-j order: a row of double
 * accumulators is swept with unit stride, so it vectorises and a 1024^3
 * check takes a fraction of a second instead of seconds. A float product is
 * exact in double, so contracting to FMA changes no result.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

void sgemm_fast_ref(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    double *row = malloc((size_t)(N > 0 ? N : 1) * sizeof *row);
    if (!row)
        abort(); /* the judge reports the reference as broken, never a guess */
    for (int32_t i = 0; i < M; i++) {
        for (int32_t j = 0; j < N; j++)
            row[j] = 0.0;
        for (int32_t k = 0; k < K; k++) {
            double a = (double)A[(size_t)i * K + k];
            const float *b = B + (size_t)k * N;
            for (int32_t j = 0; j < N; j++)
                row[j] += a * (double)b[j];
        }
        for (int32_t j = 0; j < N; j++)
            C[(size_t)i * N + j] = (float)row[j];
    }
    free(row);
}
