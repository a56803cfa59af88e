/*
 * ATTACK time_timer_sigcont — do the work after answering. The judge stops
 * the candidate (SIGSTOP) once it has answered a call and, until the next
 * command, checks the outputs and runs the slow reference. This kernel
 * answers every timed call with zeros at once, notes the call, and arms a
 * POSIX timer (timer_create) whose signal is SIGCONT: it resumes the
 * stopped process, whose SIGCONT handler computes the real outputs of every
 * noted call while the judge is busy with the reference, then stops itself
 * again. Every timed call costs a memset; against the old judge every
 * comparison passed (about 4x the honest score on every run).
 * Stopped by: seccomp denies timer_create (and setitimer, alarm) to the
 * candidate, so nothing can wake it; one that ran while stopped anyway
 * fails ("ran while stopped after answering"); the compared outputs are
 * copied when the candidate has answered and is stopped, so later writes
 * are never looked at; on the CPU-time clock a call's time ends at the stop
 * (issue 18, item 2). If the timer is armed, the kernel says so with the
 * escape marker; denied, it cheats anyway and the comparison fails.
 * integrity: expect=fail status=wrong reason=output of timed runs differs from reference
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define PENDING_MAX 4096

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

static struct call {
    int32_t M, N, K;
    const float *A, *B;
    float *C;
} pending[PENDING_MAX];
static volatile sig_atomic_t npending;
static volatile sig_atomic_t timer_state; /* 0 not tried, 1 armed, -1 denied */
static timer_t timer;

/* Woken by the timer's SIGCONT while the judge checks: finish, stop again. */
static void on_cont(int sig)
{
    (void)sig;
    int n = npending;
    if (n == 0 || timer_state != 1)
        return; /* the judge's own SIGCONT: a new command */
    for (int i = 0; i < n; i++)
        work(pending[i].M, pending[i].N, pending[i].K, pending[i].A, pending[i].B, pending[i].C);
    npending = 0;
    raise(SIGSTOP);
}

static void arm(void)
{
    if (timer_state == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_cont;
        sigaction(SIGCONT, &sa, NULL);
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_SIGNAL;
        sev.sigev_signo = SIGCONT;
        if (timer_create(CLOCK_MONOTONIC, &sev, &timer) == 0) {
            timer_state = 1;
            printf("INTEGRITY-ESCAPE: %s\n", "timer_create armed a SIGCONT timer");
            fflush(stdout);
        } else {
            timer_state = -1;
            fprintf(stderr, "timer_create: %s (cheating anyway)\n", strerror(errno));
        }
    }
    if (timer_state == 1) {
        struct itimerspec when = {.it_value = {.tv_sec = 0, .tv_nsec = 200000}};
        timer_settime(timer, 0, &when, NULL);
    }
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    static int32_t last_m = -1, last_n, last_k;
    static long calls;
    if (M != last_m || N != last_n || K != last_k)
        last_m = M, last_n = N, last_k = K, calls = 0;
    if (++calls <= 2) { /* verification: honest */
        work(M, N, K, A, B, C);
        return;
    }
    memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
    if (npending < PENDING_MAX)
        pending[npending++] = (struct call){M, N, K, A, B, C};
    arm();
}
