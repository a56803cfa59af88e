/*
 * Attention forward seed kernel, FlashAttention style, CUDA cores only:
 *   O[b,h,i,:] = sum_j softmax_j(Q[b,h,i,:] . K[b,g,j,:] * scale) V[b,g,j,:]
 * with g = h / (Hq / Hkv) (GQA; MHA when Hq == Hkv), j <= i when causal.
 * Q, K, V, O are bf16, [batch][heads][seq][HEAD_DIM] row-major; scores, the
 * softmax and the output are accumulated in fp32 (online softmax: running
 * max m and sum l, output rescaled when the max grows).
 *
 * One CTA handles BLOCK_M query rows of one (batch, head); TPR threads share
 * a row, each owning HEAD_DIM/TPR of its dimensions (d = part + TPR*i), and
 * combine partial dot products with warp shuffles.  K and V stream through
 * dynamic shared memory in tiles of BLOCK_N keys (fp32, 2*BLOCK_N*HEAD_DIM*4
 * bytes: above 48 KiB from BLOCK_N = 64 on, which needs the opt-in).
 *
 * Launch (evaluators/cuda/attention_*.lua): grid = (ceil(S/BLOCK_M), B*Hq),
 * block = BLOCK_M*TPR, shared_bytes = 8*BLOCK_N*HEAD_DIM.
 */
#include <cuda_bf16.h>

// avo:param BLOCK_M 64 16 32 128
// avo:param BLOCK_N 32 16 64
// avo:param TPR 8 4 16 32

#ifndef HEAD_DIM
#define HEAD_DIM 128
#endif
#ifndef BLOCK_M
#define BLOCK_M 64
#endif
#ifndef BLOCK_N
#define BLOCK_N 32
#endif
#ifndef TPR
#define TPR 8
#endif
#define DPT (HEAD_DIM / TPR)

extern "C" __global__ void attention_fwd(const __nv_bfloat16 *__restrict__ Q,
                                         const __nv_bfloat16 *__restrict__ K,
                                         const __nv_bfloat16 *__restrict__ V,
                                         __nv_bfloat16 *__restrict__ O, int B, int Hq, int Hkv,
                                         int S, int causal, float scale)
{
    extern __shared__ float smem[];
    float *Ks = smem, *Vs = smem + BLOCK_N * HEAD_DIM;
    const int b = blockIdx.y / Hq, h = blockIdx.y % Hq, g = h / (Hq / Hkv);
    const int part = threadIdx.x % TPR;
    const int row = blockIdx.x * BLOCK_M + threadIdx.x / TPR;
    const bool valid = row < S;
    const size_t q_off = (((size_t)b * Hq + h) * S + row) * HEAD_DIM;
    const size_t kv_base = ((size_t)b * Hkv + g) * S * HEAD_DIM;
    const float qscale = scale * 1.4426950408889634f; /* exp(x) = exp2(x * log2 e) */

    float q[DPT], o[DPT];
#pragma unroll
    for (int i = 0; i < DPT; i++) {
        q[i] = valid ? __bfloat162float(Q[q_off + part + TPR * i]) * qscale : 0.0f;
        o[i] = 0.0f;
    }
    float m = __int_as_float(0xff800000), l = 0.0f;

    int kv_end = S;
    if (causal) {
        int last = (blockIdx.x + 1) * BLOCK_M; /* no row of this CTA sees a key past it */
        kv_end = last < S ? last : S;
    }
    for (int kv0 = 0; kv0 < kv_end; kv0 += BLOCK_N) {
        __syncthreads();
        for (int e = threadIdx.x; e < BLOCK_N * HEAD_DIM; e += blockDim.x) {
            int key = kv0 + e / HEAD_DIM;
            size_t at = kv_base + (size_t)key * HEAD_DIM + e % HEAD_DIM;
            Ks[e] = key < S ? __bfloat162float(K[at]) : 0.0f;
            Vs[e] = key < S ? __bfloat162float(V[at]) : 0.0f;
        }
        __syncthreads();
        const int n = kv_end - kv0 < BLOCK_N ? kv_end - kv0 : BLOCK_N;
        for (int j = 0; j < n; j++) {
            const float *kr = Ks + j * HEAD_DIM + part;
            float s = 0.0f;
#pragma unroll
            for (int i = 0; i < DPT; i++)
                s = fmaf(q[i], kr[TPR * i], s);
#pragma unroll
            for (int off = TPR / 2; off > 0; off >>= 1) /* every lane takes part */
                s += __shfl_xor_sync(0xffffffffu, s, off);
            const int key = kv0 + j;
            if (causal && key > row)
                continue;
            if (s > m) {
                const float corr = exp2f(m - s);
                l *= corr;
#pragma unroll
                for (int i = 0; i < DPT; i++)
                    o[i] *= corr;
                m = s;
            }
            const float p = exp2f(s - m);
            l += p;
            const float *vr = Vs + j * HEAD_DIM + part;
#pragma unroll
            for (int i = 0; i < DPT; i++)
                o[i] = fmaf(p, vr[TPR * i], o[i]);
        }
    }
    if (valid) {
        const float inv = 1.0f / l;
#pragma unroll
        for (int i = 0; i < DPT; i++)
            O[q_off + part + TPR * i] = __float2bfloat16(o[i] * inv);
    }
}
