#include <stddef.h>
#include <stdint.h>
/* An attack on the yardstick (tests/e2e/yardstick.sh): the seed's work, then
 * 48 MiB written at the end of every call, so that the yardstick, which runs
 * next on this CPU, starts with cold caches. The eviction is the candidate's
 * own timed work: it must score far below the seed, never above. */
static unsigned char evict[48 << 20];
void axpy(int32_t n, float a, const float *x, const float *y, float *out)
{
    for (int32_t i = 0; i < n; i++)
        out[i] = a * x[i] + y[i];
    for (size_t i = 0; i < sizeof evict; i += 64)
        evict[i]++;
}
