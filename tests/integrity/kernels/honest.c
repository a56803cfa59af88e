/*
 * The honest kernel of the integrity suite: the same ikj loop every attack
 * uses for its real work, so an attack's score over this one's measures
 * what its cheat gained. Its score is the baseline of run.sh.
 */
#include <stdint.h>
#include <string.h>
void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
    for (int32_t i = 0; i < M; i++)
        for (int32_t k = 0; k < K; k++) {
            float a = A[(int64_t)i * K + k];
            for (int32_t j = 0; j < N; j++)
                C[(int64_t)i * N + j] += a * B[(int64_t)k * N + j];
        }
}
