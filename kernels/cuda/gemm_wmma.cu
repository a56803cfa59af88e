/*
 * Tensor-core GEMM seed kernel: C[M,N] = A[M,K] * B[K,N], row-major, C
 * overwritten.  Inputs are IN_T (__nv_bfloat16 or __half, chosen by the
 * evaluator with -DIN_T=...), products go through WMMA m16n16k16 with fp32
 * accumulation, C is fp32.
 *
 * One CTA computes a BM x BN tile of C with (BM/WM) x (BN/WN) warps; each
 * warp owns a WM x WN sub-tile held as (WM/16) x (WN/16) accumulator
 * fragments.  The CTA walks K in steps of BK through STAGES buffers of
 * dynamic shared memory (A as [BM][BK+8], B as [BK][BN+8]; the 8-element
 * pad spreads rows over the banks and keeps the 32-byte alignment WMMA
 * needs).  Tiles are filled with cp.async (__pipeline_memcpy_async, 16
 * bytes) where a whole aligned 8-element chunk is inside the matrix, and
 * with plain bounds-checked loads (zeros outside) elsewhere, so every size
 * works.  STAGES - 1 tiles are in flight while one is multiplied, with one
 * barrier per K step; STAGES = 1 loads, waits and multiplies in turn.  The epilogue goes through a 16 x 16
 * fp32 staging area per warp so that C needs no alignment and edges are
 * bounds-checked.
 *
 * Launch (evaluators/cuda/gemm_*_tc.lua): grid = (ceil(N/BN), ceil(M/BM)),
 * block = (BM/WM)*(BN/WN)*32 threads, dynamic shared memory
 * STAGES*(BM*(BK+8) + BK*(BN+8))*2 + (BM/WM)*(BN/WN)*1024 bytes.  A warp
 * tile that does not divide the CTA tile, more than 1024 threads or more
 * shared memory than the device has is rejected (status invalid).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>

// avo:param BM 128 64 32
// avo:param BN 128 64 32
// avo:param BK 32 16 64
// avo:param WM 64 32 16
// avo:param WN 32 64 16
// avo:param STAGES 3 2 1 4

#ifndef IN_T
#define IN_T __nv_bfloat16
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 32
#endif
#ifndef STAGES
#define STAGES 3
#endif

#define PAD 8
#define LDA (BK + PAD)
#define LDB (BN + PAD)
/* At least 1 so that every knob combination compiles (the launch check
 * rejects a warp tile larger than the CTA tile). */
#define WARPS_N (BN >= WN ? BN / WN : 1)
#define FM (WM / 16)
#define FN (WN / 16)
#define STAGE_ELEMS (BM * LDA + BK * LDB)

using namespace nvcuda;

/* Fill stage buffers As/Bs with the BK-slice of A and B that starts at k0. */
__device__ __forceinline__ void load_tile(IN_T *As, IN_T *Bs, const IN_T *__restrict__ A,
                                          const IN_T *__restrict__ B, int M, int N, int K,
                                          int row0, int col0, int k0, int tid, int nthreads)
{
    for (int e = tid; e < BM * BK / 8; e += nthreads) {
        int r = e / (BK / 8), c = (e % (BK / 8)) * 8;
        int gr = row0 + r, gc = k0 + c;
        IN_T *dst = As + r * LDA + c;
        const IN_T *src = A + (size_t)gr * K + gc;
        if (gr < M && gc + 8 <= K && ((size_t)src & 15) == 0) {
            __pipeline_memcpy_async(dst, src, 16);
        } else {
            for (int i = 0; i < 8; i++)
                dst[i] = (gr < M && gc + i < K) ? src[i] : IN_T(0.0f);
        }
    }
    for (int e = tid; e < BK * BN / 8; e += nthreads) {
        int r = e / (BN / 8), c = (e % (BN / 8)) * 8;
        int gr = k0 + r, gc = col0 + c;
        IN_T *dst = Bs + r * LDB + c;
        const IN_T *src = B + (size_t)gr * N + gc;
        if (gr < K && gc + 8 <= N && ((size_t)src & 15) == 0) {
            __pipeline_memcpy_async(dst, src, 16);
        } else {
            for (int i = 0; i < 8; i++)
                dst[i] = (gr < K && gc + i < N) ? src[i] : IN_T(0.0f);
        }
    }
}

extern "C" __global__ void gemm(int M, int N, int K, const IN_T *__restrict__ A,
                                const IN_T *__restrict__ B, float *__restrict__ C)
{
    extern __shared__ __align__(128) unsigned char smem[];
    IN_T *tiles = reinterpret_cast<IN_T *>(smem);
    const int tid = threadIdx.x, nthreads = blockDim.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float *stage_c = reinterpret_cast<float *>(smem + STAGES * STAGE_ELEMS * sizeof(IN_T)) +
                     warp * 256;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++)
            wmma::fill_fragment(acc[i][j], 0.0f);

    const int ktiles = (K + BK - 1) / BK;
    /* Prologue: tiles 0 .. STAGES-2 in flight, one commit group each. */
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < ktiles) {
            IN_T *As = tiles + s * STAGE_ELEMS;
            load_tile(As, As + BM * LDA, A, B, M, N, K, row0, col0, s * BK, tid, nthreads);
        }
        __pipeline_commit();
    }
    for (int kt = 0; kt < ktiles; kt++) {
#if STAGES > 1
        __pipeline_wait_prior(STAGES - 2); /* tile kt has landed (for this thread) */
        __syncthreads(); /* ... for all threads, and all are done with tile kt-1 */
        /* Refill the stage tile kt-1 used with tile kt+STAGES-1. */
        const int next = kt + STAGES - 1;
        if (next < ktiles) {
            IN_T *As = tiles + (next % STAGES) * STAGE_ELEMS;
            load_tile(As, As + BM * LDA, A, B, M, N, K, row0, col0, next * BK, tid, nthreads);
        }
        __pipeline_commit(); /* even when empty: keeps the group count simple */
#else
        __syncthreads(); /* all are done with tile kt-1 */
        load_tile(tiles, tiles + BM * LDA, A, B, M, N, K, row0, col0, kt * BK, tid, nthreads);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
#endif

        const IN_T *As = tiles + (kt % STAGES) * STAGE_ELEMS;
        const IN_T *Bs = As + BM * LDA;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, IN_T, wmma::row_major> a[FM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, IN_T, wmma::row_major> b[FN];
#pragma unroll
            for (int i = 0; i < FM; i++)
                wmma::load_matrix_sync(a[i], As + (wm * WM + i * 16) * LDA + kk, LDA);
#pragma unroll
            for (int j = 0; j < FN; j++)
                wmma::load_matrix_sync(b[j], Bs + kk * LDB + wn * WN + j * 16, LDB);
#pragma unroll
            for (int i = 0; i < FM; i++)
#pragma unroll
                for (int j = 0; j < FN; j++)
                    wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
    }

#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++) {
            wmma::store_matrix_sync(stage_c, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            const int r0 = row0 + wm * WM + i * 16, c0 = col0 + wn * WN + j * 16;
            for (int e = lane; e < 256; e += 32) {
                int r = r0 + e / 16, c = c0 + e % 16;
                if (r < M && c < N)
                    C[(size_t)r * N + c] = stage_c[e];
            }
            __syncwarp();
        }
}
