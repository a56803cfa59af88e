/*
 * Times two sgemm kernels (C[M,N] = A[M,K] * B[K,N], fp32 row-major, the
 * signature of evaluators/cpu/sgemm_fast.lua) and OpenBLAS's cblas_sgemm on
 * one thread in the same rounds, and the machine's FP32 FMA peak between
 * them, so every ratio is paired: the kernels are compiled apart with
 * -Dsgemm=cand_sgemm and -Dsgemm=seed_sgemm and linked in.
 *
 *   cc -O3 -march=native -c -Dsgemm=cand_sgemm [-DKNOB=V ...] best.c -o cand.o
 *   cc -O3 -march=native -c -Dsgemm=seed_sgemm kernels/cpu/sgemm_fast.c -o seed.o
 *   cc -O3 -march=native bench/sgemm_paired.c cand.o seed.o -o paired -lopenblas
 *   ./paired warm|fresh ROUNDS MxNxK...
 *
 * Each round measures the peak once, then per shape times the three once
 * each, in an order that rotates every round, each timing lasting ~30 ms.
 * Inputs, two ways (the first argument):
 *   warm   every call on the same inputs (caches warm for all alike), the
 *          way BLAS benchmarks time;
 *   fresh  the way avo's CPU judge times, so the search's figures and
 *          these agree: calls in batches lasting >= 1 ms (the judge's
 *          min_sample_s), each call of a batch on its own copy of the
 *          inputs, all written just before the batch (untimed), so a small
 *          shape's inputs come from L3 or memory, not L1.
 * Time
 * is this thread's CPU time (waiting for a CPU on a shared machine is not
 * counted; OpenBLAS on one thread computes in the calling thread). Before
 * timing, the three outputs are compared (max |difference| within 1e-3 *
 * K/256 + 1e-4), so a wrong kernel is refused, not timed. Prints one line
 * per round and shape, "round R shape S cand G seed G openblas G peak G"
 * in GFLOP/s, and the OpenBLAS core; bench/sgemm_vs_openblas.sh turns them
 * into medians of per-round ratios.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>
#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

void cand_sgemm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C);
void seed_sgemm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C);
char *openblas_get_config(void);
char *openblas_get_corename(void);
int openblas_get_num_threads(void);

typedef void (*kernel_fn)(int32_t, int32_t, int32_t, const float *, const float *, float *);

static void blas_sgemm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f, C,
                N);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/*
 * GFLOP/s of a loop of independent FMAs on the widest vectors: 24
 * accumulators with AVX-512 (12 with AVX2), more than FMA latency x units,
 * so the loop is bound by FMA throughput alone; `iters` iterations. Written
 * in assembly so no compiler keeps an accumulator in memory.
 */
static double peak_once(long iters)
{
    long n = iters;
    const float tiny = 1e-7f;
#if defined(__AVX512F__)
    double t0 = cpu_seconds();
    __asm__ volatile("vbroadcastss %[x], %%zmm30\n\t"
                     "vbroadcastss %[x], %%zmm31\n\t"
                     "1:\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm0\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm1\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm2\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm3\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm4\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm5\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm6\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm7\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm8\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm9\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm10\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm11\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm12\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm13\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm14\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm15\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm16\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm17\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm18\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm19\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm20\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm21\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm22\n\t"
                     "vfmadd231ps %%zmm30, %%zmm31, %%zmm23\n\t"
                     "dec %[n]\n\t"
                     "jnz 1b\n\t"
                     : [n] "+r"(n)
                     : [x] "m"(tiny)
                     : "zmm0", "zmm1", "zmm2", "zmm3", "zmm4", "zmm5", "zmm6", "zmm7", "zmm8", "zmm9", "zmm10", "zmm11", "zmm12", "zmm13", "zmm14", "zmm15", "zmm16", "zmm17", "zmm18", "zmm19", "zmm20", "zmm21", "zmm22", "zmm23", "zmm30", "zmm31", "cc");
    return (double)iters * 24 * 16 * 2 / (cpu_seconds() - t0) / 1e9;
#elif defined(__FMA__)
    double t0 = cpu_seconds();
    __asm__ volatile("vbroadcastss %[x], %%ymm14\n\t"
                     "vbroadcastss %[x], %%ymm15\n\t"
                     "1:\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm0\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm1\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm2\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm3\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm4\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm5\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm6\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm7\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm8\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm9\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm10\n\t"
                     "vfmadd231ps %%ymm14, %%ymm15, %%ymm11\n\t"
                     "dec %[n]\n\t"
                     "jnz 1b\n\t"
                     : [n] "+r"(n)
                     : [x] "m"(tiny)
                     : "ymm0", "ymm1", "ymm2", "ymm3", "ymm4", "ymm5", "ymm6", "ymm7", "ymm8", "ymm9", "ymm10", "ymm11", "ymm14", "ymm15", "cc");
    return (double)iters * 12 * 8 * 2 / (cpu_seconds() - t0) / 1e9;
#else
    (void)n, (void)tiny;
    return 0.0; /* no FMA unit this harness knows: the peak is not measured */
#endif
}

/*
 * One shape's inputs: A, B and C (C[k] the output of kernel k) for warm
 * timing; for fresh timing `slots` copies (A_at, B_at, C_at) that the
 * masters are copied into before each batch.
 */
typedef struct shape {
    int M, N, K;
    long calls; /* warm: calls per timing; fresh: batches per timing */
    float *A, *B, *C[3];
    size_t slots;
    float **A_at, **B_at, **C_at;
} shape;

/* A timing of `fn` (~30 ms of CPU time) on shape s: GFLOP/s. */
static double rate(kernel_fn fn, shape *s, int k, int fresh)
{
    size_t a = (size_t)s->M * s->K, b = (size_t)s->K * s->N, c = (size_t)s->M * s->N;
    double t = 0, calls = 0;
    if (!fresh) {
        double t0 = cpu_seconds();
        for (long i = 0; i < s->calls; i++)
            fn(s->M, s->N, s->K, s->A, s->B, s->C[k]);
        t = cpu_seconds() - t0;
        calls = (double)s->calls;
    }
    for (long r = 0; fresh && r < s->calls; r++) {
        for (size_t i = 0; i < s->slots; i++) {
            memcpy(s->A_at[i], s->A, a * sizeof(float));
            memcpy(s->B_at[i], s->B, b * sizeof(float));
            memset(s->C_at[i], 0xff, c * sizeof(float)); /* NaN, as the judge's poison */
        }
        double t0 = cpu_seconds();
        for (size_t i = 0; i < s->slots; i++)
            fn(s->M, s->N, s->K, s->A_at[i], s->B_at[i], s->C_at[i]);
        t += cpu_seconds() - t0;
        calls += (double)s->slots;
    }
    return 2.0 * s->M * s->N * s->K * calls / t / 1e9;
}

/*
 * n floats placed as avo's CPU judge places a kernel's buffer (eval/cpu:
 * 64-byte aligned, ending at a page boundary), so the kernels are timed on
 * the alignment the search measured them on: with malloc's (16 bytes past a
 * page for large blocks) the register tiles' rows of C and the packed
 * copies' sources straddle cache lines, and two kernels' order at 1024^3
 * was not the search's (docs/benchmarks.md).
 */
static float *judge_like_buffer(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), data = (n * sizeof(float) + 63) / 64 * 64;
    size_t pages = (data + 64 + page - 1) / page;
    unsigned char *base = aligned_alloc(page, pages * page);
    if (!base) {
        fprintf(stderr, "sgemm_paired: out of memory\n");
        exit(1);
    }
    return (float *)(base + pages * page - data);
}

static float *random_matrix(size_t n, unsigned *state)
{
    float *p = judge_like_buffer(n);
    for (size_t i = 0; i < n; i++) {
        *state = *state * 1664525u + 1013904223u;
        p[i] = (float)((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    return p;
}

int main(int argc, char **argv)
{
    int fresh = argc >= 2 && strcmp(argv[1], "fresh") == 0;
    if (argc < 4 || (!fresh && strcmp(argv[1], "warm") != 0)) {
        fprintf(stderr, "usage: %s warm|fresh ROUNDS MxNxK...\n", argv[0]);
        return 2;
    }
    int rounds = atoi(argv[2]), nshapes = argc - 3;
    printf("openblas %s; core %s, %d thread(s)\n", openblas_get_config(), openblas_get_corename(),
           openblas_get_num_threads());
    if (openblas_get_num_threads() != 1) {
        /* This thread's CPU time would not count OpenBLAS's other threads. */
        fprintf(stderr, "sgemm_paired: OpenBLAS runs %d threads; set OPENBLAS_NUM_THREADS=1 "
                        "(bench/openblas_env.sh)\n", openblas_get_num_threads());
        return 2;
    }
    long peak_iters = 1000;
    for (;;) { /* iterations for ~20 ms */
        double t0 = cpu_seconds();
        peak_once(peak_iters);
        if (cpu_seconds() - t0 > 0.02 || peak_iters >= (1L << 30))
            break;
        peak_iters *= 2;
    }
    kernel_fn fns[3] = {cand_sgemm, seed_sgemm, blas_sgemm};
    shape shapes[64];
    unsigned state = 12345;
    if (nshapes > 64)
        nshapes = 64;
    for (int n = 0; n < nshapes; n++) {
        shape *s = &shapes[n];
        memset(s, 0, sizeof *s);
        if (sscanf(argv[3 + n], "%dx%dx%d", &s->M, &s->N, &s->K) != 3 || s->M < 1 || s->N < 1 ||
            s->K < 1) {
            fprintf(stderr, "sgemm_paired: '%s' is not MxNxK\n", argv[3 + n]);
            return 2;
        }
        size_t a = (size_t)s->M * s->K, b = (size_t)s->K * s->N, c = (size_t)s->M * s->N;
        s->A = random_matrix(a, &state);
        s->B = random_matrix(b, &state);
        for (int k = 0; k < 3; k++) {
            s->C[k] = random_matrix(c, &state);
            fns[k](s->M, s->N, s->K, s->A, s->B, s->C[k]);
        }
        double worst = 0, bound = 1e-3 * s->K / 256.0 + 1e-4;
        for (size_t i = 0; i < c; i++)
            for (int k = 0; k < 2; k++) {
                double e = fabs((double)s->C[k][i] - (double)s->C[2][i]);
                if (!(e <= worst))
                    worst = e;
            }
        if (!(worst <= bound)) {
            fprintf(stderr, "sgemm_paired: %s: a kernel differs from OpenBLAS by %g (bound %g)\n",
                    argv[3 + n], worst, bound);
            return 1;
        }
        /* One call's time, on OpenBLAS: warm, calls for ~30 ms; fresh, the
         * judge's batch (the power of two of calls lasting >= 1 ms, within
         * its 256 MiB of slots), and batches for ~30 ms. */
        double t0 = cpu_seconds();
        blas_sgemm(s->M, s->N, s->K, s->A, s->B, s->C[2]);
        double one = cpu_seconds() - t0;
        if (one <= 0)
            one = 1e-7;
        s->calls = (long)(0.03 / one);
        if (fresh) {
            size_t bytes = (a + b + c) * sizeof(float);
            s->slots = 1;
            while ((double)s->slots * one < 0.001 && 2 * s->slots * bytes <= (256u << 20))
                s->slots *= 2;
            s->calls = (long)(0.03 / (one * (double)s->slots));
            s->A_at = malloc(s->slots * sizeof *s->A_at);
            s->B_at = malloc(s->slots * sizeof *s->B_at);
            s->C_at = malloc(s->slots * sizeof *s->C_at);
            if (!s->A_at || !s->B_at || !s->C_at) {
                fprintf(stderr, "sgemm_paired: out of memory\n");
                return 1;
            }
            for (size_t i = 0; i < s->slots; i++) {
                s->A_at[i] = judge_like_buffer(a);
                s->B_at[i] = judge_like_buffer(b);
                s->C_at[i] = judge_like_buffer(c);
            }
        }
        if (s->calls < 1)
            s->calls = 1;
    }
    for (int r = 0; r < rounds; r++) {
        double peak = peak_once(peak_iters);
        for (int n = 0; n < nshapes; n++) {
            shape *s = &shapes[n];
            double g[3];
            for (int i = 0; i < 3; i++) {
                int k = (i + r + n) % 3;
                g[k] = rate(fns[k], s, k, fresh);
            }
            printf("round %d shape %dx%dx%d cand %.3f seed %.3f openblas %.3f peak %.3f\n", r,
                   s->M, s->N, s->K, g[0], g[1], g[2], peak);
            fflush(stdout);
        }
    }
    return 0;
}
