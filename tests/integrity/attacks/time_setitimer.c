/*
 * ATTACK time_setitimer — time_timer_sigcont with setitimer(ITIMER_REAL):
 * answer every timed call with zeros, note it, and let a SIGALRM handler
 * compute the real outputs 200 us later, after the answer, while the judge
 * checks (SIGALRM cannot resume a stopped process by itself, but it is
 * delivered in the gap between the answer and the judge's SIGSTOP, or on
 * the judge's next SIGCONT).
 * Stopped by: seccomp denies setitimer to the candidate; outputs are
 * compared from copies taken at the stop; a sample's time starts before
 * the judge's SIGCONT and (CPU-time clock) ends at the stop, so a handler's
 * work is timed wherever it runs (issue 18, item 2). Armed, the kernel
 * prints the escape marker; denied, it cheats anyway and the comparison
 * fails.
 * integrity: expect=fail status=wrong reason=output of timed runs differs from reference
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

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
static int timer_state; /* 0 not tried, 1 works, -1 denied */

static void on_alarm(int sig)
{
    (void)sig;
    int n = npending;
    for (int i = 0; i < n; i++)
        work(pending[i].M, pending[i].N, pending[i].K, pending[i].A, pending[i].B, pending[i].C);
    npending = 0;
}

static void arm(void)
{
    struct itimerval when = {.it_value = {.tv_sec = 0, .tv_usec = 200}};
    if (timer_state == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGALRM, &sa, NULL);
        if (setitimer(ITIMER_REAL, &when, NULL) == 0) {
            timer_state = 1;
            printf("INTEGRITY-ESCAPE: %s\n", "setitimer armed a SIGALRM timer");
            fflush(stdout);
        } else {
            timer_state = -1;
            fprintf(stderr, "setitimer: %s (cheating anyway)\n", strerror(errno));
        }
        return;
    }
    if (timer_state == 1)
        setitimer(ITIMER_REAL, &when, NULL);
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
