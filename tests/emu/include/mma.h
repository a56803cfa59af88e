/*
 * mma.h for the CPU emulator (see avo_emu.h): nvcuda::wmma, the warp matrix
 * functions of the CUDA C++ Programming Guide, as host C++.
 *
 * Only the host compile sees this file: NVRTC compiles the program first
 * with the toolkit's mma.h, and the emulator's include directory leads the
 * host compiler's search path (libnvrtc_emu.c).
 *
 * Shapes and types: m16n16k16, m32n8k16 and m8n32k16 with __half or
 * __nv_bfloat16 matrix_a/matrix_b and float accumulators (__half
 * accumulators too for __half inputs), and m16n16k8 with precision::tf32
 * inputs; others fail the host compile with a static_assert.
 *
 * As on a GPU: a fragment is spread over the 32 lanes of a warp, each lane
 * holding `num_elements` of it in `x[]` (as many as the toolkit's fragment
 * has: 8 for a 16x16 float accumulator) in a fixed element-to-lane mapping,
 * the one of sm_80's mma.sync (m16n8k16, m16n8k8 for tf32).  WMMA leaves
 * that mapping unspecified, so a kernel that assumes another one (that lane
 * l holds row l, say) computes wrong results here, as it may on a GPU.
 * __half matrix_a/matrix_b fragments, which the toolkit gives 16 elements
 * for every shape, hold each element of their matrix twice (m16n16k16) or
 * four times (m32n8k16 matrix_b, m8n32k16 matrix_a); mma_sync traps when
 * the copies differ, which only layout-dependent code can cause.
 *
 * load_matrix_sync, store_matrix_sync and mma_sync are warp-collective: all
 * 32 lanes must call them together with the same pointer, ldm and layout
 * (checked: a mismatch or a missing lane traps, naming WMMA); the pointer
 * must be 256-bit aligned and ldm a multiple of 16 bytes (else the launch
 * fails with CUDA_ERROR_MISALIGNED_ADDRESS).  fill_fragment and element-wise
 * code on x[] are per lane.  mma_sync multiplies 16-bit inputs exactly in
 * float and accumulates in float (one rounding per product, in k order; the
 * tensor cores' order is unspecified); __half accumulators are rounded once
 * at the end; tf32 inputs are truncated to tf32 as the tensor cores read
 * them (__float_to_tf32 rounds to nearest, ties away).
 *
 * Not here: the integer, sub-byte, double and experimental shapes.
 */
#ifndef AVO_EMU_MMA_H
#define AVO_EMU_MMA_H

#include <cstdint>
#include <cstring>

#include "cuda_bf16.h"
#include "cuda_fp16.h"

namespace nvcuda
{
namespace wmma
{
struct row_major;
struct col_major;
struct matrix_a;
struct matrix_b;
struct accumulator;
namespace precision
{
struct tf32;
}
enum layout_t { mem_row_major, mem_col_major };

/* Rounds to tf32 (10 mantissa bits), to nearest with ties away from zero. */
static inline float __float_to_tf32(float in)
{
    unsigned u;
    memcpy(&u, &in, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) /* finite */
        u = (u + 0x1000u) & 0xffffe000u;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

namespace avo_detail
{
/* What a fragment of element type T stores and fill_fragment takes. */
template <class T> struct traits {
    typedef T storage;
    enum { type_id = 0 };
};
template <> struct traits<__half> {
    typedef __half storage;
    enum { type_id = 1 };
};
template <> struct traits<__nv_bfloat16> {
    typedef __nv_bfloat16 storage;
    enum { type_id = 2 };
};
template <> struct traits<float> {
    typedef float storage;
    enum { type_id = 3 };
};
template <> struct traits<precision::tf32> {
    typedef float storage;
    enum { type_id = 4 };
};

const int USE_A = 0, USE_B = 1, USE_C = 2;
template <class Use> struct use_of;
template <> struct use_of<matrix_a> {
    enum { id = USE_A };
};
template <> struct use_of<matrix_b> {
    enum { id = USE_B };
};
template <> struct use_of<accumulator> {
    enum { id = USE_C };
};
template <class L> struct layout_of {
    enum { id = -1 };
};
template <> struct layout_of<row_major> {
    enum { id = 0 };
};
template <> struct layout_of<col_major> {
    enum { id = 1 };
};

/* Rows and columns of the matrix a fragment holds: A is MxK, B KxN, C MxN. */
template <int Use, int M, int N, int K> struct dims {
    enum {
        rows = Use == USE_A   ? M
               : Use == USE_B ? K
                              : M,
        cols = Use == USE_A ? K : N,
    };
};

/* Elements per lane, as the toolkit's fragments have them (0: unsupported). */
template <int Use, int M, int N, int K, int Type> struct count {
    enum {
        shape16 = K == 16 && ((M == 16 && N == 16) || (M == 32 && N == 8) || (M == 8 && N == 32)),
        value =
            Use == USE_C
                ? ((shape16 || (M == 16 && N == 16 && K == 8)) && (Type == 1 || Type == 3) ? 8 : 0)
            : Type == 4 ? (M == 16 && N == 16 && K == 8 ? 4 : 0)
            : !shape16  ? 0
            : Type == 1 ? 16 /* as the toolkit's: elements repeat */
            : Type == 2 ? M * N * K / (Use == USE_A ? N : M) / 32
                        : 0,
    };
};

/*
 * Where element i of lane `lane` sits in its matrix (row r, column c): the
 * register layout of sm_80's mma.sync.m16n8k16 (m16n8k8 for tf32), tiled over
 * the shape.  `distinct` elements per lane cover the matrix once; higher
 * indices repeat them.
 */
static inline void position(int use, int M, int N, int K, int lane, int i, int distinct, int *r,
                            int *c)
{
    int g = lane >> 2, t = lane & 3;
    i %= distinct;
    if (K == 8) { /* tf32: A 16x8, B 8x16 */
        if (use == USE_A) {
            *r = g + 8 * (i & 1);
            *c = t + 4 * (i >> 1);
            return;
        }
        if (use == USE_B) {
            *r = t + 4 * (i & 1);
            *c = g + 8 * (i >> 1);
            return;
        }
    }
    if (use == USE_A) {
        if (M == 8) {
            *r = g;
            *c = 2 * t + (i & 1) + 8 * (i >> 1);
        } else {
            int j = i & 7;
            *r = 16 * (i >> 3) + g + 8 * ((j >> 1) & 1);
            *c = 2 * t + (j & 1) + 8 * (j >> 2);
        }
    } else if (use == USE_B) {
        *r = 2 * t + (i & 1) + 8 * ((i >> 1) & 1);
        *c = 8 * (i >> 2) + g;
    } else if (M == 8) {
        *r = g;
        *c = 8 * (i >> 1) + 2 * t + (i & 1);
    } else if (N == 8) {
        int j = i & 3;
        *r = 16 * (i >> 2) + g + 8 * (j >> 1);
        *c = 2 * t + (j & 1);
    } else {
        int j = i & 3;
        *r = g + 8 * (j >> 1);
        *c = 8 * (i >> 2) + 2 * t + (j & 1);
    }
}

static inline float to_float(float v)
{
    return v;
}
static inline float to_float(__half v)
{
    return (float)v;
}
static inline float to_float(__nv_bfloat16 v)
{
    return (float)v;
}
template <class S> static inline S from_float(float v)
{
    return S(v);
}
static inline unsigned bits_of(float v)
{
    unsigned u;
    memcpy(&u, &v, 4);
    return u;
}
static inline unsigned bits_of(__half v)
{
    return v.__x;
}
static inline unsigned bits_of(__nv_bfloat16 v)
{
    return v.__x;
}

[[noreturn]] static inline void trap(const char *what)
{
    avo_emu_current->rt->trap(avo_emu_current, what);
    __builtin_unreachable();
}

/*
 * The warp-collective check of load_matrix_sync and store_matrix_sync: every
 * lane deposits its pointer with the operation's tag and ldm; all 32 lanes
 * must be there and agree.  Then the pointer alignment (256 bits) and ldm
 * (16 bytes) as the hardware requires them.
 */
static inline void collective_check(const char *op, const void *p, unsigned ldm, unsigned tag,
                                    unsigned elem_bytes)
{
    uint64_t addr = (uint64_t)(uintptr_t)p;
    unsigned ldm_field = ldm < 0x7ffu ? ldm : 0x7ffu;
    unsigned long long mine = (addr & ((1ull << 47) - 1)) | (unsigned long long)(tag & 0x3f) << 47 |
                              (unsigned long long)ldm_field << 53;
    unsigned long long all[32];
    unsigned present = avo_emu_exchange(mine, all);
    char what[200];
    if (present != 0xffffffffu) {
        snprintf(what, sizeof what,
                 "WMMA %s in a partial warp (lanes 0x%08x of warp %u): all 32 lanes must call it",
                 op, present, avo_emu_current->warp);
        trap(what);
    }
    for (int l = 0; l < 32; l++)
        if (all[l] != mine) {
            snprintf(what, sizeof what,
                     "WMMA %s: lanes %u and %d of warp %u differ in pointer, ldm, layout or "
                     "fragment type",
                     op, avo_emu_current->lane, l, avo_emu_current->warp);
            trap(what);
        }
    if (ldm_field == 0x7ffu) { /* a large ldm: compare it whole */
        present = avo_emu_exchange(ldm, all);
        for (int l = 0; l < 32; l++)
            if (all[l] != ldm) {
                snprintf(what, sizeof what, "WMMA %s: lanes of warp %u differ in ldm", op,
                         avo_emu_current->warp);
                trap(what);
            }
    }
    if (addr & 31) {
        snprintf(what, sizeof what, "WMMA %s: pointer %p is not 256-bit aligned", op, p);
        avo_emu_current->rt->misaligned(avo_emu_current, what);
    }
    if ((ldm * elem_bytes) % 16 != 0) {
        snprintf(what, sizeof what, "WMMA %s: ldm %u is not a multiple of %u elements (16 bytes)",
                 op, ldm, 16 / elem_bytes);
        avo_emu_current->rt->misaligned(avo_emu_current, what);
    }
}
} // namespace avo_detail

template <class Use, int M, int N, int K, class T, class Layout = void> class fragment
{
    enum {
        use = avo_detail::use_of<Use>::id,
        n = avo_detail::count<use, M, N, K, avo_detail::traits<T>::type_id>::value,
    };
    static_assert(n > 0, "avo emulator: WMMA supports m16n16k16, m32n8k16 and m8n32k16 with __half "
                         "or __nv_bfloat16 inputs and float (or, for __half, __half) "
                         "accumulators, and m16n16k8 with precision::tf32");
    static_assert(use == avo_detail::USE_C ? std::is_void<Layout>::value
                                           : avo_detail::layout_of<Layout>::id >= 0,
                  "avo emulator: matrix_a and matrix_b fragments take row_major or col_major; "
                  "accumulators none");

  public:
    typedef T element_type;
    typedef typename avo_detail::traits<T>::storage storage_element_type;
    enum { num_elements = n, num_storage_elements = n };
    storage_element_type x[n];
};

template <class Use, int M, int N, int K, class T, class L>
static inline void fill_fragment(fragment<Use, M, N, K, T, L> &f,
                                 const typename avo_detail::traits<T>::storage &v)
{
    for (int i = 0; i < f.num_elements; i++)
        f.x[i] = v;
}

/* Each lane's elements of `f` from the matrix at p (row-major: element (r, c)
 * at p[r * ldm + c]; column-major: p[c * ldm + r]). */
template <class Use, int M, int N, int K, class T, class L, class S>
static inline void avo_wmma_load(fragment<Use, M, N, K, T, L> &f, const S *p, unsigned ldm, int col,
                                 const char *op, unsigned tag)
{
    typedef fragment<Use, M, N, K, T, L> F;
    enum { use = avo_detail::use_of<Use>::id };
    avo_detail::collective_check(op, p, ldm, tag, sizeof(S));
    const int distinct =
        avo_detail::dims<use, M, N, K>::rows * avo_detail::dims<use, M, N, K>::cols / 32;
    int lane = (int)avo_emu_current->lane;
    for (int i = 0; i < F::num_elements; i++) {
        int r, c;
        avo_detail::position(use, M, N, K, lane, i, distinct, &r, &c);
        f.x[i] = p[col ? (size_t)c * ldm + r : (size_t)r * ldm + c];
    }
}

template <class Use, int M, int N, int K, class T, class L>
static inline void load_matrix_sync(fragment<Use, M, N, K, T, L> &f,
                                    const typename avo_detail::traits<T>::storage *p, unsigned ldm)
{
    enum { use = avo_detail::use_of<Use>::id, layout = avo_detail::layout_of<L>::id };
    static_assert(use != avo_detail::USE_C,
                  "load_matrix_sync of an accumulator takes a layout_t (mem_row_major or "
                  "mem_col_major)");
    avo_wmma_load(f, p, ldm, layout, "load_matrix_sync",
                  1 + use * 2 + layout + 8 * avo_detail::traits<T>::type_id);
}

template <int M, int N, int K, class T>
static inline void load_matrix_sync(fragment<accumulator, M, N, K, T> &f, const T *p, unsigned ldm,
                                    layout_t layout)
{
    avo_wmma_load(f, p, ldm, layout == mem_col_major, "load_matrix_sync",
                  5 + (layout == mem_col_major) + 8 * avo_detail::traits<T>::type_id);
}

template <int M, int N, int K, class T>
static inline void store_matrix_sync(T *p, const fragment<accumulator, M, N, K, T> &f, unsigned ldm,
                                     layout_t layout)
{
    typedef fragment<accumulator, M, N, K, T> F;
    int col = layout == mem_col_major;
    avo_detail::collective_check("store_matrix_sync", p, ldm,
                                 48 + col + 2 * avo_detail::traits<T>::type_id, sizeof(T));
    int lane = (int)avo_emu_current->lane;
    for (int i = 0; i < F::num_elements; i++) {
        int r, c;
        avo_detail::position(avo_detail::USE_C, M, N, K, lane, i, 8, &r, &c);
        p[col ? (size_t)c * ldm + r : (size_t)r * ldm + c] = f.x[i];
    }
}

namespace avo_detail
{
/* One lane's operands of an mma_sync, which lane 0 reads. */
struct operands {
    const void *a, *b, *c;
    void *d;
};

/* The exchange whose mma_sync each warp has computed (one block at a time). */
inline unsigned long long computed[32];

/* Gathers every lane's fragment into the rows x cols matrix m (row-major);
 * copies of one element must agree. */
template <class F>
static inline void gather(const operands *lanes[32], int which, int use, int M, int N, int K,
                          int rows, int cols, bool tf32, float *m)
{
    const int distinct = rows * cols / 32;
    for (int l = 0; l < 32; l++) {
        const F *f = (const F *)(which == 0 ? lanes[l]->a : which == 1 ? lanes[l]->b : lanes[l]->c);
        for (int i = 0; i < F::num_elements; i++) {
            int r, c;
            position(use, M, N, K, l, i, distinct, &r, &c);
            float v = to_float(f->x[i]);
            if (tf32) { /* the tensor cores read 19 bits */
                unsigned u = bits_of(v) & 0xffffe000u;
                memcpy(&v, &u, 4);
            }
            if (i >= distinct && bits_of(v) != bits_of(m[r * cols + c]))
                trap(which == 0 ? "WMMA mma_sync: the copies of an element of a matrix_a "
                                  "fragment differ (code that assumes the fragment layout?)"
                                : "WMMA mma_sync: the copies of an element of a matrix_b "
                                  "fragment differ (code that assumes the fragment layout?)");
            m[r * cols + c] = v;
        }
    }
}
} // namespace avo_detail

template <int M, int N, int K, class Td, class Ta, class La, class Tb, class Lb, class Tc>
static inline void
mma_sync(fragment<accumulator, M, N, K, Td> &d, const fragment<matrix_a, M, N, K, Ta, La> &a,
         const fragment<matrix_b, M, N, K, Tb, Lb> &b, const fragment<accumulator, M, N, K, Tc> &c)
{
    using namespace avo_detail;
    typedef fragment<accumulator, M, N, K, Td> FD;
    typedef fragment<matrix_a, M, N, K, Ta, La> FA;
    typedef fragment<matrix_b, M, N, K, Tb, Lb> FB;
    typedef fragment<accumulator, M, N, K, Tc> FC;
    static_assert(std::is_same<Ta, Tb>::value,
                  "mma_sync: matrix_a and matrix_b must have the same element type");
    static_assert(traits<Ta>::type_id == 1 ||
                      (std::is_same<Td, float>::value && std::is_same<Tc, float>::value),
                  "mma_sync: __nv_bfloat16 and tf32 inputs accumulate in float");
    operands mine = {&a, &b, &c, &d};
    /* The call's shape and types (distinct from every load and store tag). */
    unsigned tag = 1u << 16 |
                   (unsigned)(M == 16   ? 0
                              : M == 32 ? 1
                                        : 2) |
                   (unsigned)traits<Ta>::type_id << 2 | (unsigned)layout_of<La>::id << 5 |
                   (unsigned)layout_of<Lb>::id << 6 | (unsigned)traits<Tc>::type_id << 7 |
                   (unsigned)traits<Td>::type_id << 10;
    unsigned long long deposit = (unsigned long long)(uintptr_t)&mine |
                                 (unsigned long long)(tag & 0x1ffff) << 47,
                       all[32];
    unsigned present = avo_emu_exchange(deposit, all);
    char what[200];
    if (present != 0xffffffffu) {
        snprintf(what, sizeof what,
                 "WMMA mma_sync in a partial warp (lanes 0x%08x of warp %u): all 32 lanes must "
                 "call it",
                 present, avo_emu_current->warp);
        trap(what);
    }
    for (int l = 0; l < 32; l++)
        if (all[l] >> 47 != deposit >> 47) {
            snprintf(what, sizeof what,
                     "WMMA mma_sync: lanes %u and %d of warp %u call it with different fragment "
                     "types (or another warp operation)",
                     avo_emu_current->lane, l, avo_emu_current->warp);
            trap(what);
        }
    /*
     * The first lane of the warp to run after the exchange computes D for
     * all: the others still wait inside this call, their fragments intact
     * (d may alias c: A, B and C are gathered before any d is written).
     */
    const unsigned w = avo_emu_current->warp & 31;
    if (computed[w] == avo_emu_current->exchange_serial)
        return;
    computed[w] = avo_emu_current->exchange_serial;
    const operands *lanes[32];
    for (int l = 0; l < 32; l++)
        lanes[l] = (const operands *)(uintptr_t)(all[l] & ((1ull << 47) - 1));
    const bool tf32 = traits<Ta>::type_id == 4;
    float A[M * K], B[K * N], D[M * N];
    gather<FA>(lanes, 0, USE_A, M, N, K, M, K, tf32, A);
    gather<FB>(lanes, 1, USE_B, M, N, K, K, N, tf32, B);
    gather<FC>(lanes, 2, USE_C, M, N, K, M, N, false, D);
    /* In k order per element; each product of 16-bit (or tf32) inputs is
     * exact in float, so a multiply and an add round as one fmaf. */
    for (int r = 0; r < M; r++)
        for (int k = 0; k < K; k++) {
            const float av = A[r * K + k];
            for (int col = 0; col < N; col++)
                D[r * N + col] += av * B[k * N + col];
        }
    for (int l = 0; l < 32; l++) {
        FD *out = (FD *)lanes[l]->d;
        for (int i = 0; i < FD::num_elements; i++) {
            int r, col;
            position(USE_C, M, N, K, l, i, 8, &r, &col);
            out->x[i] = from_float<typename FD::storage_element_type>(D[r * N + col]);
        }
    }
}
} // namespace wmma
} // namespace nvcuda

#endif
