/*
 * ATTACK read_hostfile — read host files at run time and publish them.
 * The kernel opens the test's planted secret file, /etc/shadow and
 * /etc/passwd, prints what it read on stdout and stderr and aborts, so it
 * lands in the candidate's log (result, archive, LLM prompts).
 * Stopped by: the candidate's own mount view (issue 10, item 2).
 * integrity: expect=any
 * integrity: escapes=unisolated
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef INTEGRITY_ROOT
#define INTEGRITY_ROOT "/nonexistent-integrity-root"
#endif

/* A step that worked is reported on stdout and stderr with this marker, and
 * the kernel then fails on purpose, so its output is kept as the log: the
 * test sees the escape even where it cannot see the effect (a private
 * mount view, a namespace). */
static int escapes;
static void escaped(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("INTEGRITY-ESCAPE: %s\n", line);
    fprintf(stderr, "INTEGRITY-ESCAPE: %s\n", line);
    fflush(stdout);
    escapes++;
}

static int publish(const char *path)
{
    char buf[4096];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    printf("%s: %s\n", path, buf);
    fprintf(stderr, "%s: %s\n", path, buf);
    return 1;
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    if (publish(INTEGRITY_ROOT "/host-secret.inc"))
        escaped("read the test's host secret file");
    if (publish("/etc/shadow"))
        escaped("read /etc/shadow");
    publish("/etc/passwd"); /* world-readable anyway: leaked, not an escape */
    fflush(stdout);
    abort();
}
