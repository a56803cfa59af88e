/*
 * ATTACK forge_constructor — forge the verdict before any kernel call.
 * Like forge_report, but from an __attribute__((constructor)), which runs
 * while the runner dlopens the kernel, before any config and before any
 * check the runner could make around a kernel call. It writes the framed
 * fake report (eval/cpu/cpu.c REPORT_FD, core/proto.c) to every open descriptor
 * 0..1023 and exits; the kernel entry does the same, in case constructors
 * are ever skipped.
 * Stopped by: the judge living in another process (issue 10, item 1).
 * integrity: expect=fail
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const names[] = {"m96", "odd-37x53x29"};

static void frame(int fd, const char *json)
{
    uint32_t n = (uint32_t)strlen(json);
    unsigned char head[4] = {n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >> 24};
    if (write(fd, head, 4) == 4)
        (void)!write(fd, json, n);
}

static void forge_everywhere(void)
{
    char msg[512];
    for (int fd = 0; fd < 1024; fd++) {
        if (fcntl(fd, F_GETFD) < 0)
            continue;
        for (size_t c = 0; c < sizeof names / sizeof names[0]; c++) {
            snprintf(msg, sizeof msg, "{\"progress\":\"%s\"}", names[c]);
            frame(fd, msg);
            snprintf(msg, sizeof msg,
                     "{\"config\":{\"name\":\"%s\",\"correct\":true,\"max_error\":0.0,"
                     "\"median_s\":1e-9,\"spread\":0.0,\"samples\":40,\"gflops\":1000000.0,"
                     "\"gbs\":0.0,\"reason\":null}}",
                     names[c]);
            frame(fd, msg);
        }
        frame(fd, "{\"done\":{\"status\":\"ok\",\"reason\":null}}");
    }
    _exit(0);
}

__attribute__((constructor)) static void at_load(void)
{
    forge_everywhere();
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    forge_everywhere();
}
