/*
 * vendor.c — cuBLASLt and cuDNN behind the named baselines (vendor.h).
 *
 * The declarations below are ours: the handful of types, enum values and
 * functions avo calls, with the values of the public headers (cublasLt.h,
 * library_types.h, cublas_api.h of CUDA 12/13; cudnn_graph_v9.h of cuDNN
 * 9), whose ABI is stable across those versions.
 *
 * cublas: C = A*B with A (M x K), B (K x N), C (M x N) row-major is, read
 * column-major, C^T = B^T * A^T: cuBLASLt multiplies "A" = B (N x K, ld N)
 * by "B" = A (K x M, ld K) into N x M (ld N), no transposes.  Compute type
 * 32F (true fp32 products for f32 inputs, no TF32), scale type f32.
 *
 * cudnn_sdpa: the fused flash-attention forward as cuDNN's backend API
 * recognises it (the graph the cuDNN frontend composes for sdpa):
 *   S  = matmul(Q [b,hq,s,d], K^T [b,hkv,d,s])      (K read through strides;
 *                                                   hkv < hq broadcasts: GQA)
 *   S  = S * scale                                  (scale passed by value)
 *   causal: row = gen_index(S, axis 2), col = gen_index(S, axis 3),
 *           S = binary_select(S, -inf, row >= col)  (top-left: keys j <= i)
 *   M  = max_j S;  E = exp(S - M);  Z = sum_j E
 *   Stats = M + log Z                               (fp32 output [b,hq,s,1])
 *   P  = E / Z                                      (virtual, I/O type)
 *   O  = matmul(P, V [b,hkv,s,d])                   ([b,hq,s,d])
 * Intermediates are virtual fp32 tensors; compute is fp32.  Heuristics mode
 * A lists engine configs; the first whose execution plan finalizes is used.
 */
#include "eval/cuda/vendor.h"

#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"
#include "eval/cuda/cuda_api.h"

/* ------------------------------------------------------------ cuBLASLt */

typedef int cublasStatus_t; /* CUBLAS_STATUS_SUCCESS == 0 */
typedef void *cublasLtHandle_t;
typedef void *cublasLtMatmulDesc_t;
typedef void *cublasLtMatrixLayout_t;
typedef void *cublasLtMatmulPreference_t;
typedef struct {
    uint64_t data[8];
} cublasLtMatmulAlgo_t;
typedef struct {
    cublasLtMatmulAlgo_t algo;
    size_t workspaceSize;
    cublasStatus_t state;
    float wavesCount;
    int reserved[4];
} cublasLtMatmulHeuristicResult_t;

enum {
    CUDA_R_32F = 0,
    CUDA_R_16F = 2,
    CUDA_R_16BF = 14,
    CUBLAS_COMPUTE_32F = 68,
    CUBLASLT_MATMUL_DESC_TRANSA = 3,
    CUBLASLT_MATMUL_DESC_TRANSB = 4,
    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
    CUBLAS_OP_N = 0,
};

#define CUBLAS_WORKSPACE_BYTES ((size_t)32 << 20)

typedef struct cublaslt_api {
    char path[512], version[32];
    cublasLtHandle_t handle;
    size_t (*GetVersion)(void);
    const char *(*GetStatusString)(cublasStatus_t);
    cublasStatus_t (*Create)(cublasLtHandle_t *);
    cublasStatus_t (*MatmulDescCreate)(cublasLtMatmulDesc_t *, int compute, int scale_type);
    cublasStatus_t (*MatmulDescDestroy)(cublasLtMatmulDesc_t);
    cublasStatus_t (*MatmulDescSetAttribute)(cublasLtMatmulDesc_t, int attr, const void *buf,
                                             size_t size);
    cublasStatus_t (*MatrixLayoutCreate)(cublasLtMatrixLayout_t *, int type, uint64_t rows,
                                         uint64_t cols, int64_t ld);
    cublasStatus_t (*MatrixLayoutDestroy)(cublasLtMatrixLayout_t);
    cublasStatus_t (*MatmulPreferenceCreate)(cublasLtMatmulPreference_t *);
    cublasStatus_t (*MatmulPreferenceDestroy)(cublasLtMatmulPreference_t);
    cublasStatus_t (*MatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t, int attr,
                                                   const void *buf, size_t size);
    cublasStatus_t (*MatmulAlgoGetHeuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                             cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                             cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                             cublasLtMatmulPreference_t, int requested,
                                             cublasLtMatmulHeuristicResult_t *results,
                                             int *returned);
    cublasStatus_t (*Matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *alpha,
                             const void *A, cublasLtMatrixLayout_t, const void *B,
                             cublasLtMatrixLayout_t, const void *beta, const void *C,
                             cublasLtMatrixLayout_t, void *D, cublasLtMatrixLayout_t,
                             const cublasLtMatmulAlgo_t *algo, void *workspace, size_t ws_bytes,
                             CUstream stream);
} cublaslt_api;

/* --------------------------------------------------------------- cuDNN */

typedef int cudnnStatus_t; /* CUDNN_STATUS_SUCCESS == 0 */
typedef void *cudnnHandle_t;
typedef void *cudnnBackendDescriptor_t;

enum {
    /* cudnnDataType_t */
    CUDNN_DATA_FLOAT = 0,
    CUDNN_DATA_HALF = 2,
    CUDNN_DATA_INT32 = 4,
    CUDNN_DATA_BFLOAT16 = 9,
    CUDNN_DATA_BOOLEAN = 11,
    /* cudnnPointwiseMode_t */
    CUDNN_POINTWISE_ADD = 0,
    CUDNN_POINTWISE_MUL = 1,
    CUDNN_POINTWISE_DIV = 6,
    CUDNN_POINTWISE_SUB = 9,
    CUDNN_POINTWISE_EXP = 13,
    CUDNN_POINTWISE_LOG = 15,
    CUDNN_POINTWISE_CMP_GE = 303,
    CUDNN_POINTWISE_GEN_INDEX = 501,
    CUDNN_POINTWISE_BINARY_SELECT = 601,
    /* cudnnReduceTensorOp_t */
    CUDNN_REDUCE_TENSOR_ADD = 0,
    CUDNN_REDUCE_TENSOR_MAX = 3,
    /* cudnnBackendHeurMode_t */
    CUDNN_HEUR_MODE_A = 3,
    /* cudnnBackendAttributeType_t */
    CUDNN_TYPE_HANDLE = 0,
    CUDNN_TYPE_DATA_TYPE = 1,
    CUDNN_TYPE_BOOLEAN = 2,
    CUDNN_TYPE_INT64 = 3,
    CUDNN_TYPE_VOID_PTR = 6,
    CUDNN_TYPE_HEUR_MODE = 8,
    CUDNN_TYPE_POINTWISE_MODE = 14,
    CUDNN_TYPE_BACKEND_DESCRIPTOR = 15,
    CUDNN_TYPE_REDUCTION_OPERATOR_TYPE = 18,
    /* cudnnBackendDescriptorType_t */
    CUDNN_BACKEND_POINTWISE_DESCRIPTOR = 0,
    CUDNN_BACKEND_ENGINECFG_DESCRIPTOR = 3,
    CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR = 4,
    CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR = 5,
    CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR = 13,
    CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR = 15,
    CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR = 16,
    CUDNN_BACKEND_TENSOR_DESCRIPTOR = 17,
    CUDNN_BACKEND_MATMUL_DESCRIPTOR = 18,
    CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR = 19,
    CUDNN_BACKEND_REDUCTION_DESCRIPTOR = 21,
    CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR = 22,
    /* cudnnBackendAttributeName_t */
    CUDNN_ATTR_POINTWISE_MODE = 0,
    CUDNN_ATTR_POINTWISE_MATH_PREC = 1,
    CUDNN_ATTR_POINTWISE_AXIS = 9,
    CUDNN_ATTR_ENGINEHEUR_MODE = 200,
    CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 201,
    CUDNN_ATTR_ENGINEHEUR_RESULTS = 202,
    CUDNN_ATTR_EXECUTION_PLAN_HANDLE = 400,
    CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401,
    CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402,
    CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR = 750,
    CUDNN_ATTR_OPERATION_POINTWISE_XDESC = 751,
    CUDNN_ATTR_OPERATION_POINTWISE_BDESC = 752,
    CUDNN_ATTR_OPERATION_POINTWISE_YDESC = 753,
    CUDNN_ATTR_OPERATION_POINTWISE_TDESC = 758,
    CUDNN_ATTR_OPERATIONGRAPH_HANDLE = 800,
    CUDNN_ATTR_OPERATIONGRAPH_OPS = 801,
    CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT = 900,
    CUDNN_ATTR_TENSOR_DATA_TYPE = 901,
    CUDNN_ATTR_TENSOR_DIMENSIONS = 902,
    CUDNN_ATTR_TENSOR_STRIDES = 903,
    CUDNN_ATTR_TENSOR_UNIQUE_ID = 906,
    CUDNN_ATTR_TENSOR_IS_VIRTUAL = 907,
    CUDNN_ATTR_TENSOR_IS_BY_VALUE = 908,
    CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS = 1000,
    CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS = 1001,
    CUDNN_ATTR_VARIANT_PACK_WORKSPACE = 1003,
    CUDNN_ATTR_MATMUL_COMP_TYPE = 1500,
    CUDNN_ATTR_OPERATION_MATMUL_ADESC = 1520,
    CUDNN_ATTR_OPERATION_MATMUL_BDESC = 1521,
    CUDNN_ATTR_OPERATION_MATMUL_CDESC = 1522,
    CUDNN_ATTR_OPERATION_MATMUL_DESC = 1523,
    CUDNN_ATTR_REDUCTION_OPERATOR = 1600,
    CUDNN_ATTR_REDUCTION_COMP_TYPE = 1601,
    CUDNN_ATTR_OPERATION_REDUCTION_XDESC = 1610,
    CUDNN_ATTR_OPERATION_REDUCTION_YDESC = 1611,
    CUDNN_ATTR_OPERATION_REDUCTION_DESC = 1612,
};

typedef struct cudnn_api {
    char path[512], version[32];
    cudnnHandle_t handle;
    size_t (*GetVersion)(void);
    const char *(*GetErrorString)(cudnnStatus_t);
    void (*GetLastErrorString)(char *message, size_t max);
    cudnnStatus_t (*Create)(cudnnHandle_t *);
    cudnnStatus_t (*SetStream)(cudnnHandle_t, CUstream);
    cudnnStatus_t (*BackendCreateDescriptor)(int type, cudnnBackendDescriptor_t *);
    cudnnStatus_t (*BackendDestroyDescriptor)(cudnnBackendDescriptor_t);
    cudnnStatus_t (*BackendFinalize)(cudnnBackendDescriptor_t);
    cudnnStatus_t (*BackendSetAttribute)(cudnnBackendDescriptor_t, int name, int type,
                                         int64_t count, const void *elements);
    cudnnStatus_t (*BackendGetAttribute)(cudnnBackendDescriptor_t, int name, int type,
                                         int64_t requested, int64_t *count, void *elements);
    cudnnStatus_t (*BackendExecute)(cudnnHandle_t, cudnnBackendDescriptor_t plan,
                                    cudnnBackendDescriptor_t variant_pack);
} cudnn_api;

/* ------------------------------------------------------------ loading */

/* Path of the object behind a dlopen handle, or `fallback`. */
static void handle_path(void *handle, const char *fallback, char *buf, size_t len)
{
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
        snprintf(buf, len, "%s", map->l_name);
    else
        snprintf(buf, len, "%s", fallback);
}

/*
 * Open the first of `names` found in $CUDA_HOME/lib64, /usr/local/cuda/lib64
 * and then the loader's path; with $<env> set, only that file.  Returns the
 * handle, or NULL with what was tried (and dlerror's last word) in err.
 */
static void *open_library(const char *env, const char *const *names, size_t nnames, char *opened,
                          size_t openedlen, char *err, size_t errlen)
{
    const char *override = getenv(env);
    if (override && *override) {
        void *h = dlopen(override, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *why = dlerror();
            avo_error(err, errlen, AVO_ENOTFOUND, "cannot load %s (from $%s): %s", override, env,
                      why ? why : "dlopen failed");
        } else {
            snprintf(opened, openedlen, "%s", override);
        }
        return h;
    }
    const char *home = getenv("CUDA_HOME");
    char dirs[2][400];
    snprintf(dirs[0], sizeof dirs[0], "%.390s", home && *home ? home : "");
    if (dirs[0][0])
        strncat(dirs[0], "/lib64", sizeof dirs[0] - strlen(dirs[0]) - 1);
    snprintf(dirs[1], sizeof dirs[1], "/usr/local/cuda/lib64");
    char path[480];
    for (int d = 0; d < 3; d++) {
        if (d < 2 && !dirs[d][0])
            continue;
        for (size_t i = 0; i < nnames; i++) {
            if (d < 2)
                snprintf(path, sizeof path, "%.400s/%.64s", dirs[d], names[i]);
            else
                snprintf(path, sizeof path, "%.64s", names[i]);
            void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (h) {
                snprintf(opened, openedlen, "%s", path);
                return h;
            }
        }
    }
    char tried[256] = "";
    for (size_t i = 0; i < nnames; i++)
        snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "%s%s", i ? ", " : "",
                 names[i]);
    avo_error(err, errlen, AVO_ENOTFOUND,
              "cannot load %s (tried $CUDA_HOME/lib64, /usr/local/cuda/lib64 and the loader's "
              "path)",
              tried);
    return NULL;
}

/* Resolve the NULL-terminated table `syms` (name, slot) from `h`. */
typedef struct symbol {
    const char *name;
    void *slot;
} symbol;

static int bind_all(void *h, const symbol *syms, const char *path, char *err, size_t errlen)
{
    for (size_t i = 0; syms[i].name; i++) {
        void *sym = dlsym(h, syms[i].name);
        if (!sym)
            return avo_error(err, errlen, AVO_ENOTFOUND, "%s has no %s (too old?)", path,
                             syms[i].name);
        memcpy(syms[i].slot, &sym, sizeof sym); /* object to function pointer, as POSIX allows */
    }
    return 0;
}

/* One vendor library's loading: tried once per process, its failure kept. */
typedef struct library_state {
    int state; /* 0 untried, 1 loaded, -1 failed */
    char failure[AVO_ERRLEN];
} library_state;

/*
 * Load a library once (open_library, then bind_all on `syms`) and fill its
 * path and its version "major.minor.patch" from *get_version (bound among
 * syms; the libraries say major*10000 + minor*100 + patch).  Returns 0, or
 * -1 with err saying what is missing (the same on every later call).
 */
static int load_library(library_state *ls, const char *env, const char *const *names, size_t nnames,
                        const symbol *syms, size_t (*const *get_version)(void), char *path,
                        size_t pathlen, char *version, size_t versionlen, char *err, size_t errlen)
{
    if (ls->state == 0) {
        char opened[512];
        void *h = open_library(env, names, nnames, opened, sizeof opened, ls->failure,
                               sizeof ls->failure);
        if (h && bind_all(h, syms, opened, ls->failure, sizeof ls->failure) == 0) {
            handle_path(h, opened, path, pathlen);
            size_t v = (*get_version)();
            snprintf(version, versionlen, "%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
            ls->state = 1;
        } else {
            if (h)
                dlclose(h);
            ls->state = -1;
        }
    }
    if (ls->state == 1)
        return 0;
    avo_error(err, errlen, AVO_ENOTFOUND, "%s", ls->failure);
    return -1;
}

/* The cuBLASLt table, loaded on first call; NULL with err when missing. */
static const cublaslt_api *load_cublaslt(char *err, size_t errlen)
{
    static cublaslt_api api;
    static library_state ls;
    static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so.12"};
    const symbol syms[] = {
        {"cublasLtGetVersion", &api.GetVersion},
        {"cublasLtGetStatusString", &api.GetStatusString},
        {"cublasLtCreate", &api.Create},
        {"cublasLtMatmulDescCreate", &api.MatmulDescCreate},
        {"cublasLtMatmulDescDestroy", &api.MatmulDescDestroy},
        {"cublasLtMatmulDescSetAttribute", &api.MatmulDescSetAttribute},
        {"cublasLtMatrixLayoutCreate", &api.MatrixLayoutCreate},
        {"cublasLtMatrixLayoutDestroy", &api.MatrixLayoutDestroy},
        {"cublasLtMatmulPreferenceCreate", &api.MatmulPreferenceCreate},
        {"cublasLtMatmulPreferenceDestroy", &api.MatmulPreferenceDestroy},
        {"cublasLtMatmulPreferenceSetAttribute", &api.MatmulPreferenceSetAttribute},
        {"cublasLtMatmulAlgoGetHeuristic", &api.MatmulAlgoGetHeuristic},
        {"cublasLtMatmul", &api.Matmul},
        {NULL, NULL},
    };
    if (load_library(&ls, "AVO_CUBLASLT", names, 2, syms, &api.GetVersion, api.path,
                     sizeof api.path, api.version, sizeof api.version, err, errlen) < 0)
        return NULL;
    return &api;
}

/* The cuDNN table, loaded on first call; NULL with err when missing. */
static const cudnn_api *load_cudnn(char *err, size_t errlen)
{
    static cudnn_api api;
    static library_state ls;
    static const char *const names[] = {"libcudnn.so.9"};
    const symbol syms[] = {
        {"cudnnGetVersion", &api.GetVersion},
        {"cudnnGetErrorString", &api.GetErrorString},
        {"cudnnGetLastErrorString", &api.GetLastErrorString},
        {"cudnnCreate", &api.Create},
        {"cudnnSetStream", &api.SetStream},
        {"cudnnBackendCreateDescriptor", &api.BackendCreateDescriptor},
        {"cudnnBackendDestroyDescriptor", &api.BackendDestroyDescriptor},
        {"cudnnBackendFinalize", &api.BackendFinalize},
        {"cudnnBackendSetAttribute", &api.BackendSetAttribute},
        {"cudnnBackendGetAttribute", &api.BackendGetAttribute},
        {"cudnnBackendExecute", &api.BackendExecute},
        {NULL, NULL},
    };
    if (load_library(&ls, "AVO_CUDNN", names, 1, syms, &api.GetVersion, api.path, sizeof api.path,
                     api.version, sizeof api.version, err, errlen) < 0)
        return NULL;
    return &api;
}

static int is_cublas(const avo_baseline_info *b)
{
    return strcmp(b->name, "cublas") == 0;
}

static int is_sdpa(const avo_baseline_info *b)
{
    return strcmp(b->name, "cudnn_sdpa") == 0;
}

int avo_vendor_load(const avo_baseline_info *b, avo_vendor_lib *ret, char *err, size_t errlen)
{
    memset(ret, 0, sizeof *ret);
    ret->library = b->library;
    if (is_cublas(b)) {
        const cublaslt_api *lt = load_cublaslt(err, errlen);
        if (!lt)
            return AVO_ENOTFOUND;
        ret->path = lt->path;
        ret->version = lt->version;
        return 0;
    }
    if (is_sdpa(b)) {
        const cudnn_api *dnn = load_cudnn(err, errlen);
        if (!dnn)
            return AVO_ENOTFOUND;
        ret->path = dnn->path;
        ret->version = dnn->version;
        return 0;
    }
    return avo_error(err, errlen, AVO_ENOTFOUND, "baseline '%s' has no library in this build",
                     b->name);
}

/* ------------------------------------------------------ the signature */

/* Index of argument `name`, or -1. */
static int arg_index(const avo_jobspec *spec, const char *name)
{
    for (size_t i = 0; i < spec->nargs; i++)
        if (strcmp(spec->args[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* Argument `name` of `kind`, one of `types` (terminated by -1): its index,
 * or AVO_EINVAL with what is wrong. */
static int need_arg(const avo_baseline_info *b, const avo_jobspec *spec, const char *name,
                    avo_arg_kind kind, const int *types, char *err, size_t errlen)
{
    static const char *const kinds[] = {"scalar", "in", "out", "inout"};
    int i = arg_index(spec, name);
    if (i < 0)
        return avo_error(err, errlen, AVO_EINVAL,
                         "baseline %s reads argument '%s', which the evaluator does not have",
                         b->name, name);
    const avo_arg_spec *a = &spec->args[i];
    if (a->kind != kind)
        return avo_error(err, errlen, AVO_EINVAL,
                         "baseline %s reads argument '%s' as %s, the evaluator has it %s", b->name,
                         name, kinds[kind], kinds[a->kind]);
    for (size_t t = 0; types[t] >= 0; t++)
        if ((int)a->type == types[t])
            return i;
    char names[128] = "";
    for (size_t t = 0; types[t] >= 0; t++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", t ? "/" : "",
                 avo_dtype_name((avo_dtype)types[t]));
    return avo_error(err, errlen, AVO_EINVAL,
                     "baseline %s reads argument '%s' as %s, the evaluator has it %s", b->name,
                     name, names, avo_dtype_name(a->type));
}

/* An integer scalar's value in config c. */
static int64_t int_value(const avo_jobspec *spec, const avo_config_spec *c, int i)
{
    return spec->args[i].type == AVO_DT_I64 ? c->scalars[i].i64 : c->scalars[i].i32;
}

static const int int_types[] = {AVO_DT_I32, AVO_DT_I64, -1};

/* The cublas problem: argument indices and sizes of config c. */
typedef struct gemm_problem {
    int m, n, k, a, b, c;
    int64_t M, N, K;
} gemm_problem;

static int gemm_args(const avo_baseline_info *b, const avo_jobspec *spec, gemm_problem *p,
                     char *err, size_t errlen)
{
    static const int float_types[] = {AVO_DT_F32, AVO_DT_BF16, AVO_DT_F16, -1};
    if ((p->m = need_arg(b, spec, "M", AVO_ARG_SCALAR, int_types, err, errlen)) < 0 ||
        (p->n = need_arg(b, spec, "N", AVO_ARG_SCALAR, int_types, err, errlen)) < 0 ||
        (p->k = need_arg(b, spec, "K", AVO_ARG_SCALAR, int_types, err, errlen)) < 0 ||
        (p->a = need_arg(b, spec, "A", AVO_ARG_IN, float_types, err, errlen)) < 0 ||
        (p->b = need_arg(b, spec, "B", AVO_ARG_IN, float_types, err, errlen)) < 0 ||
        (p->c = need_arg(b, spec, "C", AVO_ARG_OUT, float_types, err, errlen)) < 0)
        return AVO_EINVAL;
    if (spec->args[p->a].type != spec->args[p->b].type)
        return avo_error(err, errlen, AVO_EINVAL,
                         "baseline %s needs A and B of one type, the evaluator has %s and %s",
                         b->name, avo_dtype_name(spec->args[p->a].type),
                         avo_dtype_name(spec->args[p->b].type));
    return 0;
}

static int gemm_config(const avo_baseline_info *b, const avo_jobspec *spec,
                       const avo_config_spec *c, gemm_problem *p, char *err, size_t errlen)
{
    p->M = int_value(spec, c, p->m);
    p->N = int_value(spec, c, p->n);
    p->K = int_value(spec, c, p->k);
    const char *bad = p->M < 1 ? "M" : p->N < 1 ? "N" : p->K < 1 ? "K" : NULL;
    if (bad)
        return avo_error(err, errlen, AVO_EINVAL, "config '%s': baseline %s needs %s >= 1", c->name,
                         b->name, bad);
    struct {
        int i;
        int64_t want;
        const char *what;
    } lens[] = {{p->a, p->M * p->K, "M*K"}, {p->b, p->K * p->N, "K*N"}, {p->c, p->M * p->N, "M*N"}};
    for (int i = 0; i < 3; i++)
        if ((int64_t)c->lengths[lens[i].i] != lens[i].want)
            return avo_error(err, errlen, AVO_EINVAL,
                             "config '%s': baseline %s needs buffer %s of %s = %lld elements, "
                             "the evaluator gives %zu",
                             c->name, b->name, spec->args[lens[i].i].name, lens[i].what,
                             (long long)lens[i].want, c->lengths[lens[i].i]);
    return 0;
}

/* The cudnn_sdpa problem: argument indices and sizes of config c. */
typedef struct sdpa_problem {
    int q, k, v, o, b, hq, hkv, s, causal, scale;
    int64_t B, Hq, Hkv, S, D;
    int is_causal;
    float scale_value;
} sdpa_problem;

static int sdpa_args(const avo_baseline_info *b, const avo_jobspec *spec, sdpa_problem *p,
                     char *err, size_t errlen)
{
    static const int half_types[] = {AVO_DT_BF16, AVO_DT_F16, -1};
    static const int scale_types[] = {AVO_DT_F32, AVO_DT_F64, -1};
    if ((p->q = need_arg(b, spec, "Q", AVO_ARG_IN, half_types, err, errlen)) < 0 ||
        (p->k = need_arg(b, spec, "K", AVO_ARG_IN, half_types, err, errlen)) < 0 ||
        (p->v = need_arg(b, spec, "V", AVO_ARG_IN, half_types, err, errlen)) < 0 ||
        (p->o = need_arg(b, spec, "O", AVO_ARG_OUT, half_types, err, errlen)) < 0 ||
        (p->b = need_arg(b, spec, "B", AVO_ARG_SCALAR, int_types, err, errlen)) < 0 ||
        (p->hq = need_arg(b, spec, "Hq", AVO_ARG_SCALAR, int_types, err, errlen)) < 0 ||
        (p->hkv = need_arg(b, spec, "Hkv", AVO_ARG_SCALAR, int_types, err, errlen)) < 0 ||
        (p->s = need_arg(b, spec, "S", AVO_ARG_SCALAR, int_types, err, errlen)) < 0 ||
        (p->causal = need_arg(b, spec, "causal", AVO_ARG_SCALAR, int_types, err, errlen)) < 0 ||
        (p->scale = need_arg(b, spec, "scale", AVO_ARG_SCALAR, scale_types, err, errlen)) < 0)
        return AVO_EINVAL;
    avo_dtype t = spec->args[p->q].type;
    if (spec->args[p->k].type != t || spec->args[p->v].type != t || spec->args[p->o].type != t)
        return avo_error(err, errlen, AVO_EINVAL,
                         "baseline %s needs Q, K, V and O of one type (all bf16 or all f16)",
                         b->name);
    return 0;
}

static int sdpa_config(const avo_baseline_info *b, const avo_jobspec *spec,
                       const avo_config_spec *c, sdpa_problem *p, char *err, size_t errlen)
{
    p->B = int_value(spec, c, p->b);
    p->Hq = int_value(spec, c, p->hq);
    p->Hkv = int_value(spec, c, p->hkv);
    p->S = int_value(spec, c, p->s);
    int64_t causal = int_value(spec, c, p->causal);
    p->is_causal = causal != 0;
    p->scale_value = spec->args[p->scale].type == AVO_DT_F64 ? (float)c->scalars[p->scale].f64
                                                             : c->scalars[p->scale].f32;
    const char *bad = p->B < 1     ? "B"
                      : p->Hq < 1  ? "Hq"
                      : p->Hkv < 1 ? "Hkv"
                      : p->S < 1   ? "S"
                                   : NULL;
    if (bad)
        return avo_error(err, errlen, AVO_EINVAL, "config '%s': baseline %s needs %s >= 1", c->name,
                         b->name, bad);
    if (p->Hq % p->Hkv)
        return avo_error(err, errlen, AVO_EINVAL,
                         "config '%s': baseline %s needs Hq (%lld) a multiple of Hkv (%lld)",
                         c->name, b->name, (long long)p->Hq, (long long)p->Hkv);
    if (causal != 0 && causal != 1)
        return avo_error(err, errlen, AVO_EINVAL,
                         "config '%s': baseline %s needs causal 0 or 1, the evaluator gives %lld",
                         c->name, b->name, (long long)causal);
    if (!isfinite(p->scale_value))
        return avo_error(err, errlen, AVO_EINVAL, "config '%s': baseline %s needs a finite scale",
                         c->name, b->name);
    int64_t rows = p->B * p->Hq * p->S;
    int64_t q_len = (int64_t)c->lengths[p->q];
    if (q_len % rows || q_len / rows < 1)
        return avo_error(err, errlen, AVO_EINVAL,
                         "config '%s': baseline %s needs buffer Q of B*Hq*S*D elements, the "
                         "evaluator gives %lld, no multiple of B*Hq*S = %lld",
                         c->name, b->name, (long long)q_len, (long long)rows);
    p->D = q_len / rows;
    struct {
        int i;
        int64_t want;
        const char *what;
    } lens[] = {{p->k, p->B * p->Hkv * p->S * p->D, "B*Hkv*S*D"},
                {p->v, p->B * p->Hkv * p->S * p->D, "B*Hkv*S*D"},
                {p->o, q_len, "B*Hq*S*D"}};
    for (int i = 0; i < 3; i++)
        if ((int64_t)c->lengths[lens[i].i] != lens[i].want)
            return avo_error(err, errlen, AVO_EINVAL,
                             "config '%s': baseline %s needs buffer %s of %s = %lld elements "
                             "(D = %lld), the evaluator gives %zu",
                             c->name, b->name, spec->args[lens[i].i].name, lens[i].what,
                             (long long)lens[i].want, (long long)p->D, c->lengths[lens[i].i]);
    return 0;
}

int avo_vendor_check(const avo_baseline_info *b, const avo_jobspec *spec, char *err, size_t errlen)
{
    int rc = 0;
    if (is_cublas(b)) {
        gemm_problem p;
        rc = gemm_args(b, spec, &p, err, errlen);
        for (size_t i = 0; rc == 0 && i < spec->nconfigs; i++)
            rc = gemm_config(b, spec, &spec->configs[i], &p, err, errlen);
        for (size_t i = 0; rc == 0 && i < spec->ncheck_configs; i++)
            rc = gemm_config(b, spec, &spec->check_configs[i], &p, err, errlen);
    } else if (is_sdpa(b)) {
        sdpa_problem p;
        rc = sdpa_args(b, spec, &p, err, errlen);
        for (size_t i = 0; rc == 0 && i < spec->nconfigs; i++)
            rc = sdpa_config(b, spec, &spec->configs[i], &p, err, errlen);
        for (size_t i = 0; rc == 0 && i < spec->ncheck_configs; i++)
            rc = sdpa_config(b, spec, &spec->check_configs[i], &p, err, errlen);
    } else {
        rc = avo_error(err, errlen, AVO_EINVAL, "baseline '%s' has no runner in this build",
                       b->name);
    }
    return rc;
}

/* --------------------------------------------------------------- plans */

#define MAX_DESCS 96
#define SDPA_TENSORS 7 /* Q K V O Stats scale -inf: what a variant pack names */

enum { UID_Q = 1, UID_K, UID_V, UID_O, UID_STATS, UID_SCALE, UID_NEG_INF, UID_VIRTUAL = 100 };

struct avo_vendor_plan {
    int sdpa;
    int offline; /* build the cuDNN graph only, without a handle (avo_vendor_graph_check) */
    size_t nargs;
    const avo_driver_api *cu;
    /* cublas */
    const cublaslt_api *lt;
    gemm_problem gemm;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t layout_a, layout_b, layout_c;
    cublasLtMatmulAlgo_t algo;
    float alpha, beta;
    /* cudnn_sdpa */
    const cudnn_api *dnn;
    sdpa_problem attn;
    cudnnBackendDescriptor_t descs[MAX_DESCS]; /* every descriptor of the graph */
    int ndescs;
    cudnnBackendDescriptor_t exec_plan;
    cudnnBackendDescriptor_t *packs; /* per slot */
    float scale, neg_inf;            /* the by-value tensors' host values */
    CUdeviceptr stats;
    /* both */
    CUdeviceptr workspace;
    size_t workspace_bytes;
    size_t nslots;
    unsigned long long *ptrs; /* nslots * nargs */
};

/* The cuBLASLt element type of an avo buffer type. */
static int cuda_type(avo_dtype t)
{
    return t == AVO_DT_BF16 ? CUDA_R_16BF : t == AVO_DT_F16 ? CUDA_R_16F : CUDA_R_32F;
}

/* A failed cuBLASLt call as a one-line reason. */
static int lt_fail(const cublaslt_api *lt, cublasStatus_t st, int code, const char *what, char *err,
                   size_t errlen)
{
    const char *text = lt->GetStatusString ? lt->GetStatusString(st) : NULL;
    return avo_error(err, errlen, code, "cuBLASLt: %s failed: %s (status %d)", what,
                     text ? text : "unknown status", st);
}

static int gemm_plan(avo_vendor_plan *p, const avo_baseline_info *b, const avo_jobspec *spec,
                     const avo_config_spec *cfg, char *err, size_t errlen)
{
    const cublaslt_api *lt = p->lt;
    gemm_problem *g = &p->gemm;
    int rc = gemm_args(b, spec, g, err, errlen);
    if (rc == 0)
        rc = gemm_config(b, spec, cfg, g, err, errlen);
    if (rc < 0)
        return rc;
    cublasStatus_t st;
    if (!lt->handle && (st = ((cublaslt_api *)lt)->Create(&((cublaslt_api *)lt)->handle)) != 0)
        return lt_fail(lt, st, AVO_EINVAL, "cublasLtCreate", err, errlen);
    int in_type = cuda_type(spec->args[g->a].type), out_type = cuda_type(spec->args[g->c].type);
    int op_n = CUBLAS_OP_N;
    /* Row-major C = A*B as column-major C^T = B^T * A^T (see the top of this file). */
    if ((st = lt->MatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F)) != 0)
        return lt_fail(lt, st, AVO_EINVAL, "cublasLtMatmulDescCreate", err, errlen);
    if ((st = lt->MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_n,
                                         sizeof op_n)) != 0 ||
        (st = lt->MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n,
                                         sizeof op_n)) != 0)
        return lt_fail(lt, st, AVO_EINVAL, "cublasLtMatmulDescSetAttribute", err, errlen);
    if ((st = lt->MatrixLayoutCreate(&p->layout_a, in_type, (uint64_t)g->N, (uint64_t)g->K,
                                     g->N)) != 0 ||
        (st = lt->MatrixLayoutCreate(&p->layout_b, in_type, (uint64_t)g->K, (uint64_t)g->M,
                                     g->K)) != 0 ||
        (st = lt->MatrixLayoutCreate(&p->layout_c, out_type, (uint64_t)g->N, (uint64_t)g->M,
                                     g->N)) != 0)
        return lt_fail(lt, st, AVO_EINVAL, "cublasLtMatrixLayoutCreate", err, errlen);
    cublasLtMatmulPreference_t pref = NULL;
    size_t max_ws = CUBLAS_WORKSPACE_BYTES;
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    memset(&heur, 0, sizeof heur);
    if ((st = lt->MatmulPreferenceCreate(&pref)) != 0 ||
        (st = lt->MatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &max_ws, sizeof max_ws)) != 0 ||
        (st = lt->MatmulAlgoGetHeuristic(lt->handle, p->desc, p->layout_a, p->layout_b, p->layout_c,
                                         p->layout_c, pref, 1, &heur, &found)) != 0) {
        if (pref)
            lt->MatmulPreferenceDestroy(pref);
        return lt_fail(lt, st, AVO_EINVAL, "cublasLtMatmulAlgoGetHeuristic", err, errlen);
    }
    lt->MatmulPreferenceDestroy(pref);
    if (found < 1 || heur.state != 0)
        return avo_error(err, errlen, AVO_EINVAL,
                         "cuBLASLt has no algorithm for %lldx%lldx%lld with %s inputs and %s "
                         "output",
                         (long long)g->M, (long long)g->N, (long long)g->K,
                         avo_dtype_name(spec->args[g->a].type),
                         avo_dtype_name(spec->args[g->c].type));
    p->algo = heur.algo;
    p->workspace_bytes = heur.workspaceSize;
    p->alpha = 1.0f;
    p->beta = 0.0f;
    return 0;
}

/* ---- the cuDNN graph */

/* Building a graph: every descriptor is remembered (freed with the plan);
 * the first failure is kept with cuDNN's own message. */
typedef struct graph {
    avo_vendor_plan *p;
    int failed;
    char *err;
    size_t errlen;
    int64_t next_uid;
} graph;

static void graph_fail(graph *g, cudnnStatus_t st, const char *what)
{
    if (g->failed)
        return;
    g->failed = 1;
    char last[512] = "";
    g->p->dnn->GetLastErrorString(last, sizeof last);
    const char *name = g->p->dnn->GetErrorString(st);
    avo_error(g->err, g->errlen, AVO_EINVAL, "cuDNN: %s failed: %s%s%s", what,
              name ? name : "unknown status", last[0] ? ": " : "", last);
}

static cudnnBackendDescriptor_t graph_new(graph *g, int type)
{
    cudnnBackendDescriptor_t d = NULL;
    if (g->failed)
        return NULL;
    if (g->p->ndescs >= MAX_DESCS) {
        g->failed = 1;
        avo_error(g->err, g->errlen, AVO_ENOMEM, "cuDNN: too many descriptors");
        return NULL;
    }
    cudnnStatus_t st = g->p->dnn->BackendCreateDescriptor(type, &d);
    if (st != 0) {
        graph_fail(g, st, "cudnnBackendCreateDescriptor");
        return NULL;
    }
    g->p->descs[g->p->ndescs++] = d;
    return d;
}

static void graph_set(graph *g, cudnnBackendDescriptor_t d, int name, int type, int64_t n,
                      const void *v, const char *what)
{
    if (g->failed)
        return;
    cudnnStatus_t st = g->p->dnn->BackendSetAttribute(d, name, type, n, v);
    if (st != 0)
        graph_fail(g, st, what);
}

static void graph_finalize(graph *g, cudnnBackendDescriptor_t d, const char *what)
{
    if (g->failed)
        return;
    cudnnStatus_t st = g->p->dnn->BackendFinalize(d);
    if (st != 0)
        graph_fail(g, st, what);
}

/* A tensor of `type` with dims and strides [4]; uid 0 picks the next
 * virtual uid. */
static cudnnBackendDescriptor_t graph_tensor(graph *g, int64_t uid, int type, const int64_t *dims,
                                             const int64_t *strides, bool is_virtual, bool by_value)
{
    cudnnBackendDescriptor_t t = graph_new(g, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t align = 16;
    if (!uid)
        uid = g->next_uid++;
    graph_set(g, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, "tensor type");
    graph_set(g, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims, "tensor dims");
    graph_set(g, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides, "tensor strides");
    graph_set(g, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, "tensor uid");
    graph_set(g, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align,
              "tensor alignment");
    graph_set(g, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual,
              "tensor virtual");
    if (by_value)
        graph_set(g, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value,
                  "tensor by value");
    graph_finalize(g, t, "finalizing a tensor");
    return t;
}

/* A pointwise operation y = mode(x[, b][, t]); axis >= 0 for GEN_INDEX. */
static cudnnBackendDescriptor_t
graph_pointwise(graph *g, int mode, int prec, int64_t axis, cudnnBackendDescriptor_t x,
                cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y)
{
    cudnnBackendDescriptor_t pw = graph_new(g, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    graph_set(g, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode,
              "pointwise mode");
    graph_set(g, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec,
              "pointwise precision");
    if (axis >= 0)
        graph_set(g, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, "pointwise axis");
    graph_finalize(g, pw, "finalizing a pointwise descriptor");
    cudnnBackendDescriptor_t op = graph_new(g, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    graph_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
              &pw, "pointwise op");
    graph_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x,
              "pointwise x");
    if (b)
        graph_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b,
                  "pointwise b");
    if (t)
        graph_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t,
                  "pointwise t");
    graph_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y,
              "pointwise y");
    graph_finalize(g, op, "finalizing a pointwise operation");
    return op;
}

static cudnnBackendDescriptor_t graph_matmul(graph *g, cudnnBackendDescriptor_t a,
                                             cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c)
{
    int prec = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t mm = graph_new(g, CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    graph_set(g, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &prec, "matmul type");
    graph_finalize(g, mm, "finalizing a matmul descriptor");
    cudnnBackendDescriptor_t op = graph_new(g, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    graph_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a,
              "matmul a");
    graph_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b,
              "matmul b");
    graph_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c,
              "matmul c");
    graph_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm,
              "matmul desc");
    graph_finalize(g, op, "finalizing a matmul operation");
    return op;
}

static cudnnBackendDescriptor_t graph_reduce(graph *g, int op_type, cudnnBackendDescriptor_t x,
                                             cudnnBackendDescriptor_t y)
{
    int prec = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t rd = graph_new(g, CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    graph_set(g, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &op_type,
              "reduction operator");
    graph_set(g, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &prec,
              "reduction type");
    graph_finalize(g, rd, "finalizing a reduction descriptor");
    cudnnBackendDescriptor_t op = graph_new(g, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    graph_set(g, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x,
              "reduction x");
    graph_set(g, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y,
              "reduction y");
    graph_set(g, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd,
              "reduction desc");
    graph_finalize(g, op, "finalizing a reduction operation");
    return op;
}

/* Packed strides of dims [4]. */
static void packed(const int64_t *dims, int64_t *strides)
{
    strides[3] = 1;
    for (int i = 2; i >= 0; i--)
        strides[i] = strides[i + 1] * dims[i + 1];
}

static int sdpa_plan(avo_vendor_plan *p, const avo_baseline_info *b, const avo_jobspec *spec,
                     const avo_config_spec *cfg, char *err, size_t errlen)
{
    const cudnn_api *dnn = p->dnn;
    sdpa_problem *a = &p->attn;
    int rc = sdpa_args(b, spec, a, err, errlen);
    if (rc == 0)
        rc = sdpa_config(b, spec, cfg, a, err, errlen);
    if (rc < 0)
        return rc;
    graph g = {p, 0, err, errlen, UID_VIRTUAL};
    cudnnStatus_t st;
    if (!dnn->handle && !p->offline) {
        if ((st = ((cudnn_api *)dnn)->Create(&((cudnn_api *)dnn)->handle)) != 0) {
            graph_fail(&g, st, "cudnnCreate");
            return AVO_EINVAL; /* the library cannot work here: unavailable */
        }
        dnn->SetStream(dnn->handle, NULL);
    }
    int io = spec->args[a->q].type == AVO_DT_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
    int f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32, boolean = CUDNN_DATA_BOOLEAN;
    int64_t B = a->B, H = a->Hq, G = a->Hkv, S = a->S, D = a->D;
    int64_t q_dims[4] = {B, H, S, D}, q_str[4];
    int64_t kt_dims[4] = {B, G, D, S}, kt_str[4] = {G * S * D, S * D, 1, D}; /* K [b,g,s,d] */
    int64_t v_dims[4] = {B, G, S, D}, v_str[4];
    int64_t s_dims[4] = {B, H, S, S}, s_str[4];
    int64_t r_dims[4] = {B, H, S, 1}, r_str[4];
    int64_t one[4] = {1, 1, 1, 1};
    packed(q_dims, q_str);
    packed(v_dims, v_str);
    packed(s_dims, s_str);
    packed(r_dims, r_str);

    cudnnBackendDescriptor_t ops[16];
    int nops = 0;
    cudnnBackendDescriptor_t q = graph_tensor(&g, UID_Q, io, q_dims, q_str, 0, 0);
    cudnnBackendDescriptor_t kt = graph_tensor(&g, UID_K, io, kt_dims, kt_str, 0, 0);
    cudnnBackendDescriptor_t v = graph_tensor(&g, UID_V, io, v_dims, v_str, 0, 0);
    cudnnBackendDescriptor_t o = graph_tensor(&g, UID_O, io, q_dims, q_str, 0, 0);
    cudnnBackendDescriptor_t stats = graph_tensor(&g, UID_STATS, f32, r_dims, r_str, 0, 0);
    cudnnBackendDescriptor_t scale = graph_tensor(&g, UID_SCALE, f32, one, one, 0, 1);

    cudnnBackendDescriptor_t s1 = graph_tensor(&g, 0, f32, s_dims, s_str, 1, 0);
    ops[nops++] = graph_matmul(&g, q, kt, s1);
    cudnnBackendDescriptor_t s2 = graph_tensor(&g, 0, f32, s_dims, s_str, 1, 0);
    ops[nops++] = graph_pointwise(&g, CUDNN_POINTWISE_MUL, f32, -1, s1, scale, NULL, s2);
    if (a->is_causal) {
        cudnnBackendDescriptor_t neg_inf = graph_tensor(&g, UID_NEG_INF, f32, one, one, 0, 1);
        cudnnBackendDescriptor_t row = graph_tensor(&g, 0, i32, s_dims, s_str, 1, 0);
        cudnnBackendDescriptor_t col = graph_tensor(&g, 0, i32, s_dims, s_str, 1, 0);
        cudnnBackendDescriptor_t keep = graph_tensor(&g, 0, boolean, s_dims, s_str, 1, 0);
        cudnnBackendDescriptor_t s3 = graph_tensor(&g, 0, f32, s_dims, s_str, 1, 0);
        ops[nops++] = graph_pointwise(&g, CUDNN_POINTWISE_GEN_INDEX, f32, 2, s2, NULL, NULL, row);
        ops[nops++] = graph_pointwise(&g, CUDNN_POINTWISE_GEN_INDEX, f32, 3, s2, NULL, NULL, col);
        ops[nops++] =
            graph_pointwise(&g, CUDNN_POINTWISE_CMP_GE, boolean, -1, row, col, NULL, keep);
        ops[nops++] =
            graph_pointwise(&g, CUDNN_POINTWISE_BINARY_SELECT, f32, -1, s2, neg_inf, keep, s3);
        s2 = s3;
    }
    cudnnBackendDescriptor_t max = graph_tensor(&g, 0, f32, r_dims, r_str, 1, 0);
    ops[nops++] = graph_reduce(&g, CUDNN_REDUCE_TENSOR_MAX, s2, max);
    cudnnBackendDescriptor_t centred = graph_tensor(&g, 0, f32, s_dims, s_str, 1, 0);
    ops[nops++] = graph_pointwise(&g, CUDNN_POINTWISE_SUB, f32, -1, s2, max, NULL, centred);
    cudnnBackendDescriptor_t e = graph_tensor(&g, 0, f32, s_dims, s_str, 1, 0);
    ops[nops++] = graph_pointwise(&g, CUDNN_POINTWISE_EXP, f32, -1, centred, NULL, NULL, e);
    cudnnBackendDescriptor_t z = graph_tensor(&g, 0, f32, r_dims, r_str, 1, 0);
    ops[nops++] = graph_reduce(&g, CUDNN_REDUCE_TENSOR_ADD, e, z);
    cudnnBackendDescriptor_t log_z = graph_tensor(&g, 0, f32, r_dims, r_str, 1, 0);
    ops[nops++] = graph_pointwise(&g, CUDNN_POINTWISE_LOG, f32, -1, z, NULL, NULL, log_z);
    ops[nops++] = graph_pointwise(&g, CUDNN_POINTWISE_ADD, f32, -1, max, log_z, NULL, stats);
    cudnnBackendDescriptor_t prob = graph_tensor(&g, 0, io, s_dims, s_str, 1, 0);
    ops[nops++] = graph_pointwise(&g, CUDNN_POINTWISE_DIV, f32, -1, e, z, NULL, prob);
    ops[nops++] = graph_matmul(&g, prob, v, o);

    cudnnBackendDescriptor_t opgraph = graph_new(&g, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    if (dnn->handle) /* cuDNN 9 finalizes a graph without one; plans need one */
        graph_set(&g, opgraph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &dnn->handle,
                  "operation graph handle");
    graph_set(&g, opgraph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, nops, ops,
              "operation graph ops");
    graph_finalize(&g, opgraph, "finalizing the operation graph");

    int mode = CUDNN_HEUR_MODE_A;
    cudnnBackendDescriptor_t heur = graph_new(&g, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    graph_set(&g, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
              &opgraph, "heuristics graph");
    graph_set(&g, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode,
              "heuristics mode");
    graph_finalize(&g, heur, "engine heuristics (mode A)");
    if (g.failed)
        return AVO_EINVAL;
    if (p->offline)
        return 0; /* without a device, heuristics list no engine */

    int64_t count = 0;
    if ((st = dnn->BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL)) != 0) {
        graph_fail(&g, st, "reading the heuristics' results");
        return AVO_EINVAL;
    }
    if (count > 8)
        count = 8;
    if (count < 1)
        return avo_error(err, errlen, AVO_EINVAL,
                         "cuDNN: no engine for fused attention with B=%lld Hq=%lld Hkv=%lld "
                         "S=%lld D=%lld%s",
                         (long long)B, (long long)H, (long long)G, (long long)S, (long long)D,
                         a->is_causal ? " causal" : "");
    cudnnBackendDescriptor_t cfgs[8];
    for (int64_t i = 0; i < count; i++)
        cfgs[i] = graph_new(&g, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    int64_t got = 0;
    if (!g.failed &&
        (st = dnn->BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs)) != 0)
        graph_fail(&g, st, "reading the engine configs");
    if (g.failed)
        return AVO_EINVAL;
    /* The first engine config whose plan finalizes. */
    char first_failure[512] = "";
    for (int64_t i = 0; i < got && !p->exec_plan; i++) {
        cudnnBackendDescriptor_t plan = graph_new(&g, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        graph_set(&g, plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &dnn->handle,
                  "plan handle");
        graph_set(&g, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                  1, &cfgs[i], "plan engine config");
        graph_finalize(&g, plan, "building the execution plan");
        if (!g.failed) {
            p->exec_plan = plan;
            break;
        }
        if (!first_failure[0])
            snprintf(first_failure, sizeof first_failure, "%s", err);
        g.failed = 0; /* try the next engine config */
    }
    if (!p->exec_plan)
        return avo_error(err, errlen, AVO_EINVAL, "%s",
                         first_failure[0] ? first_failure
                                          : "cuDNN: no engine config gave an execution plan");
    int64_t ws = 0, n = 0;
    if ((st = dnn->BackendGetAttribute(p->exec_plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                       CUDNN_TYPE_INT64, 1, &n, &ws)) != 0) {
        graph_fail(&g, st, "reading the plan's workspace size");
        return AVO_EINVAL;
    }
    p->workspace_bytes = ws > 0 ? (size_t)ws : 0;
    p->scale = a->scale_value;
    p->neg_inf = -INFINITY;
    CUresult cr = p->cu->MemAlloc(&p->stats, (size_t)(B * H * S) * sizeof(float));
    if (cr != AVO_CUDA_SUCCESS) {
        char text[256];
        return avo_error(err, errlen, AVO_EIO, "cuMemAlloc (cuDNN statistics): %s",
                         avo_cuda_driver_error(cr, text, sizeof text));
    }
    return 0;
}

int avo_vendor_plan_new(const avo_baseline_info *b, const avo_jobspec *spec,
                        const avo_config_spec *cfg, avo_vendor_plan **ret, char *err, size_t errlen)
{
    *ret = NULL;
    avo_vendor_plan *p = calloc(1, sizeof *p);
    if (!p)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    p->nargs = spec->nargs;
    p->sdpa = is_sdpa(b);
    p->cu = avo_cuda_driver(err, errlen);
    int rc = p->cu ? 0 : AVO_EIO;
    if (rc == 0 && is_cublas(b)) {
        p->lt = load_cublaslt(err, errlen);
        rc = p->lt ? gemm_plan(p, b, spec, cfg, err, errlen) : AVO_ENOTFOUND;
    } else if (rc == 0 && p->sdpa) {
        p->dnn = load_cudnn(err, errlen);
        rc = p->dnn ? sdpa_plan(p, b, spec, cfg, err, errlen) : AVO_ENOTFOUND;
    } else if (rc == 0) {
        rc = avo_error(err, errlen, AVO_EINVAL, "baseline '%s' has no runner in this build",
                       b->name);
    }
    if (rc == 0 && p->workspace_bytes) {
        CUresult cr = p->cu->MemAlloc(&p->workspace, p->workspace_bytes);
        if (cr != AVO_CUDA_SUCCESS) {
            char text[256];
            rc = avo_error(err, errlen, AVO_EIO, "cuMemAlloc (%s workspace, %zu bytes): %s",
                           b->library, p->workspace_bytes,
                           avo_cuda_driver_error(cr, text, sizeof text));
        }
    }
    if (rc < 0) {
        avo_vendor_plan_free(p, 0);
        return rc;
    }
    *ret = p;
    return 0;
}

int avo_vendor_graph_check(const avo_jobspec *spec, const avo_config_spec *cfg, char *err,
                           size_t errlen)
{
    const avo_baseline_info *b = avo_baseline_find("cudnn_sdpa");
    avo_vendor_plan *p = calloc(1, sizeof *p);
    if (!p)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    p->sdpa = p->offline = 1;
    p->nargs = spec->nargs;
    p->dnn = load_cudnn(err, errlen);
    int rc = p->dnn ? sdpa_plan(p, b, spec, cfg, err, errlen) : AVO_ENOTFOUND;
    avo_vendor_plan_free(p, 1);
    return rc;
}

/* Drop the per-slot variant packs. */
static void packs_free(avo_vendor_plan *p)
{
    for (size_t s = 0; p->packs && s < p->nslots; s++)
        if (p->packs[s])
            p->dnn->BackendDestroyDescriptor(p->packs[s]);
    free(p->packs);
    p->packs = NULL;
}

int avo_vendor_plan_bind(avo_vendor_plan *p, size_t nslots, const unsigned long long *ptrs,
                         char *err, size_t errlen)
{
    if (p->sdpa)
        packs_free(p);
    free(p->ptrs);
    p->nslots = 0;
    p->ptrs = malloc((nslots ? nslots : 1) * (p->nargs ? p->nargs : 1) * sizeof *p->ptrs);
    if (!p->ptrs)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    memcpy(p->ptrs, ptrs, nslots * p->nargs * sizeof *p->ptrs);
    p->nslots = nslots;
    if (!p->sdpa)
        return 0;
    p->packs = calloc(nslots ? nslots : 1, sizeof *p->packs);
    if (!p->packs)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    const cudnn_api *dnn = p->dnn;
    for (size_t s = 0; s < nslots; s++) {
        const unsigned long long *slot = p->ptrs + s * p->nargs;
        int64_t uids[SDPA_TENSORS] = {UID_Q,     UID_K,     UID_V,      UID_O,
                                      UID_STATS, UID_SCALE, UID_NEG_INF};
        void *data[SDPA_TENSORS] = {(void *)(uintptr_t)slot[p->attn.q],
                                    (void *)(uintptr_t)slot[p->attn.k],
                                    (void *)(uintptr_t)slot[p->attn.v],
                                    (void *)(uintptr_t)slot[p->attn.o],
                                    (void *)(uintptr_t)p->stats,
                                    &p->scale,
                                    &p->neg_inf};
        int64_t n = p->attn.is_causal ? SDPA_TENSORS : SDPA_TENSORS - 1;
        void *ws = (void *)(uintptr_t)p->workspace;
        cudnnStatus_t st =
            dnn->BackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &p->packs[s]);
        if (st == 0)
            st = dnn->BackendSetAttribute(p->packs[s], CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                          CUDNN_TYPE_INT64, n, uids);
        if (st == 0)
            st = dnn->BackendSetAttribute(p->packs[s], CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                          CUDNN_TYPE_VOID_PTR, n, data);
        if (st == 0)
            st = dnn->BackendSetAttribute(p->packs[s], CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                          CUDNN_TYPE_VOID_PTR, 1, &ws);
        if (st == 0)
            st = dnn->BackendFinalize(p->packs[s]);
        if (st != 0) {
            char last[512] = "";
            dnn->GetLastErrorString(last, sizeof last);
            return avo_error(err, errlen, AVO_EIO, "cuDNN: variant pack for slot %zu: %s%s%s", s,
                             dnn->GetErrorString(st), last[0] ? ": " : "", last);
        }
    }
    return 0;
}

int avo_vendor_plan_run(avo_vendor_plan *p, size_t slot, char *err, size_t errlen)
{
    if (slot >= p->nslots)
        return avo_error(err, errlen, AVO_EINVAL, "slot %zu of %zu bound", slot, p->nslots);
    if (p->sdpa) {
        cudnnStatus_t st = p->dnn->BackendExecute(p->dnn->handle, p->exec_plan, p->packs[slot]);
        if (st != 0) {
            char last[512] = "";
            p->dnn->GetLastErrorString(last, sizeof last);
            return avo_error(err, errlen, AVO_EIO, "cuDNN: cudnnBackendExecute failed: %s%s%s",
                             p->dnn->GetErrorString(st), last[0] ? ": " : "", last);
        }
        return 0;
    }
    const unsigned long long *s = p->ptrs + slot * p->nargs;
    const void *A = (const void *)(uintptr_t)s[p->gemm.a];
    const void *B = (const void *)(uintptr_t)s[p->gemm.b];
    void *C = (void *)(uintptr_t)s[p->gemm.c];
    /* Column-major C^T = B^T * A^T: the evaluator's B is cuBLASLt's "A". */
    cublasStatus_t st = p->lt->Matmul(
        p->lt->handle, p->desc, &p->alpha, B, p->layout_a, A, p->layout_b, &p->beta, C, p->layout_c,
        C, p->layout_c, &p->algo, (void *)(uintptr_t)p->workspace, p->workspace_bytes, NULL);
    if (st != 0)
        return lt_fail(p->lt, st, AVO_EIO, "cublasLtMatmul", err, errlen);
    return 0;
}

void avo_vendor_plan_free(avo_vendor_plan *p, int keep_device)
{
    if (!p)
        return;
    if (p->lt) {
        if (p->desc)
            p->lt->MatmulDescDestroy(p->desc);
        if (p->layout_a)
            p->lt->MatrixLayoutDestroy(p->layout_a);
        if (p->layout_b)
            p->lt->MatrixLayoutDestroy(p->layout_b);
        if (p->layout_c)
            p->lt->MatrixLayoutDestroy(p->layout_c);
    }
    if (p->dnn) {
        packs_free(p);
        for (int i = p->ndescs - 1; i >= 0; i--)
            p->dnn->BackendDestroyDescriptor(p->descs[i]);
    }
    if (!keep_device && p->cu) {
        if (p->workspace)
            p->cu->MemFree(p->workspace);
        if (p->stats)
            p->cu->MemFree(p->stats);
    }
    free(p->ptrs);
    free(p);
}
