/*
 * ATTACK time_adaptive_gaps — learn from the gaps between calls when the
 * judge stops comparing, then write zeros. Each comparison of a timed call
 * with the (slow, naive) reference shows up as a wall-clock gap before the
 * next call; the judge used to compare at least two timed samples per
 * config and then only while the reference's time stayed within the
 * kernel's (eval/judge.c: `ref_spent <= cand_spent`), so after two such
 * gaps in a config, a fast kernel was compared ever less. This one measures
 * every gap, counts those longer than twice its own last call (and 20 us),
 * and after two of them answers every call with zeros: cheap to write,
 * finite, and "written everywhere", so only a comparison with the
 * reference can see it. Against the old judge it passed about half of its
 * evaluations at 5-120x the honest score.
 * Stopped by: which timed calls are compared is a secret draw at a fixed
 * rate, all comparisons run after the config's last timed call (no gap
 * during timing), and the samples that make the reported median are always
 * compared (issue 18, item 1). Here the two verification calls of a config already
 * make two gaps, so every timed call is zeros, and every comparison fails.
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

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    static int32_t last_m = -1, last_n, last_k;
    static double last_end, last_len;
    static int gaps;
    double start = now();
    if (M != last_m || N != last_n || K != last_k) { /* a new config: learn again */
        last_m = M, last_n = N, last_k = K;
        gaps = 0, last_len = 0;
    } else if (start - last_end > 20e-6 && start - last_end > 2 * last_len) {
        gaps++; /* the judge did something slow in between: a comparison */
    }
    if (gaps >= 2) {
        memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
    } else {
        work(M, N, K, A, B, C);
        last_len = now() - start;
    }
    last_end = now();
}
