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
 * Per shape family, as autotuned libraries do: the call's shape picks one of
 * four knob sets (`family` below), so the search tunes each family apart:
 *
 *   SM  small:        M*N*K <= 128^3 (packing and call overheads dominate)
 *   TS  tall-skinny:  otherwise M <= 96 or N <= 96 (one short side)
 *   LG  large:        otherwise M, N and K all >= 512
 *   MD  mid-size:     the rest (odd shapes of a few hundred)
 *
 * Every family's code is the same template (gemm_run below, inlined with
 * its family's knobs as constants); the seed's four knob sets are equal.
 *
 * The micro-kernel is written with GCC vector extensions: a vector of VLEN
 * floats is one register of the widest unit the compiler targets (-march=
 * native): 16 lanes with AVX-512 (32 registers), 8 with AVX/AVX2 (16
 * registers), 4 otherwise (SSE, NEON, or generic code the compiler lowers).
 * Each k step loads NV vectors of B and broadcasts MR values of A, then does
 * MR x NV fused multiply-adds. Packing pads ragged edges with zeros, so the
 * micro-kernel always computes a whole tile. The first k block stores into
 * C, later ones add, so C needs no clearing and every element is written.
 *
 * Knobs, each as <family>_<knob> (SM_MR, TS_MR, LG_MR, MD_MR, ...); the
 * first value is the seed's:
 *   MR        rows of the register tile (broadcasts of A per k step)
 *   NV        vectors across the tile: NR = NV * VLEN columns. MR*NV
 *             accumulators + NV B vectors + 1 broadcast should fit the
 *             register file (AVX-512: 14x2, 8x3, 6x4; AVX2: 6x2, 4x3);
 *             larger tiles spill and are merely slower
 *   KC        depth of a packed block (an A sliver MR x KC and a B sliver
 *             KC x NR should share L1)
 *   MC        rows of a packed A block (MC x KC in L2); rounded up to MR
 *   NC        columns of a packed B panel (KC x NC in L2/L3); rounded up to NR
 *   UNROLL    k steps per pass of the micro-kernel's loop (k-unrolling)
 *   PREFETCH  0 = none, 1 = the C tile before the k loop, 2 = also A and B
 *             slivers PF_DIST steps ahead inside the k loop, 3 = the C tile
 *             late, when 4 x PF_DIST k steps are left (a tile prefetched
 *             before a long k loop may have left L1 by its update), 4 = 3
 *             and A and B ahead as in 2
 *   PF_DIST   the prefetch distance of PREFETCH 2 and 4, in k steps, and
 *             a quarter of the C tile's lead in 3 and 4
 *   EDGE      ragged tiles: 0 = computed into a buffer, then copied; 1 =
 *             stored straight into C with masked stores (AVX-512, AVX2;
 *             elsewhere as 0)
 *   LOOP      order of the two loops around the micro-kernel: 0 = B sliver
 *             outer (it stays in L1, A slivers stream from L2), 1 = A sliver
 *             outer (B slivers stream from L2)
 *   PACK      when slivers are packed: 0 = the whole A block and B panel
 *             before any tile, 1 = each A sliver just before its first use,
 *             2 = each B sliver just before its first use, 3 = both (the
 *             packed data is then still in L1 when first used), 4 = each B
 *             sliver by the first tile that reads it, inside its k loop
 *             (the vectors it loads from B are stored packed as well: no
 *             pass of its own over B), 5 = 4 with A as in 1
 *   INPLACE   what is not packed: 0 = both packed, 1 = whole B slivers are
 *             read where they are (rows N apart), 2 = whole A slivers (the
 *             broadcasts read K apart), 3 = both; ragged slivers are always
 *             packed (zero padding keeps the tile whole)
 *   ALAYOUT   a packed A sliver's layout: 0 = k-major (MR values of a k
 *             step together: packing transposes, one element at a time),
 *             1 = row-major (each of the MR rows' KC values together, rows
 *             KC apart: packing copies whole rows, and the broadcasts walk
 *             MR streams at constant offsets)
 *   PF_INPUTS the inputs' first blocks fetched ahead at the call's entry:
 *             0 = no, 1 = every line of the first MC x KC block of A and
 *             KC x NC panel of B prefetched into L1, 2 = the same into L2.
 *             A small call's inputs often come from L3 or memory (written
 *             by another routine, or evicted since): the prefetches let all
 *             of their misses be in flight at once instead of one tile's
 *             worth as the loops reach them
 *
 * The packed buffers are kept between calls and grow as needed (the way
 * BLAS libraries keep theirs), so a call does not pay for fresh pages.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// avo:param LG_MR 8 4 6 10 12 14 16
// avo:param LG_NV 2 1 3 4
// avo:param LG_KC 256 64 128 192 320 384 512 768 1024
// avo:param LG_MC 96 48 72 144 192 288 384
// avo:param LG_NC 1024 256 512 2048 4096
// avo:param LG_UNROLL 4 1 2 8
// avo:param LG_PREFETCH 0 1 2 3 4
// avo:param LG_PF_DIST 8 2 4 16 32
// avo:param LG_EDGE 0 1
// avo:param LG_LOOP 0 1
// avo:param LG_PACK 0 1 2 3 4 5
// avo:param LG_INPLACE 0 1 2 3
// avo:param LG_ALAYOUT 0 1
// avo:param LG_PF_INPUTS 0 1 2
// avo:param MD_MR 8 4 6 10 12 14 16
// avo:param MD_NV 2 1 3 4
// avo:param MD_KC 256 64 128 192 320 384 512 768 1024
// avo:param MD_MC 96 48 72 144 192 288 384
// avo:param MD_NC 1024 256 512 2048 4096
// avo:param MD_UNROLL 4 1 2 8
// avo:param MD_PREFETCH 0 1 2 3 4
// avo:param MD_PF_DIST 8 2 4 16 32
// avo:param MD_EDGE 0 1
// avo:param MD_LOOP 0 1
// avo:param MD_PACK 0 1 2 3 4 5
// avo:param MD_INPLACE 0 1 2 3
// avo:param MD_ALAYOUT 0 1
// avo:param MD_PF_INPUTS 0 1 2
// avo:param TS_MR 8 4 6 10 12 14 16
// avo:param TS_NV 2 1 3 4
// avo:param TS_KC 256 64 128 192 320 384 512
// avo:param TS_MC 96 48 72 144 192 288 384
// avo:param TS_NC 1024 256 512 2048 4096
// avo:param TS_UNROLL 4 1 2 8
// avo:param TS_PREFETCH 0 1 2 3 4
// avo:param TS_PF_DIST 8 2 4 16 32
// avo:param TS_EDGE 0 1
// avo:param TS_LOOP 0 1
// avo:param TS_PACK 0 1 2 3 4 5
// avo:param TS_INPLACE 0 1 2 3
// avo:param TS_ALAYOUT 0 1
// avo:param TS_PF_INPUTS 0 1 2
// avo:param SM_MR 8 4 6 10 12 14 16
// avo:param SM_NV 2 1 3 4
// avo:param SM_KC 256 64 128 192 320 384 512
// avo:param SM_MC 96 48 72 144 192 288 384
// avo:param SM_NC 1024 256 512 2048 4096
// avo:param SM_UNROLL 4 1 2 8
// avo:param SM_PREFETCH 0 1 2 3 4
// avo:param SM_PF_DIST 8 2 4 16 32
// avo:param SM_EDGE 0 1
// avo:param SM_LOOP 0 1
// avo:param SM_PACK 0 1 2 3 4 5
// avo:param SM_INPLACE 0 1 2 3
// avo:param SM_ALAYOUT 0 1
// avo:param SM_PF_INPUTS 0 1 2

/* The seed's knob set, for any knob not given. */
#define SEED_MR 8
#define SEED_NV 2
#define SEED_KC 256
#define SEED_MC 96
#define SEED_NC 1024
#define SEED_UNROLL 4
#define SEED_PREFETCH 0
#define SEED_PF_DIST 8
#define SEED_EDGE 0
#define SEED_LOOP 0
#define SEED_PACK 0
#define SEED_INPLACE 0
#define SEED_ALAYOUT 0
#define SEED_PF_INPUTS 0

#ifndef LG_MR
#define LG_MR SEED_MR
#endif
#ifndef LG_NV
#define LG_NV SEED_NV
#endif
#ifndef LG_KC
#define LG_KC SEED_KC
#endif
#ifndef LG_MC
#define LG_MC SEED_MC
#endif
#ifndef LG_NC
#define LG_NC SEED_NC
#endif
#ifndef LG_UNROLL
#define LG_UNROLL SEED_UNROLL
#endif
#ifndef LG_PREFETCH
#define LG_PREFETCH SEED_PREFETCH
#endif
#ifndef LG_PF_DIST
#define LG_PF_DIST SEED_PF_DIST
#endif
#ifndef LG_EDGE
#define LG_EDGE SEED_EDGE
#endif
#ifndef LG_LOOP
#define LG_LOOP SEED_LOOP
#endif
#ifndef LG_PACK
#define LG_PACK SEED_PACK
#endif
#ifndef LG_INPLACE
#define LG_INPLACE SEED_INPLACE
#endif
#ifndef LG_ALAYOUT
#define LG_ALAYOUT SEED_ALAYOUT
#endif
#ifndef LG_PF_INPUTS
#define LG_PF_INPUTS SEED_PF_INPUTS
#endif
#ifndef MD_MR
#define MD_MR SEED_MR
#endif
#ifndef MD_NV
#define MD_NV SEED_NV
#endif
#ifndef MD_KC
#define MD_KC SEED_KC
#endif
#ifndef MD_MC
#define MD_MC SEED_MC
#endif
#ifndef MD_NC
#define MD_NC SEED_NC
#endif
#ifndef MD_UNROLL
#define MD_UNROLL SEED_UNROLL
#endif
#ifndef MD_PREFETCH
#define MD_PREFETCH SEED_PREFETCH
#endif
#ifndef MD_PF_DIST
#define MD_PF_DIST SEED_PF_DIST
#endif
#ifndef MD_EDGE
#define MD_EDGE SEED_EDGE
#endif
#ifndef MD_LOOP
#define MD_LOOP SEED_LOOP
#endif
#ifndef MD_PACK
#define MD_PACK SEED_PACK
#endif
#ifndef MD_INPLACE
#define MD_INPLACE SEED_INPLACE
#endif
#ifndef MD_ALAYOUT
#define MD_ALAYOUT SEED_ALAYOUT
#endif
#ifndef MD_PF_INPUTS
#define MD_PF_INPUTS SEED_PF_INPUTS
#endif
#ifndef TS_MR
#define TS_MR SEED_MR
#endif
#ifndef TS_NV
#define TS_NV SEED_NV
#endif
#ifndef TS_KC
#define TS_KC SEED_KC
#endif
#ifndef TS_MC
#define TS_MC SEED_MC
#endif
#ifndef TS_NC
#define TS_NC SEED_NC
#endif
#ifndef TS_UNROLL
#define TS_UNROLL SEED_UNROLL
#endif
#ifndef TS_PREFETCH
#define TS_PREFETCH SEED_PREFETCH
#endif
#ifndef TS_PF_DIST
#define TS_PF_DIST SEED_PF_DIST
#endif
#ifndef TS_EDGE
#define TS_EDGE SEED_EDGE
#endif
#ifndef TS_LOOP
#define TS_LOOP SEED_LOOP
#endif
#ifndef TS_PACK
#define TS_PACK SEED_PACK
#endif
#ifndef TS_INPLACE
#define TS_INPLACE SEED_INPLACE
#endif
#ifndef TS_ALAYOUT
#define TS_ALAYOUT SEED_ALAYOUT
#endif
#ifndef TS_PF_INPUTS
#define TS_PF_INPUTS SEED_PF_INPUTS
#endif
#ifndef SM_MR
#define SM_MR SEED_MR
#endif
#ifndef SM_NV
#define SM_NV SEED_NV
#endif
#ifndef SM_KC
#define SM_KC SEED_KC
#endif
#ifndef SM_MC
#define SM_MC SEED_MC
#endif
#ifndef SM_NC
#define SM_NC SEED_NC
#endif
#ifndef SM_UNROLL
#define SM_UNROLL SEED_UNROLL
#endif
#ifndef SM_PREFETCH
#define SM_PREFETCH SEED_PREFETCH
#endif
#ifndef SM_PF_DIST
#define SM_PF_DIST SEED_PF_DIST
#endif
#ifndef SM_EDGE
#define SM_EDGE SEED_EDGE
#endif
#ifndef SM_LOOP
#define SM_LOOP SEED_LOOP
#endif
#ifndef SM_PACK
#define SM_PACK SEED_PACK
#endif
#ifndef SM_INPLACE
#define SM_INPLACE SEED_INPLACE
#endif
#ifndef SM_ALAYOUT
#define SM_ALAYOUT SEED_ALAYOUT
#endif
#ifndef SM_PF_INPUTS
#define SM_PF_INPUTS SEED_PF_INPUTS
#endif

#if defined(__AVX512F__)
#define VLEN 16
#elif defined(__AVX__)
#define VLEN 8
#else
#define VLEN 4
#endif
#if defined(__AVX__)
#include <immintrin.h>
#endif
#if defined(__AVX512F__) || defined(__AVX2__)
#define HAVE_MASKED_STORE 1
#else
#define HAVE_MASKED_STORE 0
#endif

/* The largest register tile any knob set may ask for: the accumulator
 * array's bounds (a family uses its own MR x NV corner of it). */
#define MR_MAX 16
#define NV_MAX 4

/* A family's knobs, passed as compile-time constants into the template
 * (always inlined, so every loop over them unrolls and the accumulators
 * stay in registers). */
typedef struct knobs {
    int mr, nv, kc, mc, nc, unroll, prefetch, pf_dist, edge, loop, pack, inplace, alayout, pf_inputs;
} knobs;
#define KNOBS(F)                                                                                \
    ((knobs){F##_MR, F##_NV, F##_KC, F##_MC, F##_NC, F##_UNROLL, F##_PREFETCH, F##_PF_DIST,     \
             F##_EDGE, F##_LOOP, F##_PACK, F##_INPLACE, F##_ALAYOUT, F##_PF_INPUTS})

#define INLINE static inline __attribute__((always_inline))

typedef float vec __attribute__((vector_size(VLEN * sizeof(float))));
/* The same vector at any float alignment, for rows of C. */
typedef float vec_u __attribute__((vector_size(VLEN * sizeof(float)), aligned(4), may_alias));

/*
 * *p in every lane. Through the ISA's broadcast where there is one: written
 * as a plain vector, GCC's SLP pass loads MR values of A as one vector and
 * shuffles each out (3 shuffles per broadcast, half the speed).
 */
INLINE vec splat(const float *p)
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

/* Lanes [0, n) of v (n < VLEN) stored to, or with `accumulate` added into,
 * p; 1 when done, 0 when the ISA has no masked store (then the caller
 * goes through a buffer). */
INLINE int store_part(float *p, vec v, int n, int accumulate)
{
#if defined(__AVX512F__)
    __mmask16 m = (__mmask16)((1u << n) - 1);
    __m512 x = (__m512)v;
    if (accumulate)
        x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, p));
    _mm512_mask_storeu_ps(p, m, x);
    return 1;
#elif defined(__AVX2__)
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane);
    __m256 x = (__m256)v;
    if (accumulate)
        x = _mm256_add_ps(x, _mm256_maskload_ps(p, m));
    _mm256_maskstore_ps(p, m, x);
    return 1;
#else
    (void)p, (void)v, (void)n, (void)accumulate;
    return 0;
#endif
}

/*
 * c[mr, nr] (=|+=) a_sliver[kc, MR] * b_sliver[kc, NR] for kc steps, of a
 * tile of MR x NR (mr <= MR rows, nr <= NR columns of it are c's). Row r of
 * A at step k is a[r * a_row + k * a_step] (packed: a_row 1, a_step MR);
 * the NR values of B at step k start at b + k * b_step (packed: NR, 64-byte
 * aligned); c has row stride ldc. With
 * `accumulate` 0 the tile is stored, else added. Unless NULL, b_pack
 * (64-byte aligned) receives the NR values of B of each step, packed.
 * Returns 0 when a ragged tile could not be stored (no masked stores: the
 * caller uses a buffer).
 */
INLINE int micro_kernel(const knobs K, int kc, const float *restrict a, size_t a_row,
                        size_t a_step, const float *restrict b, size_t b_step,
                        float *restrict b_pack, float *restrict c, size_t ldc, int accumulate,
                        int mr, int nr)
{
    const int MR = K.mr, NV = K.nv, NR = K.nv * VLEN, U = K.unroll;
    vec acc[MR_MAX][NV_MAX];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            acc[r][v] = (vec){0};
    }

    const int c_early = K.prefetch == 1 || K.prefetch == 2, c_late = K.prefetch >= 3;
    const int ab_ahead = K.prefetch == 2 || K.prefetch == 4;
#define PREFETCH_C()                                                                            \
    do {                                                                                        \
        _Pragma("GCC unroll 16") for (int r = 0; r < MR; r++)                                   \
        {                                                                                       \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                                \
                __builtin_prefetch(c + (size_t)r * ldc + v * VLEN, 1, 3);                       \
            __builtin_prefetch(c + (size_t)r * ldc + NR - 1, 1, 3);                             \
        }                                                                                       \
    } while (0)
    if (c_early)
        PREFETCH_C();

#define K_STEP()                                                                                \
    do {                                                                                        \
        if (ab_ahead) {                                                                         \
            __builtin_prefetch(a + K.pf_dist * a_step, 0, 3);                                   \
            __builtin_prefetch(b + K.pf_dist * b_step, 0, 3);                                   \
        }                                                                                       \
        vec bv[NV_MAX];                                                                         \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) bv[v] =                            \
            *(const vec_u *)(b + v * VLEN);                                                     \
        if (b_pack) {                                                                           \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                                \
                *(vec *)(b_pack + v * VLEN) = bv[v];                                            \
            b_pack += NR;                                                                       \
        }                                                                                       \
        _Pragma("GCC unroll 16") for (int r = 0; r < MR; r++)                                   \
        {                                                                                       \
            vec ar = splat(a + r * a_row);                                                      \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[r][v] += ar * bv[v];       \
        }                                                                                       \
        a += a_step;                                                                            \
        b += b_step;                                                                            \
    } while (0)

    /* With the C tile late, the k loop stops for its prefetch when
     * 4 x PF_DIST steps are left, then goes on. */
    int k = 0, k_c = c_late ? kc - 4 * K.pf_dist : kc;
    if (k_c < 0)
        k_c = 0;
    for (; k + U <= k_c; k += U) {
#pragma GCC unroll 8
        for (int u = 0; u < U; u++)
            K_STEP();
    }
    if (c_late) {
        PREFETCH_C();
        for (; k + U <= kc; k += U) {
#pragma GCC unroll 8
            for (int u = 0; u < U; u++)
                K_STEP();
        }
    }
    /* The steps the unrolled loops left (none when U is 1, where GCC,
     * given this loop, warned of undefined behaviour in it that cannot run) */
    for (; U > 1 && k < kc; k++)
        K_STEP();
#undef K_STEP
#undef PREFETCH_C

    if (mr == MR && nr == NR) {
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) {
                vec_u *p = (vec_u *)(c + (size_t)r * ldc + v * VLEN);
                if (accumulate)
                    *p += acc[r][v];
                else
                    *p = acc[r][v];
            }
        }
        return 1;
    }
    /* A ragged tile, with masked stores: only its valid part is touched. */
    int done = 1;
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        if (r >= mr)
            break;
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) {
            int left = nr - v * VLEN;
            float *p = c + (size_t)r * ldc + v * VLEN;
            if (left >= VLEN) {
                if (accumulate)
                    *(vec_u *)p += acc[r][v];
                else
                    *(vec_u *)p = acc[r][v];
            } else if (left > 0) {
                done &= store_part(p, acc[r][v], left, accumulate);
            }
        }
    }
    return done;
}

/*
 * A ragged tile (mr <= MR rows, nr <= NR columns): with EDGE 1 stored
 * through masks where the ISA has them; else the whole tile goes to a
 * buffer, then its valid part to c.
 */
static inline void micro_edge(const knobs K, int kc, const float *restrict a, size_t a_row,
                              size_t a_step, const float *restrict b, size_t b_step,
                              float *restrict c, size_t ldc, int accumulate, int mr, int nr)
{
    const int NR = K.nv * VLEN;
    if (K.edge == 1 && HAVE_MASKED_STORE) {
        micro_kernel(K, kc, a, a_row, a_step, b, b_step, NULL, c, ldc, accumulate, mr, nr);
        return;
    }
    _Alignas(64) float tile[MR_MAX * NV_MAX * VLEN];
    micro_kernel(K, kc, a, a_row, a_step, b, b_step, NULL, tile, (size_t)NR, 0, K.mr, NR);
    for (int r = 0; r < mr; r++)
        for (int j = 0; j < nr; j++)
            c[(size_t)r * ldc + j] =
                accumulate ? c[(size_t)r * ldc + j] + tile[r * NR + j] : tile[r * NR + j];
}

/* Floats between the starts of two packed A slivers of depth kc: with
 * ALAYOUT 1 their rows are KC apart whatever kc is, so the micro-kernel
 * addresses them at constant offsets. */
INLINE size_t a_sliver_size(const knobs K, int kc)
{
    return (size_t)K.mr * (K.alayout ? (size_t)K.kc : (size_t)kc);
}

/* Packs rows [i, i + MR) of A[mc, kc] (row stride lda) as one sliver: kc
 * steps of MR values (ALAYOUT 0), or MR rows of kc values KC apart
 * (ALAYOUT 1); rows past mc are zero. */
INLINE void pack_a_sliver(const knobs K, int i, int mc, int kc, const float *restrict A,
                          size_t lda, float *restrict out)
{
    const int MR = K.mr;
    int rows = mc - i < MR ? mc - i : MR;
    const float *src = A + (size_t)i * lda;
    if (K.alayout) {
        for (int r = 0; r < MR; r++) {
            float *row = out + (size_t)r * K.kc;
            if (r < rows)
                memcpy(row, src + (size_t)r * lda, (size_t)kc * sizeof(float));
            else
                memset(row, 0, (size_t)kc * sizeof(float));
        }
    } else if (rows == MR) {
        for (int k = 0; k < kc; k++)
#pragma GCC unroll 16
            for (int r = 0; r < MR; r++)
                out[(size_t)k * MR + r] = src[(size_t)r * lda + k];
    } else {
        for (int k = 0; k < kc; k++)
            for (int r = 0; r < MR; r++)
                out[(size_t)k * MR + r] = r < rows ? src[(size_t)r * lda + k] : 0.0f;
    }
}

/* Packs columns [j, j + NR) of B[kc, nc] (row stride ldb) as one sliver: kc
 * steps of NR values; columns past nc are zero. */
INLINE void pack_b_sliver(const knobs K, int j, int kc, int nc, const float *restrict B,
                          size_t ldb, float *restrict out)
{
    const int NR = K.nv * VLEN;
    int cols = nc - j < NR ? nc - j : NR;
    const float *src = B + j;
    if (cols == NR) {
        for (int k = 0; k < kc; k++)
            memcpy(out + (size_t)k * NR, src + (size_t)k * ldb, (size_t)NR * sizeof(float));
    } else {
        for (int k = 0; k < kc; k++) {
            memcpy(out + (size_t)k * NR, src + (size_t)k * ldb, (size_t)cols * sizeof(float));
            memset(out + (size_t)k * NR + cols, 0, (size_t)(NR - cols) * sizeof(float));
        }
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

/* Every cache line of floats [0, n) at p prefetched for reading, into L1
 * (`l1`) or L2. */
INLINE void prefetch_range(const float *p, size_t n, int l1)
{
    uintptr_t line = (uintptr_t)p & ~(uintptr_t)63, last = (uintptr_t)(p + n - 1) & ~(uintptr_t)63;
    for (; line <= last; line += 64) {
        if (l1)
            __builtin_prefetch((const void *)line, 0, 3);
        else
            __builtin_prefetch((const void *)line, 0, 2);
    }
}

/* The same for a block of rows x cols floats with row stride ld. */
INLINE void prefetch_block(const float *p, size_t ld, int rows, int cols, int l1)
{
    if (ld == (size_t)cols) {
        prefetch_range(p, (size_t)rows * cols, l1);
        return;
    }
    for (int r = 0; r < rows; r++)
        prefetch_range(p + (size_t)r * ld, (size_t)cols, l1);
}

static float *packed_a, *packed_b;
static size_t packed_a_cap, packed_b_cap;

/* One tile at (ir, jr) of the current block: packs what PACK defers to
 * first use (INPLACE: only ragged slivers), then runs the micro-kernel (or
 * its ragged version). */
INLINE void tile(const knobs K, int ir, int jr, int ic, int jc, int mc, int nc, int kc, int pc,
                 const float *A, const float *B, float *C, int Kdim, int N, const float *pa,
                 const float *pb)
{
    const int MR = K.mr, NR = K.nv * VLEN;
    int mr = mc - ir < MR ? mc - ir : MR;
    int nr = nc - jr < NR ? nc - jr : NR;
    int a_in_place = (K.inplace & 2) && mr == MR, b_in_place = (K.inplace & 1) && nr == NR;
    const float *Ablk = A + (size_t)ic * Kdim + pc, *Bpan = B + (size_t)pc * N + jc;
    float *as = (float *)pa + (size_t)(ir / MR) * a_sliver_size(K, kc);
    float *bs = (float *)pb + (size_t)(jr / NR) * kc * NR;
    if ((K.pack & 1) && jr == 0 && !a_in_place)
        pack_a_sliver(K, ir, mc, kc, Ablk, (size_t)Kdim, as);
    /* PACK 4, 5: a whole tile that reads a B sliver first packs it as it goes. */
    int b_fused = K.pack >= 4 && ic == 0 && ir == 0 && !b_in_place && mr == MR && nr == NR;
    if ((K.pack & 2 || K.pack >= 4) && ic == 0 && ir == 0 && !b_in_place && !b_fused)
        pack_b_sliver(K, jr, kc, nc, Bpan, (size_t)N, bs);
    const float *a = a_in_place ? Ablk + (size_t)ir * Kdim : as;
    size_t a_row = a_in_place ? (size_t)Kdim : K.alayout ? (size_t)K.kc : 1;
    size_t a_step = a_in_place || K.alayout ? 1 : (size_t)MR;
    const float *b = b_in_place || b_fused ? Bpan + jr : bs;
    size_t b_step = b_in_place || b_fused ? (size_t)N : (size_t)NR;
    float *c = C + (size_t)(ic + ir) * N + jc + jr;
    if (b_fused)
        micro_kernel(K, kc, a, a_row, a_step, b, b_step, bs, c, (size_t)N, pc > 0, MR, NR);
    else if (mr == MR && nr == NR)
        micro_kernel(K, kc, a, a_row, a_step, b, b_step, NULL, c, (size_t)N, pc > 0, MR, NR);
    else
        micro_edge(K, kc, a, a_row, a_step, b, b_step, c, (size_t)N, pc > 0, mr, nr);
}

/* The five loops with one family's knobs. */
INLINE void gemm_run(const knobs K, int M, int N, int Kdim, const float *A, const float *B,
                     float *C)
{
    const int MR = K.mr, NR = K.nv * VLEN;
    int kc_max = Kdim < K.kc ? Kdim : K.kc;
    int mc_max = (K.mc + MR - 1) / MR * MR, nc_max = (K.nc + NR - 1) / NR * NR;
    int m_tiles = (M + MR - 1) / MR, n_tiles = (N + NR - 1) / NR;
    if (m_tiles * MR < mc_max)
        mc_max = m_tiles * MR;
    if (n_tiles * NR < nc_max)
        nc_max = n_tiles * NR;
    float *pa = grow(&packed_a, &packed_a_cap, (size_t)(mc_max / MR) * a_sliver_size(K, kc_max));
    float *pb = grow(&packed_b, &packed_b_cap, (size_t)kc_max * nc_max);
    if (!pa || !pb)
        abort(); /* no memory for the panels: fail loudly rather than be wrong */

    if (K.pf_inputs) {
        prefetch_block(B, (size_t)N, kc_max, N < nc_max ? N : nc_max, K.pf_inputs == 1);
        prefetch_block(A, (size_t)Kdim, M < mc_max ? M : mc_max, kc_max, K.pf_inputs == 1);
    }
    for (int jc = 0; jc < N; jc += nc_max) {
        int nc = N - jc < nc_max ? N - jc : nc_max;
        for (int pc = 0; pc < Kdim; pc += kc_max) {
            int kc = Kdim - pc < kc_max ? Kdim - pc : kc_max;
            if (!(K.pack & 2) && K.pack < 4)
                for (int j = 0; j < nc; j += NR)
                    if (!((K.inplace & 1) && nc - j >= NR))
                        pack_b_sliver(K, j, kc, nc, B + (size_t)pc * N + jc, (size_t)N,
                                  pb + (size_t)(j / NR) * kc * NR);
            for (int ic = 0; ic < M; ic += mc_max) {
                int mc = M - ic < mc_max ? M - ic : mc_max;
                if (!(K.pack & 1))
                    for (int i = 0; i < mc; i += MR)
                        if (!((K.inplace & 2) && mc - i >= MR))
                            pack_a_sliver(K, i, mc, kc, A + (size_t)ic * Kdim + pc, (size_t)Kdim,
                                      pa + (size_t)(i / MR) * a_sliver_size(K, kc));
                if (K.loop == 0) {
                    for (int jr = 0; jr < nc; jr += NR)
                        for (int ir = 0; ir < mc; ir += MR)
                            tile(K, ir, jr, ic, jc, mc, nc, kc, pc, A, B, C, Kdim, N, pa, pb);
                } else {
                    for (int ir = 0; ir < mc; ir += MR)
                        for (int jr = 0; jr < nc; jr += NR)
                            tile(K, ir, jr, ic, jc, mc, nc, kc, pc, A, B, C, Kdim, N, pa, pb);
                }
            }
        }
    }
}

/* Each family's instance of the template (never inlined into the dispatch,
 * so the four stay apart). */
#define FAMILY(F)                                                                               \
    static __attribute__((noinline)) void gemm_##F(int M, int N, int K, const float *A,       \
                                                     const float *B, float *C)                  \
    {                                                                                           \
        _Static_assert(F##_MR >= 1 && F##_MR <= MR_MAX && F##_NV >= 1 && F##_NV <= NV_MAX,   \
                       #F ": MR must be 1..16 and NV 1..4");                                    \
        _Static_assert(F##_KC >= 1 && F##_MC >= 1 && F##_NC >= 1 && F##_UNROLL >= 1 &&       \
                           F##_UNROLL <= 8 && F##_PF_DIST >= 0 && F##_PF_INPUTS >= 0 &&      \
                           F##_PF_INPUTS <= 2 && (F##_ALAYOUT == 0 || F##_ALAYOUT == 1),        \
                       #F ": KC, MC, NC >= 1, UNROLL 1..8, PF_INPUTS 0..2, ALAYOUT 0..1");                                    \
        gemm_run(KNOBS(F), M, N, K, A, B, C);                                                   \
    }
FAMILY(LG)
FAMILY(MD)
FAMILY(TS)
FAMILY(SM)

void sgemm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        memset(C, 0, (size_t)M * N * sizeof *C);
        return;
    }
    /* The shape family (the header's table): a rule over sizes, the same
     * for any caller, never a list of particular shapes. */
    if ((int64_t)M * N * K <= (int64_t)128 * 128 * 128)
        gemm_SM(M, N, K, A, B, C);
    else if (M <= 96 || N <= 96)
        gemm_TS(M, N, K, A, B, C);
    else if (M >= 512 && N >= 512 && K >= 512)
        gemm_LG(M, N, K, A, B, C);
    else
        gemm_MD(M, N, K, A, B, C);
}
