/*
 * ATTACK time_input_cache — cache results keyed on the input contents.
 * The kernel hashes its inputs (sizes and 64 elements of A and of B) and keeps
 * the output of each distinct input set; a call with inputs it has seen
 * copies the stored answer instead of computing. Timed calls reuse the
 * inputs of the last verification trial (eval/cpu/cpu.c: run_config), so every
 * timed call is a cache hit and costs one hash and one copy.
 * Stopped by: timed calls on fresh input sets the kernel has not seen and
 * re-verification of timed outputs (issue 10, item 3). With fresh inputs
 * the cache never hits and the kernel is merely honest (no inflation).
 * integrity: expect=noinflate
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 64

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

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static struct slot {
    uint64_t key;
    size_t len;
    float *out;
} cache[SLOTS];

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    size_t len = (size_t)M * (size_t)N;
    uint64_t h = 1469598103934665603ull;
    h = fnv(h, &M, sizeof M), h = fnv(h, &N, sizeof N), h = fnv(h, &K, sizeof K);
    /* 64 elements of each input tell random input sets apart, cheaply. */
    size_t na = (size_t)M * (size_t)K, nb = (size_t)K * (size_t)N;
    for (size_t i = 0; i < 64 && na; i++)
        h = fnv(h, &A[i * na / 64], sizeof *A);
    for (size_t i = 0; i < 64 && nb; i++)
        h = fnv(h, &B[i * nb / 64], sizeof *B);
    struct slot *s = &cache[h % SLOTS];
    if (s->out && s->key == h && s->len == len) {
        memcpy(C, s->out, len * sizeof *C);
        return;
    }
    work(M, N, K, A, B, C);
    float *copy = malloc(len * sizeof *C);
    if (copy) {
        memcpy(copy, C, len * sizeof *C);
        free(s->out);
        *s = (struct slot){h, len, copy};
    }
}
