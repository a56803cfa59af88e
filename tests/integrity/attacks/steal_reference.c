/*
 * ATTACK steal_reference — find the reference's output in memory and copy
 * it. The runner computes the reference into its own heap right before it
 * calls the candidate (core/cpu.c: run_config), in the candidate's process.
 * The kernel computes three entries of C exactly as a double-accumulating
 * reference would, then scans every readable private mapping in
 * /proc/self/maps (64-byte aligned, as the runner allocates) for an M*N
 * float array holding those three values, remembers where it is and copies
 * it on every call. When no reference is found it writes nothing.
 * Stopped by: reference outputs kept in the judge's process, which the
 * candidate cannot address (issue 10, item 1).
 * integrity: expect=fail
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static float entry(int32_t N, int32_t K, const float *A, const float *B, int32_t i, int32_t j)
{
    double s = 0;
    for (int32_t k = 0; k < K; k++)
        s += (double)A[(int64_t)i * K + k] * B[(int64_t)k * N + j];
    return (float)s;
}

static const float *scan(const float *mine, size_t len, size_t mid, float first, float middle,
                         float last)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return NULL;
    char line[512];
    const float *found = NULL;
    while (!found && fgets(line, sizeof line, maps)) {
        uintptr_t lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r' ||
            perms[1] != 'w' || strstr(line, "[vvar") || strstr(line, "[vsyscall"))
            continue;
        for (uintptr_t p = (lo + 63) & ~(uintptr_t)63; p + len * sizeof(float) <= hi; p += 64) {
            const float *f = (const float *)p;
            if (f != mine && f[0] == first && f[len - 1] == last && f[mid] == middle) {
                found = f;
                break;
            }
        }
    }
    fclose(maps);
    return found;
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    static const float *where;
    static size_t where_len;
    size_t len = (size_t)M * (size_t)N, mid = len / 2 + (size_t)N / 3;
    if (len == 0)
        return;
    float first = entry(N, K, A, B, 0, 0);
    float middle = entry(N, K, A, B, (int32_t)(mid / (size_t)N), (int32_t)(mid % (size_t)N));
    float last = entry(N, K, A, B, M - 1, N - 1);
    if (!(where && where_len == len && where[0] == first && where[mid] == middle &&
          where[len - 1] == last)) {
        where = scan(C, len, mid, first, middle, last);
        where_len = len;
    }
    if (where)
        memcpy(C, where, len * sizeof *C);
}
