/* A trivial kernel with a large knob space (10^8 points) for the
 * throughput benchmark (bench/throughput.sh): param_tweak can make 100,000
 * distinct candidates of it.  The test backend scores it in-process, so the
 * benchmark times the engine alone. */
#include <stdint.h>
// avo:param A 0 1 2 3 4 5 6 7 8 9
// avo:param B 0 1 2 3 4 5 6 7 8 9
// avo:param C 0 1 2 3 4 5 6 7 8 9
// avo:param D 0 1 2 3 4 5 6 7 8 9
// avo:param E 0 1 2 3 4 5 6 7 8 9
// avo:param F 0 1 2 3 4 5 6 7 8 9
// avo:param G 0 1 2 3 4 5 6 7 8 9
// avo:param H 0 1 2 3 4 5 6 7 8 9
void copy(int32_t n, const float *x, float *y)
{
    for (int32_t i = 0; i < n; i++)
        y[i] = x[i] + (float)(A + B + C + D + E + F + G + H) * 0.0f;
}
