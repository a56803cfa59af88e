/*
 * test_vendor.c — the vendor baselines' GPU-free parts (eval/cuda/vendor.c):
 * which evaluator signatures cublas and cudnn_sdpa accept and how a refused
 * one is named; a missing library named by $AVO_CUBLASLT / $AVO_CUDNN; and,
 * where the toolkit's real cuDNN 9 is installed, that cuDNN itself accepts
 * the fused-attention graph avo builds (every tensor and operation
 * descriptor, the operation graph and the heuristics finalize) for MHA and
 * GQA, causal or not, without a GPU.  Without cuDNN that last part says so
 * and the rest still runs.
 */
#include "core/avo.h"
#include "eval/baseline.h"
#include "eval/cuda/vendor.h"

#include "../unit/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An attention signature and one config, as the attention evaluators have. */
typedef struct attention {
    avo_arg_spec args[10];
    avo_scalar scalars[10];
    size_t lengths[10];
    avo_config_spec cfg;
    avo_jobspec spec;
} attention;

static void attention_make(attention *a, int B, int Hq, int Hkv, int S, int causal)
{
    static const char *const names[] = {"Q",  "K",   "V", "O",      "B",
                                        "Hq", "Hkv", "S", "causal", "scale"};
    memset(a, 0, sizeof *a);
    for (int i = 0; i < 10; i++) {
        a->args[i].name = names[i];
        a->args[i].kind = i < 3 ? AVO_ARG_IN : i == 3 ? AVO_ARG_OUT : AVO_ARG_SCALAR;
        a->args[i].type = i < 4 ? AVO_DT_BF16 : i == 9 ? AVO_DT_F32 : AVO_DT_I32;
    }
    a->scalars[4].i32 = B;
    a->scalars[5].i32 = Hq;
    a->scalars[6].i32 = Hkv;
    a->scalars[7].i32 = S;
    a->scalars[8].i32 = causal;
    a->scalars[9].f32 = 0.08838834764831845f;
    a->lengths[0] = a->lengths[3] = (size_t)B * Hq * S * 128;
    a->lengths[1] = a->lengths[2] = (size_t)B * Hkv * S * 128;
    a->cfg = (avo_config_spec){"c1", a->scalars, a->lengths, 0, 0};
    a->spec.args = a->args;
    a->spec.nargs = 10;
    a->spec.configs = &a->cfg;
    a->spec.nconfigs = 1;
}

static void test_check_attention(void)
{
    const avo_baseline_info *b = avo_baseline_find("cudnn_sdpa");
    char err[AVO_ERRLEN];
    attention a;
    attention_make(&a, 2, 8, 2, 64, 1);
    CHECK_INT(avo_vendor_check(b, &a.spec, err, sizeof err), 0);

    a.args[8].name = "is_causal";
    CHECK_INT(avo_vendor_check(b, &a.spec, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "reads argument 'causal', which the evaluator does not have");

    attention_make(&a, 2, 8, 2, 64, 1);
    a.args[0].type = AVO_DT_F32;
    CHECK_INT(avo_vendor_check(b, &a.spec, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "argument 'Q' as bf16/f16, the evaluator has it f32");

    attention_make(&a, 2, 8, 2, 64, 1);
    a.args[1].type = AVO_DT_F16;
    CHECK_INT(avo_vendor_check(b, &a.spec, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "Q, K, V and O of one type");

    attention_make(&a, 2, 8, 3, 64, 1);
    CHECK_INT(avo_vendor_check(b, &a.spec, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "config 'c1': baseline cudnn_sdpa needs Hq (8) a multiple of Hkv (3)");

    attention_make(&a, 2, 8, 2, 64, 2);
    CHECK_INT(avo_vendor_check(b, &a.spec, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "needs causal 0 or 1, the evaluator gives 2");

    attention_make(&a, 2, 8, 2, 64, 0);
    a.lengths[0] += 1;
    CHECK_INT(avo_vendor_check(b, &a.spec, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "buffer Q of B*Hq*S*D elements");

    attention_make(&a, 2, 8, 2, 64, 0);
    a.lengths[2] /= 2;
    CHECK_INT(avo_vendor_check(b, &a.spec, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "buffer V of B*Hkv*S*D = 32768 elements (D = 128)");

    attention_make(&a, 0, 8, 2, 64, 0);
    CHECK_INT(avo_vendor_check(b, &a.spec, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "needs B >= 1");
}

static void test_check_gemm(void)
{
    const avo_baseline_info *b = avo_baseline_find("cublas");
    static const char *const names[] = {"M", "N", "K", "A", "B", "C"};
    avo_arg_spec args[6];
    avo_scalar scalars[6] = {{.i32 = 0}};
    size_t lengths[6] = {0, 0, 0, 6 * 4, 4 * 5, 6 * 5};
    for (int i = 0; i < 6; i++)
        args[i] = (avo_arg_spec){names[i],
                                 i < 3   ? AVO_ARG_SCALAR
                                 : i < 5 ? AVO_ARG_IN
                                         : AVO_ARG_OUT,
                                 i < 3   ? AVO_DT_I32
                                 : i < 5 ? AVO_DT_BF16
                                         : AVO_DT_F32,
                                 -1,
                                 1,
                                 0,
                                 0};
    scalars[0].i32 = 6, scalars[1].i32 = 5, scalars[2].i32 = 4;
    avo_config_spec cfg = {"small", scalars, lengths, 0, 0};
    avo_jobspec spec = {.args = args, .nargs = 6, .configs = &cfg, .nconfigs = 1};
    char err[AVO_ERRLEN];
    CHECK_INT(avo_vendor_check(b, &spec, err, sizeof err), 0);
    spec.check_configs = &cfg;
    spec.ncheck_configs = 1;
    lengths[4] = 21;
    CHECK_INT(avo_vendor_check(b, &spec, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "config 'small': baseline cublas needs buffer B of K*N = 20 elements, "
                        "the evaluator gives 21");
    lengths[4] = 20;
    args[4].type = AVO_DT_F16;
    CHECK_INT(avo_vendor_check(b, &spec, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "needs A and B of one type, the evaluator has bf16 and f16");
    args[4].type = AVO_DT_BF16;
    args[5].kind = AVO_ARG_IN;
    CHECK_INT(avo_vendor_check(b, &spec, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "reads argument 'C' as out, the evaluator has it in");
    args[5].kind = AVO_ARG_OUT;
    args[5].type = AVO_DT_I32;
    CHECK_INT(avo_vendor_check(b, &spec, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "argument 'C' as f32/bf16/f16, the evaluator has it i32");
}

static void test_missing(void)
{
    avo_vendor_lib lib;
    char err[AVO_ERRLEN];
    setenv("AVO_CUBLASLT", "/nonexistent/libcublasLt.so.13", 1);
    CHECK_INT(avo_vendor_load(avo_baseline_find("cublas"), &lib, err, sizeof err), AVO_ENOTFOUND);
    CHECK_CONTAINS(err, "cannot load /nonexistent/libcublasLt.so.13 (from $AVO_CUBLASLT)");
    /* The failure is remembered: the same answer without trying again. */
    CHECK_INT(avo_vendor_load(avo_baseline_find("cublas"), &lib, err, sizeof err), AVO_ENOTFOUND);
    CHECK_CONTAINS(err, "/nonexistent/libcublasLt.so.13");
}

/* The real cuDNN (when installed) finalizes the graph avo builds. */
static void test_real_cudnn_graph(void)
{
    avo_vendor_lib lib;
    char err[AVO_ERRLEN];
    unsetenv("AVO_CUDNN");
    if (avo_vendor_load(avo_baseline_find("cudnn_sdpa"), &lib, err, sizeof err) < 0) {
        printf("not checked against the real cuDNN (none here): %s\n", err);
        return;
    }
    printf("cuDNN %s (%s) accepts the fused-attention graphs\n", lib.version, lib.path);
    const int shapes[][5] = {
        {2, 8, 8, 1024, 0}, {2, 8, 8, 1024, 1}, {1, 32, 4, 512, 1}, {4, 16, 2, 333, 0}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        attention a;
        attention_make(&a, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], shapes[i][4]);
        int rc = avo_vendor_graph_check(&a.spec, &a.cfg, err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "shape %zu: %s\n", i, err);
        CHECK_INT(rc, 0);
    }
}

int main(void)
{
    test_check_attention();
    test_check_gemm();
    test_missing();
    test_real_cudnn_graph();
    return check_finish();
}
