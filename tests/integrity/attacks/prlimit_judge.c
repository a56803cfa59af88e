/*
 * ATTACK prlimit_judge — reach other processes without a signal. Started
 * as nobody, the candidate shares its uid with its judge, worker and
 * engine (and, before issue 18, started as root, with every other
 * candidate): prlimit64 can lower their limits (the judge then dies of
 * SIGXCPU or cannot open a file, which used to make an infrastructure
 * fault), sched_setaffinity / setpriority / ioprio_set can starve them,
 * kcmp compares their files, pidfd_open + pidfd_send_signal and
 * pidfd_getfd signal them or steal their descriptors, move_pages and
 * get_robust_list probe their memory. The kernel tries each on its judge
 * (the parent), the test's victim and the pids next to its own, reports
 * every call the kernel accepted, and computes honestly.
 * Stopped by: seccomp (those calls with a pid other than 0 refused,
 * setpriority, ioprio_set, kcmp and pidfd_* refused outright) and, started
 * as root, a uid of its own (issue 18, item 3).
 * integrity: expect=any
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("INTEGRITY-ESCAPE: %s\n", line);
    fprintf(stderr, "INTEGRITY-ESCAPE: %s\n", line);
    fflush(stdout);
    escapes++;
}

static void try_pid(pid_t pid)
{
    if (pid <= 1 || pid == getpid() || pid == INTEGRITY_DRIVER)
        return;
    struct rlimit old;
    /* Reading is harmless; writing back the same value proves the write. */
    if (syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, NULL, &old) == 0 &&
        syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, &old, NULL) == 0)
        escaped("prlimit64 on pid %d accepted", (int)pid);
    cpu_set_t set;
    if (sched_getaffinity(pid, sizeof set, &set) == 0 &&
        sched_setaffinity(pid, sizeof set, &set) == 0)
        escaped("sched_setaffinity on pid %d accepted", (int)pid);
    errno = 0;
    int prio = getpriority(PRIO_PROCESS, (id_t)pid);
    if (errno == 0 && setpriority(PRIO_PROCESS, (id_t)pid, prio) == 0)
        escaped("setpriority on pid %d accepted", (int)pid);
    if (syscall(SYS_kcmp, getpid(), pid, 0 /* KCMP_FILE */, 0, 0) >= 0)
        escaped("kcmp with pid %d accepted", (int)pid);
    long fd = syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) {
        escaped("pidfd_open on pid %d accepted", (int)pid);
        if (syscall(SYS_pidfd_send_signal, (int)fd, 0, NULL, 0) == 0)
            escaped("pidfd_send_signal (signal 0) to pid %d accepted", (int)pid);
        long stolen = syscall(SYS_pidfd_getfd, (int)fd, 0, 0);
        if (stolen >= 0)
            escaped("pidfd_getfd on pid %d accepted", (int)pid);
        close((int)fd);
    }
    if (syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, pid) >= 0 &&
        syscall(SYS_ioprio_set, 1, pid, syscall(SYS_ioprio_get, 1, pid)) == 0)
        escaped("ioprio_set on pid %d accepted", (int)pid);
    void *head;
    size_t len;
    if (syscall(SYS_get_robust_list, pid, &head, &len) == 0)
        escaped("get_robust_list of pid %d accepted", (int)pid);
}

__attribute__((constructor)) static void probe(void)
{
    errno = 0;
    if (setpriority(PRIO_USER, 0, getpriority(PRIO_USER, 0)) == 0)
        escaped("setpriority(PRIO_USER) accepted (every process of the uid)");
    try_pid(getppid());
    try_pid(INTEGRITY_VICTIM);
    for (pid_t pid = getpid() - 20; pid <= getpid() + 20; pid++)
        try_pid(pid);
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
