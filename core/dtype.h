/*
 * dtype.h — element types of kernel arguments, shared by every backend:
 * names as a job spells them, sizes, and the IEEE half and bfloat16
 * conversions the host side needs to fill and read 16-bit buffers.
 *
 * Pure functions: no I/O, no globals.  The CPU backend accepts the first
 * four types; the CUDA backend all six (docs/protocol.md).
 */
#ifndef AVO_DTYPE_H
#define AVO_DTYPE_H

#include <stddef.h>
#include <stdint.h>

/* Element types of buffers and scalars, in the order jobs list them. */
typedef enum avo_dtype {
    AVO_DT_F32,
    AVO_DT_F64,
    AVO_DT_I32,
    AVO_DT_I64,
    AVO_DT_F16,
    AVO_DT_BF16,
} avo_dtype;

#define AVO_DT_COUNT 6

/* "f32" ... "bf16" -> type; -1 when unknown (or name is NULL). */
int avo_dtype_parse(const char *name, avo_dtype *ret);
/* "f32" ... "bf16"; "?" for a value outside the enum.  Static string. */
const char *avo_dtype_name(avo_dtype t);
/* Bytes per element: 2, 4 or 8. */
size_t avo_dtype_size(avo_dtype t);
/* True for f32, f64, f16 and bf16. */
int avo_dtype_is_float(avo_dtype t);

/* IEEE half and bfloat16 conversions (round to nearest even; NaN kept). */
uint16_t avo_f32_to_f16(float f);
float avo_f16_to_f32(uint16_t h);
uint16_t avo_f32_to_bf16(float f);
float avo_bf16_to_f32(uint16_t b);

#endif
