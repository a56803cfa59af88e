/*
 * cuda_fp16.h for the CPU emulator (see avo_emu.h): __half as its 16 bits,
 * converted with the host's IEEE binary16 (_Float16), round-to-nearest-even.
 */
#ifndef AVO_EMU_CUDA_FP16_H
#define AVO_EMU_CUDA_FP16_H

#include <cstring>

struct __half {
    unsigned short __x;
    __half() = default;
    __half(float f)
    {
        _Float16 h = (_Float16)f;
        memcpy(&__x, &h, 2);
    }
    __half(double d) : __half((float)d)
    {
    }
    __half(int i) : __half((float)i)
    {
    }
    operator float() const
    {
        _Float16 h;
        memcpy(&h, &__x, 2);
        return (float)h;
    }
};
typedef __half half;
struct __half2 {
    __half x, y;
};
typedef __half2 half2;

static inline float __half2float(__half h)
{
    return (float)h;
}
static inline __half __float2half(float f)
{
    return __half(f);
}
static inline __half __float2half_rn(float f)
{
    return __half(f);
}
static inline __half __ushort_as_half(unsigned short u)
{
    __half h;
    h.__x = u;
    return h;
}
static inline unsigned short __half_as_ushort(__half h)
{
    return h.__x;
}
static inline __half2 __floats2half2_rn(float a, float b)
{
    return __half2{__half(a), __half(b)};
}
static inline __half2 __float2half2_rn(float a)
{
    return __half2{__half(a), __half(a)};
}
AVO_EMU_16BIT_ARITHMETIC(__half, __half2)

#endif
