/*
 * ATTACK vendor_openblas — let a vendor library do the work.  The kernel
 * dlopens OpenBLAS at run time (no #include, no link flag: nothing in its
 * source or its compile says so) and hands every call to cblas_sgemm, so it
 * scores what OpenBLAS scores, many times the honest loop, while its source
 * looks like a kernel.
 * Stopped by: the judge reading the kernel process's mappings after the
 * timed calls (eval/libraries.h): the result names the library, and the
 * integrity evaluator forbids libraries (libraries = "forbid"), so the
 * verdict is invalid.
 * integrity: expect=fail status=invalid reason=loads a library the evaluator forbids
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
                         const float *a, int lda, const float *b, int ldb, float beta, float *c,
                         int ldc);

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    static sgemm_fn sgemm;
    if (!sgemm) {
        void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
        if (lib)
            *(void **)&sgemm = dlsym(lib, "cblas_sgemm");
    }
    if (sgemm) { /* CblasRowMajor, CblasNoTrans */
        sgemm(101, 111, 111, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
        return;
    }
    memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
    for (int32_t i = 0; i < M; i++)
        for (int32_t k = 0; k < K; k++)
            for (int32_t j = 0; j < N; j++)
                C[(int64_t)i * N + j] += A[(int64_t)i * K + k] * B[(int64_t)k * N + j];
}
