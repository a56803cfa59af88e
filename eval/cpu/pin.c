/*
 * pin.c — one CPU per judge while it times (cpu_job.h, avo_cpu_pin).
 *
 * The judge writes every sample's inputs, then its candidate reads them;
 * when the scheduler puts the two on different CPUs, the candidate fetches
 * its inputs from another core's cache, and how often that happens changes
 * from one evaluation to the next (on a 2-vCPU VM the same kernel measured
 * 19 to 49 GFLOP/s at 64^3).  A judge pinned to one CPU, its candidate
 * with it (the affinity is inherited at the fork), measures where it wrote.
 * Concurrent judges (--jobs, several workers on a node) take different
 * CPUs: one lock file per CPU, held with flock until the judge exits, in a
 * directory of the user's own.  When every allowed CPU is taken the judge
 * runs unpinned, as before; AVO_CPU_PIN=0 turns pinning off.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/cpu/cpu_job.h"

/* <TMPDIR or /tmp>/avo-cpus-<euid>, created 0700 and owned by us, into dir;
 * 0 or -1. */
static int lock_dir(char *dir, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(dir, len, "%s/avo-cpus-%ld", tmp && *tmp ? tmp : "/tmp", (long)geteuid());
    if (n < 0 || (size_t)n >= len)
        return -1;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 0077))
        return -1;
    return 0;
}

/* Lock file of `cpu` taken without waiting: its fd, or -1. */
static int try_cpu(const char *dir, int cpu)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%d", dir, cpu);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
    close(fd);
    return -1;
}

int avo_cpu_pin(int *ret_fd)
{
    *ret_fd = -1;
    const char *off = getenv("AVO_CPU_PIN");
    if (off && !strcmp(off, "0"))
        return -1;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) < 0 || CPU_COUNT(&allowed) < 1)
        return -1;
    char dir[PATH_MAX - 32];
    if (lock_dir(dir, sizeof dir) < 0)
        return -1;
    /* The CPU the judge is on first (its caches hold what it just did),
     * then the others in order. */
    int here = sched_getcpu();
    for (int i = -1; i < CPU_SETSIZE; i++) {
        int cpu = i < 0 ? here : i;
        if (cpu < 0 || (i >= 0 && cpu == here) || !CPU_ISSET(cpu, &allowed))
            continue;
        int fd = try_cpu(dir, cpu);
        if (fd < 0)
            continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) < 0) {
            close(fd);
            return -1;
        }
        *ret_fd = fd;
        return cpu;
    }
    return -1;
}
