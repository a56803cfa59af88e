/*
 * ATTACK forge_malformed — a forged report whose fields have the wrong
 * types: "correct": true with "gflops" as a string, a config object
 * carrying extra fields, then frames that are not objects or not JSON. The Lua side compares gflops
 * with numbers (lua/avo/evaluator.lua: geomean), so a string there raises an error in the engine
 * instead of failing the candidate. Stopped by: the judge in another process (item 1); a malformed
 * result fails that candidate, never the run. integrity: expect=fail
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void frame(int fd, const char *json)
{
    uint32_t n = (uint32_t)strlen(json);
    unsigned char head[4] = {n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >> 24};
    if (write(fd, head, 4) == 4)
        (void)!write(fd, json, n);
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    for (int fd = 0; fd < 1024; fd++) {
        if (fcntl(fd, F_GETFD) < 0)
            continue;
        frame(fd, "{\"config\":{\"name\":\"m96\",\"correct\":true,\"gflops\":\"fast\","
                  "\"median_s\":\"0\",\"samples\":-1,\"extra\":{\"nested\":[1e308]}}}");
        frame(fd, "{\"config\":{\"name\":\"odd-37x53x29\",\"correct\":true,\"gflops\":1e308,"
                  "\"median_s\":0}}");
        frame(fd, "{\"done\":{\"status\":\"ok\",\"reason\":null}}");
        frame(fd, "[1, 2, 3]");
        frame(fd, "this is not json");
    }
    _exit(0);
}
