/*
 * A kernel that writes zeros: always wrong. run.sh evaluates it after every
 * attack; if it ever passes, the cached reference has been replaced
 * (attacks/cache_poison.c).
 */
#include <stdint.h>
#include <string.h>
void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)K, (void)A, (void)B;
    memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
}
