/*
 * ATTACK time_call_count — count calls and skip the work once verification
 * is over. Verification makes `trials` (2) calls per config on fresh
 * inputs; timing then calls back-to-back on the inputs of the last trial,
 * with the output left as it was (eval/cpu/cpu.c: run_config, time_batch), and
 * re-checks only the last output. So after the second call with the same
 * sizes and pointers the kernel returns at once: C still holds the right
 * answer from the last honest call.
 * Stopped by: timed calls on input sets the kernel has not seen, outputs
 * poisoned before each and re-verified (issue 10, item 3).
 * integrity: expect=noinflate
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
    static int32_t last_m = -1, last_n = -1, last_k = -1;
    static const float *last_a;
    static float *last_c;
    static long calls;
    if (M != last_m || N != last_n || K != last_k || A != last_a || C != last_c) {
        last_m = M, last_n = N, last_k = K, last_a = A, last_c = C;
        calls = 0;
    }
    if (++calls > 2)
        return; /* verification is over: the timed calls get nothing done */
    work(M, N, K, A, B, C);
}
