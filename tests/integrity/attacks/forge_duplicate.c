/*
 * ATTACK forge_duplicate — a forged report that names the same config twice
 * (and one that names a config the evaluator does not have). The engine
 * counts configs rather than matching names (lua/avo/evaluator.lua:
 * Evaluator:verified), and the archive's primary key (candidate_id, config)
 * then refuses the second row, which today aborts the whole run, and
 * `avo resume` aborts the same way.
 * Stopped by: the judge in another process (item 1), and the engine failing
 * a malformed or duplicate result for that candidate only, never the run.
 * integrity: expect=fail
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
    static const char entry[] =
        "{\"config\":{\"name\":\"m96\",\"correct\":true,\"max_error\":0.0,\"median_s\":1e-9,"
        "\"spread\":0.0,\"samples\":40,\"gflops\":1000000.0,\"gbs\":0.0,\"reason\":null}}";
    for (int fd = 0; fd < 1024; fd++) {
        if (fcntl(fd, F_GETFD) < 0)
            continue;
        frame(fd, entry);
        frame(fd, entry);
        frame(fd, "{\"done\":{\"status\":\"ok\",\"reason\":null}}");
    }
    _exit(0);
}
