/*
 * ATTACK time_fraction_clock — cheat on most calls, chosen by the clock.
 * After the two verification calls of a config, a call whose start falls
 * in three of every four microseconds (CLOCK_MONOTONIC) writes zeros, the
 * others do the work: no pattern in the call count that a judge could
 * learn. It would score about 4x the honest kernel.
 * Stopped by: one call of every timed sample, drawn in secret after the
 * calls, is kept, and at least 3 of them (the median's always) are compared
 * with the reference after the config's timed calls (issue 18, item 1);
 * nothing the clock tells the kernel predicts the draw. A compared call is
 * wrong with probability about 3/4.
 * On a busy machine a gap may come early (scheduling), and it cheats in the
 * verification trials instead, caught there ("exceeds tolerance").
 * integrity: expect=fail status=wrong reason=output of timed runs differs from reference|exceeds tolerance
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <time.h>

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
    static int32_t last_m = -1, last_n, last_k;
    static long calls;
    if (M != last_m || N != last_n || K != last_k)
        last_m = M, last_n = N, last_k = K, calls = 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (++calls > 2 && (ts.tv_nsec / 1000) % 4 != 0) {
        memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
        return;
    }
    work(M, N, K, A, B, C);
}
