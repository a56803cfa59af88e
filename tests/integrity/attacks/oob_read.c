/*
 * ATTACK oob_read — read outside the inputs. The kernel reads 4 KiB before
 * A and 4 KiB past the end of B (the judge's heap: other buffers, the
 * reference's data) and folds what it read into a value it keeps, then
 * computes the right answer. Nothing in the runner notices reads
 * (eval/cpu/cpu.c: buffers come from posix_memalign on the runner's heap).
 * Stopped by: inputs in shared memory bordered by inaccessible guard pages,
 * with nothing of the judge's mapped in the candidate (issue 10, items 1
 * and the last one).
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

volatile unsigned long integrity_sink;

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    const volatile unsigned char *before = (const volatile unsigned char *)A - 4096;
    const volatile unsigned char *after =
        (const volatile unsigned char *)(B + (size_t)K * (size_t)N) + 64;
    unsigned long sum = 0;
    for (int i = 0; i < 4096; i++)
        sum += before[i] + after[i];
    integrity_sink += sum;
    work(M, N, K, A, B, C);
}
