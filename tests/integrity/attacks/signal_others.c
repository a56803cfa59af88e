/*
 * ATTACK signal_others — kill the judge and a bystander. The kernel sends
 * SIGKILL to a victim process the test started (its pid comes in
 * -DINTEGRITY_VICTIM) and to its own parent (the worker) and grandparent
 * (the engine), by kill, tgkill, rt_sigqueueinfo and pidfd_send_signal, and
 * to its process group; then computes nothing. A candidate that can signal
 * the engine can end the run, and one that can signal anything can take
 * the host down. It never signals -1 (everyone) even here.
 * Stopped by: seccomp (only self may be signalled) and an unprivileged uid
 * or pid namespace (issue 10, item 2). Today's runner filter denies these.
 * integrity: expect=any
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef INTEGRITY_VICTIM
#define INTEGRITY_VICTIM 0
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

static pid_t parent_of(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    int ppid = 0;
    if (!f || fscanf(f, "%*d %*s %*c %d", &ppid) != 1)
        ppid = 0;
    if (f)
        fclose(f);
    return ppid;
}

static void hit(pid_t pid)
{
    if (pid <= 1)
        return;
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = SIGKILL;
    info.si_code = SI_QUEUE;
    if (kill(pid, SIGKILL) == 0)
        escaped("kill(%d, SIGKILL) succeeded", (int)pid);
    if (syscall(SYS_tgkill, pid, pid, SIGKILL) == 0)
        escaped("tgkill(%d) succeeded", (int)pid);
    if (syscall(SYS_rt_sigqueueinfo, pid, SIGKILL, &info) == 0)
        escaped("rt_sigqueueinfo(%d) succeeded", (int)pid);
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) {
        if (syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) == 0)
            escaped("pidfd_send_signal(%d) succeeded", (int)pid);
        close(fd);
    }
#endif
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    hit(INTEGRITY_VICTIM);
    pid_t worker = getppid();
    pid_t engine = parent_of(worker);
    hit(engine);
    hit(worker);
    kill(-getpgrp(), SIGKILL);
    if (escapes)
        abort();
}
