#include <stdint.h>
#include <stdlib.h>
void axpy(int32_t n, float a, const float *x, const float *y, float *out)
{
    (void)a, (void)x, (void)y, (void)out;
    if (n > 0)
        abort();
}
