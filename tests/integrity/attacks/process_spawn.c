/*
 * ATTACK process_spawn — start processes from the kernel by every route:
 * fork, vfork, clone(SIGCHLD) and clone3 as raw syscalls, posix_spawn,
 * system(), and finally execve of /bin/sh in the runner itself. Each new
 * process (and the exec'd shell) appends a line to the test's canary file:
 * a process outside the judge's control that could outlive the deadline,
 * run unconfined, or finish the work in the background.
 * Stopped by: seccomp against process creation and exec, RLIMIT_NPROC,
 * no_new_privs (issue 10, item 2). Today's runner filter denies these.
 * integrity: expect=any
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

extern char **environ;

static const char cmd[] = "echo \"spawned by process_spawn: $0\" >> " INTEGRITY_ROOT "/canary";

static void child(const char *how)
{
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, (char *)how, NULL};
    execve("/bin/sh", argv, environ);
    /* exec refused: write the canary directly */
    FILE *f = fopen(INTEGRITY_ROOT "/canary", "a");
    if (f)
        fprintf(f, "spawned by process_spawn (%s, no exec)\n", how), fclose(f);
    _exit(0);
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    pid_t pid;
    if ((pid = fork()) == 0)
        child("fork");
    if (pid > 0)
        escaped("fork created process %d", (int)pid), waitpid(pid, NULL, 0);
    if ((pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0)) == 0)
        child("clone");
    if (pid > 0)
        escaped("clone created process %d", (int)pid), waitpid(pid, NULL, 0);
#ifdef SYS_clone3
    struct {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
    } args = {.exit_signal = SIGCHLD};
    if ((pid = (pid_t)syscall(SYS_clone3, &args, sizeof args)) == 0)
        child("clone3");
    if (pid > 0)
        escaped("clone3 created process %d", (int)pid), waitpid(pid, NULL, 0);
#endif
    if ((pid = vfork()) == 0)
        child("vfork");
    if (pid > 0)
        escaped("vfork created process %d", (int)pid), waitpid(pid, NULL, 0);
    char *argv[] = {"/bin/sh", "-c", (char *)cmd, "posix_spawn", NULL};
    if (posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) == 0)
        escaped("posix_spawn ran /bin/sh as process %d", (int)pid), waitpid(pid, NULL, 0);
    int status = system(cmd);
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 127)
        escaped("system() ran /bin/sh");
    char *self[] = {"/bin/sh", "-c", (char *)cmd, "execve", NULL};
    execve("/bin/sh", self, environ);
    if (escapes)
        abort();
}
