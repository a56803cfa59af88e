/*
 * ATTACK include_hostfile — compile a host file's contents into the kernel
 * and publish them at run time. The test plants a file holding a C string
 * literal (a fake secret) under its scratch root and names it to the
 * kernel through the evaluator's -DINTEGRITY_SECRET_FILE; the include is
 * an absolute path after macro expansion. The kernel compiles, prints the
 * secret on stdout and stderr and aborts, so it lands in the log.
 * Stopped by: no absolute includes, also after macro expansion (issue 10,
 * item 4).
 * integrity: expect=fail
 * integrity: escapes=unisolated/user
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef INTEGRITY_SECRET_FILE
static const char stolen[] =
#include INTEGRITY_SECRET_FILE
    ;
#else
static const char stolen[] = "(no secret file named)";
#endif

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    printf("host file: %s\n", stolen);
    fprintf(stderr, "host file: %s\n", stolen);
    fflush(stdout);
    abort();
}
