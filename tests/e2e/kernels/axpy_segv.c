#include <stdint.h>
void axpy(int32_t n, float a, const float *x, const float *y, float *out)
{
    volatile float *p = (float *)0;
    for (int32_t i = 0; i < n; i++)
        out[i] = a * x[i] + y[i] + p[i];
}
