/*
 * Row softmax seed kernel: Y[r, :] = softmax(X[r, :]) for a rows x cols fp32
 * matrix (row-major, Y output only).  One CTA of BLOCK threads per row, three
 * passes over the row (max, sum of exponentials, write), reductions in shared
 * memory (WARP_REDUCE 0) or with warp shuffles (WARP_REDUCE 1).  VEC 4 reads
 * float4 when the row allows it (cols % 4 == 0), else falls back to scalars.
 *
 * Launch (evaluators/cuda/softmax.lua): grid = rows, block = BLOCK.
 */
// avo:param BLOCK 128 32 64 256 512 1024
// avo:param WARP_REDUCE 0 1
// avo:param VEC 1 4

#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef WARP_REDUCE
#define WARP_REDUCE 0
#endif
#ifndef VEC
#define VEC 1
#endif

/* Reduce v over the CTA with op (0 = max, 1 = sum); every thread gets the result. */
__device__ float block_reduce(float v, int op, float *scratch)
{
    const int tid = threadIdx.x;
    if (WARP_REDUCE) {
        for (int off = 16; off > 0; off >>= 1) {
            float o = __shfl_xor_sync(0xffffffffu, v, off);
            v = op == 0 ? fmaxf(v, o) : v + o;
        }
        const int nwarps = (blockDim.x + 31) / 32;
        if ((tid & 31) == 0)
            scratch[tid / 32] = v;
        __syncthreads();
        if (tid < 32) {
            float w = tid < nwarps ? scratch[tid] : (op == 0 ? __int_as_float(0xff800000) : 0.0f);
            for (int off = 16; off > 0; off >>= 1) {
                float o = __shfl_xor_sync(0xffffffffu, w, off);
                w = op == 0 ? fmaxf(w, o) : w + o;
            }
            if (tid == 0)
                scratch[0] = w;
        }
        __syncthreads();
        float r = scratch[0];
        __syncthreads();
        return r;
    }
    scratch[tid] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            scratch[tid] = op == 0 ? fmaxf(scratch[tid], scratch[tid + s]) : scratch[tid] + scratch[tid + s];
        __syncthreads();
    }
    float r = scratch[0];
    __syncthreads();
    return r;
}

extern "C" __global__ void softmax(int rows, int cols, const float *__restrict__ X,
                                   float *__restrict__ Y)
{
    __shared__ float scratch[BLOCK];
    const int r = blockIdx.x;
    if (r >= rows)
        return;
    const float *x = X + (size_t)r * cols;
    float *y = Y + (size_t)r * cols;
    const bool vec = VEC == 4 && cols % 4 == 0;

    float m = __int_as_float(0xff800000);
    if (vec) {
        for (int c = threadIdx.x * 4; c < cols; c += blockDim.x * 4) {
            float4 v = *reinterpret_cast<const float4 *>(x + c);
            m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            m = fmaxf(m, x[c]);
    }
    m = block_reduce(m, 0, scratch);

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        s += expf(x[c] - m);
    s = block_reduce(s, 1, scratch);
    const float inv = 1.0f / s;

    if (vec) {
        for (int c = threadIdx.x * 4; c < cols; c += blockDim.x * 4) {
            float4 v = *reinterpret_cast<const float4 *>(x + c);
            v.x = expf(v.x - m) * inv;
            v.y = expf(v.y - m) * inv;
            v.z = expf(v.z - m) * inv;
            v.w = expf(v.w - m) * inv;
            *reinterpret_cast<float4 *>(y + c) = v;
        }
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            y[c] = expf(x[c] - m) * inv;
    }
}
