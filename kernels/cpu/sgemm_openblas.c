/*
 * The call adapter of the "openblas" baseline of evaluators/cpu/sgemm.lua and
 * cpu/sgemm_fast.lua:
 * the evaluator's sgemm signature onto cblas_sgemm (row-major, no
 * transposes, alpha 1, beta 0, so C is overwritten as the evaluator asks).
 * Linked against libopenblas.so.0 by the engine (a library baseline,
 * docs/evaluators.md); declared here rather than through <cblas.h> so only
 * the runtime library is needed.
 */
#include <stdint.h>

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111 };

void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                 const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);

void sgemm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    cblas_sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, M, N, K, 1.0f, A, K, B, N, 0.0f,
                C, N);
}
