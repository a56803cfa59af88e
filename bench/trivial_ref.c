#include <stdint.h>
void copy_ref(int32_t n, const float *x, float *y)
{
    for (int32_t i = 0; i < n; i++)
        y[i] = x[i];
}
