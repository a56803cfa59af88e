// WMMA GEMM for the emulator's tests (tests/emu/wmma.sh): C = A * B through
// every WMMA shape (m16n16k16, m32n8k16, m8n32k16) x matrix_a layout x
// matrix_b layout x accumulator memory layout, one combination per block
// (VARIANT 24: block b runs combination b % 24; 0..23 fixes one), __half or
// __nv_bfloat16 inputs (IN_T), float or, for __half with ACC_HALF 1, __half
// accumulators.  One warp computes a 32x32 tile of C: per step of 16 along
// K it stages the A and B slices in shared memory in the fragments' layout
// (zeros past the edges), and halfway along K it stores the accumulators and
// loads them back in the accumulator layout.  Evaluators:
// tests/emu/evaluators/wmma_gemm_{bf16,f16}.lua.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

// avo:param VARIANT 24 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
// avo:param ACC_HALF 0 1

#ifndef IN_T
#define IN_T __half
#endif
#ifndef VARIANT
#define VARIANT 24
#endif
#ifndef ACC_HALF
#define ACC_HALF 0
#endif

template <bool C, class A, class B> struct pick {
    typedef A type;
};
template <class A, class B> struct pick<false, A, B> {
    typedef B type;
};
template <class A, class B> struct same {
    enum { value = 0 };
};
template <class A> struct same<A, A> {
    enum { value = 1 };
};
typedef pick<ACC_HALF && same<IN_T, __half>::value, __half, float>::type ACC_T;

#define TILE 32
#define KS 16

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }

template <int SM, int SN, int COL_A, int COL_B, int COL_C>
__device__ void run(int M, int N, int K, const IN_T *A, const IN_T *B, float *C, IN_T *sa,
                    IN_T *sb, ACC_T *sc)
{
    typedef typename pick<COL_A, wmma::col_major, wmma::row_major>::type LA;
    typedef typename pick<COL_B, wmma::col_major, wmma::row_major>::type LB;
    const wmma::layout_t lc = COL_C ? wmma::mem_col_major : wmma::mem_row_major;
    enum { TM = TILE / SM, TN = TILE / SN, SK = 16 };
    const int lane = threadIdx.x, row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    wmma::fragment<wmma::accumulator, SM, SN, SK, ACC_T> acc[TM][TN];
    for (int i = 0; i < TM; i++)
        for (int j = 0; j < TN; j++)
            wmma::fill_fragment(acc[i][j], 0.0f);
    const int steps = (K + KS - 1) / KS;
    for (int s = 0; s < steps; s++) {
        int k0 = s * KS;
        // A slice: TILE x KS; sub-tile i (SM rows) at sa + i * SM * KS.
        for (int e = lane; e < TILE * KS; e += 32) {
            int r = e / KS, k = e % KS, gr = row0 + r, gk = k0 + k;
            IN_T v = gr < M && gk < K ? A[(size_t)gr * K + gk] : IN_T(0.0f);
            int t = r / SM, rr = r % SM;
            sa[t * SM * KS + (COL_A ? k * SM + rr : rr * KS + k)] = v;
        }
        // B slice: KS x TILE; sub-tile j (SN columns) at sb + j * KS * SN.
        for (int e = lane; e < TILE * KS; e += 32) {
            int k = e / TILE, c = e % TILE, gk = k0 + k, gc = col0 + c;
            IN_T v = gk < K && gc < N ? B[(size_t)gk * N + gc] : IN_T(0.0f);
            int t = c / SN, cc = c % SN;
            sb[t * KS * SN + (COL_B ? cc * KS + k : k * SN + cc)] = v;
        }
        __syncwarp();
        for (int i = 0; i < TM; i++)
            for (int j = 0; j < TN; j++) {
                wmma::fragment<wmma::matrix_a, SM, SN, SK, IN_T, LA> a;
                wmma::fragment<wmma::matrix_b, SM, SN, SK, IN_T, LB> b;
                wmma::load_matrix_sync(a, sa + i * SM * KS, COL_A ? SM : KS);
                wmma::load_matrix_sync(b, sb + j * KS * SN, COL_B ? KS : SN);
                wmma::mma_sync(acc[i][j], a, b, acc[i][j]);
            }
        __syncwarp();
        if (s == steps / 2) { // through memory and back, in the accumulator layout
            for (int i = 0; i < TM; i++)
                for (int j = 0; j < TN; j++) {
                    ACC_T *p = sc + (i * TN + j) * SM * SN;
                    wmma::store_matrix_sync(p, acc[i][j], COL_C ? SM : SN, lc);
                    __syncwarp();
                    wmma::fill_fragment(acc[i][j], 7.0f);
                    wmma::load_matrix_sync(acc[i][j], p, COL_C ? SM : SN, lc);
                }
            __syncwarp();
        }
    }
    for (int i = 0; i < TM; i++)
        for (int j = 0; j < TN; j++) {
            for (int e = 0; e < acc[i][j].num_elements; e++) // element-wise, any layout
                acc[i][j].x[e] = acc[i][j].x[e] * ACC_T(2.0f);
            wmma::store_matrix_sync(sc + (i * TN + j) * SM * SN, acc[i][j], COL_C ? SM : SN, lc);
        }
    __syncwarp();
    for (int e = lane; e < TILE * TILE; e += 32) {
        int r = e / TILE, c = e % TILE, gr = row0 + r, gc = col0 + c;
        int t = (r / SM) * TN + c / SN, rr = r % SM, cc = c % SN;
        if (gr < M && gc < N)
            C[(size_t)gr * N + gc] =
                0.5f * to_f(sc[t * SM * SN + (COL_C ? cc * SM + rr : rr * SN + cc)]);
    }
}

#define CASE(v, SM, SN)                                                                          \
    case v + 0: run<SM, SN, 0, 0, 0>(M, N, K, A, B, C, sa, sb, sc); break;                       \
    case v + 1: run<SM, SN, 0, 0, 1>(M, N, K, A, B, C, sa, sb, sc); break;                       \
    case v + 2: run<SM, SN, 0, 1, 0>(M, N, K, A, B, C, sa, sb, sc); break;                       \
    case v + 3: run<SM, SN, 0, 1, 1>(M, N, K, A, B, C, sa, sb, sc); break;                       \
    case v + 4: run<SM, SN, 1, 0, 0>(M, N, K, A, B, C, sa, sb, sc); break;                       \
    case v + 5: run<SM, SN, 1, 0, 1>(M, N, K, A, B, C, sa, sb, sc); break;                       \
    case v + 6: run<SM, SN, 1, 1, 0>(M, N, K, A, B, C, sa, sb, sc); break;                       \
    case v + 7: run<SM, SN, 1, 1, 1>(M, N, K, A, B, C, sa, sb, sc); break;

extern "C" __global__ void gemm(int M, int N, int K, const IN_T *A, const IN_T *B, float *C)
{
    __shared__ __align__(32) IN_T sa[TILE * KS];
    __shared__ __align__(32) IN_T sb[KS * TILE];
    __shared__ __align__(32) ACC_T sc[TILE * TILE];
    int v = VARIANT < 24 ? VARIANT : (blockIdx.y * gridDim.x + blockIdx.x) % 24;
    switch (v) {
        CASE(0, 16, 16)
        CASE(8, 32, 8)
        CASE(16, 8, 32)
    }
}
