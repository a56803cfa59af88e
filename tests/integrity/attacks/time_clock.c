/*
 * ATTACK time_clock — tell timed calls from checked ones by the clock.
 * Between two verification calls the runner fills inputs, runs the
 * reference and compares (tens of microseconds at least); timed calls come
 * back to back. A call that starts within a few microseconds of the end of
 * the previous one, on the same buffers, returns at once: the output still
 * holds the last honest answer (eval/cpu/cpu.c: time_batch, run_config).
 * Stopped by: timed calls on fresh inputs with poisoned outputs, outputs of
 * timed runs re-verified (issue 10, item 3).
 * integrity: expect=noinflate
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
    static double last_end;
    static const float *last_a;
    static float *last_c;
    double start = now();
    if (A == last_a && C == last_c && start - last_end < 3e-6) {
        last_end = now();
        return; /* back to back on the same buffers: a timing loop */
    }
    work(M, N, K, A, B, C);
    last_a = A, last_c = C;
    last_end = now();
}
