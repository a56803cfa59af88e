// Planted WMMA mistakes for the emulator's tests (tests/emu/wmma.sh): one
// warp per 16x16 tile of C = A * B (__half, sizes multiples of 16), read
// straight from global memory; PLANT picks the mistake:
//   0 none (correct)
//   1 the lanes pass different pointers to load_matrix_sync
//   2 a pointer 16 bytes off the 32-byte alignment WMMA requires
//   3 an ldm that is no multiple of 8 elements
//   4 half the warp has returned before the WMMA calls
//   5 C written from the accumulator's x[] as if lane l held row l / 2
//   6 one lane changes a matrix_a element in place, by position
// Evaluator: tests/emu/evaluators/wmma_planted.lua.
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

// avo:param PLANT 0 1 2 3 4 5 6

#ifndef PLANT
#define PLANT 0
#endif

extern "C" __global__ void gemm(int M, int N, int K, const __half *A, const __half *B, float *C)
{
    __shared__ __align__(32) __half padded[16 * 24];
    const int lane = threadIdx.x, row0 = blockIdx.y * 16, col0 = blockIdx.x * 16;
    if (PLANT == 4 && lane >= 16)
        return;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += 16) {
        const __half *pa = A + (size_t)row0 * K + k0;
        if (PLANT == 1)
            pa += (lane & 1) * 16;
        if (PLANT == 2)
            pa += 8;
        if (PLANT == 3) { // through shared memory with a row pitch of 20
            for (int e = lane; e < 256; e += 32)
                padded[e / 16 * 20 + e % 16] = pa[(size_t)(e / 16) * K + e % 16];
            __syncwarp();
            wmma::load_matrix_sync(a, padded, 20);
        } else {
            wmma::load_matrix_sync(a, pa, K);
        }
        wmma::load_matrix_sync(b, B + (size_t)k0 * N + col0, N);
        if (PLANT == 6 && lane == 0)
            a.x[0] = __float2half(0.0f);
        wmma::mma_sync(acc, a, b, acc);
        __syncwarp();
    }
    if (PLANT == 5) {
        for (int i = 0; i < acc.num_elements; i++)
            C[(size_t)(row0 + lane / 2) * N + col0 + (lane % 2) * 8 + i] = acc.x[i];
    } else {
        wmma::store_matrix_sync(C + (size_t)row0 * N + col0, acc, N, wmma::mem_row_major);
    }
}
