/*
 * baseline.h — the vendor-library baselines an evaluator can name
 * (`baselines = { "cublas", "cudnn_sdpa" }`): what each one computes, which
 * arguments of the evaluator it reads, and which library it loads.  The
 * engine checks names against this table when it loads an evaluator; the
 * CUDA worker runs them (docs/protocol.md, "Baseline jobs").
 *
 * A baseline reads the evaluator's own arguments by name, so any evaluator
 * with the same signature can name it:
 *   cublas      scalars M, N, K; buffers A (in, M*K), B (in, K*N),
 *               C (out, M*N), all row-major; A and B f32, bf16 or f16 (the
 *               same), C f32, bf16 or f16; fp32 accumulation (cuBLASLt,
 *               libcublasLt.so.13 or .12).
 *   cudnn_sdpa  buffers Q (in, [B][Hq][S][D]), K and V (in, [B][Hkv][S][D]),
 *               O (out, [B][Hq][S][D]), all bf16 or all f16, D = len(Q) /
 *               (B*Hq*S); scalars B, Hq, Hkv, S, causal (0/1, keys j <= i),
 *               scale (f32); cuDNN's fused flash-attention forward
 *               (libcudnn.so.9).
 */
#ifndef AVO_BASELINE_H
#define AVO_BASELINE_H

#include <stddef.h>

/* One named baseline. */
typedef struct avo_baseline_info {
    const char *name;    /* as evaluators name it */
    const char *backend; /* the evaluator backend it serves: "cuda" */
    const char *library; /* what `avo doctor` and results call the library */
    const char *summary; /* one line: what it computes and which arguments it reads */
} avo_baseline_info;

/* The known baselines, terminated by an entry with name NULL. */
const avo_baseline_info *avo_baseline_list(void);

/* The baseline named `name`, or NULL. */
const avo_baseline_info *avo_baseline_find(const char *name);

#endif
