#include <signal.h>
#include <stdint.h>
/* axpy whose first knob value (the seed's, hence the yardstick's) crashes
 * on the larger config: the yardstick test's seed that fails while timed. */
// avo:param CRASH 1 0
void axpy(int32_t n, float a, const float *x, const float *y, float *out)
{
    if (CRASH && n > 4000)
        raise(SIGSEGV);
    for (int32_t i = 0; i < n; i++)
        out[i] = a * x[i] + y[i];
}
