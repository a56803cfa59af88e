#include <stdint.h>
// avo:param UNROLL 1 2 4
#ifndef UNROLL
#define UNROLL 1
#endif
void axpy(int32_t n, float a, const float *x, const float *y, float *out)
{
    for (int32_t i = 0; i < n; i++)
        out[i] = a * x[i] + y[i];
}
