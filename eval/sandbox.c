/*
 * sandbox.c — isolation of candidate kernels and compilers (see sandbox.h).
 *
 * Everything here runs in a child between fork and the untrusted code, so
 * it only reports through the caller's error buffer, and a step that fails
 * leaves the process for the caller to _exit.
 */
#include "avo_config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sockios.h> /* FIOSETOWN, SIOCSPGRP */
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#if AVO_HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "core/avo.h"
#include "eval/sandbox.h"
#include "eval/supervise.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANDBOX_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANDBOX_UNDER_ASAN 1
#endif
#endif

#define DEFAULT_UID 65534 /* nobody: only with AVO_SANDBOX_UID */
#define DEFAULT_UID_BASE 200000
#define DEFAULT_UID_COUNT 1024

extern char **environ;

/* A positive id from the environment variable `name`, or `fallback`. */
static long env_id(const char *name, long fallback)
{
    const char *s = getenv(name);
    char *end;
    long v = s && *s ? strtol(s, &end, 10) : -1;
    return v > 0 && v < 0x7fffffff && *end == '\0' ? v : fallback;
}

uid_t avo_sandbox_uid(void)
{
    return (uid_t)env_id("AVO_SANDBOX_UID", DEFAULT_UID);
}

/* ------------------------------------------------------------ uid leases */

/*
 * The directory of root's uid locks: AVO_SANDBOX_LOCK_DIR, else
 * /run/avo-sandbox, else (a chroot without /run) /var/lib/avo-sandbox, else
 * /tmp/avo-sandbox-locks (sticky: nobody else can replace it).  It must be a real directory owned by root that
 * nobody else can write, so no other user can hold (or fake) a lock.
 */
static int lock_dir(char *dir, size_t len, char *err, size_t errlen)
{
    const char *d = getenv("AVO_SANDBOX_LOCK_DIR");
    /* the first whose parent exists: a chroot may lack /run and /var */
    static const char *const defaults[][2] = {{"/run", "/run/avo-sandbox"},
                                              {"/var/lib", "/var/lib/avo-sandbox"},
                                              {"/tmp", "/tmp/avo-sandbox-locks"}};
    const char *fallback = defaults[2][1];
    struct stat parent;
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        if (stat(defaults[i][0], &parent) == 0 && S_ISDIR(parent.st_mode)) {
            fallback = defaults[i][1];
            break;
        }
    snprintf(dir, len, "%s", d && *d ? d : fallback);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot create %s: %s", dir,
                         strerror(errno));
    struct stat st;
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
        (st.st_mode & (S_IWGRP | S_IWOTH)))
        return avo_error(err, errlen, AVO_EIO,
                         "sandbox: %s must be a directory owned by root that only root can "
                         "write (AVO_SANDBOX_LOCK_DIR picks another)",
                         dir);
    return 0;
}

/* Kill every process of `uid` (one left behind by an earlier sandbox of
 * it): a child takes the uid and signals -1, which reaches exactly the
 * processes of that uid. */
static void reap_uid(uid_t uid)
{
    pid_t pid = avo_supervise_fork(0);
    if (pid == 0) {
        if (setgroups(0, NULL) == 0 && setresgid(uid, uid, uid) == 0 &&
            setresuid(uid, uid, uid) == 0)
            kill(-1, SIGKILL);
        _exit(0);
    }
    while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* Ids no sandbox takes even when no account names them: root, the system
 * accounts' range, systemd's dynamic users, nobody and (uid_t)-1 of 16-bit
 * interfaces. */
static const long reserved_ids[][2] = {{0, 1000}, {61184, 65536}};

#define MAX_EXTENTS 64

typedef struct id_extent {
    long first, count; /* ids [first, first + count) */
} id_extent;

/* The inside ids of a map's text (/proc/self/uid_map lines "inside outside
 * count"); NULL text: every id (the initial namespace). */
static size_t parse_map(const char *text, id_extent *out, size_t max)
{
    if (!text) {
        out[0] = (id_extent){0, 0x7fffffffL};
        return 1;
    }
    size_t n = 0;
    long inside, outside, count;
    int used;
    while (n < max && sscanf(text, " %ld %ld %ld%n", &inside, &outside, &count, &used) == 3) {
        out[n++] = (id_extent){inside, count};
        text += used;
    }
    return n;
}

/* True when [first, first + count) lies in one extent of `map`. */
static int in_map(const id_extent *map, size_t n, long first, long count)
{
    for (size_t i = 0; i < n; i++)
        if (first >= map[i].first && first + count <= map[i].first + map[i].count)
            return 1;
    return 0;
}

/* True when id `id` is used (listed or reserved). */
static int id_used(long id, const long *used, size_t nused)
{
    for (size_t i = 0; i < sizeof reserved_ids / sizeof reserved_ids[0]; i++)
        if (id >= reserved_ids[i][0] && id < reserved_ids[i][1])
            return 1;
    for (size_t i = 0; i < nused; i++)
        if (used[i] == id)
            return 1;
    return 0;
}

long avo_sandbox_uid_range_pick(const char *uid_map, const char *gid_map, const long *used,
                                size_t nused, long want, long *ret_base)
{
    id_extent uids[MAX_EXTENTS], gids[MAX_EXTENTS];
    size_t nu = parse_map(uid_map, uids, MAX_EXTENTS), ng = parse_map(gid_map, gids, MAX_EXTENTS);
    long best_base = 0, best_len = 0;
    /* Each uid extent, clipped to 2^31 and scanned from its top down, in
     * runs of ids mapped as uid and gid and used by no one: the first run
     * of `want` ids wins (its top part), else the longest. */
    for (size_t i = 0; i < nu; i++) {
        long lo = uids[i].first, hi = uids[i].first + uids[i].count;
        if (hi > 0x7fffffffL)
            hi = 0x7fffffffL;
        if (hi - lo > (1L << 22))
            lo = hi - (1L << 22); /* the top 4 Mi ids of a huge extent are plenty */
        long run_top = hi;
        for (long id = hi - 1; id >= lo - 1; id--) {
            int free_id = id >= lo && !id_used(id, used, nused) && in_map(gids, ng, id, 1);
            if (free_id && run_top - id >= want) {
                *ret_base = id;
                return want;
            }
            if (!free_id) {
                if (run_top - (id + 1) > best_len) {
                    best_len = run_top - (id + 1);
                    best_base = id + 1;
                }
                run_top = id;
            }
        }
    }
    *ret_base = best_base;
    return best_len;
}

/* The whole text of a small file (a /proc map, /etc/passwd) into buf, or
 * NULL when it cannot be read. */
static const char *read_small(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* The ids named in the third field of /etc/passwd and /etc/group (uids,
 * gids) into used[], at most max; returns how many. */
static size_t account_ids(long *used, size_t max)
{
    static const char *const files[] = {"/etc/passwd", "/etc/group"};
    size_t n = 0;
    for (size_t i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "re");
        char line[1024];
        while (f && n < max && fgets(line, sizeof line, f)) {
            char *p = line;
            for (int field = 0; field < 2 && p; field++)
                p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL;
            char *end;
            long id = p ? strtol(p, &end, 10) : -1;
            if (p && end != p && id >= 0)
                used[n++] = id;
        }
        if (f)
            fclose(f);
    }
    return n;
}

/* True when ids [first, first + count) exist as uids and gids in our user
 * namespace (no map readable: the initial namespace). */
static int ids_mapped(long first, long count)
{
    char ubuf[4096], gbuf[4096];
    id_extent u[MAX_EXTENTS], g[MAX_EXTENTS];
    size_t nu = parse_map(read_small("/proc/self/uid_map", ubuf, sizeof ubuf), u, MAX_EXTENTS);
    size_t ng = parse_map(read_small("/proc/self/gid_map", gbuf, sizeof gbuf), g, MAX_EXTENTS);
    return in_map(u, nu, first, count) && in_map(g, ng, first, count);
}

/* The fewest ids worth a range of their own: fewer, and the sandboxes share
 * one uid instead of waiting for each other's. */
#define MIN_PICKED_IDS 8

/* The uid the sandboxes share when no range is free, if the map has it. */
#define SHARED_FALLBACK_UID 65534

int avo_sandbox_uids(avo_sandbox_uid_plan *ret, char *err, size_t errlen)
{
    *ret = (avo_sandbox_uid_plan){.base = getuid(), .count = 1};
    if (geteuid() != 0) {
        snprintf(ret->how, sizeof ret->how, "your own uid, in a user namespace of each sandbox");
        return 0;
    }
    const char *fixed = getenv("AVO_SANDBOX_UID");
    if (fixed && *fixed) {
        *ret = (avo_sandbox_uid_plan){.base = avo_sandbox_uid(), .count = 1, .shared = 1};
        snprintf(ret->how, sizeof ret->how, "AVO_SANDBOX_UID: one uid every sandbox shares");
        return 0;
    }
    const char *b = getenv("AVO_SANDBOX_UID_BASE"), *c = getenv("AVO_SANDBOX_UID_COUNT");
    int chosen = (b && *b) || (c && *c);
    long base = env_id("AVO_SANDBOX_UID_BASE", DEFAULT_UID_BASE);
    long count = env_id("AVO_SANDBOX_UID_COUNT", DEFAULT_UID_COUNT);
    if (base + count > 0x7fffffff)
        count = 0x7fffffff - base;
    *ret = (avo_sandbox_uid_plan){.base = base, .count = count};
    if (ids_mapped(base, count)) {
        snprintf(ret->how, sizeof ret->how, "%s, one uid per sandbox",
                 chosen ? "AVO_SANDBOX_UID_BASE and AVO_SANDBOX_UID_COUNT" : "the default range");
        return 0;
    }
    if (chosen)
        return avo_error(err, errlen, AVO_EIO,
                         "sandbox: uids %ld to %ld do not exist in this user namespace "
                         "(/proc/self/uid_map): set AVO_SANDBOX_UID_BASE and "
                         "AVO_SANDBOX_UID_COUNT to a range inside it that nothing else uses, "
                         "unset them to let avo pick one, or set AVO_SANDBOX_UID to one uid all "
                         "sandboxes share",
                         base, base + count - 1);
    /* A user namespace with a partial map (a rootless container maps
     * 65,536 ids): a free range inside it, the same in every process. */
    char ubuf[4096], gbuf[4096];
    long used[4096];
    size_t nused = account_ids(used, sizeof used / sizeof used[0]);
    long picked = avo_sandbox_uid_range_pick(read_small("/proc/self/uid_map", ubuf, sizeof ubuf),
                                             read_small("/proc/self/gid_map", gbuf, sizeof gbuf),
                                             used, nused, count, &base);
    if (picked >= MIN_PICKED_IDS) {
        *ret = (avo_sandbox_uid_plan){.base = base, .count = picked, .picked = 1};
        snprintf(ret->how, sizeof ret->how,
                 "picked inside /proc/self/uid_map, where the default %d.. is not mapped; "
                 "one uid per sandbox",
                 DEFAULT_UID_BASE);
        return 0;
    }
    if (ids_mapped(SHARED_FALLBACK_UID, 1)) {
        *ret = (avo_sandbox_uid_plan){.base = SHARED_FALLBACK_UID, .count = 1, .shared = 1,
                                      .picked = 1};
        snprintf(ret->how, sizeof ret->how,
                 "no free range of %d ids inside /proc/self/uid_map: every sandbox shares "
                 "uid %d (nobody), so sandboxes can signal each other; map more ids or set "
                 "AVO_SANDBOX_UID_BASE",
                 MIN_PICKED_IDS, SHARED_FALLBACK_UID);
        return 0;
    }
    return avo_error(err, errlen, AVO_EIO,
                     "sandbox: this user namespace maps no uid for the sandboxes to drop to "
                     "(/proc/self/uid_map: no free id, not even %d): map more ids into it "
                     "(/etc/subuid), or start avo as a user other than root",
                     SHARED_FALLBACK_UID);
}

/* The last plan avo_sandbox_uid_acquire followed said every sandbox shares
 * one uid (so a process limit counts them all); read by the sandboxed child. */
static int uid_shared;

int avo_sandbox_uid_acquire(avo_sandbox_lease *lease, char *err, size_t errlen)
{
    *lease = (avo_sandbox_lease){.uid = getuid(), .fd = -1};
    avo_sandbox_uid_plan plan;
    int rc = avo_sandbox_uids(&plan, err, errlen);
    if (rc < 0)
        return rc;
    uid_shared = plan.shared;
    if (geteuid() != 0)
        return 0; /* a user namespace of our own: the caller's uid */
    if (plan.shared) {
        lease->uid = (uid_t)plan.base; /* one fixed uid, shared by every sandbox */
        return 0;
    }
    long base = plan.base, count = plan.count;
    char dir[PATH_MAX - 32];
    rc = lock_dir(dir, sizeof dir, err, errlen);
    if (rc < 0)
        return rc;
    long start = (long)getpid() % count; /* concurrent workers start apart */
    for (long i = 0; i < count; i++) {
        long uid = base + (start + i) % count;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%ld", dir, uid);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
            return avo_error(err, errlen, AVO_EIO, "sandbox: cannot open %s: %s", path,
                             strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            reap_uid((uid_t)uid);
            lease->uid = (uid_t)uid;
            lease->fd = fd;
            return 0;
        }
        close(fd);
    }
    return avo_error(err, errlen, AVO_EBUSY,
                     "sandbox: all %ld uids from %ld are in use (AVO_SANDBOX_UID_BASE, "
                     "AVO_SANDBOX_UID_COUNT)",
                     count, base);
}

void avo_sandbox_uid_release(avo_sandbox_lease *lease)
{
    if (lease->fd >= 0)
        close(lease->fd); /* drops the lock */
    lease->fd = -1;
}

/* Write `text` to an existing file (a /proc control file). */
static int write_proc(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int e = n < 0 ? errno : 0;
    close(fd);
    return n < 0 ? -e : 0;
}

/* ------------------------------------------------------------ mount view */

/* Mount flags of the mount holding `path`, as mount(2) takes them, so a
 * remount keeps the flags the kernel locks (nosuid, nodev, noexec, atime). */
static unsigned long locked_flags(const char *path)
{
    struct statvfs st;
    if (statvfs(path, &st) < 0)
        return 0;
    unsigned long f = 0;
    if (st.f_flag & ST_NOSUID)
        f |= MS_NOSUID;
    if (st.f_flag & ST_NODEV)
        f |= MS_NODEV;
    if (st.f_flag & ST_NOEXEC)
        f |= MS_NOEXEC;
    if (st.f_flag & ST_NOATIME)
        f |= MS_NOATIME;
    if (st.f_flag & ST_NODIRATIME)
        f |= MS_NODIRATIME;
    if (st.f_flag & ST_RELATIME)
        f |= MS_RELATIME;
    return f;
}

/*
 * Bind `source` onto `target` (which exists), read-only unless `writable`.
 */
static int bind_mount(const char *source, const char *target, int writable, char *err,
                      size_t errlen)
{
    if (mount(source, target, NULL, MS_BIND | MS_REC, NULL) < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot bind %s: %s", source,
                         strerror(errno));
    unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOSUID | locked_flags(target);
    if (!writable)
        flags |= MS_RDONLY;
    if (mount(NULL, target, NULL, flags, NULL) < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot make %s read-only: %s", target,
                         strerror(errno));
    return 0;
}

/* mkdir -p inside the staging root. */
static int make_dirs(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    return mkdir(buf, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* Make host path `name` appear at root/name: a symlink as a symlink, a
 * directory or file as a read-only bind.  A missing one is skipped. */
static int expose_host_path(const char *root, const char *name, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(name, &st) < 0)
        return 0;
    char target[PATH_MAX];
    snprintf(target, sizeof target, "%s%s", root, name);
    if (S_ISLNK(st.st_mode)) {
        char link[PATH_MAX];
        ssize_t n = readlink(name, link, sizeof link - 1);
        if (n < 0)
            return 0;
        link[n] = '\0';
        return symlink(link, target) < 0 && errno != EEXIST
                   ? avo_error(err, errlen, AVO_EIO, "sandbox: symlink %s: %s", target,
                               strerror(errno))
                   : 0;
    }
    if (S_ISDIR(st.st_mode)) {
        if (make_dirs(target) < 0)
            return avo_error(err, errlen, AVO_EIO, "sandbox: mkdir %s: %s", target,
                             strerror(errno));
    } else {
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", target);
        *strrchr(parent, '/') = '\0';
        if (make_dirs(parent) < 0)
            return avo_error(err, errlen, AVO_EIO, "sandbox: mkdir %s: %s", parent,
                             strerror(errno));
        int fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            return avo_error(err, errlen, AVO_EIO, "sandbox: create %s: %s", target,
                             strerror(errno));
        close(fd);
    }
    return bind_mount(name, target, 0, err, errlen);
}

/* What every sandboxed process may read: programs, libraries, the dynamic
 * loader's cache, the compiler's alternatives links, /dev/null. */
static const char *const system_paths[] = {
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc/alternatives",
    "/etc/ld.so.cache",
    "/dev/null",
};

/* Open each bind's source (O_PATH) into fds[0 .. o->nbinds), so it stays
 * reachable after a mount hides it or the uid drops.  The process is
 * half set up on failure, so the fds opened so far are left to its _exit. */
static int open_binds(const avo_sandbox_opts *o, int fds[AVO_SANDBOX_MAX_BINDS], char *err,
                      size_t errlen)
{
    if (o->nbinds > AVO_SANDBOX_MAX_BINDS)
        return avo_error(err, errlen, AVO_EINVAL, "sandbox: too many binds");
    for (size_t i = 0; i < o->nbinds; i++)
        if ((fds[i] = open(o->binds[i].source, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
            return avo_error(err, errlen, AVO_EIO, "sandbox: cannot open %s: %s",
                             o->binds[i].source, strerror(errno));
    return 0;
}

/*
 * Build the view in a tmpfs mounted over `stage` and pivot into it; the
 * binds' sources are open at `fds` (opened before the stage could hide one,
 * and before root dropped its uid: a cache under /root), reached again
 * through /proc/self/fd.
 */
static int build_view(const char *stage, const avo_sandbox_opts *o, const int *fds, char *err,
                      size_t errlen)
{
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot make mounts private: %s",
                         strerror(errno));
    int rc;
    if (mount("avo-sandbox", stage, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot mount a tmpfs on %s: %s", stage,
                         strerror(errno));
    char path[PATH_MAX], opts[64];
    snprintf(path, sizeof path, "%s/tmp", stage);
    /* Room for several files of the largest size allowed, so one big
     * output meets its size limit (SIGXFSZ) before /tmp is full. */
    long tmp_mb = o->file_mb > 0 ? 4 * (long)o->file_mb : 64;
    snprintf(opts, sizeof opts, "size=%ldm,mode=1777", tmp_mb);
    if (make_dirs(path) < 0 || mount("avo-tmp", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot mount /tmp: %s", strerror(errno));
    for (size_t i = 0; i < sizeof system_paths / sizeof system_paths[0]; i++)
        if ((rc = expose_host_path(stage, system_paths[i], err, errlen)) < 0)
            return rc;
    for (size_t i = 0; i < o->nbinds; i++) {
        char source[64], target[PATH_MAX];
        snprintf(source, sizeof source, "/proc/self/fd/%d", fds[i]);
        snprintf(target, sizeof target, "%s%s", stage, o->binds[i].target);
        if (make_dirs(target) < 0)
            return avo_error(err, errlen, AVO_EIO, "sandbox: mkdir %s: %s", target,
                             strerror(errno));
        if ((rc = bind_mount(source, target, o->binds[i].writable, err, errlen)) < 0)
            return rc;
    }
    snprintf(path, sizeof path, "%s/.old", stage);
    if (make_dirs(path) < 0 || syscall(SYS_pivot_root, stage, path) < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: pivot_root: %s", strerror(errno));
    if (chdir("/") < 0 || umount2("/.old", MNT_DETACH) < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot detach the host tree: %s",
                         strerror(errno));
    rmdir("/.old");
    if (mount(NULL, "/", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot make / read-only: %s",
                         strerror(errno));
    return 0;
}

/* Drop every capability (bounding, ambient, effective, permitted, inheritable). */
static int drop_capabilities(char *err, size_t errlen)
{
    for (int cap = 0; cap < 64; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            return avo_error(err, errlen, AVO_EIO, "sandbox: cannot drop capability %d: %s", cap,
                             strerror(errno));
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &header, data) < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: capset: %s", strerror(errno));
    return 0;
}

/* The view in a mount namespace of our own, staged on the first of the
 * usual directories that exists; the binds open at `fds` are closed once
 * it stands. */
static int enter_view(const avo_sandbox_opts *o, const int *fds, char *err, size_t errlen)
{
    const char *stages[] = {"/tmp", "/mnt", "/dev/shm"};
    int rc = AVO_EIO;
    for (size_t i = 0; i < 3 && rc < 0; i++) {
        struct stat st;
        if (stat(stages[i], &st) == 0 && S_ISDIR(st.st_mode))
            rc = build_view(stages[i], o, fds, err, errlen);
    }
    for (size_t i = 0; rc == 0 && i < o->nbinds; i++)
        close(fds[i]);
    return rc;
}

/* What is said when namespaces are refused; the remedy is the caller's
 * (avo_sandbox_choose and avo doctor say how to enable them). */
static int unshare_failed(char *err, size_t errlen)
{
    return avo_error(err, errlen, AVO_EIO, "unsharing namespaces failed: %s", strerror(errno));
}

/* Every id of the process set to the sandbox's uid (its lease, else
 * avo_sandbox_uid), which clears every capability of a root-started process. */
static int drop_root(const avo_sandbox_opts *o, char *err, size_t errlen)
{
    uid_t id = o->uid ? o->uid : avo_sandbox_uid();
    if (setgroups(0, NULL) < 0 || setresgid(id, id, id) < 0 || setresuid(id, id, id) < 0)
        return avo_error(err, errlen, AVO_EIO,
                         "cannot drop root to uid %u for the kernel: %s "
                         "(AVO_SANDBOX_UID picks another)",
                         (unsigned)id, strerror(errno));
    return 0;
}

/*
 * Root: mount, network and IPC namespaces and the view, built with root's
 * rights (it reaches a cache under /root), then every id dropped to the
 * sandbox uid.
 */
static int enter_as_root(const avo_sandbox_opts *o, char *err, size_t errlen)
{
    if (unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC) < 0)
        return unshare_failed(err, errlen);
    int fds[AVO_SANDBOX_MAX_BINDS];
    int rc = open_binds(o, fds, err, errlen);
    if (rc == 0)
        rc = enter_view(o, fds, err, errlen);
    return rc < 0 ? rc : drop_root(o, err, errlen);
}

/* A user namespace of our own that maps only our uid and gid, with the
 * mount, network and IPC namespaces inside it. */
static int enter_user_namespace(char *err, size_t errlen)
{
    uid_t uid = getuid();
    gid_t gid = getgid();
    /* A non-dumpable process (a parent's choice, or a uid just dropped)
     * leaves /proc/self, and uid_map with it, to root. */
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC) < 0)
        return unshare_failed(err, errlen);
    char map[64];
    int rc = write_proc("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    if (rc == 0)
        rc = write_proc("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    if (rc == 0)
        rc = write_proc("/proc/self/gid_map", map);
    if (rc < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot map ids: %s", strerror(-rc));
    return 0;
}

/* Anyone else: the namespaces in a user namespace of our own, the view
 * inside it (the binds opened there: a bind's source must lie in the mount
 * namespace that binds it), then no capabilities left. */
static int enter_unprivileged(const avo_sandbox_opts *o, char *err, size_t errlen)
{
    int fds[AVO_SANDBOX_MAX_BINDS];
    int rc = enter_user_namespace(err, errlen);
    if (rc == 0)
        rc = open_binds(o, fds, err, errlen);
    if (rc == 0)
        rc = enter_view(o, fds, err, errlen);
    return rc < 0 ? rc : drop_capabilities(err, errlen);
}

/* A helper forked before the unshare: still root of the outer user
 * namespace (CAP_SETUID there), it maps uid and gid `id` of process `pid`'s
 * new user namespace to `id` outside once told to ("u" on `go`), and
 * answers "+" or "-" on `done`. */
static void map_ids_helper(pid_t pid, uid_t id, int go, int done)
{
    char c = 0, path[64], map[64];
    int rc = read(go, &c, 1) == 1 && c == 'u' ? 0 : -1;
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)id, (unsigned)id);
    snprintf(path, sizeof path, "/proc/%ld/uid_map", (long)pid);
    if (rc == 0)
        rc = write_proc(path, map);
    snprintf(path, sizeof path, "/proc/%ld/gid_map", (long)pid);
    if (rc == 0)
        rc = write_proc(path, map);
    _exit(write(done, rc == 0 ? "+" : "-", 1) == 1 ? 0 : 1);
}

/*
 * Root without the right to mount (a rootful container under its runtime's
 * default seccomp profile and capabilities): a user namespace of its own,
 * in which only the sandbox's uid exists (mapped to itself by a helper that
 * stays root outside), the other namespaces and the view built inside it
 * with root's file rights (the binds' sources are opened there: a cache
 * under /root stays reachable), then every id dropped to the sandbox's uid
 * and every capability dropped.
 */
static int enter_root_in_user_namespace(const avo_sandbox_opts *o, char *err, size_t errlen)
{
    uid_t id = o->uid ? o->uid : avo_sandbox_uid();
    int go[2], done[2];
    if (pipe2(go, O_CLOEXEC) < 0)
        return avo_error(err, errlen, AVO_EIO, "pipe: %s", strerror(errno));
    if (pipe2(done, O_CLOEXEC) < 0)
        return avo_error(err, errlen, AVO_EIO, "pipe: %s", strerror(errno));
    pid_t self = getpid();
    /* outside the supervisor: the uid-map helper stays root outside the namespace; reaped here */
    pid_t helper = fork();
    if (helper < 0)
        return avo_error(err, errlen, AVO_ECHILD, "fork: %s", strerror(errno));
    if (helper == 0)
        map_ids_helper(self, id, go[0], done[1]);
    int rc = unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC);
    int e = errno;
    char answer = 0;
    if (write(go[1], rc == 0 ? "u" : "x", 1) != 1 || read(done[0], &answer, 1) != 1)
        answer = 0;
    while (waitpid(helper, NULL, 0) < 0 && errno == EINTR)
        ;
    close(go[0]), close(go[1]), close(done[0]), close(done[1]);
    errno = e;
    if (rc < 0)
        return unshare_failed(err, errlen);
    if (answer != '+')
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot map uid %u into a user namespace",
                         (unsigned)id);
    int fds[AVO_SANDBOX_MAX_BINDS];
    rc = open_binds(o, fds, err, errlen);
    /* Files the view creates need an owner this namespace maps. */
    if (rc == 0 && (setfsgid(id), setfsuid(id), (uid_t)setfsuid((uid_t)-1) != id))
        rc = avo_error(err, errlen, AVO_EIO, "sandbox: cannot take uid %u for the view",
                       (unsigned)id);
    if (rc == 0)
        rc = enter_view(o, fds, err, errlen);
    if (rc == 0)
        rc = drop_root(o, err, errlen);
    return rc < 0 ? rc : drop_capabilities(err, errlen);
}

/* ------------------------------------------------------------ landlock */

/* Newer than some <linux/landlock.h> still in use (Debian 12 has ABI 2). */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* struct landlock_ruleset_attr as of ABI 6; the kernel is told how much of
 * it the ABI it offers knows. */
typedef struct landlock_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
} landlock_attr;

#define LL_READ                                                                                    \
    (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_FILE_ONLY                                                                               \
    (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |   \
     LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* The Landlock ABI of the running kernel, or a negative errno. */
static int landlock_abi(void)
{
    long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return v < 0 ? -errno : (int)v;
}

/* Every filesystem right the kernel's ABI knows: handled, so denied unless
 * a rule grants it. */
static uint64_t landlock_fs_rights(int abi)
{
    uint64_t all = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1 */
    if (abi >= 2)
        all |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        all |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5)
        all |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return all;
}

/* Allow `rights` beneath the file or directory open at `fd` (a file gets
 * only the rights a file can have). */
static int landlock_allow(int ruleset, int fd, uint64_t rights, uint64_t handled)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode))
        rights &= LL_FILE_ONLY;
    struct landlock_path_beneath_attr rule = {.allowed_access = rights & handled, .parent_fd = fd};
    return syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) < 0
               ? -errno
               : 0;
}

/*
 * Restrict this process and its children to the system directories (read
 * and execute), /dev/null (read and write) and the binds (open at
 * `bind_fds`, writable ones writable); where the ABI allows, no TCP and no
 * signals or abstract sockets beyond the process's own domain.  Needs
 * no_new_privs (set by the caller) or CAP_SYS_ADMIN.
 */
static int landlock_restrict(const avo_sandbox_opts *o, const int *bind_fds, char *err,
                             size_t errlen)
{
    int abi = landlock_abi();
    if (abi < 1)
        return avo_error(err, errlen, AVO_EIO, "sandbox: Landlock is unavailable: %s",
                         strerror(-abi));
    landlock_attr attr = {.handled_access_fs = landlock_fs_rights(abi)};
    size_t size = sizeof attr.handled_access_fs;
    if (abi >= 4) {
        attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
        size += sizeof attr.handled_access_net;
    }
    if (abi >= 6) {
        attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
        size += sizeof attr.scoped;
    }
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot create a Landlock ruleset: %s",
                         strerror(errno));
    int rc = 0;
    const char *failed = NULL;
    for (size_t i = 0; rc == 0 && i < sizeof system_paths / sizeof system_paths[0]; i++) {
        int fd = open(system_paths[i], O_PATH | O_CLOEXEC);
        if (fd < 0)
            continue; /* not on this machine */
        uint64_t rights = LL_READ;
        if (!strcmp(system_paths[i], "/dev/null"))
            rights |= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
        rc = landlock_allow(ruleset, fd, rights, attr.handled_access_fs);
        failed = system_paths[i];
        close(fd);
    }
    for (size_t i = 0; rc == 0 && i < o->nbinds; i++) {
        rc = landlock_allow(ruleset, bind_fds[i], o->binds[i].writable ? ~0ULL : LL_READ,
                            attr.handled_access_fs);
        failed = o->binds[i].source;
    }
    if (rc < 0) {
        close(ruleset);
        return avo_error(err, errlen, AVO_EIO, "sandbox: Landlock rule for %s: %s", failed,
                         strerror(-rc));
    }
    rc = (int)syscall(SYS_landlock_restrict_self, ruleset, 0);
    int e = errno;
    close(ruleset);
    if (rc < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot enforce the Landlock ruleset: %s",
                         strerror(e));
    return 0;
}

/* The bind whose target holds view path `path`, with `ret_rest` the part of
 * `path` below the target ("" for the target itself); -1 if none. */
static int bind_holding(const avo_sandbox_opts *o, const char *path, const char **ret_rest)
{
    for (size_t i = 0; i < o->nbinds; i++) {
        size_t n = strlen(o->binds[i].target);
        if (strncmp(path, o->binds[i].target, n) == 0 && (path[n] == '\0' || path[n] == '/')) {
            *ret_rest = path[n] == '/' ? path + n + 1 : path + n;
            return (int)i;
        }
    }
    return -1;
}

/*
 * The mechanisms without a mount namespace (landlock, unisolated): the
 * binds are reached where they are on the host, opened here before root
 * drops to the sandbox uid (a cache under /root stays reachable through the
 * open directory), and chdir_to is resolved through them.  Landlock then
 * confines the filesystem; unisolated leaves it as the uid can see it.
 * `ret_cwd_writable` tells whether the working directory is a writable bind.
 */
static int enter_without_view(const avo_sandbox_opts *o, avo_sandbox_mechanism m, int root_started,
                              int *ret_cwd_writable, char *err, size_t errlen)
{
    int fds[AVO_SANDBOX_MAX_BINDS];
    int rc = open_binds(o, fds, err, errlen);
    if (rc < 0)
        return rc;
    rc = root_started ? drop_root(o, err, errlen) : 0;
    if (rc < 0)
        return rc;
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (m == AVO_SANDBOX_LANDLOCK && (rc = landlock_restrict(o, fds, err, errlen)) < 0)
        return rc;
    *ret_cwd_writable = 0;
    const char *rest = NULL;
    int b = o->chdir_to ? bind_holding(o, o->chdir_to, &rest) : -1;
    if (b >= 0) {
        if (fchdir(fds[b]) < 0 || (*rest && chdir(rest) < 0))
            return avo_error(err, errlen, AVO_EIO, "sandbox: cannot enter %s (%s): %s", o->chdir_to,
                             o->binds[b].source, strerror(errno));
        *ret_cwd_writable = o->binds[b].writable;
    } else if (chdir(o->chdir_to ? o->chdir_to : "/") < 0) {
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot enter %s: %s",
                         o->chdir_to ? o->chdir_to : "/", strerror(errno));
    }
    for (size_t i = 0; i < o->nbinds; i++)
        close(fds[i]);
    return 0;
}

/* ------------------------------------------------------ choosing a mechanism */

static const char *const mechanism_names[AVO_SANDBOX_NMECHANISMS] = {"namespaces", "landlock",
                                                                     "unisolated"};

const char *avo_sandbox_mechanism_name(avo_sandbox_mechanism m)
{
    return (unsigned)m < AVO_SANDBOX_NMECHANISMS ? mechanism_names[m] : "?";
}

/* How to get each mechanism where it is missing. */
static const char *const mechanism_remedies[AVO_SANDBOX_NMECHANISMS] = {
    "allow unprivileged user namespaces (sysctl user.max_user_namespaces=15000, "
    "kernel.unprivileged_userns_clone=1, kernel.apparmor_restrict_unprivileged_userns=0), "
    "or start avo as root outside a chroot; in a container: docker/podman run "
    "--security-opt seccomp=unconfined (or --cap-add SYS_ADMIN), not in a plain chroot",
    "a kernel with Landlock enabled (Linux >= 5.13, CONFIG_SECURITY_LANDLOCK=y, 'landlock' "
    "in the lsm= boot parameter); a container runtime whose seccomp profile allows the "
    "landlock_* system calls",
    "nothing: it is always there",
};

const char *avo_sandbox_remedy(avo_sandbox_mechanism m)
{
    return (unsigned)m < AVO_SANDBOX_NMECHANISMS ? mechanism_remedies[m] : "";
}

int avo_sandbox_choose(const char *setting, const int available[AVO_SANDBOX_NMECHANISMS],
                       const char *const why[AVO_SANDBOX_NMECHANISMS], avo_sandbox_mechanism *ret,
                       char *err, size_t errlen)
{
    int weak = 0;
    if (setting && *setting && strcmp(setting, "auto") != 0) {
        weak = !strcmp(setting, "weak");
        for (int m = 0; !weak && m < AVO_SANDBOX_NMECHANISMS; m++) {
            if (strcmp(setting, mechanism_names[m]) != 0)
                continue;
            if (!available[m])
                return avo_error(err, errlen, AVO_EINVAL,
                                 "AVO_SANDBOX=%s, but this machine does not offer it: %s; "
                                 "to enable it: %s; unset AVO_SANDBOX to use the strongest "
                                 "mechanism available",
                                 setting, why[m] ? why[m] : "unavailable", mechanism_remedies[m]);
            *ret = (avo_sandbox_mechanism)m;
            return 0;
        }
        if (!weak)
            return avo_error(err, errlen, AVO_EINVAL,
                             "AVO_SANDBOX=%s is not a sandbox mechanism (namespaces, landlock, "
                             "unisolated, or auto)",
                             setting);
    }
    for (int m = 0; m < AVO_SANDBOX_UNISOLATED; m++)
        if (available[m]) {
            *ret = (avo_sandbox_mechanism)m;
            return 0;
        }
    if (weak) {
        *ret = AVO_SANDBOX_UNISOLATED;
        return 0;
    }
    return avo_error(err, errlen, AVO_EIO,
                     "refusing to run untrusted kernels: nothing on this machine isolates "
                     "their filesystem (namespaces: %s; landlock: %s). Enable one: %s; or %s. "
                     "AVO_SANDBOX=unisolated runs kernels anyway, as a uid of their own (root "
                     "only) under seccomp and rlimits, able to read what that uid can read",
                     why[AVO_SANDBOX_NAMESPACES] ? why[AVO_SANDBOX_NAMESPACES] : "unavailable",
                     why[AVO_SANDBOX_LANDLOCK] ? why[AVO_SANDBOX_LANDLOCK] : "unavailable",
                     mechanism_remedies[AVO_SANDBOX_NAMESPACES],
                     mechanism_remedies[AVO_SANDBOX_LANDLOCK]);
}

/* How this process builds the namespace view. */
typedef enum view_way {
    VIEW_UNPRIVILEGED,   /* not root: a user namespace of our own */
    VIEW_AS_ROOT,        /* root with the right to mount */
    VIEW_ROOT_IN_USERNS, /* root without it: the sandbox uid's user namespace */
} view_way;

static int enter_namespaces(view_way way, const avo_sandbox_opts *o, char *err, size_t errlen)
{
    switch (way) {
    case VIEW_AS_ROOT:
        return enter_as_root(o, err, errlen);
    case VIEW_ROOT_IN_USERNS:
        return enter_root_in_user_namespace(o, err, errlen);
    default:
        return enter_unprivileged(o, err, errlen);
    }
}

/* What this process learned about the machine, once. */
static struct {
    int done;
    int available[AVO_SANDBOX_NMECHANISMS];
    char why[AVO_SANDBOX_NMECHANISMS][AVO_ERRLEN];
    view_way way;
} probe;

/* Try the namespace view the `way` avo_sandbox_enter would build it, in a
 * throwaway child running as `uid` (root's ways: the sandbox's first uid).
 * The child answers on a pipe ("+", or "-" and why), so the answer holds
 * even where someone else reaps the child.  Returns 1 if the view works,
 * else 0 with `why` filled. */
static int probe_view(view_way way, uid_t uid, char *why, size_t len)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0) {
        snprintf(why, len, "pipe: %s", strerror(errno));
        return 0;
    }
    pid_t pid = avo_supervise_fork(0);
    if (pid == 0) {
        close(pipefd[0]);
        char err[AVO_ERRLEN] = "-";
        avo_sandbox_opts none = {.profile = AVO_SANDBOX_COMPILER, .uid = uid};
        int rc = enter_namespaces(way, &none, err + 1, sizeof err - 1);
        const char *answer = rc < 0 ? err : "+";
        _exit(write(pipefd[1], answer, strlen(answer)) < 0 ? 2 : 0);
    }
    close(pipefd[1]);
    char answer[AVO_ERRLEN + 1] = "";
    size_t got = 0;
    if (pid < 0) {
        snprintf(answer, sizeof answer, "-fork: %s", strerror(errno));
    } else {
        ssize_t n;
        while (got < sizeof answer - 1 &&
               ((n = read(pipefd[0], answer + got, sizeof answer - 1 - got)) > 0 ||
                (n < 0 && errno == EINTR)))
            got += n > 0 ? (size_t)n : 0;
        answer[got] = '\0';
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    close(pipefd[0]);
    if (answer[0] == '+')
        return 1;
    snprintf(why, len, "%s", answer[0] == '-' ? answer + 1 : "the probe died without an answer");
    return 0;
}

/* The namespace view, the way this process may build it (in a chroot "/"
 * cannot be made private and user namespaces are refused; under a
 * container's seccomp profile unshare may be refused, or root lacks
 * CAP_SYS_ADMIN but may still make a user namespace of the sandbox's uid).
 * Sets probe.way.  Returns 1 if the view works, else 0 with `why` filled. */
static int probe_namespaces(char *why, size_t len)
{
    if (access("/proc/self/fd", X_OK) < 0) {
        snprintf(why, len,
                 "/proc is not mounted (the view reaches its binds through /proc/self/fd; "
                 "mount -t proc proc /proc)");
        return 0;
    }
    if (geteuid() != 0) {
        probe.way = VIEW_UNPRIVILEGED;
        return probe_view(VIEW_UNPRIVILEGED, 0, why, len);
    }
    avo_sandbox_uid_plan plan;
    char err[AVO_ERRLEN], as_root[AVO_ERRLEN], in_userns[AVO_ERRLEN];
    uid_t uid = avo_sandbox_uids(&plan, err, sizeof err) == 0 ? (uid_t)plan.base : 0;
    probe.way = VIEW_AS_ROOT;
    if (probe_view(VIEW_AS_ROOT, uid, as_root, sizeof as_root))
        return 1;
    probe.way = VIEW_ROOT_IN_USERNS;
    if (probe_view(VIEW_ROOT_IN_USERNS, uid, in_userns, sizeof in_userns))
        return 1;
    probe.way = VIEW_AS_ROOT;
    snprintf(why, len, "%.400s (as root); in a user namespace of the sandbox's uid %u: %.400s",
             as_root, (unsigned)(uid ? uid : avo_sandbox_uid()), in_userns);
    return 0;
}

/* Landlock: the kernel's ABI; 0 with `why` filled where it is missing. */
static int probe_landlock(char *why, size_t len)
{
    int abi = landlock_abi();
    if (abi >= 1)
        return 1;
    if (abi == -ENOSYS)
        snprintf(why, len,
                 "the kernel has no Landlock system calls (or a seccomp profile "
                 "refuses them)");
    else if (abi == -EOPNOTSUPP)
        snprintf(why, len, "Landlock is built into the kernel but disabled at boot");
    else
        snprintf(why, len, "Landlock is refused: %s", strerror(-abi));
    return 0;
}

static void probe_machine(void)
{
    if (probe.done)
        return;
    probe.available[AVO_SANDBOX_NAMESPACES] =
        probe_namespaces(probe.why[AVO_SANDBOX_NAMESPACES], sizeof probe.why[0]);
    probe.available[AVO_SANDBOX_LANDLOCK] =
        probe_landlock(probe.why[AVO_SANDBOX_LANDLOCK], sizeof probe.why[0]);
    probe.available[AVO_SANDBOX_UNISOLATED] = 1;
    probe.done = 1;
}

const char *avo_sandbox_view_way(void)
{
    probe_machine();
    switch (probe.way) {
    case VIEW_AS_ROOT:
        return "root builds each sandbox's view, then drops to the sandbox's uid";
    case VIEW_ROOT_IN_USERNS:
        return "root may not mount here: each sandbox builds its view in a user namespace "
               "where only its uid exists, then drops to that uid";
    default:
        return "each sandbox builds its view in a user namespace of your own";
    }
}

const char *avo_sandbox_unavailable(avo_sandbox_mechanism m)
{
    probe_machine();
    return (unsigned)m < AVO_SANDBOX_NMECHANISMS && !probe.available[m] ? probe.why[m] : NULL;
}

int avo_sandbox_select(avo_sandbox_mechanism *ret, char *err, size_t errlen)
{
    probe_machine();
    const char *why[AVO_SANDBOX_NMECHANISMS];
    for (int m = 0; m < AVO_SANDBOX_NMECHANISMS; m++)
        why[m] = probe.available[m] ? NULL : probe.why[m];
    return avo_sandbox_choose(getenv("AVO_SANDBOX"), probe.available, why, ret, err, errlen);
}

static void set_limit(int resource, rlim_t value)
{
    struct rlimit lim = {value, value};
    setrlimit(resource, &lim);
}

/* Tasks (threads included, as RLIMIT_NPROC counts them) whose real uid is
 * `uid`, read from /proc with system calls alone (we are a forked child);
 * -1 where /proc cannot be read. */
static long uid_tasks(uid_t uid)
{
    int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (proc < 0)
        return -1;
    long total = 0;
    char dents[8192];
    long n;
    while ((n = syscall(SYS_getdents64, proc, dents, sizeof dents)) > 0) {
        for (long off = 0; off < n;) {
            struct {
                uint64_t ino;
                int64_t off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *d = (void *)(dents + off);
            off += d->reclen;
            if (d->name[0] < '1' || d->name[0] > '9')
                continue;
            char path[64], status[4096];
            snprintf(path, sizeof path, "%s/status", d->name);
            int fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue; /* gone since */
            ssize_t len = read(fd, status, sizeof status - 1);
            close(fd);
            if (len <= 0)
                continue;
            status[len] = '\0';
            const char *u = strstr(status, "\nUid:\t"), *t = strstr(status, "\nThreads:\t");
            if (u && t && strtoul(u + 6, NULL, 10) == uid)
                total += strtol(t + 10, NULL, 10);
        }
    }
    close(proc);
    return n < 0 ? -1 : total;
}

/* `shared_tasks`: where the sandbox keeps the caller's uid outside a user
 * namespace (landlock or unisolated, not started by root), the tasks that
 * uid has already (the user's shell, editor, this run's own workers and
 * compilers): its process limit counts them all, so ours comes on top;
 * -1 where they cannot be counted (the inherited limit stays). 0 elsewhere. */
static void apply_limits(const avo_sandbox_opts *o, int root_started, long shared_tasks)
{
    if (o->cpu_s > 0) {
        rlim_t cpu = (rlim_t)o->cpu_s + 1;
        struct rlimit lim = {cpu, cpu + 1}; /* SIGXCPU, then SIGKILL a second later */
        setrlimit(RLIMIT_CPU, &lim);
    }
    if (o->file_mb > 0)
        set_limit(RLIMIT_FSIZE, (rlim_t)(o->file_mb * 1024.0 * 1024.0));
    if (o->nofile > 0)
        set_limit(RLIMIT_NOFILE, (rlim_t)o->nofile);
    /* Counted per uid: in a user namespace of our own, our processes; as the
     * sandbox uid of root, every sandboxed process of the machine; as the
     * caller's uid outside a namespace, all of the caller's (shared_tasks). */
    int nproc = o->profile == AVO_SANDBOX_CANDIDATE ? (o->threads > 1 ? o->threads + 1 : 1)
                                                    : (o->nproc > 0 ? o->nproc : 32);
    const char *fixed = getenv("AVO_SANDBOX_UID");
    if (root_started && nproc > 1 && (!o->uid || (fixed && *fixed) || uid_shared))
        nproc += 1024; /* a uid shared by every sandbox of the machine */
    if (nproc > 1 && shared_tasks > 0)
        nproc += (int)shared_tasks - 1; /* ourselves among them */
    if (nproc == 1 || shared_tasks >= 0)
        set_limit(RLIMIT_NPROC, (rlim_t)nproc);
    set_limit(RLIMIT_CORE, 0);
}

/* `tmp`: the private /tmp of the view, or "." where the working directory
 * stands in for it; NULL where the process has no writable directory. */
static void minimal_environment(const char *tmp)
{
    clearenv();
    setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
    setenv("HOME", tmp ? tmp : "/nonexistent", 1);
    if (tmp)
        setenv("TMPDIR", tmp, 1);
    setenv("LC_ALL", "C", 1);
}

/* ---------------------------------------------------------------- seccomp */

#if AVO_HAVE_SECCOMP
/* Never needed by anything avo runs: debugging or reading other processes,
 * reconfiguring the system, kernel attack surface. */
static const char *const denied_always[] = {"ptrace",
                                            "process_vm_readv",
                                            "process_vm_writev",
                                            "kexec_load",
                                            "kexec_file_load",
                                            "init_module",
                                            "finit_module",
                                            "delete_module",
                                            "bpf",
                                            "perf_event_open",
                                            "add_key",
                                            "request_key",
                                            "keyctl",
                                            "userfaultfd",
                                            "io_uring_setup",
                                            "io_uring_enter",
                                            "io_uring_register",
                                            "pidfd_getfd",
                                            "reboot",
                                            "swapon",
                                            "swapoff",
                                            "acct",
                                            "quotactl",
                                            "open_by_handle_at",
                                            "name_to_handle_at",
                                            "syslog",
                                            NULL};

/* Once isolated, nothing may change its view or namespaces again. */
static const char *const denied_isolated[] = {
    "mount",     "umount2",    "pivot_root", "chroot",   "unshare", "setns",  "mount_setattr",
    "open_tree", "move_mount", "fsopen",     "fsconfig", "fsmount", "fspick", NULL};

static const char *const denied_network[] = {"socket", "socketpair", "connect", "bind",
                                             "listen", "accept",     "accept4", NULL};

static const char *const denied_exec[] = {"execve", "execveat", "fork", "vfork", NULL};

static int deny_list(scmp_filter_ctx ctx, const char *const *names)
{
    for (size_t i = 0; names[i]; i++) {
        int nr = seccomp_syscall_resolve_name(names[i]);
        if (nr == __NR_SCMP_ERROR)
            continue; /* not on this architecture or libseccomp */
        int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* clone(2) for new processes, and also for threads unless allowed; clone3
 * fails with ENOSYS so glibc falls back to clone for threads. */
static int deny_clone(scmp_filter_ctx ctx, int threads_allowed)
{
    int rc;
    if (threads_allowed) {
        const struct scmp_arg_cmp no_thread = {
            .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = CLONE_THREAD, .datum_b = 0};
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, no_thread);
    } else {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 0);
    }
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    return rc;
}

/* `nr` with argument `arg` (an int as the kernel reads it: the low 32 bits)
 * equal to `value`. */
static int deny_arg(scmp_filter_ctx ctx, int nr, unsigned arg, scmp_datum_t value)
{
    const struct scmp_arg_cmp eq = {
        .arg = arg, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffu, .datum_b = value};
    return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, eq);
}

/* Signals only to itself, and never SIGKILL or SIGTERM: a candidate that
 * dies by one of those did not send it (the judge retries such a death
 * once, eval/cpu/cpu.c), so it cannot buy itself a second try.  Nor may it
 * have a message queue signal it (mq_notify takes any signal number) or
 * set a limit whose end is SIGKILL. */
static int deny_foreign_signals(scmp_filter_ctx ctx)
{
    static const int calls[] = {SCMP_SYS(kill), SCMP_SYS(tkill), SCMP_SYS(tgkill),
                                SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo)};
    /* the argument that holds the signal number, per call above */
    static const unsigned sig_arg[] = {1, 1, 2, 1, 2};
    static const int fatal[] = {SIGKILL, SIGTERM};
    const struct scmp_arg_cmp not_self = {
        .arg = 0, .op = SCMP_CMP_NE, .datum_a = (scmp_datum_t)getpid(), .datum_b = 0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof calls / sizeof calls[0]; i++) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), calls[i], 1, not_self);
        for (size_t k = 0; rc == 0 && k < sizeof fatal / sizeof fatal[0]; k++)
            rc = deny_arg(ctx, calls[i], sig_arg[i], (scmp_datum_t)fatal[k]);
    }
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mq_notify), 0);
    /* A CPU-time (or real-time) limit of its own would end it by SIGKILL
     * too: such limits may be read, never set. */
    static const int kill_limits[] = {RLIMIT_CPU, RLIMIT_RTTIME};
    for (size_t k = 0; rc == 0 && k < sizeof kill_limits / sizeof kill_limits[0]; k++) {
        const struct scmp_arg_cmp which = {.arg = 1,
                                           .op = SCMP_CMP_MASKED_EQ,
                                           .datum_a = 0xffffffffu,
                                           .datum_b = (scmp_datum_t)kill_limits[k]};
        const struct scmp_arg_cmp setting = {.arg = 2, .op = SCMP_CMP_NE, .datum_a = 0};
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prlimit64), 2, which, setting);
        if (rc == 0)
            rc = deny_arg(ctx, SCMP_SYS(setrlimit), 0, (scmp_datum_t)kill_limits[k]);
    }
    return rc; /* pidfd_send_signal: deny_foreign_processes */
}

/* `nr` unless its argument `arg` (a pid) is exactly 0, "this process". */
static int deny_other_pid(scmp_filter_ctx ctx, int nr, unsigned arg)
{
    const struct scmp_arg_cmp not_self = {.arg = arg, .op = SCMP_CMP_NE, .datum_a = 0};
    return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, not_self);
}

/*
 * Reaching another process by any other route than a signal (those:
 * deny_foreign_signals): making it the owner of an fd's SIGIO (fcntl
 * F_SETOWN, F_SETOWN_EX, F_SETSIG, O_ASYNC, ioctl FIOSETOWN/SIOCSPGRP),
 * changing its limits (prlimit64), scheduling, priority or memory policy,
 * comparing or grabbing its fds (kcmp, pidfd_*), reading its robust futex
 * list.  A call about the process itself passes pid 0 (glibc's setrlimit,
 * sched_setaffinity(0, ...)), which stays allowed; priorities and I/O
 * priorities are refused outright (PRIO_USER reaches every process of the
 * uid).  Compilers get it too: they need fork and exec, not these.
 */
static int deny_foreign_processes(scmp_filter_ctx ctx)
{
    static const char *const denied[] = {"kcmp",        "pidfd_open", "pidfd_send_signal", "process_madvise",
                                         "process_mrelease", "setpriority", "ioprio_set",      NULL};
    int rc = deny_list(ctx, (const char *const *)denied);
    static const int owner_cmds[] = {F_SETOWN, F_SETOWN_EX, F_SETSIG};
    for (size_t i = 0; rc == 0 && i < sizeof owner_cmds / sizeof owner_cmds[0]; i++)
        rc = deny_arg(ctx, SCMP_SYS(fcntl), 1, (scmp_datum_t)owner_cmds[i]);
    if (rc == 0) { /* F_SETFL with O_ASYNC */
        const struct scmp_arg_cmp setfl = {
            .arg = 1, .op = SCMP_CMP_MASKED_EQ, .datum_a = 0xffffffffu, .datum_b = F_SETFL};
        const struct scmp_arg_cmp async = {
            .arg = 2, .op = SCMP_CMP_MASKED_EQ, .datum_a = O_ASYNC, .datum_b = O_ASYNC};
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fcntl), 2, setfl, async);
    }
    static const unsigned long owner_ioctls[] = {FIOSETOWN, SIOCSPGRP, FIOASYNC};
    for (size_t i = 0; rc == 0 && i < sizeof owner_ioctls / sizeof owner_ioctls[0]; i++)
        rc = deny_arg(ctx, SCMP_SYS(ioctl), 1, (scmp_datum_t)owner_ioctls[i]);
    static const int by_pid[] = {SCMP_SYS(prlimit64),          SCMP_SYS(sched_setaffinity),
                                 SCMP_SYS(sched_setscheduler), SCMP_SYS(sched_setparam),
                                 SCMP_SYS(sched_setattr),      SCMP_SYS(migrate_pages),
                                 SCMP_SYS(move_pages),         SCMP_SYS(get_robust_list)};
    for (size_t i = 0; rc == 0 && i < sizeof by_pid / sizeof by_pid[0]; i++)
        rc = deny_other_pid(ctx, by_pid[i], 0);
    return rc;
}

/* Stay in the judge's process group and die with it. */
static int deny_detach(scmp_filter_ctx ctx)
{
    const struct scmp_arg_cmp pdeathsig = {
        .arg = 0, .op = SCMP_CMP_EQ, .datum_a = PR_SET_PDEATHSIG, .datum_b = 0};
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setsid), 0);
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setpgid), 0);
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prctl), 1, pdeathsig);
    return rc;
}

/* No timer that signals: a candidate stopped after answering a call must
 * stay stopped until the judge's next command, not wake itself (SIGCONT or
 * any handled signal from its own timer) to work off the clock.  timerfd
 * only makes an fd readable, which wakes no stopped process. */
static int deny_timers(scmp_filter_ctx ctx)
{
    static const char *const timers[] = {"timer_create", "setitimer", "alarm", NULL};
    return deny_list(ctx, timers);
}

static int load_filter(scmp_filter_ctx ctx, int rc, char *err, size_t errlen)
{
    if (rc == 0)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc < 0)
        return avo_error(err, errlen, AVO_EIO,
                         "cannot install the seccomp filter (%s); build with -Dseccomp=disabled "
                         "to run kernels without it",
                         strerror(-rc));
    return 0;
}

static int sandbox_seccomp(const avo_sandbox_opts *o, char *err, size_t errlen)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return avo_error(err, errlen, AVO_ENOMEM, "seccomp_init failed");
    int rc = deny_list(ctx, denied_always);
    if (rc == 0)
        rc = deny_list(ctx, denied_isolated);
    if (rc == 0)
        rc = deny_list(ctx, denied_network);
    if (rc == 0)
        rc = deny_foreign_processes(ctx);
    if (rc == 0 && o->profile == AVO_SANDBOX_CANDIDATE) {
        rc = deny_list(ctx, denied_exec);
        if (rc == 0)
            rc = deny_clone(ctx, o->threads > 1);
        if (rc == 0)
            rc = deny_foreign_signals(ctx);
        if (rc == 0)
            rc = deny_detach(ctx);
        if (rc == 0)
            rc = deny_timers(ctx);
    }
    return load_filter(ctx, rc, err, errlen);
}
#endif

int avo_sandbox_seccomp_trusted(int no_exec, char *err, size_t errlen)
{
#if AVO_HAVE_SECCOMP
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return avo_error(err, errlen, AVO_ENOMEM, "seccomp_init failed");
    int rc = deny_list(ctx, denied_always);
    if (rc == 0 && no_exec) {
        rc = deny_list(ctx, denied_exec);
        if (rc == 0)
            rc = deny_list(ctx, denied_isolated);
        if (rc == 0)
            rc = deny_list(ctx, denied_network);
        if (rc == 0)
            rc = deny_clone(ctx, 0);
    }
    return load_filter(ctx, rc, err, errlen);
#else
    (void)no_exec, (void)err, (void)errlen;
    return 0;
#endif
}

/* ------------------------------------------------------------ the whole */

void avo_sandbox_harden(void)
{
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    set_limit(RLIMIT_CORE, 0);
}

int avo_sandbox_enter(const avo_sandbox_opts *o, char *err, size_t errlen)
{
    avo_sandbox_mechanism m;
    int rc = avo_sandbox_select(&m, err, errlen);
    if (rc < 0)
        return rc;
    int root_started = geteuid() == 0;
    int cwd_writable = 0;
    /* Counted before Landlock hides /proc; only a sandbox that may start
     * tasks at all needs it (one limited to itself stops at any count). */
    long shared_tasks = 0;
    if (m != AVO_SANDBOX_NAMESPACES && !root_started &&
        (o->profile != AVO_SANDBOX_CANDIDATE || o->threads > 1))
        shared_tasks = uid_tasks(getuid());
    if (m == AVO_SANDBOX_NAMESPACES)
        rc = enter_namespaces(probe.way, o, err, errlen);
    else
        rc = enter_without_view(o, m, root_started, &cwd_writable, err, errlen);
    if (rc < 0)
        return rc;
    /* Changing credentials cleared the parent-death signal. */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (m == AVO_SANDBOX_NAMESPACES && o->chdir_to && chdir(o->chdir_to) < 0)
        return avo_error(err, errlen, AVO_EIO, "sandbox: cannot enter %s: %s", o->chdir_to,
                         strerror(errno));
    apply_limits(o, root_started, shared_tasks);
    avo_sandbox_harden();
    minimal_environment(m == AVO_SANDBOX_NAMESPACES ? "/tmp" : cwd_writable ? "." : NULL);
#if AVO_HAVE_SECCOMP
    if ((rc = sandbox_seccomp(o, err, errlen)) < 0)
        return rc;
#endif
    /* Last: nothing of ours allocates after it (under AddressSanitizer,
     * which reserves terabytes of address space, only a compiler about to
     * be exec'd gets the limit). */
    int asan = 0;
#ifdef SANDBOX_UNDER_ASAN
    asan = o->profile == AVO_SANDBOX_CANDIDATE;
#endif
    if (o->memory_mb > 0 && !asan)
        set_limit(RLIMIT_AS, (rlim_t)(o->memory_mb * 1024.0 * 1024.0));
    return 0;
}

/* ------------------------------------------------------------ explaining */

/* The first directory of absolute `path` (the path itself when `whole`)
 * this process cannot enter, named with its mode and owner and what to
 * change, into buf; 0 when every one can be entered. */
static int explain_walk(const char *path, int whole, char *buf, size_t len)
{
    char prefix[PATH_MAX];
    size_t n = strlen(path);
    for (size_t i = 0; i <= n && i < sizeof prefix; i++) {
        int at_end = i == n;
        if (!at_end && path[i] != '/')
            continue;
        if (at_end && !whole)
            break;
        snprintf(prefix, sizeof prefix, "%.*s", i == 0 ? 1 : (int)i, path);
        struct stat st;
        if (access(prefix, X_OK) == 0 || errno != EACCES || stat(prefix, &st) < 0)
            continue;
        snprintf(buf, len,
                 "the sandbox's uid %u cannot %s %s (mode %04o, owner uid %u, gid %u): make it "
                 "%s by every user (chmod o+x %s)%s",
                 (unsigned)getuid(), S_ISDIR(st.st_mode) ? "enter" : "execute", prefix,
                 (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)st.st_gid,
                 S_ISDIR(st.st_mode) ? "searchable" : "executable", prefix,
                 !strcmp(prefix, "/") ? ", as a Debian root made in a directory of mode 0700 "
                                        "(mktemp -d, debootstrap into it) is not"
                                      : "");
        return 1;
    }
    return 0;
}

int avo_sandbox_explain_exec(const char *prog, char *buf, size_t len)
{
    if (strchr(prog, '/'))
        return prog[0] == '/' && explain_walk(prog, 1, buf, len);
    const char *path = getenv("PATH");
    char dirs[4096], file[PATH_MAX];
    snprintf(dirs, sizeof dirs, "%s", path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/')
            continue;
        snprintf(file, sizeof file, "%s/%s", d, prog);
        if (explain_walk(file, 0, buf, len))
            return 1; /* a directory on the way: the program may lie beyond it */
        if (access(file, F_OK) == 0)
            return explain_walk(file, 1, buf, len);
    }
    return 0;
}

/* ------------------------------------------------------------ environment */

/* What a worker may inherit, by exact name: the system's basics, what
 * compilers, sanitizers and the CUDA driver read, and avo's own worker
 * settings (none of them a credential). */
static const char *const env_names[] = {
    "PATH",           "HOME",          "USER",           "LOGNAME",
    "LANG",           "TZ",            "TMPDIR",         "XDG_CACHE_HOME",
    "CC",             "LD_LIBRARY_PATH", "ASAN_OPTIONS", "UBSAN_OPTIONS",
    "LSAN_OPTIONS",   "AVO_SANDBOX",   "AVO_SANDBOX_UID", "AVO_SANDBOX_UID_BASE",
    "AVO_SANDBOX_UID_COUNT", "AVO_SANDBOX_LOCK_DIR", "AVO_CACHE", "AVO_CACHE_MAX_MB",
    "AVO_CUDA_DEVICE", "AVO_NVRTC", "AVO_NVRTC_EXEC", "AVO_CUDA_WHEELS", "AVO_CUBLASLT",
    "AVO_CUDNN", "AVO_DB_TIMEOUT", "AVO_CPU_PIN", NULL};

/* ... and by prefix: locale, CUDA and NVIDIA device settings, Slurm's job
 * description, the settings of the test suite's CUDA doubles (tests/mock,
 * tests/emu), all still subject to the credential words below. */
static const char *const env_prefixes[] = {"LC_",  "CUDA_",     "NVIDIA_", "SLURM_",
                                           "AVO_MOCK_", "AVO_EMU_", NULL};

static const char *const env_secret_words[] = {"KEY",    "TOKEN",      "SECRET", "PASSWORD",
                                               "PASSWD", "CREDENTIAL", "AUTH",   NULL};

int avo_sandbox_env_allowed(const char *entry)
{
    const char *eq = strchr(entry, '=');
    if (!eq)
        return 0;
    size_t name_len = (size_t)(eq - entry);
    for (size_t i = 0; env_names[i]; i++)
        if (strlen(env_names[i]) == name_len && !strncmp(entry, env_names[i], name_len))
            return 1;
    for (size_t i = 0; env_secret_words[i]; i++) {
        size_t w = strlen(env_secret_words[i]);
        for (size_t at = 0; at + w <= name_len; at++)
            if (!strncasecmp(entry + at, env_secret_words[i], w))
                return 0;
    }
    for (size_t i = 0; env_prefixes[i]; i++)
        if (!strncmp(entry, env_prefixes[i], strlen(env_prefixes[i])))
            return 1;
    return 0;
}

char **avo_sandbox_env_allowlist(void)
{
    size_t n = 0;
    for (size_t i = 0; environ && environ[i]; i++)
        n++;
    char **env = calloc(n + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (avo_sandbox_env_allowed(environ[i]))
            env[kept++] = environ[i];
    return env;
}

void avo_sandbox_scrub_environment(void)
{
    size_t kept = 0;
    for (size_t i = 0; environ && environ[i]; i++) {
        if (avo_sandbox_env_allowed(environ[i]))
            environ[kept++] = environ[i];
        else
            explicit_bzero(environ[i], strlen(environ[i]));
    }
    if (environ)
        environ[kept] = NULL;
}

/* Memory to clear in every process that forks off toward a candidate. */
static struct {
    void *p;
    size_t n;
} secrets[4];

void avo_sandbox_register_secret(void *p, size_t n)
{
    for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++)
        if (!secrets[i].p) {
            secrets[i].p = p;
            secrets[i].n = n;
            return;
        }
}

void avo_sandbox_scrub_secrets(void)
{
    for (size_t i = 0; i < sizeof secrets / sizeof secrets[0]; i++)
        if (secrets[i].p)
            explicit_bzero(secrets[i].p, secrets[i].n);
}
