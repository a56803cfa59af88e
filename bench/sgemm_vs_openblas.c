/*
 * Times an sgemm kernel (C[M,N] = A[M,K] * B[K,N], fp32 row-major, the
 * signature of evaluators/cpu/sgemm_fast.lua) against OpenBLAS's
 * cblas_sgemm on one thread, alternating the two in one process.
 *
 *   cc -O3 -march=native [-DKNOB=VALUE ...] -DKERNEL='"kernels/cpu/sgemm_fast.c"' \
 *      bench/sgemm_vs_openblas.c -o harness -lopenblas
 *   ./harness ROUNDS SIZE...
 *
 * Each round times both once, in turn (the order swaps every round), each
 * timing being enough calls on the same inputs to last ~40 ms (the caches
 * are warm for both alike); per-call time = this thread's CPU time / calls
 * (time spent waiting for a CPU on a shared machine is not counted; OpenBLAS
 * on one thread computes in the calling thread). Prints, per size, the
 * median GFLOP/s of each and the ratio of the medians, the same by wall
 * time, after checking that both give the same C (max |difference| <=
 * 1e-3 * K/256). Medians over rounds because the machine may be shared: a
 * round another process disturbed moves the mean, not the median.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include KERNEL

void openblas_set_num_threads(int num_threads);
char *openblas_get_config(void);
char *openblas_get_corename(void);

static double seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_openblas(int n, const float *A, const float *B, float *C)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
}

static void run_kernel(int n, const float *A, const float *B, float *C)
{
    sgemm(n, n, n, A, B, C);
}

/* Seconds of this thread's CPU time per call of `fn`, averaged over `calls`
 * calls; `ret_wall` gets the wall time per call. */
static double time_calls(void (*fn)(int, const float *, const float *, float *), int calls, int n,
                         const float *A, const float *B, float *C, double *ret_wall)
{
    double w0 = seconds(CLOCK_MONOTONIC), t0 = seconds(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < calls; i++)
        fn(n, A, B, C);
    double t = (seconds(CLOCK_THREAD_CPUTIME_ID) - t0) / calls;
    *ret_wall = (seconds(CLOCK_MONOTONIC) - w0) / calls;
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s ROUNDS SIZE...\n", argv[0]);
        return 2;
    }
    int rounds = atoi(argv[1]);
    if (rounds < 1 || rounds > 1000) {
        fprintf(stderr, "ROUNDS must be 1..1000\n");
        return 2;
    }
    openblas_set_num_threads(1);
    printf("openblas: %s (core %s), 1 thread\n", openblas_get_config(), openblas_get_corename());
    int status = 0;
    for (int s = 2; s < argc; s++) {
        int n = atoi(argv[s]);
        if (n < 1 || n > 8192) {
            fprintf(stderr, "SIZE must be 1..8192\n");
            return 2;
        }
        size_t len = (size_t)n * n;
        float *A = aligned_alloc(64, len * sizeof(float));
        float *B = aligned_alloc(64, len * sizeof(float));
        float *C1 = aligned_alloc(64, len * sizeof(float));
        float *C2 = aligned_alloc(64, len * sizeof(float));
        double *tk = calloc((size_t)rounds, sizeof(double));
        double *to = calloc((size_t)rounds, sizeof(double));
        double *wk = calloc((size_t)rounds, sizeof(double));
        double *wo = calloc((size_t)rounds, sizeof(double));
        if (!A || !B || !C1 || !C2 || !tk || !to || !wk || !wo) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        srand(12345u + (unsigned)n);
        for (size_t i = 0; i < len; i++) {
            A[i] = 2.0f * (float)rand() / (float)RAND_MAX - 1.0f;
            B[i] = 2.0f * (float)rand() / (float)RAND_MAX - 1.0f;
        }
        run_kernel(n, A, B, C1);
        run_openblas(n, A, B, C2);
        double maxdiff = 0;
        for (size_t i = 0; i < len; i++)
            maxdiff = fmax(maxdiff, fabs((double)C1[i] - (double)C2[i]));
        double limit = 1e-3 * (n > 256 ? n / 256.0 : 1.0);
        if (!(maxdiff <= limit)) {
            printf("%d^3: kernel and OpenBLAS disagree: max |diff| %.3g > %.3g\n", n, maxdiff,
                   limit);
            status = 1;
        }
        /* Warm both up, then calls per timing: about 40 ms at OpenBLAS's speed,
         * from a calibration of at least 10 ms. */
        double wall;
        time_calls(run_kernel, 2, n, A, B, C1, &wall);
        time_calls(run_openblas, 2, n, A, B, C2, &wall);
        int calls = 1;
        double t1;
        while ((t1 = time_calls(run_openblas, calls, n, A, B, C2, &wall)) * calls < 0.01)
            calls *= 2;
        calls = (int)(0.04 / t1);
        calls = calls < 1 ? 1 : calls > 100000 ? 100000 : calls;
        for (int r = 0; r < rounds; r++) {
            if (r % 2 == 0) {
                tk[r] = time_calls(run_kernel, calls, n, A, B, C1, &wk[r]);
                to[r] = time_calls(run_openblas, calls, n, A, B, C2, &wo[r]);
            } else {
                to[r] = time_calls(run_openblas, calls, n, A, B, C2, &wo[r]);
                tk[r] = time_calls(run_kernel, calls, n, A, B, C1, &wk[r]);
            }
        }
        double flop = 2.0 * n * n * n;
        double gk = flop / median(tk, rounds) * 1e-9, go = flop / median(to, rounds) * 1e-9;
        double wall_ratio = median(wo, rounds) / median(wk, rounds);
        printf("%d^3: kernel %.1f GFLOP/s, openblas %.1f GFLOP/s, ratio %.3f (by wall time "
               "%.3f; median of %d rounds x %d calls)\n",
               n, gk, go, gk / go, wall_ratio, rounds, calls);
        fflush(stdout);
        free(A), free(B), free(C1), free(C2), free(tk), free(to), free(wk), free(wo);
    }
    return status;
}
