// WMMA with tf32 inputs (m16n16k8) for the emulator's tests
// (tests/emu/wmma.sh): one warp per 16x16 tile of C = A * B (float, sizes
// multiples of 16), A and B read straight from global memory, LA and LB the
// fragments' layouts (1: col_major, read as the transpose it is not — so A
// and B are staged through shared memory transposed), every element rounded
// with __float_to_tf32.  Evaluator: tests/emu/evaluators/wmma_tf32.lua.
#include <mma.h>

using namespace nvcuda;

// avo:param LA 0 1
// avo:param LB 0 1

#ifndef LA
#define LA 0
#endif
#ifndef LB
#define LB 0
#endif

template <bool C, class A, class B> struct pick {
    typedef A type;
};
template <class A, class B> struct pick<false, A, B> {
    typedef B type;
};

extern "C" __global__ void gemm(int M, int N, int K, const float *A, const float *B, float *C)
{
    __shared__ __align__(32) float sa[16 * 8], sb[8 * 16];
    typedef pick<LA, wmma::col_major, wmma::row_major>::type FLA;
    typedef pick<LB, wmma::col_major, wmma::row_major>::type FLB;
    const int lane = threadIdx.x, row0 = blockIdx.y * 16, col0 = blockIdx.x * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, FLA> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, FLB> b;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += 8) {
        for (int e = lane; e < 128; e += 32) {
            int r = e / 8, k = e % 8; // A: 16 x 8
            sa[LA ? k * 16 + r : r * 8 + k] = A[(size_t)(row0 + r) * K + k0 + k];
            int kb = e / 16, c = e % 16; // B: 8 x 16
            sb[LB ? c * 8 + kb : kb * 16 + c] = B[(size_t)(k0 + kb) * N + col0 + c];
        }
        __syncwarp();
        wmma::load_matrix_sync(a, sa, LA ? 16 : 8);
        wmma::load_matrix_sync(b, sb, LB ? 8 : 16);
        for (int i = 0; i < a.num_elements; i++)
            a.x[i] = wmma::__float_to_tf32(a.x[i]);
        for (int i = 0; i < b.num_elements; i++)
            b.x[i] = wmma::__float_to_tf32(b.x[i]);
        wmma::mma_sync(acc, a, b, acc);
        __syncwarp();
    }
    wmma::store_matrix_sync(C + (size_t)row0 * N + col0, acc, N, wmma::mem_row_major);
}
