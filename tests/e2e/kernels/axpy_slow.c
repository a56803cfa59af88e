#include <stdint.h>
/* axpy done 16 times over, each pass kept (the asm makes the compiler assume
 * out is read between passes): 16x the seed's work, for the yardstick test. */
void axpy(int32_t n, float a, const float *x, const float *y, float *out)
{
    for (int pass = 0; pass < 16; pass++) {
        for (int32_t i = 0; i < n; i++)
            out[i] = a * x[i] + y[i];
        __asm__ volatile("" : : "r"(out) : "memory");
    }
}
