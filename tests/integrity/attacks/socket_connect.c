/*
 * ATTACK socket_connect — reach the network. The kernel opens TCP
 * connections to the test's listener on 127.0.0.1 and ::1
 * (-DINTEGRITY_PORT) and to its Unix socket under the scratch root, and
 * sends a line naming the route: enough to exfiltrate anything it read.
 * Then it computes nothing.
 * Stopped by: an empty network namespace, seccomp against sockets, and its
 * own mount view (a filesystem Unix socket ignores network namespaces)
 * (issue 10, item 2). Today's runner filter denies socket().
 * integrity: expect=any
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef INTEGRITY_ROOT
#define INTEGRITY_ROOT "/nonexistent-integrity-root"
#endif
#ifndef INTEGRITY_PORT
#define INTEGRITY_PORT 1
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

static void say(int fd, const struct sockaddr *addr, socklen_t len, const char *route)
{
    if (fd < 0)
        return;
    if (connect(fd, addr, len) == 0) {
        char line[128];
        snprintf(line, sizeof line, "ESCAPED socket_connect via %s\n", route);
        (void)!write(fd, line, strlen(line));
        escaped("connected to the test's listener via %s", route);
    }
    close(fd);
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = htons(INTEGRITY_PORT)};
    v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    say(socket(AF_INET, SOCK_STREAM, 0), (struct sockaddr *)&v4, sizeof v4, "tcp4");
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6, .sin6_port = htons(INTEGRITY_PORT)};
    v6.sin6_addr = in6addr_loopback;
    say(socket(AF_INET6, SOCK_STREAM, 0), (struct sockaddr *)&v6, sizeof v6, "tcp6");
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    snprintf(un.sun_path, sizeof un.sun_path, "%s/listener.sock", INTEGRITY_ROOT);
    say(socket(AF_UNIX, SOCK_STREAM, 0), (struct sockaddr *)&un, sizeof un, "unix");
    if (escapes)
        abort();
}
