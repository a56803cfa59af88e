/*
 * ATTACK include_passwd — copy a host file into the compile log.
 * `#include "/etc/passwd"`: cc1 reads the host file as C and quotes its lines
 * in the error messages, which become the candidate's log (result,
 * archive, LLM prompts).
 * Stopped by: include paths restricted to system headers and the
 * evaluator's own, no absolute includes, logs that never echo included
 * host files (issue 10, item 4).
 * integrity: expect=fail
 */
#include "/etc/passwd"
#include <stdint.h>
void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C);
