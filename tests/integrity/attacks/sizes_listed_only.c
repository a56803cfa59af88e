/*
 * ATTACK sizes_listed_only — correct only at the sizes the evaluator lists.
 * Only the configured sizes are ever verified (eval/cpu/cpu.c: run_config runs
 * spec->configs and nothing else), so a kernel specialised to them (here:
 * it recognises them, and does nothing at any other size, standing in for
 * dropped remainder code or hard-coded strides) passes as correct.
 * Stopped by: extra verification at sizes outside the listed configs
 * (issue 10, item 3; an evaluator can give a size generator).
 * integrity: expect=fail
 */
#include <stdint.h>
#include <string.h>

static void work(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
    for (int32_t i = 0; i < M; i++)
        for (int32_t k = 0; k < K; k++) {
            float a = A[(int64_t)i * K + k];
            for (int32_t j = 0; j < N; j++)
                C[(int64_t)i * N + j] += a * B[(int64_t)k * N + j];
        }
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    int listed = (M == 96 && N == 96 && K == 96) || (M == 37 && N == 53 && K == 29);
    if (listed)
        work(M, N, K, A, B, C);
}
