/*
 * avo_emu.h — CUDA C++ as host C++, for the CPU emulator (tests/emu).
 *
 * tests/emu/libnvrtc_emu.c compiles each program a second time with the host
 * C++ compiler and this header force-included, so that the emulated driver
 * (tests/emu/libcuda_emu.cpp) can run its kernels: one fiber per CUDA thread,
 * blocks one after another.  It covers what plain CUDA kernels use — the
 * built-in indices, __syncthreads, warp shuffles and votes, atomics (the
 * fibers of a launch never run at the same time, so plain read-modify-write
 * is atomic), vector types, the fast-math intrinsics, bf16 and fp16
 * (cuda_bf16.h, cuda_fp16.h beside this file), tensor cores through WMMA
 * (mma.h: the m16n16k16, m32n8k16 and m8n32k16 f16/bf16 shapes and tf32
 * m16n16k8, with a GPU's fragment layout and warp-collective checks) and
 * cp.async through the pipeline primitives (cuda_pipeline_primitives.h) —
 * and nothing of inline PTX (hence wgmma, TMA, hand-written cp.async),
 * cuda::pipeline or cooperative groups: a kernel using them fails its
 * emulated compile with the host compiler's message.
 *
 * Storage: __shared__ variables become function statics (one block runs at a
 * time), `extern __shared__` arrays are rewritten by the NVRTC shim into
 * pointers at the launch's dynamic shared memory, __device__ globals are
 * globals of the module (one copy per cuModuleLoad).
 */
#ifndef AVO_EMU_H
#define AVO_EMU_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <utility>

#include "avo_emu_rt.h"

extern "C" avo_emu_ctx *avo_emu_current;

/* ------------------------------------------------------------ qualifiers */

#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __shared__ static
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n))) /* anywhere among the specifiers, as in CUDA */
#define __grid_constant__
#define __CUDACC__ 1
#define __CUDA_ARCH__ 900
#define __CUDACC_RTC__ 1
#define AVO_EMULATED 1

/* ----------------------------------------------------- vector types, dims */

typedef avo_emu_index uint3;
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_)
    {
    }
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z)
    {
    }
};

#define AVO_EMU_VEC2(T, N, A)                                                                      \
    struct alignas(A) N {                                                                          \
        T x, y;                                                                                    \
    };                                                                                             \
    static inline N make_##N(T x, T y)                                                             \
    {                                                                                              \
        return N{x, y};                                                                            \
    }
#define AVO_EMU_VEC3(T, N)                                                                         \
    struct N {                                                                                     \
        T x, y, z;                                                                                 \
    };                                                                                             \
    static inline N make_##N(T x, T y, T z)                                                        \
    {                                                                                              \
        return N{x, y, z};                                                                         \
    }
#define AVO_EMU_VEC4(T, N, A)                                                                      \
    struct alignas(A) N {                                                                          \
        T x, y, z, w;                                                                              \
    };                                                                                             \
    static inline N make_##N(T x, T y, T z, T w)                                                   \
    {                                                                                              \
        return N{x, y, z, w};                                                                      \
    }

AVO_EMU_VEC2(float, float2, 8)
AVO_EMU_VEC3(float, float3)
AVO_EMU_VEC4(float, float4, 16)
AVO_EMU_VEC2(int, int2, 8)
AVO_EMU_VEC3(int, int3)
AVO_EMU_VEC4(int, int4, 16)
AVO_EMU_VEC2(unsigned, uint2, 8)
AVO_EMU_VEC4(unsigned, uint4, 16)
AVO_EMU_VEC2(double, double2, 16)
AVO_EMU_VEC2(long long, longlong2, 16)
static inline uint3 make_uint3(unsigned x, unsigned y, unsigned z)
{
    return uint3{x, y, z};
}

/* ------------------------------------------------------ built-in indices */

#define threadIdx (avo_emu_current->thread_idx)
#define blockIdx (avo_emu_current->block_idx)
#define blockDim (avo_emu_current->block_dim)
#define gridDim (avo_emu_current->grid_dim)
#define warpSize 32

/* -------------------------------------------------------- synchronization */

static inline void __syncthreads(void)
{
    avo_emu_current->rt->sync_block(avo_emu_current);
}
static inline void __threadfence(void)
{
}
static inline void __threadfence_block(void)
{
}
static inline void __threadfence_system(void)
{
}
static inline void __trap(void)
{
    avo_emu_current->rt->trap(avo_emu_current, "__trap()");
}
static inline void __brkpt(void)
{
    avo_emu_current->rt->trap(avo_emu_current, "__brkpt()");
}
static inline long long clock64(void)
{
    return avo_emu_current->rt->clock();
}
static inline unsigned long long __globaltimer(void)
{
    return (unsigned long long)clock64();
}

static inline unsigned avo_emu_exchange(unsigned long long mine, unsigned long long *all)
{
    return avo_emu_current->rt->warp_exchange(avo_emu_current, mine, all);
}

static inline void __syncwarp(unsigned mask = 0xffffffffu)
{
    unsigned long long all[32];
    (void)mask;
    avo_emu_exchange(0, all);
}

static inline unsigned __ballot_sync(unsigned mask, int pred)
{
    unsigned long long all[32];
    unsigned present = avo_emu_exchange(pred != 0, all), bits = 0;
    for (unsigned l = 0; l < 32; l++)
        if ((present >> l & 1) && all[l])
            bits |= 1u << l;
    return bits & mask;
}
static inline int __any_sync(unsigned mask, int pred)
{
    return __ballot_sync(mask, pred) != 0;
}
static inline int __all_sync(unsigned mask, int pred)
{
    unsigned long long all[32];
    unsigned present = avo_emu_exchange(pred != 0, all) & mask;
    for (unsigned l = 0; l < 32; l++)
        if ((present >> l & 1) && !all[l])
            return 0;
    return 1;
}
static inline unsigned __activemask(void)
{
    unsigned long long all[32];
    return avo_emu_exchange(0, all);
}

/* Shuffles move any trivially copyable value of at most 8 bytes. */
template <class T>
static inline T avo_emu_shfl(T var, int (*src_of)(int, int, int), int arg, int width)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                  "the emulator shuffles values of at most 8 bytes");
    unsigned long long mine = 0, all[32];
    memcpy(&mine, &var, sizeof var);
    unsigned present = avo_emu_exchange(mine, all);
    int lane = (int)avo_emu_current->lane;
    int src = src_of(lane, arg, width);
    if (src < 0 || src > 31 || !(present >> src & 1))
        src = lane;
    T out;
    memcpy(&out, &all[src], sizeof out);
    return out;
}
static inline int avo_emu_src_idx(int lane, int src, int width)
{
    return (lane & ~(width - 1)) + (src & (width - 1));
}
static inline int avo_emu_src_xor(int lane, int mask, int width)
{
    int src = lane ^ mask;
    return src / width == lane / width ? src : lane;
}
static inline int avo_emu_src_down(int lane, int delta, int width)
{
    return (lane & (width - 1)) + delta < width ? lane + delta : lane;
}
static inline int avo_emu_src_up(int lane, int delta, int width)
{
    return (lane & (width - 1)) - delta >= 0 ? lane - delta : lane;
}
template <class T> static inline T __shfl_sync(unsigned m, T v, int src, int width = 32)
{
    (void)m;
    return avo_emu_shfl(v, avo_emu_src_idx, src, width);
}
template <class T> static inline T __shfl_xor_sync(unsigned m, T v, int mask, int width = 32)
{
    (void)m;
    return avo_emu_shfl(v, avo_emu_src_xor, mask, width);
}
template <class T> static inline T __shfl_down_sync(unsigned m, T v, unsigned d, int width = 32)
{
    (void)m;
    return avo_emu_shfl(v, avo_emu_src_down, (int)d, width);
}
template <class T> static inline T __shfl_up_sync(unsigned m, T v, unsigned d, int width = 32)
{
    (void)m;
    return avo_emu_shfl(v, avo_emu_src_up, (int)d, width);
}
template <class T> static inline T __reduce_add_sync(unsigned m, T v)
{
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(m, v, off);
    return v;
}

/* ---------------------------------------------------------------- atomics */

/* name(p, v): *p becomes `update` (of old and v); returns old. */
#define AVO_EMU_ATOMIC(name, update)                                                               \
    template <class T, class U> static inline T name(T *p, U v)                                    \
    {                                                                                              \
        T old = *p;                                                                                \
        *p = (T)(update);                                                                          \
        return old;                                                                                \
    }
AVO_EMU_ATOMIC(atomicAdd, old + (T)v)
AVO_EMU_ATOMIC(atomicSub, old - (T)v)
AVO_EMU_ATOMIC(atomicExch, v)
AVO_EMU_ATOMIC(atomicMin, (T)v < old ? (T)v : old)
AVO_EMU_ATOMIC(atomicMax, (T)v > old ? (T)v : old)
AVO_EMU_ATOMIC(atomicAnd, (old & (T)v))
AVO_EMU_ATOMIC(atomicOr, (old | (T)v))
AVO_EMU_ATOMIC(atomicXor, (old ^ (T)v))
#undef AVO_EMU_ATOMIC
template <class T, class U, class V> static inline T atomicCAS(T *p, U compare, V v)
{
    T old = *p;
    if (old == (T)compare)
        *p = (T)v;
    return old;
}
static inline unsigned atomicInc(unsigned *p, unsigned limit)
{
    unsigned old = *p;
    *p = old >= limit ? 0 : old + 1;
    return old;
}

/* ------------------------------------------------------ math, intrinsics */

static inline float __int_as_float(int x)
{
    float f;
    memcpy(&f, &x, 4);
    return f;
}
static inline int __float_as_int(float x)
{
    int i;
    memcpy(&i, &x, 4);
    return i;
}
static inline float __uint_as_float(unsigned x)
{
    float f;
    memcpy(&f, &x, 4);
    return f;
}
static inline unsigned __float_as_uint(float x)
{
    unsigned i;
    memcpy(&i, &x, 4);
    return i;
}
static inline double __longlong_as_double(long long x)
{
    double d;
    memcpy(&d, &x, 8);
    return d;
}
static inline long long __double_as_longlong(double x)
{
    long long i;
    memcpy(&i, &x, 8);
    return i;
}

/* glibc declares these names itself (its internal aliases), hence macros. */
#define __expf(x) expf(x)
#define __exp10f(x) exp10f(x)
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __powf(x, y) powf(x, y)
static inline float __fdividef(float x, float y)
{
    return x / y;
}
static inline float __frcp_rn(float x)
{
    return 1.0f / x;
}
static inline float __fsqrt_rn(float x)
{
    return sqrtf(x);
}
static inline float rsqrtf(float x)
{
    return 1.0f / sqrtf(x);
}
static inline double rsqrt(double x)
{
    return 1.0 / sqrt(x);
}
static inline float __frsqrt_rn(float x)
{
    return 1.0f / sqrtf(x);
}
static inline float __fmaf_rn(float a, float b, float c)
{
    return fmaf(a, b, c);
}
static inline float __fadd_rn(float a, float b)
{
    return a + b;
}
static inline float __fmul_rn(float a, float b)
{
    return a * b;
}
static inline float __saturatef(float x)
{
    return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}

/* min and max for the types CUDA overloads them for, mixed signed and
 * unsigned included (the unsigned type wins, as in CUDA's math API). */
#define AVO_EMU_MINMAX(R, A, B)                                                                    \
    static inline R min(A a, B b)                                                                  \
    {                                                                                              \
        return (R)a < (R)b ? (R)a : (R)b;                                                          \
    }                                                                                              \
    static inline R max(A a, B b)                                                                  \
    {                                                                                              \
        return (R)a > (R)b ? (R)a : (R)b;                                                          \
    }
AVO_EMU_MINMAX(int, int, int)
AVO_EMU_MINMAX(unsigned, unsigned, unsigned)
AVO_EMU_MINMAX(unsigned, int, unsigned)
AVO_EMU_MINMAX(unsigned, unsigned, int)
AVO_EMU_MINMAX(long, long, long)
AVO_EMU_MINMAX(unsigned long, unsigned long, unsigned long)
AVO_EMU_MINMAX(long long, long long, long long)
AVO_EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
AVO_EMU_MINMAX(unsigned long long, long long, unsigned long long)
AVO_EMU_MINMAX(unsigned long long, unsigned long long, long long)
#undef AVO_EMU_MINMAX
/* Floating point: fmin/fmax, which return the other operand for a NaN, as
 * CUDA's do. */
#define AVO_EMU_FMINMAX(R, A, B)                                                                   \
    static inline R min(A a, B b)                                                                  \
    {                                                                                              \
        return std::fmin((R)a, (R)b);                                                              \
    }                                                                                              \
    static inline R max(A a, B b)                                                                  \
    {                                                                                              \
        return std::fmax((R)a, (R)b);                                                              \
    }
AVO_EMU_FMINMAX(float, float, float)
AVO_EMU_FMINMAX(double, double, double)
AVO_EMU_FMINMAX(double, float, double)
AVO_EMU_FMINMAX(double, double, float)
#undef AVO_EMU_FMINMAX

static inline int __popc(unsigned x)
{
    return __builtin_popcount(x);
}
static inline int __popcll(unsigned long long x)
{
    return __builtin_popcountll(x);
}
static inline int __clz(int x)
{
    return x ? __builtin_clz((unsigned)x) : 32;
}
static inline int __clzll(long long x)
{
    return x ? __builtin_clzll((unsigned long long)x) : 64;
}
static inline int __ffs(int x)
{
    return __builtin_ffs(x);
}
static inline int __ffsll(long long x)
{
    return __builtin_ffsll(x);
}
static inline unsigned __brev(unsigned x)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++, x >>= 1)
        r = (r << 1) | (x & 1);
    return r;
}
static inline int __mul24(int a, int b)
{
    return a * b;
}
static inline unsigned __umul24(unsigned a, unsigned b)
{
    return a * b;
}
static inline unsigned __umulhi(unsigned a, unsigned b)
{
    return (unsigned)(((unsigned long long)a * b) >> 32);
}
static inline int __mulhi(int a, int b)
{
    return (int)(((long long)a * b) >> 32);
}

/* The address of a shared-memory object in the shared window: here the host
 * address, which only inline PTX (not emulated) could tell apart. */
static inline size_t __cvta_generic_to_shared(const void *p)
{
    return (size_t)(uintptr_t)p;
}

template <class T> static inline T __ldg(const T *p)
{
    return *p;
}
template <class T> static inline T __ldcg(const T *p)
{
    return *p;
}
template <class T> static inline T __ldca(const T *p)
{
    return *p;
}
template <class T> static inline T __ldcs(const T *p)
{
    return *p;
}
template <class T> static inline T __ldlu(const T *p)
{
    return *p;
}
template <class T> static inline void __stcg(T *p, T v)
{
    *p = v;
}
template <class T> static inline void __stcs(T *p, T v)
{
    *p = v;
}
template <class T> static inline void __stwt(T *p, T v)
{
    *p = v;
}

/* ------------------------------------------- 16-bit floats (cuda_*16.h) */

/* What __half and __nv_bfloat16 share: arithmetic through float, rounded
 * back to T, and the halves of the pair type T2 as floats. */
#define AVO_EMU_16BIT_ARITHMETIC(T, T2)                                                            \
    static inline T operator+(T a, T b)                                                            \
    {                                                                                              \
        return T((float)a + (float)b);                                                             \
    }                                                                                              \
    static inline T operator-(T a, T b)                                                            \
    {                                                                                              \
        return T((float)a - (float)b);                                                             \
    }                                                                                              \
    static inline T operator*(T a, T b)                                                            \
    {                                                                                              \
        return T((float)a * (float)b);                                                             \
    }                                                                                              \
    static inline T operator/(T a, T b)                                                            \
    {                                                                                              \
        return T((float)a / (float)b);                                                             \
    }                                                                                              \
    static inline T __hadd(T a, T b)                                                               \
    {                                                                                              \
        return a + b;                                                                              \
    }                                                                                              \
    static inline T __hsub(T a, T b)                                                               \
    {                                                                                              \
        return a - b;                                                                              \
    }                                                                                              \
    static inline T __hmul(T a, T b)                                                               \
    {                                                                                              \
        return a * b;                                                                              \
    }                                                                                              \
    static inline T __hfma(T a, T b, T c)                                                          \
    {                                                                                              \
        return T(fmaf((float)a, (float)b, (float)c));                                              \
    }                                                                                              \
    static inline float __low2float(T2 v)                                                          \
    {                                                                                              \
        return (float)v.x;                                                                         \
    }                                                                                              \
    static inline float __high2float(T2 v)                                                         \
    {                                                                                              \
        return (float)v.y;                                                                         \
    }

/* ------------------------------------------- kernel argument unpacking */

namespace avo_emu
{
template <class... A, std::size_t... I>
static inline void call(void (*fn)(A...), void **params, std::index_sequence<I...>)
{
    fn(*static_cast<typename std::remove_reference<A>::type *>(params[I])...);
}
template <class... A> static inline void invoke(void (*fn)(A...), void **params)
{
    call(fn, params, std::index_sequence_for<A...>{});
}
} // namespace avo_emu

#endif
