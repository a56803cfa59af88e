/*
 * ATTACK cache_bloat — leave a huge object in the compile cache. A 64 MiB
 * initialised array makes a 64 MiB shared object, which is renamed into
 * the cache before it is run (eval/cpu/cpu.c: compile_cached) and stays there
 * although the kernel then fails; a search producing such candidates fills
 * the disk through the cache.
 * Stopped by: failed outputs not cached and a bounded cache size (issue 10,
 * item 4).
 * integrity: expect=fail
 */
#include <stdint.h>

#define BLOAT_BYTES (64u << 20)

const unsigned char integrity_bloat[BLOAT_BYTES] = {1};

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B;
    C[0] = integrity_bloat[0] + integrity_bloat[BLOAT_BYTES - 1]; /* and nothing else */
}
