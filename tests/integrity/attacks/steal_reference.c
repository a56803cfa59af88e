/*
 * ATTACK steal_reference — find the reference's output in memory and copy
 * it. The runner computes the reference into its own heap right before it
 * calls the candidate (eval/cpu/cpu.c: run_config), in the candidate's process.
 * The kernel computes three entries of C exactly as a double-accumulating
 * reference would, then scans every readable private mapping in
 * /proc/self/maps (64-byte aligned, as the runner allocates) for an M*N
 * float array holding those three values, remembers where it is and copies
 * it on every call. Should the reference live in another process (a judge
 * apart from the candidate), it searches each ancestor's writable mappings
 * the same way through /proc/PID/maps and /proc/PID/mem (read only) and
 * copies from there. When no reference is found it writes nothing.
 * Stopped by: reference outputs kept in the judge's process, which the
 * candidate can neither address nor read through /proc (issue 10, items 1
 * and 2).
 * integrity: expect=fail
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Ancestors are walked only below the test's driver (its pid comes in
 * -DINTEGRITY_DRIVER), so nothing outside the test is ever read or touched;
 * without it, at most the three nearest (judge, worker, engine). */
#ifndef INTEGRITY_DRIVER
#define INTEGRITY_DRIVER 0
#endif
#define ANCESTOR_OK(pid, depth)                                                                    \
    ((pid) > 1 && (pid) != INTEGRITY_DRIVER && (depth) < (INTEGRITY_DRIVER ? 8 : 3))

#define MAX_REGION (256u << 20) /* larger mappings are not the judge's heap */

static float entry(int32_t N, int32_t K, const float *A, const float *B, int32_t i, int32_t j)
{
    double s = 0;
    for (int32_t k = 0; k < K; k++)
        s += (double)A[(int64_t)i * K + k] * B[(int64_t)k * N + j];
    return (float)s;
}

/* The three probe values and where the reference was found. */
struct probe {
    size_t len, mid;
    float first, middle, last;
};

static int matches(const float *f, const struct probe *p)
{
    return f[0] == p->first && f[p->len - 1] == p->last && f[p->mid] == p->middle;
}

/* Search the rw mappings of `pid` (0: ourselves) for the reference; returns
 * its address there, or 0. `mine` (our own output) is skipped. */
static uintptr_t scan(pid_t pid, int mem, const float *mine, const struct probe *p)
{
    char path[64], line[512];
    if (pid)
        snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    else
        snprintf(path, sizeof path, "/proc/self/maps");
    FILE *maps = fopen(path, "r");
    if (!maps)
        return 0;
    uintptr_t found = 0;
    size_t bytes = p->len * sizeof(float);
    while (!found && fgets(line, sizeof line, maps)) {
        uintptr_t lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r' ||
            perms[1] != 'w' || strstr(line, "[vvar") || strstr(line, "[vsyscall") ||
            hi - lo > MAX_REGION)
            continue;
        const unsigned char *base = (const unsigned char *)lo;
        unsigned char *copy = NULL;
        if (pid) { /* another process: read the mapping through its mem file */
            copy = malloc(hi - lo);
            if (!copy || pread(mem, copy, hi - lo, (off_t)lo) != (ssize_t)(hi - lo)) {
                free(copy);
                continue;
            }
            base = copy;
        }
        for (uintptr_t a = (lo + 63) & ~(uintptr_t)63; a + bytes <= hi; a += 64) {
            const float *f = (const float *)(base + (a - lo));
            if ((pid || f != mine) && matches(f, p)) {
                found = a;
                break;
            }
        }
        free(copy);
    }
    fclose(maps);
    return found;
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    static uintptr_t where;
    static int where_mem = -1; /* -1: in our own memory, else a /proc/PID/mem fd */
    static size_t where_len;
    struct probe p = {.len = (size_t)M * (size_t)N};
    if (p.len == 0)
        return;
    p.mid = p.len / 2 + (size_t)N / 3;
    p.first = entry(N, K, A, B, 0, 0);
    p.middle = entry(N, K, A, B, (int32_t)(p.mid / (size_t)N), (int32_t)(p.mid % (size_t)N));
    p.last = entry(N, K, A, B, M - 1, N - 1);
    size_t bytes = p.len * sizeof(float);

    if (where && where_len == p.len) { /* still there, and for these inputs? */
        if (where_mem < 0 && matches((const float *)where, &p)) {
            memcpy(C, (const void *)where, bytes);
            return;
        }
        if (where_mem >= 0 && pread(where_mem, C, bytes, (off_t)where) == (ssize_t)bytes &&
            matches(C, &p))
            return;
    }
    if (where_mem >= 0)
        close(where_mem);
    where = 0, where_mem = -1, where_len = p.len;
    if ((where = scan(0, -1, C, &p))) {
        memcpy(C, (const void *)where, bytes);
        return;
    }
    for (pid_t pid = getppid(), depth = 0; ANCESTOR_OK(pid, depth); depth++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
        int mem = open(path, O_RDONLY | O_CLOEXEC);
        if (mem >= 0 && (where = scan(pid, mem, C, &p)) &&
            pread(mem, C, bytes, (off_t)where) == (ssize_t)bytes) {
            where_mem = mem;
            return;
        }
        if (mem >= 0)
            close(mem);
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        int ppid = 0;
        if (!f || fscanf(f, "%*d %*s %*c %d", &ppid) != 1)
            ppid = 0;
        if (f)
            fclose(f);
        pid = ppid;
    }
    where = 0;
}
