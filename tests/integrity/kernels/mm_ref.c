/* Trusted reference of the integrity workload: C = A*B, summed in double. */
#include <stdint.h>
void mm_ref(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    for (int32_t i = 0; i < M; i++)
        for (int32_t j = 0; j < N; j++) {
            double s = 0;
            for (int32_t k = 0; k < K; k++)
                s += (double)A[(int64_t)i * K + k] * B[(int64_t)k * N + j];
            C[(int64_t)i * N + j] = (float)s;
        }
}
