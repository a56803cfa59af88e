/*
 * ATTACK time_alarm — time_setitimer with the alarm system call (x86_64
 * has one; elsewhere glibc's alarm() is setitimer): answer every timed
 * call with zeros, note it, and let the SIGALRM handler compute the real
 * outputs later, off the clock.  alarm's second granularity makes it a
 * slow thief, but a thief: an armed alarm is a signal the candidate sends
 * itself while the judge thinks it stopped.
 * Stopped by: seccomp denies alarm and setitimer to the candidate; outputs
 * are compared from copies taken at the stop; a handler's work is timed
 * wherever it runs (issue 18, item 2). Armed, the kernel prints the escape
 * marker; denied, it cheats anyway and the comparison fails.
 * integrity: expect=fail status=wrong reason=output of timed runs differs from reference
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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
static int alarm_state; /* 0 not tried, 1 works, -1 denied */

static void on_alarm(int sig)
{
    (void)sig;
    int n = npending;
    for (int i = 0; i < n; i++)
        work(pending[i].M, pending[i].N, pending[i].K, pending[i].A, pending[i].B, pending[i].C);
    npending = 0;
}

/* The raw system call, so a denial shows as -1/EPERM. */
static long raw_alarm(unsigned seconds)
{
#ifdef SYS_alarm
    return syscall(SYS_alarm, seconds);
#else
    return (long)alarm(seconds);
#endif
}

static void arm(void)
{
    if (alarm_state == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        sa.sa_flags = SA_RESTART;
        sigaction(SIGALRM, &sa, NULL);
        errno = 0;
        if (raw_alarm(1) >= 0 && errno == 0) {
            alarm_state = 1;
            printf("INTEGRITY-ESCAPE: %s\n", "alarm armed a SIGALRM");
            fflush(stdout);
        } else {
            alarm_state = -1;
            fprintf(stderr, "alarm: %s (cheating anyway)\n", strerror(errno));
        }
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
