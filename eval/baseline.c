/*
 * baseline.c — the table of named vendor baselines (baseline.h).
 */
#include "eval/baseline.h"

#include <string.h>

static const avo_baseline_info baselines[] = {
    {"cublas", "cuda", "cuBLASLt",
     "C = A*B, row-major, fp32 accumulation (scalars M N K; buffers A B C)"},
    {"cudnn_sdpa", "cuda", "cuDNN",
     "fused flash-attention forward, causal or not, MHA/GQA (Q K V O; B Hq Hkv S causal scale)"},
    {NULL, NULL, NULL, NULL},
};

const avo_baseline_info *avo_baseline_list(void)
{
    return baselines;
}

const avo_baseline_info *avo_baseline_find(const char *name)
{
    for (const avo_baseline_info *b = baselines; name && b->name; b++)
        if (strcmp(b->name, name) == 0)
            return b;
    return NULL;
}
