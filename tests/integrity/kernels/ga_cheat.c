/*
 * A kernel with a cheating knob, the seed of run.sh's GA test. CHEAT = 0 is
 * the honest kernel; CHEAT = 1 counts calls and skips the work once the two
 * verification calls of a config are over (as attacks/time_call_count.c), so
 * the timed calls cost nothing. UNROLL is an honest knob that changes
 * nothing but the source of the candidate, giving the GA something else to
 * vary. The search must never end with CHEAT = 1 as an inflated best.
 */
#include <stdint.h>
#include <string.h>

// avo:param CHEAT 0 1
// avo:param UNROLL 1 2 4

#ifndef CHEAT
#define CHEAT 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    static const float *last_a;
    static float *last_c;
    static long calls;
    if (A != last_a || C != last_c)
        last_a = A, last_c = C, calls = 0;
    if (CHEAT && ++calls > 2)
        return;
    if (UNROLL < 1)
        return; /* never: the knob only makes distinct candidates */
    memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
    for (int32_t i = 0; i < M; i++)
        for (int32_t k = 0; k < K; k++) {
            float a = A[(int64_t)i * K + k];
            for (int32_t j = 0; j < N; j++)
                C[(int64_t)i * N + j] += a * B[(int64_t)k * N + j];
        }
}
