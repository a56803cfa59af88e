#include <stdint.h>
void axpy_ref(int32_t n, float a, const float *x, const float *y, float *out)
{
    for (int32_t i = 0; i < n; i++)
        out[i] = (float)((double)a * x[i] + y[i]);
}
