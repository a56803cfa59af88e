/*
 * sgemm seed kernel: C[M,N] = A[M,K] * B[K,N], fp32, row-major, C overwritten.
 *
 * The seed (first value of every knob) is the textbook ijk dot-product loop.
 * Every combination of knob values is correct for every size: blocks, unrolled
 * k steps and register tiles all have remainder code.
 *
 * Knobs:
 *   ORDER   loop order inside a block when TILE is 0:
 *           0 = ijk (dot product, B walked down a column: stride N),
 *           1 = ikj (row of B scaled into a row of C: unit stride, vectorises),
 *           2 = jki (column of A into a column of C: stride K and N, slowest).
 *   BM BN BK  cache block sizes over M, N, K; 0 = no blocking (whole extent).
 *           Block loops run j-block, k-block, i-block, so one KxN block of B
 *           is reused by every row block of A.
 *   UNROLL  k steps per pass of the inner loop: with ORDER 0 that many
 *           independent partial sums (breaks the add chain); with ORDER 1/2
 *           that many rows of B fused into one read-modify-write of C; with a
 *           register tile the k loop is unrolled that far.
 *   TILE    register tile micro-kernel, MR x NR outputs kept in registers
 *           across the whole k block: 0 = none (use ORDER), 1 = 4x8, 2 = 4x16,
 *           3 = 6x16, 4 = 8x32. Edges that do not fill a tile use ikj loops.
 *   PACK    1 = copy each BK x BN block of B into a contiguous buffer first
 *           (short stride for the inner loops, fewer TLB/cache conflicts).
 *
 * The knobs are used as ordinary C expressions (no #if), so every branch is
 * compiled and the untaken ones are folded away.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// avo:param ORDER 0 1 2
// avo:param BM 0 16 32 64 128 256
// avo:param BN 0 16 32 64 128 256
// avo:param BK 0 16 32 64 128 256
// avo:param UNROLL 1 2 4 8
// avo:param TILE 0 1 2 3 4
// avo:param PACK 0 1

#ifndef ORDER
#define ORDER 0
#endif
#ifndef BM
#define BM 0
#endif
#ifndef BN
#define BN 0
#endif
#ifndef BK
#define BK 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef TILE
#define TILE 0
#endif
#ifndef PACK
#define PACK 0
#endif

/* Upper bound of UNROLL; sizes the partial-sum arrays. */
#define MAX_UNROLL 8

/*
 * The block kernels below accumulate into c: c[mb,nb] += a[mb,kb] * b[kb,nb]
 * with leading dimensions lda, ldb, ldc. a, b and c never overlap.
 */

/* ORDER 0: each output is a dot product of a row of a and a column of b. */
static void block_ijk(int mb, int nb, int kb, const float *restrict a, int lda,
                      const float *restrict b, int ldb, float *restrict c, int ldc)
{
    for (int i = 0; i < mb; i++) {
        const float *arow = a + (size_t)i * lda;
        for (int j = 0; j < nb; j++) {
            float part[MAX_UNROLL] = {0};
            int k = 0;
            for (; k + UNROLL <= kb; k += UNROLL)
                for (int u = 0; u < UNROLL; u++)
                    part[u] += arow[k + u] * b[(size_t)(k + u) * ldb + j];
            for (; k < kb; k++)
                part[0] += arow[k] * b[(size_t)k * ldb + j];
            float sum = 0.0f;
            for (int u = 0; u < UNROLL; u++)
                sum += part[u];
            c[(size_t)i * ldc + j] += sum;
        }
    }
}

/* ORDER 1 (and tile edges): rows of b, scaled by a[i,k], added into row i of c. */
static void block_ikj(int mb, int nb, int kb, const float *restrict a, int lda,
                      const float *restrict b, int ldb, float *restrict c, int ldc)
{
    for (int i = 0; i < mb; i++) {
        const float *arow = a + (size_t)i * lda;
        float *restrict crow = c + (size_t)i * ldc;
        int k = 0;
        for (; k + UNROLL <= kb; k += UNROLL) {
            float av[MAX_UNROLL];
            for (int u = 0; u < UNROLL; u++)
                av[u] = arow[k + u];
            const float *brow = b + (size_t)k * ldb;
            for (int j = 0; j < nb; j++) {
                float s = crow[j];
                for (int u = 0; u < UNROLL; u++)
                    s += av[u] * brow[(size_t)u * ldb + j];
                crow[j] = s;
            }
        }
        for (; k < kb; k++) {
            float av = arow[k];
            const float *brow = b + (size_t)k * ldb;
            for (int j = 0; j < nb; j++)
                crow[j] += av * brow[j];
        }
    }
}

/* ORDER 2: columns of a, scaled by b[k,j], added into column j of c. */
static void block_jki(int mb, int nb, int kb, const float *restrict a, int lda,
                      const float *restrict b, int ldb, float *restrict c, int ldc)
{
    for (int j = 0; j < nb; j++) {
        int k = 0;
        for (; k + UNROLL <= kb; k += UNROLL) {
            float bv[MAX_UNROLL];
            for (int u = 0; u < UNROLL; u++)
                bv[u] = b[(size_t)(k + u) * ldb + j];
            for (int i = 0; i < mb; i++) {
                const float *ap = a + (size_t)i * lda + k;
                float s = c[(size_t)i * ldc + j];
                for (int u = 0; u < UNROLL; u++)
                    s += ap[u] * bv[u];
                c[(size_t)i * ldc + j] = s;
            }
        }
        for (; k < kb; k++) {
            float bv = b[(size_t)k * ldb + j];
            for (int i = 0; i < mb; i++)
                c[(size_t)i * ldc + j] += a[(size_t)i * lda + k] * bv;
        }
    }
}

/*
 * Register tile micro-kernels: c[MR_,NR_] += a[MR_,kb] * b[kb,NR_]. The
 * accumulator array has constant shape, so -O3 keeps it in vector registers
 * for the whole k loop and c is read and written once per block.
 */
// clang-format off
#define TILE_STEP(MR_, NR_, kk)                                                                    \
    for (int r = 0; r < MR_; r++) {                                                                \
        float ar = a[(size_t)r * lda + (kk)];                                                      \
        for (int q = 0; q < NR_; q++)                                                              \
            acc[r][q] += ar * b[(size_t)(kk) * ldb + q];                                           \
    }

/*
 * Same step, but the q loop is kept whole for the loop vectoriser. GCC 12
 * otherwise unrolls a short q loop (NR_ <= 16) completely before vectorising
 * and leaves the accumulators in memory (~5 GFLOP/s instead of ~70-100).
 * At NR_ = 32 it is the other way round: the plain step is ~4x faster.
 */
#define TILE_STEP_KEEP_Q(MR_, NR_, kk)                                                             \
    for (int r = 0; r < MR_; r++) {                                                                \
        float ar = a[(size_t)r * lda + (kk)];                                                      \
        _Pragma("GCC unroll 1") for (int q = 0; q < NR_; q++)                                      \
            acc[r][q] += ar * b[(size_t)(kk) * ldb + q];                                           \
    }

#define DEFINE_MICRO(MR_, NR_, STEP)                                                               \
    static void micro_##MR_##x##NR_(int kb, const float *restrict a, int lda,                      \
                                    const float *restrict b, int ldb, float *restrict c, int ldc)  \
    {                                                                                              \
        float acc[MR_][NR_] = {{0}};                                                               \
        int k = 0;                                                                                 \
        for (; k + UNROLL <= kb; k += UNROLL)                                                      \
            for (int u = 0; u < UNROLL; u++)                                                       \
                STEP(MR_, NR_, k + u)                                                              \
        for (; k < kb; k++)                                                                        \
            STEP(MR_, NR_, k)                                                                      \
        for (int r = 0; r < MR_; r++)                                                              \
            for (int q = 0; q < NR_; q++)                                                          \
                c[(size_t)r * ldc + q] += acc[r][q];                                               \
    }

DEFINE_MICRO(4, 8, TILE_STEP_KEEP_Q)
DEFINE_MICRO(4, 16, TILE_STEP_KEEP_Q)
DEFINE_MICRO(6, 16, TILE_STEP_KEEP_Q)
DEFINE_MICRO(8, 32, TILE_STEP)
// clang-format on

typedef void micro_fn(int, const float *restrict, int, const float *restrict, int, float *restrict,
                      int);

/* Tiles the block with the micro-kernel; the ragged right and bottom edges go to block_ikj. */
static void block_tiled(int mb, int nb, int kb, const float *restrict a, int lda,
                        const float *restrict b, int ldb, float *restrict c, int ldc)
{
    int mr, nr;
    micro_fn *micro;
    if (TILE == 1) {
        mr = 4, nr = 8, micro = micro_4x8;
    } else if (TILE == 2) {
        mr = 4, nr = 16, micro = micro_4x16;
    } else if (TILE == 3) {
        mr = 6, nr = 16, micro = micro_6x16;
    } else {
        mr = 8, nr = 32, micro = micro_8x32;
    }
    int mfull = mb - mb % mr, nfull = nb - nb % nr;
    for (int i = 0; i < mfull; i += mr) {
        for (int j = 0; j < nfull; j += nr)
            micro(kb, a + (size_t)i * lda, lda, b + j, ldb, c + (size_t)i * ldc + j, ldc);
        if (nfull < nb)
            block_ikj(mr, nb - nfull, kb, a + (size_t)i * lda, lda, b + nfull, ldb,
                      c + (size_t)i * ldc + nfull, ldc);
    }
    if (mfull < mb)
        block_ikj(mb - mfull, nb, kb, a + (size_t)mfull * lda, lda, b, ldb, c + (size_t)mfull * ldc,
                  ldc);
}

static void block(int mb, int nb, int kb, const float *restrict a, int lda, const float *restrict b,
                  int ldb, float *restrict c, int ldc)
{
    if (TILE != 0)
        block_tiled(mb, nb, kb, a, lda, b, ldb, c, ldc);
    else if (ORDER == 1)
        block_ikj(mb, nb, kb, a, lda, b, ldb, c, ldc);
    else if (ORDER == 2)
        block_jki(mb, nb, kb, a, lda, b, ldb, c, ldc);
    else
        block_ijk(mb, nb, kb, a, lda, b, ldb, c, ldc);
}

void sgemm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    int bm = (BM > 0 && BM < M) ? BM : M;
    int bn = (BN > 0 && BN < N) ? BN : N;
    int bk = (BK > 0 && BK < K) ? BK : K;

    if (M <= 0 || N <= 0)
        return;
    memset(C, 0, (size_t)M * N * sizeof *C);
    if (K <= 0)
        return;

    /* Without memory for the packed copy the kernel still works, unpacked. */
    float *packed = PACK ? malloc((size_t)bk * bn * sizeof *packed) : NULL;

    for (int j0 = 0; j0 < N; j0 += bn) {
        int nb = N - j0 < bn ? N - j0 : bn;
        for (int k0 = 0; k0 < K; k0 += bk) {
            int kb = K - k0 < bk ? K - k0 : bk;
            const float *b = B + (size_t)k0 * N + j0;
            int ldb = N;
            if (packed) {
                for (int k = 0; k < kb; k++)
                    memcpy(packed + (size_t)k * nb, b + (size_t)k * N, (size_t)nb * sizeof *b);
                b = packed;
                ldb = nb;
            }
            for (int i0 = 0; i0 < M; i0 += bm) {
                int mb = M - i0 < bm ? M - i0 : bm;
                block(mb, nb, kb, A + (size_t)i0 * K + k0, K, b, ldb, C + (size_t)i0 * N + j0, N);
            }
        }
    }
    free(packed);
}
