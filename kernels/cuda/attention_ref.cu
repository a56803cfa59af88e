/*
 * Trusted attention forward: exact two-pass softmax in fp32.  A CTA of 128
 * threads handles 32 query rows of one (batch, head), 4 threads per row
 * (32 dimensions each, combined with warp shuffles); K and V pass through
 * static shared memory in tiles of 32 keys.  Pass 1 finds each row's max
 * score, pass 2 sums exp(score - max) and accumulates the weighted V rows;
 * the output is the sum divided by the total, rounded to bf16.
 * Launch: grid = (ceil(S/32), B*Hq), block = 128.
 */
#include <cuda_bf16.h>

#define D 128
#define ROWS 32
#define TPR 4
#define DPT (D / TPR)
#define TILE 32

extern "C" __global__ void attention_ref(const __nv_bfloat16 *Q, const __nv_bfloat16 *K,
                                         const __nv_bfloat16 *V, __nv_bfloat16 *O, int B, int Hq,
                                         int Hkv, int S, int causal, float scale)
{
    __shared__ float Ks[TILE * D], Vs[TILE * D];
    const int b = blockIdx.y / Hq, h = blockIdx.y % Hq, g = h / (Hq / Hkv);
    const int part = threadIdx.x % TPR;
    const int row = blockIdx.x * ROWS + threadIdx.x / TPR;
    const bool valid = row < S;
    const size_t q_off = (((size_t)b * Hq + h) * S + row) * D;
    const size_t kv_base = ((size_t)b * Hkv + g) * S * D;
    float q[DPT], acc[DPT];
    for (int i = 0; i < DPT; i++) {
        q[i] = valid ? __bfloat162float(Q[q_off + part * DPT + i]) : 0.0f;
        acc[i] = 0.0f;
    }
    float mx = __int_as_float(0xff800000), total = 0.0f;
    for (int pass = 0; pass < 2; pass++) {
        for (int kv0 = 0; kv0 < S; kv0 += TILE) {
            __syncthreads();
            for (int e = threadIdx.x; e < TILE * D; e += blockDim.x) {
                int key = kv0 + e / D;
                size_t at = kv_base + (size_t)key * D + e % D;
                Ks[e] = key < S ? __bfloat162float(K[at]) : 0.0f;
                Vs[e] = key < S ? __bfloat162float(V[at]) : 0.0f;
            }
            __syncthreads();
            for (int j = 0; j < TILE && kv0 + j < S; j++) {
                float s = 0.0f;
                for (int i = 0; i < DPT; i++)
                    s += q[i] * Ks[j * D + part * DPT + i];
                s += __shfl_xor_sync(0xffffffffu, s, 1);
                s += __shfl_xor_sync(0xffffffffu, s, 2);
                s *= scale;
                int key = kv0 + j;
                if (causal && key > row)
                    continue;
                if (pass == 0) {
                    mx = fmaxf(mx, s);
                } else {
                    float p = expf(s - mx);
                    total += p;
                    for (int i = 0; i < DPT; i++)
                        acc[i] += p * Vs[j * D + part * DPT + i];
                }
            }
        }
    }
    if (valid)
        for (int i = 0; i < DPT; i++)
            O[q_off + part * DPT + i] = __float2bfloat16(acc[i] / total);
}
