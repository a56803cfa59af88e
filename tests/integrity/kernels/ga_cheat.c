/*
 * A kernel with cheating knobs, the seed of run.sh's GA test. CHEAT = 0 and
 * ADAPT = 0 is the honest kernel. CHEAT = 1 counts calls and skips the work
 * once the two verification calls of a config are over (as
 * attacks/time_call_count.c), so the timed calls cost nothing. ADAPT = 1 is
 * the adaptive cheat of attacks/time_adaptive_gaps.c: it measures the
 * wall-clock gaps between its calls, takes two long ones for the judge's
 * comparisons with the reference, and then writes zeros on every call.
 * UNROLL is an honest knob that changes nothing but the source of the
 * candidate, giving the GA something else to vary. No candidate with
 * CHEAT = 1 or ADAPT = 1 may ever be ok, nor be ranked by avo rebench.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <time.h>

// avo:param CHEAT 0 1
// avo:param ADAPT 0 1
// avo:param UNROLL 1 2 4

#ifndef CHEAT
#define CHEAT 0
#endif
#ifndef ADAPT
#define ADAPT 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    static const float *last_a;
    static float *last_c;
    static long calls;
    static int32_t last_m = -1, last_n, last_k;
    static double last_end, last_len;
    static int gaps;
    if (A != last_a || C != last_c)
        last_a = A, last_c = C, calls = 0;
    if (CHEAT && ++calls > 2)
        return;
    double start = now();
    if (M != last_m || N != last_n || K != last_k)
        last_m = M, last_n = N, last_k = K, gaps = 0, last_len = 0;
    else if (start - last_end > 20e-6 && start - last_end > 2 * last_len)
        gaps++;
    if (ADAPT && gaps >= 2) {
        memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
        last_end = now();
        return;
    }
    if (UNROLL < 1)
        return; /* never: the knob only makes distinct candidates */
    memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
    for (int32_t i = 0; i < M; i++)
        for (int32_t k = 0; k < K; k++) {
            float a = A[(int64_t)i * K + k];
            for (int32_t j = 0; j < N; j++)
                C[(int64_t)i * N + j] += a * B[(int64_t)k * N + j];
        }
    last_end = now();
    last_len = last_end - start;
}
