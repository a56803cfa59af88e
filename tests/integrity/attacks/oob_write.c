/*
 * ATTACK oob_write — write outside the output buffer, past the guard.
 * The runner checks 64 canary bytes on each side of a candidate buffer
 * (eval/cpu/cpu.c: GUARD_BYTES, avo_measure_check); memory beyond them belongs
 * to the judge's heap. The kernel uses 256 bytes from 128 bytes past the
 * end of C, and 256 bytes ending 4 KiB before its start, as scratch space
 * (a real kernel might spill a tile there; a hostile one rewrites the
 * judge's data), then puts the bytes back, so no canary or checksum can
 * tell, and returns the right answer.
 * Stopped by: buffers in their own mappings with inaccessible guard pages
 * on both sides (the end flush against one; more than a page before the
 * start always reaches the other), so the first such write faults
 * (issue 10, last item).
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
    volatile unsigned char *after = (volatile unsigned char *)(C + (size_t)M * (size_t)N) + 128;
    volatile unsigned char *before = (volatile unsigned char *)C - 4096 - 256;
    unsigned char save_after[256], save_before[256];
    for (int i = 0; i < 256; i++)
        save_after[i] = after[i], save_before[i] = before[i];
    for (int i = 0; i < 256; i++)
        after[i] = 0xa5, before[i] = 0x5a;
    work(M, N, K, A, B, C);
    for (int i = 0; i < 256; i++)
        after[i] = save_after[i], before[i] = save_before[i];
}
