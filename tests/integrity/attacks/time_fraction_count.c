/*
 * ATTACK time_fraction_count — cheat on most calls, chosen by call count.
 * The first two calls of each config (verification) are honest; after
 * them, three calls in four write zeros (finite, every element written) and
 * one in four does the work. A judge that compares a fixed, small number of
 * timed calls misses it often; this one would score about 4x the honest
 * kernel.
 * Stopped by: of every timed sample one call, drawn in secret after the
 * calls, is kept; after the config's timed calls the median's samples and
 * a secret share of the others, at least timing.min_checks (3), are
 * compared with the reference (issue 18, item 1). A compared call is wrong
 * with probability 3/4, so a config with k compared samples passes with
 * probability 4^-k (k >= 3 here; two configs).
 * integrity: expect=fail status=wrong reason=output of timed runs differs from reference
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
    static int32_t last_m = -1, last_n, last_k;
    static long calls;
    if (M != last_m || N != last_n || K != last_k)
        last_m = M, last_n = N, last_k = K, calls = 0;
    if (++calls > 2 && calls % 4 != 0) {
        memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
        return;
    }
    work(M, N, K, A, B, C);
}
