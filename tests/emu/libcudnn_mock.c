/*
 * libcudnn_mock.c — a stand-in for cuDNN 9's backend API (built as
 * libcudnn.so.9) for the baseline tests under the CPU emulator, where
 * device pointers are host pointers.
 *
 * Descriptors are stored generically: a type and the attributes set on it
 * (name, attribute type, elements).  Finalize checks what each type needs.
 * Finalizing an operation graph checks that it has the shape of cuDNN's
 * fused flash-attention forward: two matmuls (Q.K^T and P.V), a by-value
 * scale multiply, softmax as max/sub/exp/sum/div with the statistics
 * (max + log sum) written to a non-virtual fp32 tensor, P of the I/O type,
 * every other intermediate virtual, an optional causal mask made of two
 * GEN_INDEX (axes 2 and 3), a CMP_GE and a BINARY_SELECT against a
 * by-value -inf, and unique tensor uids.  Execution checks the variant
 * pack (exactly the graph's non-virtual uids, no null pointer, a workspace
 * when the plan asked for one) and then *interprets the graph*, op by op
 * with broadcasting (GQA: a head dimension that divides the output's maps
 * head h to h / (H / Hkv)), reading and writing device tensors through their
 * dims, strides and element types.  So a graph that is wrong in structure
 * is refused, and one that is wrong in meaning (mask direction, strides of
 * K^T, head mapping, scale) computes a wrong answer that the judge rejects.
 *
 * Knobs: AVO_MOCK_BASELINE_WRONG=1 adds 0.5 to the first output element;
 * AVO_MOCK_CUDNN_REFUSE=B,Hq,Hkv,S makes every execution plan for that
 * problem fail to finalize (CUDNN_STATUS_NOT_SUPPORTED with a message);
 * AVO_MOCK_CUDNN_EXEC_FAIL=1 makes every execution fail.
 * Version 9.19.99.  Only the entry points avo calls exist.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"

enum {
    SUCCESS = 0,
    BAD_PARAM = 2000,
    NOT_SUPPORTED = 3000,
    EXECUTION_FAILED = 5000,
    /* attribute element types */
    T_HANDLE = 0,
    T_DATA_TYPE = 1,
    T_BOOLEAN = 2,
    T_INT64 = 3,
    T_FLOAT = 4,
    T_DOUBLE = 5,
    T_VOID_PTR = 6,
    T_BACKEND_DESCRIPTOR = 15,
    /* data types */
    D_FLOAT = 0,
    D_HALF = 2,
    D_INT32 = 4,
    D_BFLOAT16 = 9,
    D_BOOLEAN = 11,
    /* descriptor types */
    POINTWISE = 0,
    ENGINECFG = 3,
    ENGINEHEUR = 4,
    EXECUTION_PLAN = 5,
    OP_POINTWISE = 13,
    OPERATIONGRAPH = 15,
    VARIANT_PACK = 16,
    TENSOR = 17,
    MATMUL = 18,
    OP_MATMUL = 19,
    REDUCTION = 21,
    OP_REDUCTION = 22,
    /* attributes */
    A_PW_MODE = 0,
    A_PW_PREC = 1,
    A_PW_AXIS = 9,
    A_HEUR_MODE = 200,
    A_HEUR_GRAPH = 201,
    A_HEUR_RESULTS = 202,
    A_PLAN_HANDLE = 400,
    A_PLAN_CONFIG = 401,
    A_PLAN_WORKSPACE = 402,
    A_OPPW_DESC = 750,
    A_OPPW_X = 751,
    A_OPPW_B = 752,
    A_OPPW_Y = 753,
    A_OPPW_T = 758,
    A_GRAPH_HANDLE = 800,
    A_GRAPH_OPS = 801,
    A_T_ALIGN = 900,
    A_T_TYPE = 901,
    A_T_DIMS = 902,
    A_T_STRIDES = 903,
    A_T_UID = 906,
    A_T_VIRTUAL = 907,
    A_T_BY_VALUE = 908,
    A_VP_UIDS = 1000,
    A_VP_PTRS = 1001,
    A_VP_WORKSPACE = 1003,
    A_MM_TYPE = 1500,
    A_OPMM_A = 1520,
    A_OPMM_B = 1521,
    A_OPMM_C = 1522,
    A_OPMM_DESC = 1523,
    A_RD_OP = 1600,
    A_RD_TYPE = 1601,
    A_OPRD_X = 1610,
    A_OPRD_Y = 1611,
    A_OPRD_DESC = 1612,
    /* modes */
    PW_ADD = 0,
    PW_MUL = 1,
    PW_DIV = 6,
    PW_SUB = 9,
    PW_EXP = 13,
    PW_LOG = 15,
    PW_CMP_GE = 303,
    PW_GEN_INDEX = 501,
    PW_BINARY_SELECT = 601,
    RD_ADD = 0,
    RD_MAX = 3,
    WORKSPACE = 1024,
    MAX_ATTRS = 16,
};

typedef struct attr {
    int name, type;
    int64_t n;
    unsigned char *data;
} attr;

typedef struct desc {
    int type, finalized;
    attr attrs[MAX_ATTRS];
    int nattrs;
    /* interpreter state of a tensor */
    double *values;
    int64_t count;
} desc;

static char last_error[512];

static int fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

size_t cudnnGetVersion(void)
{
    return 91999;
}

const char *cudnnGetErrorString(int status)
{
    switch (status) {
    case SUCCESS:
        return "CUDNN_STATUS_SUCCESS";
    case BAD_PARAM:
        return "CUDNN_STATUS_BAD_PARAM";
    case NOT_SUPPORTED:
        return "CUDNN_STATUS_NOT_SUPPORTED";
    case EXECUTION_FAILED:
        return "CUDNN_STATUS_EXECUTION_FAILED";
    default:
        return "CUDNN_STATUS_UNKNOWN";
    }
}

void cudnnGetLastErrorString(char *message, size_t max)
{
    snprintf(message, max, "%s", last_error);
    last_error[0] = '\0';
}

static int the_handle;

int cudnnCreate(void **handle)
{
    *handle = &the_handle;
    return SUCCESS;
}

int cudnnSetStream(void *handle, void *stream)
{
    (void)stream;
    return handle == &the_handle ? SUCCESS : BAD_PARAM;
}

static size_t element_size(int type)
{
    switch (type) {
    case T_DATA_TYPE:
    case T_FLOAT:
    case 8:  /* HEUR_MODE */
    case 14: /* POINTWISE_MODE */
    case 18: /* REDUCTION_OPERATOR_TYPE */
    case 23: /* INT32 */
        return 4;
    case T_BOOLEAN:
    case 24: /* CHAR */
        return 1;
    default:
        return 8;
    }
}

int cudnnBackendCreateDescriptor(int type, desc **ret)
{
    *ret = calloc(1, sizeof **ret);
    (*ret)->type = type;
    return SUCCESS;
}

int cudnnBackendDestroyDescriptor(desc *d)
{
    if (!d)
        return BAD_PARAM;
    for (int i = 0; i < d->nattrs; i++)
        free(d->attrs[i].data);
    free(d->values);
    free(d);
    return SUCCESS;
}

static attr *find(const desc *d, int name)
{
    for (int i = 0; i < d->nattrs; i++)
        if (d->attrs[i].name == name)
            return (attr *)&d->attrs[i];
    return NULL;
}

int cudnnBackendSetAttribute(desc *d, int name, int type, int64_t n, const void *elements)
{
    if (!d || n < 0 || (n && !elements))
        return fail(BAD_PARAM, "mock: bad SetAttribute arguments");
    if (d->finalized)
        return fail(BAD_PARAM, "mock: descriptor already finalized (attribute %d)", name);
    attr *a = find(d, name);
    if (!a) {
        if (d->nattrs == MAX_ATTRS)
            return fail(BAD_PARAM, "mock: too many attributes");
        a = &d->attrs[d->nattrs++];
    } else {
        free(a->data);
    }
    a->name = name;
    a->type = type;
    a->n = n;
    a->data = malloc((size_t)n * element_size(type) + 1);
    memcpy(a->data, elements, (size_t)n * element_size(type));
    return SUCCESS;
}

/* The attribute's elements when it has type `type` and at least `min`. */
static const void *get(const desc *d, int name, int type, int64_t min, int64_t *ret_n)
{
    const attr *a = find(d, name);
    if (!a || a->type != type || a->n < min)
        return NULL;
    if (ret_n)
        *ret_n = a->n;
    return a->data;
}

static int64_t get_i64(const desc *d, int name, int64_t fallback)
{
    const int64_t *v = get(d, name, T_INT64, 1, NULL);
    return v ? *v : fallback;
}

static int get_enum(const desc *d, int name, int type, int fallback)
{
    const int *v = get(d, name, type, 1, NULL);
    return v ? *v : fallback;
}

static desc *get_desc(const desc *d, int name)
{
    desc *const *v = get(d, name, T_BACKEND_DESCRIPTOR, 1, NULL);
    return v ? *v : NULL;
}

static bool tensor_virtual(const desc *t)
{
    const bool *v = get(t, A_T_VIRTUAL, T_BOOLEAN, 1, NULL);
    return v && *v;
}

static bool tensor_by_value(const desc *t)
{
    const bool *v = get(t, A_T_BY_VALUE, T_BOOLEAN, 1, NULL);
    return v && *v;
}

static const int64_t *tensor_dims(const desc *t)
{
    return get(t, A_T_DIMS, T_INT64, 4, NULL);
}

static const int64_t *tensor_strides(const desc *t)
{
    return get(t, A_T_STRIDES, T_INT64, 4, NULL);
}

static int tensor_type(const desc *t)
{
    return get_enum(t, A_T_TYPE, T_DATA_TYPE, -1);
}

/* ------------------------------------------------------ graph checks */

typedef struct graph_view {
    desc *ops[32];
    int nops;
    desc *tensors[64];
    int ntensors;
} graph_view;

static void add_tensor(graph_view *g, desc *t)
{
    if (!t)
        return;
    for (int i = 0; i < g->ntensors; i++)
        if (g->tensors[i] == t)
            return;
    if (g->ntensors < 64)
        g->tensors[g->ntensors++] = t;
}

/* The tensors an op reads (in[0..2]) and writes. */
static void op_io(const desc *op, desc **in, desc **out)
{
    in[0] = in[1] = in[2] = *out = NULL;
    if (op->type == OP_MATMUL) {
        in[0] = get_desc(op, A_OPMM_A);
        in[1] = get_desc(op, A_OPMM_B);
        *out = get_desc(op, A_OPMM_C);
    } else if (op->type == OP_POINTWISE) {
        in[0] = get_desc(op, A_OPPW_X);
        in[1] = get_desc(op, A_OPPW_B);
        in[2] = get_desc(op, A_OPPW_T);
        *out = get_desc(op, A_OPPW_Y);
    } else if (op->type == OP_REDUCTION) {
        in[0] = get_desc(op, A_OPRD_X);
        *out = get_desc(op, A_OPRD_Y);
    }
}

static int op_mode(const desc *op)
{
    if (op->type == OP_POINTWISE) {
        const desc *pw = get_desc(op, A_OPPW_DESC);
        return pw ? get_enum(pw, A_PW_MODE, 14, -1) : -1;
    }
    if (op->type == OP_REDUCTION) {
        const desc *rd = get_desc(op, A_OPRD_DESC);
        return rd ? get_enum(rd, A_RD_OP, 18, -1) : -1;
    }
    return -2;
}

/* Count ops of `type` (and pointwise/reduction `mode`, -1 any). */
static int count_ops(const graph_view *g, int type, int mode)
{
    int n = 0;
    for (int i = 0; i < g->nops; i++)
        if (g->ops[i]->type == type && (mode < 0 || op_mode(g->ops[i]) == mode))
            n++;
    return n;
}

static desc *find_op(const graph_view *g, int type, int mode, int nth)
{
    for (int i = 0; i < g->nops; i++)
        if (g->ops[i]->type == type && (mode < 0 || op_mode(g->ops[i]) == mode) && nth-- == 0)
            return g->ops[i];
    return NULL;
}

static int graph_collect(const desc *graph, graph_view *g)
{
    int64_t n = 0;
    desc *const *ops = get(graph, A_GRAPH_OPS, T_BACKEND_DESCRIPTOR, 1, &n);
    memset(g, 0, sizeof *g);
    if (!ops || n > 32)
        return fail(BAD_PARAM, "mock: operation graph without operations");
    for (int64_t i = 0; i < n; i++) {
        desc *in[3], *out;
        if (!ops[i]->finalized)
            return fail(BAD_PARAM, "mock: operation %lld not finalized", (long long)i);
        g->ops[g->nops++] = ops[i];
        op_io(ops[i], in, &out);
        if (!out || !in[0])
            return fail(BAD_PARAM, "mock: operation %lld lacks its tensors", (long long)i);
        for (int k = 0; k < 3; k++)
            add_tensor(g, in[k]);
        add_tensor(g, out);
    }
    return SUCCESS;
}

/* The checks of a fused flash-attention forward graph. */
static int check_sdpa_graph(const graph_view *g)
{
    for (int i = 0; i < g->ntensors; i++)
        for (int j = 0; j < i; j++)
            if (get_i64(g->tensors[i], A_T_UID, -1) == get_i64(g->tensors[j], A_T_UID, -2))
                return fail(BAD_PARAM, "mock: two tensors share uid %lld",
                            (long long)get_i64(g->tensors[i], A_T_UID, -1));
    if (count_ops(g, OP_MATMUL, -1) != 2)
        return fail(NOT_SUPPORTED, "mock: fused attention needs exactly two matmuls, graph has %d",
                    count_ops(g, OP_MATMUL, -1));
    if (count_ops(g, OP_REDUCTION, RD_MAX) != 1 || count_ops(g, OP_REDUCTION, RD_ADD) != 1 ||
        count_ops(g, OP_POINTWISE, PW_EXP) != 1 || count_ops(g, OP_POINTWISE, PW_SUB) != 1 ||
        count_ops(g, OP_POINTWISE, PW_DIV) != 1 || count_ops(g, OP_POINTWISE, PW_LOG) != 1 ||
        count_ops(g, OP_POINTWISE, PW_ADD) != 1)
        return fail(NOT_SUPPORTED, "mock: softmax with statistics (max, sub, exp, sum, log, add, "
                                   "div) not found");
    desc *mul = find_op(g, OP_POINTWISE, PW_MUL, 0);
    if (!mul || count_ops(g, OP_POINTWISE, PW_MUL) != 1 ||
        !tensor_by_value(get_desc(mul, A_OPPW_B)))
        return fail(NOT_SUPPORTED, "mock: the scale must be one multiply by a by-value tensor");
    int masks = count_ops(g, OP_POINTWISE, PW_GEN_INDEX);
    if (masks) {
        desc *sel = find_op(g, OP_POINTWISE, PW_BINARY_SELECT, 0);
        desc *cmp = find_op(g, OP_POINTWISE, PW_CMP_GE, 0);
        desc *row = find_op(g, OP_POINTWISE, PW_GEN_INDEX, 0);
        desc *col = find_op(g, OP_POINTWISE, PW_GEN_INDEX, 1);
        if (masks != 2 || !sel || !cmp || !tensor_by_value(get_desc(sel, A_OPPW_B)) ||
            get_desc(sel, A_OPPW_T) != get_desc(cmp, A_OPPW_Y))
            return fail(NOT_SUPPORTED, "mock: the causal mask must be two GEN_INDEX, CMP_GE and "
                                       "BINARY_SELECT(x, by-value -inf, comparison)");
        if (get_i64(get_desc(row, A_OPPW_DESC), A_PW_AXIS, -1) == 3) {
            desc *t = row;
            row = col;
            col = t;
        }
        if (get_i64(get_desc(row, A_OPPW_DESC), A_PW_AXIS, -1) != 2 ||
            get_i64(get_desc(col, A_OPPW_DESC), A_PW_AXIS, -1) != 3)
            return fail(NOT_SUPPORTED, "mock: GEN_INDEX axes must be 2 (rows) and 3 (columns)");
        if (tensor_type(get_desc(cmp, A_OPPW_Y)) != D_BOOLEAN)
            return fail(NOT_SUPPORTED, "mock: the comparison must give a boolean tensor");
    } else if (count_ops(g, OP_POINTWISE, PW_BINARY_SELECT) ||
               count_ops(g, OP_POINTWISE, PW_CMP_GE)) {
        return fail(NOT_SUPPORTED, "mock: a mask without GEN_INDEX");
    }
    int expected = 2 + 8 + (masks ? 4 : 0);
    if (g->nops != expected)
        return fail(NOT_SUPPORTED, "mock: %d operations, a fused attention forward has %d", g->nops,
                    expected);
    /* Non-virtual: Q, K, V (matmul inputs), O, Stats, and the by-value scalars. */
    desc *bmm1 = find_op(g, OP_MATMUL, -1, 0), *bmm2 = find_op(g, OP_MATMUL, -1, 1);
    desc *q = get_desc(bmm1, A_OPMM_A), *k = get_desc(bmm1, A_OPMM_B);
    desc *p = get_desc(bmm2, A_OPMM_A), *v = get_desc(bmm2, A_OPMM_B),
         *o = get_desc(bmm2, A_OPMM_C);
    desc *stats = get_desc(find_op(g, OP_POINTWISE, PW_ADD, 0), A_OPPW_Y);
    int io = tensor_type(q);
    if (io != D_BFLOAT16 && io != D_HALF)
        return fail(NOT_SUPPORTED, "mock: Q must be bf16 or fp16");
    if (tensor_type(k) != io || tensor_type(v) != io || tensor_type(o) != io)
        return fail(NOT_SUPPORTED, "mock: Q, K, V and O must share their type");
    if (tensor_type(p) != io)
        return fail(NOT_SUPPORTED, "mock: the second matmul's A (P) must have the I/O type");
    if (tensor_type(stats) != D_FLOAT || tensor_virtual(stats))
        return fail(NOT_SUPPORTED, "mock: the statistics must be a non-virtual fp32 tensor");
    for (int i = 0; i < g->ntensors; i++) {
        desc *t = g->tensors[i];
        bool external = t == q || t == k || t == v || t == o || t == stats;
        if (tensor_by_value(t)) {
            if (tensor_type(t) != D_FLOAT)
                return fail(NOT_SUPPORTED, "mock: by-value scalars must be fp32");
            continue;
        }
        if (external == tensor_virtual(t))
            return fail(NOT_SUPPORTED, "mock: tensor uid %lld must %sbe virtual",
                        (long long)get_i64(t, A_T_UID, -1), external ? "not " : "");
    }
    /* Dimensions: Q [b,h,s,d], K^T [b,g,d,s], V [b,g,s,d], O like Q. */
    const int64_t *qd = tensor_dims(q), *kd = tensor_dims(k), *vd = tensor_dims(v),
                  *od = tensor_dims(o);
    if (kd[0] != qd[0] || kd[2] != qd[3] || kd[3] != qd[2] || qd[1] % kd[1] || vd[0] != qd[0] ||
        vd[1] != kd[1] || vd[2] != qd[2] || vd[3] != qd[3] || memcmp(qd, od, 4 * sizeof *qd))
        return fail(BAD_PARAM, "mock: Q/K^T/V/O dimensions disagree");
    return SUCCESS;
}

static bool refused(const graph_view *g)
{
    const char *refuse = getenv("AVO_MOCK_CUDNN_REFUSE");
    if (!refuse || !*refuse)
        return false;
    desc *bmm1 = find_op(g, OP_MATMUL, -1, 0);
    const int64_t *qd = tensor_dims(get_desc(bmm1, A_OPMM_A));
    const int64_t *kd = tensor_dims(get_desc(bmm1, A_OPMM_B));
    char problem[128];
    snprintf(problem, sizeof problem, "%lld,%lld,%lld,%lld", (long long)qd[0], (long long)qd[1],
             (long long)kd[1], (long long)qd[2]);
    return strcmp(problem, refuse) == 0;
}

int cudnnBackendFinalize(desc *d)
{
    if (!d || d->finalized)
        return fail(BAD_PARAM, "mock: finalize of a finalized descriptor");
    graph_view g;
    int st = SUCCESS;
    switch (d->type) {
    case TENSOR: {
        int64_t nd = 0, ns = 0;
        if (!get(d, A_T_TYPE, T_DATA_TYPE, 1, NULL) || !get(d, A_T_DIMS, T_INT64, 1, &nd) ||
            !get(d, A_T_STRIDES, T_INT64, 1, &ns) || !get(d, A_T_UID, T_INT64, 1, NULL) ||
            !get(d, A_T_ALIGN, T_INT64, 1, NULL))
            return fail(BAD_PARAM, "mock: a tensor needs type, dims, strides, uid and alignment");
        if (nd != 4 || ns != 4)
            return fail(BAD_PARAM, "mock: tensors here are 4-d");
        const int64_t *dims = tensor_dims(d);
        for (int i = 0; i < 4; i++)
            if (dims[i] < 1)
                return fail(BAD_PARAM, "mock: dimension %d is %lld", i, (long long)dims[i]);
        break;
    }
    case POINTWISE:
        if (get_enum(d, A_PW_MODE, 14, -1) < 0 || !get(d, A_PW_PREC, T_DATA_TYPE, 1, NULL))
            return fail(BAD_PARAM, "mock: pointwise needs a mode and a precision");
        if (get_enum(d, A_PW_MODE, 14, -1) == PW_GEN_INDEX && get_i64(d, A_PW_AXIS, -1) < 0)
            return fail(BAD_PARAM, "mock: GEN_INDEX needs an axis");
        break;
    case MATMUL:
    case REDUCTION:
        if (!get(d, d->type == MATMUL ? A_MM_TYPE : A_RD_TYPE, T_DATA_TYPE, 1, NULL))
            return fail(BAD_PARAM, "mock: compute type missing");
        break;
    case OP_POINTWISE:
    case OP_MATMUL:
    case OP_REDUCTION: {
        desc *in[3], *out;
        op_io(d, in, &out);
        if (!in[0] || !out || op_mode(d) == -1)
            return fail(BAD_PARAM, "mock: operation without its tensors or descriptor");
        break;
    }
    case OPERATIONGRAPH:
        if (!get(d, A_GRAPH_HANDLE, T_HANDLE, 1, NULL))
            return fail(BAD_PARAM, "mock: operation graph without a handle");
        if ((st = graph_collect(d, &g)) != SUCCESS || (st = check_sdpa_graph(&g)) != SUCCESS)
            return st;
        break;
    case ENGINEHEUR:
        if (!get_desc(d, A_HEUR_GRAPH) || get_enum(d, A_HEUR_MODE, 8, -1) != 3)
            return fail(BAD_PARAM, "mock: heuristics need a graph and mode A");
        break;
    case EXECUTION_PLAN: {
        desc *cfg = get_desc(d, A_PLAN_CONFIG);
        if (!cfg || !get(d, A_PLAN_HANDLE, T_HANDLE, 1, NULL))
            return fail(BAD_PARAM, "mock: a plan needs a handle and an engine config");
        desc *graph = get_desc(cfg, A_HEUR_GRAPH);
        if (!graph || graph_collect(graph, &g) != SUCCESS)
            return fail(BAD_PARAM, "mock: engine config from no heuristics");
        if (refused(&g))
            return fail(NOT_SUPPORTED, "mock: no engine supports this attention problem "
                                       "(AVO_MOCK_CUDNN_REFUSE)");
        break;
    }
    case VARIANT_PACK:
        if (!get(d, A_VP_UIDS, T_INT64, 1, NULL) || !get(d, A_VP_PTRS, T_VOID_PTR, 1, NULL) ||
            !get(d, A_VP_WORKSPACE, T_VOID_PTR, 1, NULL))
            return fail(BAD_PARAM, "mock: a variant pack needs uids, pointers and a workspace");
        break;
    default:
        break;
    }
    d->finalized = 1;
    return SUCCESS;
}

int cudnnBackendGetAttribute(const desc *d, int name, int type, int64_t requested, int64_t *count,
                             void *elements)
{
    if (!d || !d->finalized)
        return fail(BAD_PARAM, "mock: GetAttribute on a descriptor not finalized");
    if (d->type == ENGINEHEUR && name == A_HEUR_RESULTS && type == T_BACKEND_DESCRIPTOR) {
        *count = 1;
        if (requested >= 1) {
            desc *cfg = ((desc **)elements)[0];
            desc *graph = get_desc(d, A_HEUR_GRAPH);
            if (!cfg || cfg->type != ENGINECFG)
                return fail(BAD_PARAM, "mock: results go into engine config descriptors");
            cudnnBackendSetAttribute(cfg, A_HEUR_GRAPH, T_BACKEND_DESCRIPTOR, 1, &graph);
            cfg->finalized = 1;
        }
        return SUCCESS;
    }
    if (d->type == EXECUTION_PLAN && name == A_PLAN_WORKSPACE && type == T_INT64 &&
        requested >= 1) {
        *(int64_t *)elements = WORKSPACE;
        *count = 1;
        return SUCCESS;
    }
    return fail(NOT_SUPPORTED, "mock: attribute %d of descriptor type %d cannot be read", name,
                d->type);
}

/* ------------------------------------------------------ interpreter */

static int64_t numel(const int64_t *dims)
{
    return dims[0] * dims[1] * dims[2] * dims[3];
}

static double load(const void *base, int type, int64_t i)
{
    switch (type) {
    case D_FLOAT:
        return ((const float *)base)[i];
    case D_BFLOAT16:
        return avo_bf16_to_f32(((const uint16_t *)base)[i]);
    case D_HALF:
        return avo_f16_to_f32(((const uint16_t *)base)[i]);
    default:
        return NAN;
    }
}

static void store(void *base, int type, int64_t i, double v)
{
    if (type == D_FLOAT)
        ((float *)base)[i] = (float)v;
    else if (type == D_BFLOAT16)
        ((uint16_t *)base)[i] = avo_f32_to_bf16((float)v);
    else if (type == D_HALF)
        ((uint16_t *)base)[i] = avo_f32_to_f16((float)v);
}

/* Round v as a tensor of `type` holds it. */
static double as_type(int type, double v)
{
    if (type == D_BFLOAT16)
        return avo_bf16_to_f32(avo_f32_to_bf16((float)v));
    if (type == D_HALF)
        return avo_f16_to_f32(avo_f32_to_f16((float)v));
    if (type == D_FLOAT)
        return (float)v;
    return v;
}

/* Logical (dense row-major over dims) index of a broadcast input element
 * for output coordinates c: a dimension of 1 broadcasts; one that divides
 * the output's maps index i to i / (out / in) (GQA heads). */
static int64_t bcast(const int64_t *in_dims, const int64_t *out_dims, const int64_t *c)
{
    int64_t idx = 0;
    for (int k = 0; k < 4; k++) {
        int64_t i = in_dims[k] == 1 ? 0 : c[k] / (out_dims[k] / in_dims[k]);
        idx = idx * in_dims[k] + i;
    }
    return idx;
}

static void coords(const int64_t *dims, int64_t idx, int64_t *c)
{
    for (int k = 3; k >= 0; k--) {
        c[k] = idx % dims[k];
        idx /= dims[k];
    }
}

/* Values of tensor t (allocated on first use). */
static double *values(desc *t)
{
    if (!t->values) {
        t->count = numel(tensor_dims(t));
        t->values = calloc((size_t)t->count, sizeof *t->values);
    }
    return t->values;
}

static int run_op(desc *op)
{
    desc *in[3], *out;
    op_io(op, in, &out);
    const int64_t *od = tensor_dims(out);
    double *y = values(out);
    int64_t n = numel(od), c[4];
    if (op->type == OP_MATMUL) {
        const int64_t *ad = tensor_dims(in[0]), *bd = tensor_dims(in[1]);
        if (ad[3] != bd[2] || ad[2] != od[2] || bd[3] != od[3] || od[0] % ad[0] || od[1] % ad[1] ||
            od[0] % bd[0] || od[1] % bd[1])
            return fail(BAD_PARAM, "mock: matmul dimensions disagree");
        double *a = values(in[0]), *b = values(in[1]);
        for (int64_t i = 0; i < n; i++) {
            coords(od, i, c);
            double sum = 0;
            for (int64_t k = 0; k < ad[3]; k++) {
                int64_t ca[4] = {c[0], c[1], c[2], k}, cb[4] = {c[0], c[1], k, c[3]};
                int64_t aod[4] = {od[0], od[1], ad[2], ad[3]},
                        bod[4] = {od[0], od[1], bd[2], bd[3]};
                sum += a[bcast(ad, aod, ca)] * b[bcast(bd, bod, cb)];
            }
            y[i] = as_type(tensor_type(out), sum);
        }
        return SUCCESS;
    }
    if (op->type == OP_REDUCTION) {
        const int64_t *xd = tensor_dims(in[0]);
        double *x = values(in[0]);
        int mode = op_mode(op);
        for (int64_t i = 0; i < n; i++)
            y[i] = mode == RD_MAX ? -INFINITY : 0;
        for (int64_t i = 0; i < numel(xd); i++) {
            coords(xd, i, c);
            int64_t o = bcast(od, xd, c);
            y[o] = mode == RD_MAX ? fmax(y[o], x[i]) : y[o] + x[i];
        }
        return SUCCESS;
    }
    int mode = op_mode(op);
    const desc *pw = get_desc(op, A_OPPW_DESC);
    for (int64_t i = 0; i < n; i++) {
        coords(od, i, c);
        double x = values(in[0])[bcast(tensor_dims(in[0]), od, c)];
        double b = in[1] ? values(in[1])[bcast(tensor_dims(in[1]), od, c)] : 0;
        double t = in[2] ? values(in[2])[bcast(tensor_dims(in[2]), od, c)] : 0;
        double v;
        switch (mode) {
        case PW_ADD:
            v = x + b;
            break;
        case PW_MUL:
            v = x * b;
            break;
        case PW_SUB:
            v = x - b;
            break;
        case PW_DIV:
            v = x / b;
            break;
        case PW_EXP:
            v = exp(x);
            break;
        case PW_LOG:
            v = log(x);
            break;
        case PW_CMP_GE:
            v = x >= b;
            break;
        case PW_GEN_INDEX:
            v = (double)c[get_i64(pw, A_PW_AXIS, 0)];
            break;
        case PW_BINARY_SELECT:
            v = t != 0 ? x : b;
            break;
        default:
            return fail(NOT_SUPPORTED, "mock: pointwise mode %d", mode);
        }
        y[i] = as_type(tensor_type(out), v);
    }
    return SUCCESS;
}

/* Element i (logical) of a device tensor at its strides. */
static int64_t offset(const desc *t, int64_t i)
{
    const int64_t *dims = tensor_dims(t), *str = tensor_strides(t);
    int64_t c[4], off = 0;
    coords(dims, i, c);
    for (int k = 0; k < 4; k++)
        off += c[k] * str[k];
    return off;
}

int cudnnBackendExecute(void *handle, desc *plan, desc *pack)
{
    if (handle != &the_handle || !plan || !pack || !plan->finalized || !pack->finalized ||
        plan->type != EXECUTION_PLAN || pack->type != VARIANT_PACK)
        return fail(BAD_PARAM, "mock: execute needs a handle, a finalized plan and variant pack");
    const char *exec_fail = getenv("AVO_MOCK_CUDNN_EXEC_FAIL");
    if (exec_fail && strcmp(exec_fail, "1") == 0)
        return fail(EXECUTION_FAILED, "mock: the kernel failed (AVO_MOCK_CUDNN_EXEC_FAIL)");
    graph_view g;
    desc *graph = get_desc(get_desc(plan, A_PLAN_CONFIG), A_HEUR_GRAPH);
    if (graph_collect(graph, &g) != SUCCESS)
        return BAD_PARAM;
    int64_t nu = 0, np = 0;
    const int64_t *uids = get(pack, A_VP_UIDS, T_INT64, 1, &nu);
    void *const *ptrs = get(pack, A_VP_PTRS, T_VOID_PTR, 1, &np);
    void *const *ws = get(pack, A_VP_WORKSPACE, T_VOID_PTR, 1, NULL);
    if (nu != np)
        return fail(BAD_PARAM, "mock: %lld uids for %lld pointers", (long long)nu, (long long)np);
    if (!ws || !*ws)
        return fail(BAD_PARAM, "mock: the plan needs a workspace of %d bytes", WORKSPACE);
    /* Exactly the non-virtual tensors, each with a pointer. */
    void *data[64] = {0};
    int external = 0;
    for (int i = 0; i < g.ntensors; i++) {
        desc *t = g.tensors[i];
        if (tensor_virtual(t))
            continue;
        external++;
        int64_t uid = get_i64(t, A_T_UID, -1);
        for (int64_t k = 0; k < nu; k++)
            if (uids[k] == uid)
                data[i] = ptrs[k];
        if (!data[i])
            return fail(BAD_PARAM, "mock: the variant pack has no pointer for uid %lld",
                        (long long)uid);
    }
    if (nu != external)
        return fail(BAD_PARAM, "mock: the variant pack names %lld tensors, the graph has %d",
                    (long long)nu, external);
    /* Load the inputs (ops that write a tensor make it an output). */
    for (int i = 0; i < g.ntensors; i++) {
        desc *t = g.tensors[i];
        free(t->values);
        t->values = NULL;
        double *v = values(t);
        if (!data[i])
            continue;
        for (int64_t e = 0; e < t->count; e++)
            v[e] = tensor_by_value(t) ? *(const float *)data[i]
                                      : load(data[i], tensor_type(t), offset(t, e));
    }
    /* Run the ops in an order where each one's inputs are ready. */
    bool done[32] = {0};
    desc *ready[64];
    int nready = 0;
    for (int i = 0; i < g.ntensors; i++)
        if (data[i])
            ready[nready++] = g.tensors[i];
    for (int pass = 0; pass < g.nops; pass++)
        for (int i = 0; i < g.nops; i++) {
            desc *in[3], *out;
            if (done[i])
                continue;
            op_io(g.ops[i], in, &out);
            bool ok = true;
            for (int k = 0; k < 3 && ok; k++) {
                bool found = !in[k];
                for (int r = 0; r < nready && !found; r++)
                    found = ready[r] == in[k];
                ok = found;
            }
            if (!ok)
                continue;
            int st = run_op(g.ops[i]);
            if (st != SUCCESS)
                return st;
            done[i] = true;
            ready[nready++] = out;
        }
    for (int i = 0; i < g.nops; i++)
        if (!done[i])
            return fail(BAD_PARAM, "mock: operation %d never got its inputs", i);
    /* Store the outputs. */
    for (int i = 0; i < g.nops; i++) {
        desc *in[3], *out;
        op_io(g.ops[i], in, &out);
        int slot = -1;
        for (int k = 0; k < g.ntensors; k++)
            if (g.tensors[k] == out)
                slot = k;
        if (slot < 0 || !data[slot])
            continue;
        for (int64_t e = 0; e < out->count; e++)
            store(data[slot], tensor_type(out), offset(out, e), out->values[e]);
    }
    const char *wrong = getenv("AVO_MOCK_BASELINE_WRONG");
    if (wrong && strcmp(wrong, "1") == 0) {
        desc *o = get_desc(find_op(&g, OP_MATMUL, -1, 1), A_OPMM_C);
        for (int k = 0; k < g.ntensors; k++)
            if (g.tensors[k] == o)
                store(data[k], tensor_type(o), 0, o->values[0] + 0.5);
    }
    return SUCCESS;
}
