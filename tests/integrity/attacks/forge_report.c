/*
 * ATTACK forge_report — forge the verdict from inside the kernel call.
 * The runner reports to its worker over a pipe in the candidate's own
 * process (eval/cpu/cpu.c: REPORT_FD 3, framed JSON, core/proto.c). The kernel
 * writes a complete fake report (every config correct at 1e6 GFLOP/s, then
 * "done": ok) to every open descriptor 0..1023, then exits before the real
 * runner can say anything.
 * Stopped by: the judge living in another process (issue 10, item 1) — the
 * candidate holds no channel whose contents count as a verdict.
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

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    forge_everywhere();
}
