/*
 * ATTACK sparse_file — fill the disk. The runner has no RLIMIT_FSIZE
 * (eval/cpu/cpu.c: sandbox_limits), so the kernel creates a 100 GB sparse file
 * (and writes one byte at its end) wherever it can write: its working
 * directory, $TMPDIR, /tmp and /dev/shm are the usual places; here only
 * those under the test's scratch root are used. Then it computes honestly.
 * Stopped by: RLIMIT_FSIZE and a private scratch directory in the
 * candidate's own mount view (issue 10, item 2).
 * integrity: expect=any
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef INTEGRITY_ROOT
#define INTEGRITY_ROOT "/nonexistent-integrity-root"
#endif

/* A step that worked is reported on stdout and stderr with this marker, and
 * the kernel then fails on purpose, so its output is kept as the log: the
 * test sees the escape even where it cannot see the effect (a private
 * mount view, a namespace). */
static int escapes;
static void escaped(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("INTEGRITY-ESCAPE: %s\n", line);
    fprintf(stderr, "INTEGRITY-ESCAPE: %s\n", line);
    fflush(stdout);
    escapes++;
}

static int in_root(const char *path)
{
    char real[PATH_MAX];
    const char *p = realpath(path, real) ? real : path;
    size_t n = strlen(INTEGRITY_ROOT);
    return strncmp(p, INTEGRITY_ROOT, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

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

static void fill(const char *dir, int anywhere)
{
    char path[PATH_MAX + 32];
    if (!dir || (!anywhere && !in_root(dir)))
        return;
    snprintf(path, sizeof path, "%s/integrity-sparse.bin", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (pwrite(fd, "x", 1, (off_t)100 << 30) == 1)
        escaped("wrote a 100 GB sparse file %s", path);
    close(fd);
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    static int done;
    if (!done++) {
        signal(SIGXFSZ, SIG_IGN); /* a limit then fails the write instead of killing us */
        fill(".", 1);             /* the directory the engine gave us, wherever it is */
        fill(getenv("TMPDIR"), 0);
        fill("/tmp", 0);
        fill("/dev/shm", 0);
        fill(INTEGRITY_ROOT, 0);
        if (escapes)
            abort();
    }
    work(M, N, K, A, B, C);
}
