/*
 * libraries.c — the libraries a candidate process loaded, read by the judge
 * from /proc (libraries.h).
 */
#include "eval/libraries.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/avo.h"

/* One line of /proc/PID/maps: a file mapped executable, or 0. */
typedef struct maps_line {
    unsigned long start, end;
    dev_t dev;
    ino_t ino;
    char path[PATH_MAX];
} maps_line;

/* Parse `line`; 1 when it maps a file (inode != 0) executable. */
static int parse_line(const char *line, maps_line *m)
{
    char perms[8];
    unsigned long offset, inode;
    unsigned major, minor;
    int at = 0;
    if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &m->start, &m->end, perms, &offset, &major,
               &minor, &inode, &at) < 7 ||
        inode == 0 || !strchr(perms, 'x'))
        return 0;
    m->dev = makedev(major, minor);
    m->ino = (ino_t)inode;
    snprintf(m->path, sizeof m->path, "%s", line + at);
    m->path[strcspn(m->path, "\n")] = '\0';
    return 1;
}

static int in_baseline(const avo_libraries_baseline *b, dev_t dev, ino_t ino)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->files[i].dev == dev && b->files[i].ino == ino)
            return 1;
    return 0;
}

int avo_libraries_baseline_take(avo_libraries_baseline *b)
{
    b->n = 0;
    FILE *f = fopen("/proc/self/maps", "re");
    if (!f)
        return -errno;
    char line[PATH_MAX + 128];
    maps_line m;
    while (fgets(line, sizeof line, f))
        if (parse_line(line, &m) && !in_baseline(b, m.dev, m.ino) &&
            b->n < sizeof b->files / sizeof b->files[0]) {
            b->files[b->n].dev = m.dev;
            b->files[b->n].ino = m.ino;
            b->n++;
        }
    fclose(f);
    return 0;
}

/* Whether the files behind fds a and b hold the same bytes. */
static int same_content(int a, int b)
{
    struct stat sa, sb;
    if (fstat(a, &sa) < 0 || fstat(b, &sb) < 0 || sa.st_size != sb.st_size)
        return 0;
    char ba[65536], bb[65536];
    for (off_t at = 0; at < sa.st_size;) {
        ssize_t na = pread(a, ba, sizeof ba, at), nb = pread(b, bb, sizeof bb, at);
        if (na <= 0 || na != nb || memcmp(ba, bb, (size_t)na) != 0)
            return 0;
        at += na;
    }
    return 1;
}

/* Whether the mapping m of pid is the candidate's own object.  By content,
 * through /proc/PID/map_files (the mapped file itself, however renamed);
 * where that cannot be opened, by its staged name. */
static int is_own(pid_t pid, const maps_line *m, int own_fd)
{
    char path[128];
    snprintf(path, sizeof path, "/proc/%ld/map_files/%lx-%lx", (long)pid, m->start, m->end);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const char *base = strrchr(m->path, '/');
        return base && strcmp(base, "/kernel.so") == 0;
    }
    int same = own_fd >= 0 && same_content(fd, own_fd);
    close(fd);
    return same;
}

/* The compiler's runtime, from the system's library directories. */
static int is_runtime(const char *path)
{
    static const char *const dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", NULL};
    static const char *const names[] = {
        "libgcc_s.so", "libgomp.so", "libatomic.so", "libstdc++.so", "libquadmath.so",
        "libmvec.so",  NULL};
    int system = 0;
    for (int i = 0; dirs[i]; i++)
        system |= strncmp(path, dirs[i], strlen(dirs[i])) == 0;
    const char *base = strrchr(path, '/');
    if (!system || !base || strstr(path, "/../"))
        return 0;
    for (int i = 0; names[i]; i++)
        if (strncmp(base + 1, names[i], strlen(names[i])) == 0)
            return 1;
    return 0;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* Sort an array of strings in place. */
static void sort_strings(json_t *list)
{
    size_t n = json_array_size(list);
    if (n < 2)
        return;
    json_t **items = malloc(n * sizeof *items);
    if (!items)
        return;
    for (size_t i = 0; i < n; i++)
        items[i] = json_incref(json_array_get(list, i));
    qsort(items, n, sizeof *items, by_text);
    json_array_clear(list);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, items[i]);
    free(items);
}

json_t *avo_libraries_observe(pid_t pid, int maps_fd, const avo_libraries_baseline *b, int own_fd,
                              char *err, size_t errlen)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/maps", (long)pid);
    FILE *f = NULL;
    if (maps_fd >= 0) {
        int fd = fcntl(maps_fd, F_DUPFD_CLOEXEC, 0);
        if (fd >= 0 && lseek(fd, 0, SEEK_SET) == 0)
            f = fdopen(fd, "re");
        if (!f && fd >= 0)
            close(fd);
    }
    if (!f)
        f = fopen(path, "re");
    if (!f) {
        avo_error(err, errlen, AVO_EIO, "cannot read the kernel process's mappings (%s): %s", path,
                  strerror(errno));
        return NULL;
    }
    json_t *found = json_array();
    avo_libraries_baseline seen = {.n = 0}; /* files already decided */
    char line[PATH_MAX + 128];
    maps_line m;
    while (found && fgets(line, sizeof line, f)) {
        if (!parse_line(line, &m) || in_baseline(b, m.dev, m.ino) ||
            in_baseline(&seen, m.dev, m.ino))
            continue;
        if (seen.n < sizeof seen.files / sizeof seen.files[0]) {
            seen.files[seen.n].dev = m.dev;
            seen.files[seen.n].ino = m.ino;
            seen.n++;
        }
        if (is_own(pid, &m, own_fd) || is_runtime(m.path))
            continue;
        json_array_append_new(found, json_string(m.path));
    }
    int read_error = ferror(f);
    fclose(f);
    if (!found || read_error) {
        json_decref(found);
        avo_error(err, errlen, AVO_EIO, "cannot read the kernel process's mappings (%s)", path);
        return NULL;
    }
    sort_strings(found);
    return found;
}

int avo_libraries_policy_valid(const json_t *policy, char *why, size_t len)
{
    if (!policy || json_is_null(policy))
        return 1;
    const char *text = json_string_value(policy);
    if (text && (!strcmp(text, "allow") || !strcmp(text, "forbid")))
        return 1;
    if (json_is_array(policy)) {
        size_t i;
        const json_t *item;
        json_array_foreach(policy, i, item)
        {
            if (!json_string_value(item) || !*json_string_value(item)) {
                snprintf(why, len, "libraries[%zu] must be a non-empty file name prefix", i + 1);
                return 0;
            }
        }
        return 1;
    }
    snprintf(why, len, "libraries must be \"allow\", \"forbid\" or a list of file name prefixes");
    return 0;
}

/* Whether file name base starts with a prefix of the list policy ("forbid",
 * no list, allows nothing). */
static int allowed_by(const char *base, const json_t *policy)
{
    size_t k;
    const json_t *prefix;
    json_array_foreach(policy, k, prefix)
    {
        const char *p = json_string_value(prefix);
        if (p && strncmp(base, p, strlen(p)) == 0)
            return 1;
    }
    return 0;
}

int avo_libraries_allowed(const json_t *found, const json_t *policy, char *why, size_t len)
{
    const char *text = json_string_value(policy);
    if (!policy || json_is_null(policy) || (text && !strcmp(text, "allow")))
        return 1;
    size_t i, used = 0;
    const json_t *item;
    int refused = 0;
    if (len)
        why[0] = '\0';
    json_array_foreach(found, i, item)
    {
        const char *path = json_string_value(item);
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        if (allowed_by(base, policy))
            continue;
        int n =
            used < len ? snprintf(why + used, len - used, "%s%s", refused ? ", " : "", path) : 0;
        used += n > 0 ? (size_t)n : 0;
        refused = 1;
    }
    return !refused;
}
