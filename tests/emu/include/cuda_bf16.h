/*
 * cuda_bf16.h for the CPU emulator (see avo_emu.h): __nv_bfloat16 as its 16
 * bits, converted through float with round-to-nearest-even, as on the GPU.
 */
#ifndef AVO_EMU_CUDA_BF16_H
#define AVO_EMU_CUDA_BF16_H

#include <cstring>

struct __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default;
    __nv_bfloat16(float f)
    {
        unsigned u;
        memcpy(&u, &f, 4);
        if ((u & 0x7fffffffu) > 0x7f800000u)
            __x = (unsigned short)((u >> 16) | 0x40); /* quiet NaN */
        else
            __x = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
    __nv_bfloat16(double d) : __nv_bfloat16((float)d)
    {
    }
    __nv_bfloat16(int i) : __nv_bfloat16((float)i)
    {
    }
    operator float() const
    {
        unsigned u = (unsigned)__x << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
};
typedef __nv_bfloat16 nv_bfloat16;
struct __nv_bfloat162 {
    __nv_bfloat16 x, y;
};
typedef __nv_bfloat162 nv_bfloat162;

static inline float __bfloat162float(__nv_bfloat16 h)
{
    return (float)h;
}
static inline __nv_bfloat16 __float2bfloat16(float f)
{
    return __nv_bfloat16(f);
}
static inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    return __nv_bfloat16(f);
}
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u)
{
    __nv_bfloat16 h;
    h.__x = u;
    return h;
}
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h)
{
    return h.__x;
}
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b)
{
    return __nv_bfloat162{__nv_bfloat16(a), __nv_bfloat16(b)};
}
static inline __nv_bfloat162 __float2bfloat162_rn(float a)
{
    return __nv_bfloat162{__nv_bfloat16(a), __nv_bfloat16(a)};
}
AVO_EMU_16BIT_ARITHMETIC(__nv_bfloat16, __nv_bfloat162)

#endif
