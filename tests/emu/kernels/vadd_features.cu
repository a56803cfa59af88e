// cuda_vadd through the emulator's harder paths, correct if they are: a
// file-scope aligned extern __shared__ array, __syncthreads, shuffles in
// every direction, a ballot, an atomic on a __device__ global.
// Launch: evaluator vadd_shared.lua (dynamic shared memory 4 * BLOCK bytes).
// avo:param BLOCK 256 64 128
extern __shared__ __align__(16) float stage[];
__device__ unsigned int blocks_seen;

extern "C" __global__ void vadd(int n, const float *x, const float *y, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    stage[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    /* Reversed within the block, then back: needs every thread's write. */
    float v = stage[blockDim.x - 1 - threadIdx.x];
    __syncthreads();
    stage[blockDim.x - 1 - threadIdx.x] = v;
    __syncthreads();
    v = stage[threadIdx.x];
    /* Shuffles that must hand every lane its own value back. */
    v = __shfl_xor_sync(0xffffffffu, __shfl_xor_sync(0xffffffffu, v, 5), 5);
    float up = __shfl_up_sync(0xffffffffu, v, 1), down = __shfl_down_sync(0xffffffffu, v, 1);
    float back = __shfl_down_sync(0xffffffffu, up, 1);  /* lanes 0..30: their own v */
    float fwd = __shfl_up_sync(0xffffffffu, down, 1);   /* lanes 1..31: their own v */
    float mine = threadIdx.x % 32 < 31 ? back : fwd;
    unsigned all = __ballot_sync(0xffffffffu, 1);
    if (threadIdx.x == 0)
        atomicAdd(&blocks_seen, 1u);
    if (i < n)
        out[i] = (all == 0xffffffffu ? mine : -1e30f) + y[i];
}
