/*
 * libcublaslt_mock.c — a stand-in for cuBLASLt (built as libcublasLt.so.13)
 * for the baseline tests under the CPU emulator, where device pointers are
 * host pointers: it computes D = alpha * op(A) * op(B) + beta * C on the CPU
 * with cuBLASLt's column-major semantics, read from the layouts it was given
 * (rows, cols, leading dimension, element type), so a wrong row-major trick
 * in avo gives a wrong answer here too.  Checked like the library would:
 * compute type 32F with scale type f32, A and B of one type, output types
 * cuBLASLt pairs with them, matching dimensions, a workspace when the
 * heuristic asked for one.
 *
 * Knobs: AVO_MOCK_BASELINE_WRONG=1 adds 0.5 to the first output element;
 * AVO_MOCK_CUBLAS_REFUSE=MxNxK (row-major sizes) finds no algorithm for
 * that problem.  Version 13.0.42 (so tests can tell it from the real one).
 * Only the entry points avo calls exist.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"

enum {
    SUCCESS = 0,
    INVALID_VALUE = 7,
    NOT_SUPPORTED = 15,
    R_32F = 0,
    R_16F = 2,
    R_16BF = 14,
    COMPUTE_32F = 68,
    WORKSPACE_BYTES = 4096,
};

typedef struct layout {
    int type;
    uint64_t rows, cols;
    int64_t ld;
} layout;

typedef struct matmul_desc {
    int compute, scale_type, transa, transb;
} matmul_desc;

typedef struct preference {
    size_t max_workspace;
} preference;

typedef struct {
    uint64_t data[8];
} algo_t;

typedef struct {
    algo_t algo;
    size_t workspaceSize;
    int state;
    float wavesCount;
    int reserved[4];
} heuristic_t;

size_t cublasLtGetVersion(void)
{
    return 130042;
}

const char *cublasLtGetStatusString(int status)
{
    switch (status) {
    case SUCCESS:
        return "the operation completed successfully";
    case INVALID_VALUE:
        return "an unsupported value or parameter was passed to the function (mock)";
    case NOT_SUPPORTED:
        return "the functionality requested is not supported (mock)";
    default:
        return "unknown status (mock)";
    }
}

int cublasLtCreate(void **handle)
{
    static int the_handle;
    *handle = &the_handle;
    return SUCCESS;
}

int cublasLtMatmulDescCreate(matmul_desc **d, int compute, int scale_type)
{
    if (compute != COMPUTE_32F || scale_type != R_32F)
        return NOT_SUPPORTED;
    *d = calloc(1, sizeof **d);
    (*d)->compute = compute;
    (*d)->scale_type = scale_type;
    return SUCCESS;
}

int cublasLtMatmulDescDestroy(matmul_desc *d)
{
    free(d);
    return SUCCESS;
}

int cublasLtMatmulDescSetAttribute(matmul_desc *d, int attr, const void *buf, size_t size)
{
    if (size != sizeof(int))
        return INVALID_VALUE;
    if (attr == 3)
        memcpy(&d->transa, buf, sizeof(int));
    else if (attr == 4)
        memcpy(&d->transb, buf, sizeof(int));
    else
        return INVALID_VALUE;
    return SUCCESS;
}

int cublasLtMatrixLayoutCreate(layout **l, int type, uint64_t rows, uint64_t cols, int64_t ld)
{
    if (ld < (int64_t)rows || rows == 0 || cols == 0)
        return INVALID_VALUE;
    *l = malloc(sizeof **l);
    **l = (layout){type, rows, cols, ld};
    return SUCCESS;
}

int cublasLtMatrixLayoutDestroy(layout *l)
{
    free(l);
    return SUCCESS;
}

int cublasLtMatmulPreferenceCreate(preference **p)
{
    *p = calloc(1, sizeof **p);
    return SUCCESS;
}

int cublasLtMatmulPreferenceDestroy(preference *p)
{
    free(p);
    return SUCCESS;
}

int cublasLtMatmulPreferenceSetAttribute(preference *p, int attr, const void *buf, size_t size)
{
    if (attr != 1 || size != sizeof(size_t))
        return INVALID_VALUE;
    memcpy(&p->max_workspace, buf, size);
    return SUCCESS;
}

/* Rows and cols of op(X). */
static void op_dims(const layout *l, int trans, uint64_t *rows, uint64_t *cols)
{
    *rows = trans ? l->cols : l->rows;
    *cols = trans ? l->rows : l->cols;
}

/* The problem is one cuBLASLt serves: 0, or a status. */
static int problem_ok(const matmul_desc *d, const layout *a, const layout *b, const layout *c,
                      const layout *dd)
{
    uint64_t ar, ac, br, bc;
    op_dims(a, d->transa, &ar, &ac);
    op_dims(b, d->transb, &br, &bc);
    if (ac != br || c->rows != ar || c->cols != bc || dd->rows != c->rows || dd->cols != c->cols ||
        dd->type != c->type)
        return INVALID_VALUE;
    if (a->type != b->type)
        return NOT_SUPPORTED;
    if (a->type == R_32F && c->type != R_32F)
        return NOT_SUPPORTED;
    if (a->type != R_32F && c->type != R_32F && c->type != a->type)
        return NOT_SUPPORTED;
    return SUCCESS;
}

int cublasLtMatmulAlgoGetHeuristic(void *handle, matmul_desc *d, layout *a, layout *b, layout *c,
                                   layout *dd, preference *p, int requested, heuristic_t *results,
                                   int *returned)
{
    (void)handle;
    *returned = 0;
    int st = problem_ok(d, a, b, c, dd);
    if (st != SUCCESS)
        return st;
    /* Row-major M x N x K reads here as m = N, n = M, k = K. */
    const char *refuse = getenv("AVO_MOCK_CUBLAS_REFUSE");
    char problem[96];
    snprintf(problem, sizeof problem, "%llux%llux%llu", (unsigned long long)c->cols,
             (unsigned long long)c->rows, (unsigned long long)(d->transa ? a->rows : a->cols));
    if (refuse && strcmp(refuse, problem) == 0)
        return SUCCESS; /* no algorithm: zero results */
    if (requested < 1 || p->max_workspace < WORKSPACE_BYTES)
        return SUCCESS;
    memset(&results[0], 0, sizeof results[0]);
    results[0].algo.data[0] = 0x6d6f636b; /* "mock" */
    results[0].workspaceSize = WORKSPACE_BYTES;
    results[0].wavesCount = 1.0f;
    *returned = 1;
    return SUCCESS;
}

static double load(const void *base, int type, size_t i)
{
    if (type == R_32F)
        return ((const float *)base)[i];
    uint16_t h = ((const uint16_t *)base)[i];
    return type == R_16BF ? avo_bf16_to_f32(h) : avo_f16_to_f32(h);
}

static void store(void *base, int type, size_t i, double v)
{
    if (type == R_32F)
        ((float *)base)[i] = (float)v;
    else if (type == R_16BF)
        ((uint16_t *)base)[i] = avo_f32_to_bf16((float)v);
    else
        ((uint16_t *)base)[i] = avo_f32_to_f16((float)v);
}

/* Element (r, c) of op(X) in column-major storage with leading dimension ld. */
static size_t at(const layout *l, int trans, uint64_t r, uint64_t c)
{
    return trans ? (size_t)(c + r * (uint64_t)l->ld) : (size_t)(r + c * (uint64_t)l->ld);
}

int cublasLtMatmul(void *handle, matmul_desc *d, const void *alpha, const void *A, layout *la,
                   const void *B, layout *lb, const void *beta, const void *C, layout *lc, void *D,
                   layout *ld, const algo_t *algo, void *workspace, size_t ws_bytes, void *stream)
{
    (void)handle, (void)stream;
    int st = problem_ok(d, la, lb, lc, ld);
    if (st != SUCCESS)
        return st;
    if (!algo || algo->data[0] != 0x6d6f636b || !A || !B || !D || !alpha || !beta)
        return INVALID_VALUE;
    if (!workspace || ws_bytes < WORKSPACE_BYTES)
        return INVALID_VALUE;
    float al = *(const float *)alpha, be = *(const float *)beta;
    uint64_t m = ld->rows, n = ld->cols, k = d->transa ? la->rows : la->cols;
    for (uint64_t j = 0; j < n; j++)
        for (uint64_t i = 0; i < m; i++) {
            double sum = 0;
            for (uint64_t p = 0; p < k; p++)
                sum += load(A, la->type, at(la, d->transa, i, p)) *
                       load(B, lb->type, at(lb, d->transb, p, j));
            double v = al * sum;
            if (be != 0)
                v += be * load(C, lc->type, at(lc, 0, i, j));
            store(D, ld->type, at(ld, 0, i, j), v);
        }
    const char *wrong = getenv("AVO_MOCK_BASELINE_WRONG");
    if (wrong && strcmp(wrong, "1") == 0)
        store(D, ld->type, 0, load(D, ld->type, 0) + 0.5);
    return SUCCESS;
}
