/*
 * ATTACK fault_hello — pass itself off as a broken sandbox. Before issue
 * 18 the candidate process told its judge on the acknowledgement pipe
 * (fd 4) that its sandbox could not be set up ('E' and a reason), and the
 * judge made that an infrastructure fault: retried, never charged, five in
 * a row stopped the run. A constructor runs before the harness writes its
 * own start answer, so it writes the failure byte and a reason first, on
 * every descriptor from 3 to 63, and exits.
 * Stopped by: the sandbox's set-up reported on a pipe of its own that is
 * closed before the kernel is loaded; a start answer the harness never
 * gives is the kernel's failure (issue 18, item 5).
 * integrity: expect=fail
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void forge(void)
{
    static const char msg[] = "Ecannot isolate the kernel: unsharing namespaces failed";
    for (int fd = 3; fd < 64; fd++)
        if (write(fd, msg, sizeof msg - 1) < 0) {
        }
    _exit(0);
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
}
