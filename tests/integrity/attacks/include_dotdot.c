/*
 * ATTACK include_dotdot — the same as include_passwd through a relative
 * path: `#include "../../../../../../../../../../../../etc/passwd"` climbs
 * from the compile directory to / and down again, which a filter on
 * leading '/' alone would let through.
 * Stopped by: no `..` includes, logs that never echo included host files
 * (issue 10, item 4).
 * integrity: expect=fail
 */
#include "../../../../../../../../../../../../etc/passwd"
#include <stdint.h>
void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C);
