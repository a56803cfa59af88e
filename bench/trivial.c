/* The cheapest possible candidate: the engine's overhead benchmark times
 * everything around it. */
#include <stdint.h>
// avo:param VARIANT 0
void copy(int32_t n, const float *x, float *y)
{
    for (int32_t i = 0; i < n; i++)
        y[i] = x[i] + (float)VARIANT * 0.0f;
}
