/*
 * dtype.c — element types and the half/bfloat16 conversions (see dtype.h).
 */
#include <string.h>

#include "core/dtype.h"

static const char *const dtype_names[] = {"f32", "f64", "i32", "i64", "f16", "bf16"};

int avo_dtype_parse(const char *name, avo_dtype *ret)
{
    for (int i = 0; i < AVO_DT_COUNT; i++)
        if (name && strcmp(name, dtype_names[i]) == 0) {
            *ret = (avo_dtype)i;
            return 0;
        }
    return -1;
}

const char *avo_dtype_name(avo_dtype t)
{
    return (unsigned)t < AVO_DT_COUNT ? dtype_names[t] : "?";
}

size_t avo_dtype_size(avo_dtype t)
{
    switch (t) {
    case AVO_DT_F16:
    case AVO_DT_BF16:
        return 2;
    case AVO_DT_F32:
    case AVO_DT_I32:
        return 4;
    default:
        return 8;
    }
}

int avo_dtype_is_float(avo_dtype t)
{
    return t != AVO_DT_I32 && t != AVO_DT_I64;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t avo_f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);         /* round to nearest even */
    return (uint16_t)(u >> 16);
}

float avo_bf16_to_f32(uint16_t b)
{
    return bits_f32((uint32_t)b << 16);
}

uint16_t avo_f32_to_f16(float f)
{
    uint32_t u = f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
    if (abs >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (abs < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        if (abs < 0x33000000u)
            return (uint16_t)sign;
        uint32_t exp = abs >> 23, mant = (abs & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - exp; /* 14 .. 24 */
        uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1u)))
            half++;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((abs >> 13) - (112u << 10)); /* rebias 127 -> 15 */
    uint32_t rest = abs & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
        half++;
    return (uint16_t)(sign | half);
}

float avo_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f)
        return bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        float v = (float)mant * 5.9604644775390625e-8f; /* 2^-24 */
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}
