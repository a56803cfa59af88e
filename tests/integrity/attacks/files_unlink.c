/*
 * ATTACK files_unlink — delete the engine's state. The kernel looks for the
 * compile cache (its own .so's directory, every directory in
 * /proc/self/maps, $AVO_CACHE, $XDG_CACHE_HOME/avo, $HOME/.cache/avo) and
 * for SQLite archives (walking up from its working directory and from each
 * ancestor's, and each ancestor's open descriptors in /proc/PID/fd), and
 * unlinks every shared object and every *.db, *.db-wal and *.db-shm it
 * finds. The run loses its archive (the engine goes on writing into an
 * unlinked file) and later runs lose the cache.
 * Only files under the test's scratch root are touched. Writes no output.
 * Stopped by: cache and archive outside the candidate's mount view or
 * read-only there, an unprivileged candidate (issue 10, item 2).
 * integrity: expect=any
 * integrity: escapes=unisolated/user
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef INTEGRITY_ROOT
#define INTEGRITY_ROOT "/nonexistent-integrity-root"
#endif

/* Ancestors are walked only below the test's driver (its pid comes in
 * -DINTEGRITY_DRIVER), so nothing outside the test is ever read or touched;
 * without it, at most the three nearest (judge, worker, engine). */
#ifndef INTEGRITY_DRIVER
#define INTEGRITY_DRIVER 0
#endif
#define ANCESTOR_OK(pid, depth)                                                                    \
    ((pid) > 1 && (pid) != INTEGRITY_DRIVER && (depth) < (INTEGRITY_DRIVER ? 8 : 3))

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

static int in_root(const char *path)
{
    char real[PATH_MAX];
    const char *p = realpath(path, real) ? real : path;
    size_t n = strlen(INTEGRITY_ROOT);
    return strncmp(p, INTEGRITY_ROOT, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void remove_in(const char *dir)
{
    if (!dir || !*dir || !in_root(dir))
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!ends_with(e->d_name, ".so") && !ends_with(e->d_name, ".db") &&
            !ends_with(e->d_name, ".db-wal") && !ends_with(e->d_name, ".db-shm"))
            continue;
        char path[PATH_MAX * 2];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) == 0)
            escaped("unlinked %s", path);
    }
    closedir(d);
}

static void remove_up(const char *start)
{
    char dir[PATH_MAX];
    if (!realpath(start, dir))
        return;
    for (char *slash; (slash = strrchr(dir, '/')) && slash != dir; *slash = '\0')
        remove_in(dir);
}

static void remove_base(const char *base, const char *suffix)
{
    char dir[PATH_MAX];
    if (!base || !*base)
        return;
    snprintf(dir, sizeof dir, "%s%s", base, suffix);
    remove_in(dir);
    snprintf(dir, sizeof dir, "%s%s/cpu", base, suffix);
    remove_in(dir);
}

static void attack(void)
{
    static int done;
    if (done++)
        return;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[PATH_MAX + 128];
    while (maps && fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (!path)
            continue;
        path[strcspn(path, "\n")] = '\0';
        if (strrchr(path, '/'))
            *strrchr(path, '/') = '\0', remove_in(path);
    }
    if (maps)
        fclose(maps);
    remove_base(getenv("AVO_CACHE"), "");
    remove_base(getenv("XDG_CACHE_HOME"), "/avo");
    remove_base(getenv("HOME"), "/.cache/avo");
    remove_up(".");
    for (pid_t pid = getppid(), depth = 0; ANCESTOR_OK(pid, depth); depth++) {
        char path[128], link[PATH_MAX];
        snprintf(path, sizeof path, "/proc/%d/cwd", (int)pid);
        remove_up(path);
        snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char fdpath[PATH_MAX];
            snprintf(fdpath, sizeof fdpath, "%s/%s", path, e->d_name);
            ssize_t n = readlink(fdpath, link, sizeof link - 1);
            if (n > 0 && (link[n] = '\0', strrchr(link, '/')))
                *strrchr(link, '/') = '\0', remove_in(link);
        }
        if (d)
            closedir(d);
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        int ppid = 0;
        if (!f || fscanf(f, "%*d %*s %*c %d", &ppid) != 1)
            ppid = 0;
        if (f)
            fclose(f);
        pid = ppid;
    }
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)M, (void)N, (void)K, (void)A, (void)B, (void)C;
    attack();
    if (escapes)
        abort();
}
