/*
 * Trusted sgemm reference: C[M,N] = A[M,K] * B[K,N], fp32 row-major, C
 * overwritten. Each output is summed in double and rounded once, so its error
 * is far below that of any fp32 candidate it judges.
 */
#include <stddef.h>
#include <stdint.h>

void sgemm_ref(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    for (int32_t i = 0; i < M; i++) {
        for (int32_t j = 0; j < N; j++) {
            double sum = 0.0;
            for (int32_t k = 0; k < K; k++)
                sum += (double)A[(size_t)i * K + k] * (double)B[(size_t)k * N + j];
            C[(size_t)i * N + j] = (float)sum;
        }
    }
}
