/*
 * sgemm seed built the way fast BLAS kernels are (Goto / BLIS): C[M,N] =
 * A[M,K] * B[K,N], fp32, row-major, C overwritten.
 *
 * Five loops around a register-blocked micro-kernel:
 *
 *   for jc over N in steps of NC            B panel of KC x NC: packed once, lives in L3/L2
 *     for pc over K in steps of KC
 *       pack B[pc:pc+KC, jc:jc+NC] into NR-wide column slivers, k-major
 *       for ic over M in steps of MC        A block of MC x KC: packed, lives in L2
 *         pack A[ic:ic+MC, pc:pc+KC] into MR-tall row slivers, k-major
 *         for jr over the panel in NR       one B sliver (KC x NR) stays in L1
 *           for ir over the block in MR
 *             micro-kernel: MR x NR outputs in vector registers over KC steps
 *
 * The micro-kernel is written with GCC vector extensions: a vector of VLEN
 * floats is one register of the widest unit the compiler targets (-march=
 * native): 16 lanes with AVX-512 (32 registers), 8 with AVX/AVX2 (16
 * registers), 4 otherwise (SSE, NEON, or generic code the compiler lowers).
 * Each k step loads NV vectors of B and broadcasts MR values of A, then does
 * MR x NV fused multiply-adds. Packing pads ragged edges with zeros, so the
 * micro-kernel always computes a whole tile; an edge tile is written through
 * a small buffer. The first k block stores into C, later ones add, so C needs
 * no clearing and every element is written.
 *
 * Knobs (first value is the seed's):
 *   MR        rows of the register tile (broadcasts of A per k step)
 *   NV        vectors across the tile: NR = NV * VLEN columns. MR*NV
 *             accumulators + NV B vectors + 1 broadcast should fit the
 *             register file (AVX-512: 12x2, 14x2, 8x3, 6x4; AVX2: 6x2, 4x3),
 *             larger tiles spill and are merely slower
 *   KC        depth of a packed block (an A sliver MR x KC and a B sliver
 *             KC x NR should share L1)
 *   MC        rows of a packed A block (MC x KC in L2); rounded up to MR
 *   NC        columns of a packed B panel (KC x NC in L2/L3); rounded up to NR
 *   UNROLL    k steps per pass of the micro-kernel's loop
 *   PREFETCH  0 = none, 1 = the C tile before the k loop, 2 = also A and B
 *             slivers PF_DIST steps ahead inside the k loop
 *
 * The packed buffers are kept between calls and grow as needed (the way
 * BLAS libraries keep theirs), so a call does not pay for fresh pages.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// avo:param MR 8 4 6 10 12 14 16
// avo:param NV 2 1 3 4
// avo:param KC 256 64 128 192 320 384 512
// avo:param MC 96 48 72 144 192 288 384
// avo:param NC 1024 256 512 2048 4096
// avo:param UNROLL 4 1 2 8
// avo:param PREFETCH 0 1 2

#ifndef MR
#define MR 8
#endif
#ifndef NV
#define NV 2
#endif
#ifndef KC
#define KC 256
#endif
#ifndef MC
#define MC 96
#endif
#ifndef NC
#define NC 1024
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef PREFETCH
#define PREFETCH 0
#endif

#if defined(__AVX512F__)
#define VLEN 16
#elif defined(__AVX__)
#define VLEN 8
#else
#define VLEN 4
#endif
#define NR (NV * VLEN)
#if defined(__AVX__)
#include <immintrin.h>
#endif
#define PF_DIST 8 /* k steps ahead for PREFETCH 2 */

/* Whole blocks: MC and NC rounded up to a multiple of the tile. */
#define MC_TILES ((MC + MR - 1) / MR)
#define NC_TILES ((NC + NR - 1) / NR)

#define PRAGMA_(x) _Pragma(#x)
#define PRAGMA(x) PRAGMA_(x)
#define UNROLL_PRAGMA(n) PRAGMA(GCC unroll n)

typedef float vec __attribute__((vector_size(VLEN * sizeof(float))));
/* The same vector at any float alignment, for rows of C. */
typedef float vec_u __attribute__((vector_size(VLEN * sizeof(float)), aligned(4), may_alias));

/*
 * *p in every lane. Through the ISA's broadcast where there is one: written
 * as a plain vector, GCC's SLP pass loads MR values of A as one vector and
 * shuffles each out (3 shuffles per broadcast, half the speed).
 */
static inline vec splat(const float *p)
{
#if defined(__AVX512F__)
    return (vec)_mm512_broadcastss_ps(_mm_load_ss(p));
#elif defined(__AVX__)
    return (vec)_mm256_broadcast_ss(p);
#else
    vec v;
    for (int i = 0; i < VLEN; i++)
        v[i] = *p;
    return v;
#endif
}

/*
 * c[MR, NR] (=|+=) a_sliver[KC, MR] * b_sliver[KC, NR] for kc steps. a and b
 * are packed k-major and 64-byte aligned; c has row stride ldc. With
 * `accumulate` 0 the tile is stored, else added. The accumulators are a fixed
 * array the loops unroll completely, so they live in registers.
 */
static inline void micro_kernel(int kc, const float *restrict a, const float *restrict b,
                                float *restrict c, size_t ldc, int accumulate)
{
    vec acc[MR][NV];
    UNROLL_PRAGMA(MR)
    for (int r = 0; r < MR; r++) {
        UNROLL_PRAGMA(NV)
        for (int v = 0; v < NV; v++)
            acc[r][v] = (vec){0};
    }

    if (PREFETCH >= 1)
        for (int r = 0; r < MR; r++)
            __builtin_prefetch(c + (size_t)r * ldc, 1, 3);

    UNROLL_PRAGMA(UNROLL)
    for (int k = 0; k < kc; k++) {
        if (PREFETCH >= 2) {
            __builtin_prefetch(a + (PF_DIST * MR), 0, 3);
            __builtin_prefetch(b + (PF_DIST * NR), 0, 3);
        }
        vec bv[NV];
        UNROLL_PRAGMA(NV)
        for (int v = 0; v < NV; v++)
            bv[v] = *(const vec *)(b + v * VLEN);
        UNROLL_PRAGMA(MR)
        for (int r = 0; r < MR; r++) {
            vec ar = splat(a + r);
            UNROLL_PRAGMA(NV)
            for (int v = 0; v < NV; v++)
                acc[r][v] += ar * bv[v];
        }
        a += MR;
        b += NR;
    }

    UNROLL_PRAGMA(MR)
    for (int r = 0; r < MR; r++) {
        UNROLL_PRAGMA(NV)
        for (int v = 0; v < NV; v++) {
            vec_u *p = (vec_u *)(c + (size_t)r * ldc + v * VLEN);
            if (accumulate)
                *p += acc[r][v];
            else
                *p = acc[r][v];
        }
    }
}

/*
 * A ragged tile (mr <= MR rows, nr <= NR columns): the whole tile goes to a
 * buffer, then its valid part to c.
 */
static void micro_edge(int kc, const float *restrict a, const float *restrict b, float *restrict c,
                       size_t ldc, int accumulate, int mr, int nr)
{
    _Alignas(64) float tile[MR * NR];
    micro_kernel(kc, a, b, tile, NR, 0);
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nr; j++)
            c[(size_t)r * ldc + j] =
                accumulate ? c[(size_t)r * ldc + j] + tile[r * NR + j] : tile[r * NR + j];
}

/*
 * Packs A[mc, kc] (row stride lda) into ceil(mc/MR) slivers, each kc steps of
 * MR values; rows past mc are zero.
 */
static void pack_a(int mc, int kc, const float *restrict A, size_t lda, float *restrict out)
{
    for (int i = 0; i < mc; i += MR) {
        int rows = mc - i < MR ? mc - i : MR;
        const float *src = A + (size_t)i * lda;
        if (rows == MR) {
            for (int k = 0; k < kc; k++)
                for (int r = 0; r < MR; r++)
                    out[(size_t)k * MR + r] = src[(size_t)r * lda + k];
        } else {
            for (int k = 0; k < kc; k++)
                for (int r = 0; r < MR; r++)
                    out[(size_t)k * MR + r] = r < rows ? src[(size_t)r * lda + k] : 0.0f;
        }
        out += (size_t)kc * MR;
    }
}

/*
 * Packs B[kc, nc] (row stride ldb) into ceil(nc/NR) slivers, each kc steps of
 * NR values; columns past nc are zero.
 */
static void pack_b(int kc, int nc, const float *restrict B, size_t ldb, float *restrict out)
{
    for (int j = 0; j < nc; j += NR) {
        int cols = nc - j < NR ? nc - j : NR;
        const float *src = B + j;
        if (cols == NR) {
            for (int k = 0; k < kc; k++)
                memcpy(out + (size_t)k * NR, src + (size_t)k * ldb, NR * sizeof(float));
        } else {
            for (int k = 0; k < kc; k++) {
                memcpy(out + (size_t)k * NR, src + (size_t)k * ldb, (size_t)cols * sizeof(float));
                memset(out + (size_t)k * NR + cols, 0, (size_t)(NR - cols) * sizeof(float));
            }
        }
        out += (size_t)kc * NR;
    }
}

/* A buffer of at least `floats` floats, 64-byte aligned, kept between calls;
 * NULL when memory runs out. */
static float *grow(float **buf, size_t *cap, size_t floats)
{
    if (*cap >= floats)
        return *buf;
    size_t bytes = (floats * sizeof(float) + 63) & ~(size_t)63;
    float *p = aligned_alloc(64, bytes);
    if (!p)
        return NULL;
    free(*buf);
    *buf = p;
    *cap = bytes / sizeof(float);
    return p;
}

static float *packed_a, *packed_b;
static size_t packed_a_cap, packed_b_cap;

void sgemm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        memset(C, 0, (size_t)M * N * sizeof *C);
        return;
    }
    int kc_max = K < KC ? K : KC;
    int mc_max = MC_TILES * MR, nc_max = NC_TILES * NR;
    int m_tiles = (M + MR - 1) / MR, n_tiles = (N + NR - 1) / NR;
    if (m_tiles * MR < mc_max)
        mc_max = m_tiles * MR;
    if (n_tiles * NR < nc_max)
        nc_max = n_tiles * NR;
    float *pa = grow(&packed_a, &packed_a_cap, (size_t)mc_max * kc_max);
    float *pb = grow(&packed_b, &packed_b_cap, (size_t)kc_max * nc_max);
    if (!pa || !pb)
        abort(); /* no memory for the panels: fail loudly rather than be wrong */

    size_t ldc = (size_t)N;
    for (int jc = 0; jc < N; jc += nc_max) {
        int nc = N - jc < nc_max ? N - jc : nc_max;
        for (int pc = 0; pc < K; pc += kc_max) {
            int kc = K - pc < kc_max ? K - pc : kc_max;
            int accumulate = pc > 0;
            pack_b(kc, nc, B + (size_t)pc * N + jc, (size_t)N, pb);
            for (int ic = 0; ic < M; ic += mc_max) {
                int mc = M - ic < mc_max ? M - ic : mc_max;
                pack_a(mc, kc, A + (size_t)ic * K + pc, (size_t)K, pa);
                for (int jr = 0; jr < nc; jr += NR) {
                    int nr = nc - jr < NR ? nc - jr : NR;
                    const float *bs = pb + (size_t)(jr / NR) * kc * NR;
                    for (int ir = 0; ir < mc; ir += MR) {
                        int mr = mc - ir < MR ? mc - ir : MR;
                        const float *as = pa + (size_t)(ir / MR) * kc * MR;
                        float *c = C + (size_t)(ic + ir) * ldc + jc + jr;
                        if (mr == MR && nr == NR)
                            micro_kernel(kc, as, bs, c, ldc, accumulate);
                        else
                            micro_edge(kc, as, bs, c, ldc, accumulate, mr, nr);
                    }
                }
            }
        }
    }
}
