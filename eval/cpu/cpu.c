/*
 * cpu.c — the CPU backend: compile a candidate and its reference with the
 * host C compiler, in a sandbox, into a content-addressed cache of shared
 * objects; then judge the candidate from a process it cannot reach
 * (docs/protocol.md, docs/threat-model.md).
 *
 * Three processes take part in a job:
 *
 *   worker     parses the job, compiles (each compiler run sandboxed, with a
 *              deadline), forks the judge, watches it until its deadline,
 *              and turns what the judge reported, or how it died, into one
 *              result.
 *   judge      trusted: forks the candidate first, then loads the reference,
 *              and config by config fills inputs, runs reference and
 *              candidate, checks and times (eval/judge.c).  It holds the
 *              reference outputs and the report pipe to the worker
 *              (REPORT_FD), framed JSON messages (core/proto.h):
 *                {"progress": name}              entering a config
 *                {"config": {...}}               that config's result entry
 *                {"check": {...}}                a check config's entry
 *                {"done": {"status", "reason"}}  the verdict, always last
 *   candidate  untrusted: an unprivileged process in its own namespaces
 *              (eval/sandbox.h) that loads the kernel and, on each command
 *              from the judge, calls it on argument slots of a shared
 *              memory region.  It holds nothing but that region, the
 *              command and acknowledgement pipes, and its log.
 *
 * The candidate answers each command with the command's nonce + 1, so an
 * acknowledgement written ahead of time or forged is a protocol violation.
 *
 * Cache invariant: cache_dir/<key>.so exists only complete, next to
 * <key>.so.sum holding the git blob id of its bytes; a hit whose bytes do
 * not hash to that id is rebuilt.  Only the worker writes the cache.
 */
#include "avo_config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ffi.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "avo.h"
#include "backend.h"
#include "cpulib.h"
#include "hash.h"
#include "jobspec.h"
#include "judge.h"
#include "measure.h"
#include "proto.h"
#include "sandbox.h"
#include "supervise.h"

#define REPORT_FD 3     /* the judge's report pipe, as seen by the judge */
#define MAX_CC_WORDS 16 /* words in $CC */
#define BASE_FLAGS_N 4
#define GUARD_MIN 64      /* canary bytes at least before each buffer */
#define DATA_ALIGN 64     /* alignment of every buffer handed to a kernel */
#define REGION_MAX_MB 256 /* shared argument slots of one config, at most */
#define COMPILE_MEMORY_MB 2048
#define COMPILE_FILE_MB 32 /* a kernel's object is tens of KiB */
#define CANDIDATE_FILE_MB 64
#define CACHE_MAX_MB 2048 /* default bound of the compile cache (AVO_CACHE_MAX_MB) */

/* The candidate's fixed fds. */
enum { CAND_CMD_FD = 3, CAND_ACK_FD = 4, CAND_REGION_FD = 5, CAND_SO_FD = 6, CAND_SETUP_FD = 7 };

static const char *const base_flags[BASE_FLAGS_N] = {"-O3", "-march=native", "-fPIC", "-shared"};

/* What marks the line of a compiler log that a reason quotes. */
static const char *const cc_error_markers[] = {"error:", "Error:", NULL};

/* How a failed compile is charged (see compile_failure). */
typedef enum compile_fault {
    CC_SOURCE,
    CC_LIMIT_MEMORY,
    CC_LIMIT_FILE,
    CC_ENVIRONMENT
} compile_fault;

/* What the worker saw of the machine around one compile (compile_failure). */
typedef struct compile_facts {
    long oom_kills_before, oom_kills_after; /* /proc/vmstat oom_kill; -1: unknown */
    int dir_full;                           /* the compile directory's filesystem, after */
    int dir_readonly;
} compile_facts;

/* The kernel's count of OOM kills since boot (/proc/vmstat), or -1. */
static long oom_kills(void)
{
    FILE *f = fopen("/proc/vmstat", "re");
    if (!f)
        return -1;
    char name[64];
    long v, found = -1;
    while (fscanf(f, "%63s %ld", name, &v) == 2)
        if (!strcmp(name, "oom_kill")) {
            found = v;
            break;
        }
    fclose(f);
    return found;
}

/* Less than this free on the compile directory's filesystem: full. */
#define COMPILE_DIR_MIN_FREE (1 << 20)

static void compile_dir_state(const char *dir, compile_facts *f)
{
    struct statvfs st;
    if (statvfs(dir, &st) < 0)
        return;
    f->dir_readonly = (st.f_flag & ST_RDONLY) != 0;
    f->dir_full = (double)st.f_bavail * (double)st.f_frsize < COMPILE_DIR_MIN_FREE ||
                  (st.f_files > 0 && st.f_favail == 0);
}

/*
 * Who a failed compile is charged to, from what the worker observed itself
 * and the compiler cannot write: its wait status and resource usage, the
 * state of the compile directory's filesystem, the kernel's OOM-kill count.
 * Never from the compiler's output, which quotes the candidate (`#error No
 * space left on device` is the candidate's compile error).  The sandbox's
 * own limits are the candidate's: a file past its size limit (SIGXFSZ), a
 * failure with the compiler's peak resident size `peak_mb` at a quarter of
 * its address-space limit `limit_mb` or more.  The machine's (an
 * infrastructure fault, retried; one that recurs while the machine passes
 * a control evaluation is charged after all, lua/avo/init.lua): the compile
 * directory's filesystem full or read-only, the compiler killed by a signal
 * avo did not send, an OOM kill anywhere during the compile.  Anything else
 * is the source's.
 */
static compile_fault compile_failure(int status, const compile_facts *f, double peak_mb,
                                     double limit_mb)
{
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ)
        return CC_LIMIT_FILE;
    if (f->dir_full || f->dir_readonly)
        return CC_ENVIRONMENT;
    if (f->oom_kills_before >= 0 && f->oom_kills_after > f->oom_kills_before)
        return CC_ENVIRONMENT;
    if (WIFSIGNALED(status))
        return CC_ENVIRONMENT;
    if (peak_mb >= limit_mb / 4)
        return CC_LIMIT_MEMORY;
    return CC_SOURCE;
}

/* ------------------------------------------------------------------------ */
/* The job, parsed once into C values                                       */

/* The shared part of a job (jobspec.h) and what only this backend reads. */
typedef struct cpu_job {
    avo_jobspec spec;
    const char **cflags; /* borrowed strings, owned array */
    size_t ncflags;
    double compile_memory_mb;
    const char *scratch; /* the candidate's /tmp on the host, where the sandbox has no view */
    /* A library baseline (cpulib.h): the linker flags that make the
     * candidate (its call adapter) need the library; the reference never. */
    const char *link[2];
    char link_file[PATH_MAX + 4];
} cpu_job;

/* Plain C types only; zero-length buffers are fine on the host; the
 * candidate has rlimits, so limits.cpu_s and limits.memory_mb apply. */
static const avo_jobspec_rules cpu_rules = {
    .cache_name = "cpu",
    .last_type = AVO_DT_I64,
    .min_length = 0,
    .max_length = SIZE_MAX / 8 / 2,
    .per_type_tolerance = 0,
    .process_limits = 1,
    .max_trials = 1000,
    .max_samples_cap = 1000000,
    .min_sample_s = 0.001,
    .target_spread = 0.02,
    .max_seconds = 2.0,
    .min_samples = 5,
    .max_samples = 40,
    .timeout_s = 30,
    .compile_timeout_s = 60,
    .cpu_s = 60,
    .memory_mb = 4096,
};

static void cpu_job_free(cpu_job *j)
{
    avo_jobspec_free(&j->spec);
    free(j->cflags);
    memset(j, 0, sizeof *j);
}

/*
 * Fill `j` from `job`, filling in the protocol's defaults.  On failure
 * returns a negative code with a one-line reason in err; `j` must then still
 * be released with cpu_job_free.  `j` borrows strings from `job`, which must
 * outlive it.
 */
static int cpu_job_parse(const json_t *job, cpu_job *j, char *err, size_t errlen)
{
    memset(j, 0, sizeof *j);
    const json_t *cflags = json_object_get(job, "cflags");
    if (cflags && !json_is_null(cflags)) {
        if (!json_is_array(cflags))
            return avo_error(err, errlen, AVO_EINVAL, "\"cflags\" must be a list of strings");
        j->cflags = calloc(json_array_size(cflags) + 1, sizeof *j->cflags);
        if (!j->cflags)
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        for (size_t i = 0; i < json_array_size(cflags); i++) {
            j->cflags[i] = json_string_value(json_array_get(cflags, i));
            if (!j->cflags[i])
                return avo_error(err, errlen, AVO_EINVAL, "\"cflags\" must be a list of strings");
        }
        j->ncflags = json_array_size(cflags);
    }
    if (avo_jobspec_number(json_object_get(job, "limits"), "compile_memory_mb", COMPILE_MEMORY_MB,
                           &j->compile_memory_mb) < 0)
        return avo_error(err, errlen, AVO_EINVAL, "limits.compile_memory_mb must be a number");
    const char *library = json_string_value(json_object_get(json_object_get(job, "library"),
                                                            "file"));
    if (library) {
        snprintf(j->link_file, sizeof j->link_file, "%s%s", library[0] == '/' ? "" : "-l:",
                 library);
        j->link[0] = "-Wl,--no-as-needed"; /* needed although called only through the adapter */
        j->link[1] = j->link_file;
    }
    const json_t *baseline = json_object_get(job, "baseline");
    if (baseline && !json_is_null(baseline))
        return avo_error(err, errlen, AVO_EINVAL,
                         "baseline jobs run on the cuda backend; the cpu backend has no baselines");
    int rc = avo_jobspec_parse(job, &cpu_rules, &j->spec, err, errlen);
    if (rc == 0)
        rc = avo_jobspec_need_sources(&j->spec, !json_is_true(json_object_get(job, "compile_only")),
                                      err, errlen);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Small utilities                                                          */

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -errno;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *data, size_t len)
{
    char *p = data;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -EPIPE;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int write_file(const char *path, const void *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return -errno;
    int rc = write_all(fd, data, len);
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    return rc;
}

/* The whole of a regular file (caller frees); NULL with errno set. */
static char *read_fd_all(int fd, size_t max, size_t *ret_len)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return NULL;
    if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
        errno = EFBIG;
        return NULL;
    }
    char *data = malloc((size_t)st.st_size + 1);
    if (!data)
        return NULL;
    if (pread(fd, data, (size_t)st.st_size, 0) != st.st_size) {
        free(data);
        errno = EIO;
        return NULL;
    }
    *ret_len = (size_t)st.st_size;
    return data;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

/* Remove a directory tree; what cannot be removed is left. */
static void remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static double timeval_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* ------------------------------------------------------------------------ */
/* Compiling                                                                */

/*
 * Run argv (argv[0] found through PATH) with stdin from /dev/null and
 * stdout and stderr captured into `out`, in a process group of its own,
 * until the deadline (then the group is killed).  With `box`, the child
 * enters that sandbox first.  Returns 0 with the supervision result, or a
 * negative AVO_E* code (err filled) if it could not be started: a sandbox
 * or exec failure is reported by our own code in the child on a
 * close-on-exec pipe that the program never holds (so nothing it prints
 * can pass for one), and returned as AVO_EIO with that reason.
 */
static int spawn_capture(char *const argv[], const avo_sandbox_opts *box, double timeout_s,
                         avo_tail *out, avo_supervise_result *ret, char *err, size_t errlen)
{
    int pipefd[2], setup[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return avo_error(err, errlen, AVO_EIO, "pipe: %s", strerror(errno));
    if (pipe2(setup, O_CLOEXEC) < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return avo_error(err, errlen, AVO_EIO, "pipe: %s", strerror(errno));
    }
    double deadline = avo_monotonic() + timeout_s;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(pipefd[0]);
        close(pipefd[1]);
        close(setup[0]);
        close(setup[1]);
        return avo_error(err, errlen, AVO_ECHILD, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        const int status_fd = 3; /* closed by the exec */
        if (setup[1] != status_fd && dup3(setup[1], status_fd, O_CLOEXEC) < 0)
            _exit(127);
        close_range(status_fd + 1, ~0u, 0); /* the engine's pipes are none of its business */
        if (box) {
            char why[AVO_ERRLEN];
            if (avo_sandbox_enter(box, why, sizeof why) < 0) {
                write_all(status_fd, why, strlen(why));
                _exit(127);
            }
        } else {
            struct rlimit cpu = {(rlim_t)ceil(timeout_s) + 1, (rlim_t)ceil(timeout_s) + 2};
            setrlimit(RLIMIT_CPU, &cpu);
            setenv("LC_ALL", "C", 1);
        }
        execvp(argv[0], argv);
        dprintf(status_fd, "cannot run '%s': %s", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here, so the group exists before any kill */
    close(pipefd[1]);
    close(setup[1]);
    fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
    avo_supervise_sink sink = {pipefd[0], avo_tail_drain, out};
    avo_supervise_wait(pid, deadline, &sink, 1, ret);
    close(pipefd[0]);
    /* Closed at the exec: anything in it was written before, by us. */
    char why[AVO_ERRLEN];
    ssize_t n = read(setup[0], why, sizeof why - 1);
    close(setup[0]);
    if (n > 0) {
        why[n] = '\0';
        return avo_error(err, errlen, AVO_EIO, "%s", why);
    }
    return 0;
}

/* $CC split into words (default "cc"); `storage` receives the copy. */
static size_t compiler_words(char *storage, size_t len, char *words[MAX_CC_WORDS])
{
    const char *cc = getenv("CC");
    snprintf(storage, len, "%s", cc && *cc ? cc : "cc");
    size_t n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(storage, " \t", &save); tok && n < MAX_CC_WORDS - 1;
         tok = strtok_r(NULL, " \t", &save))
        words[n++] = tok;
    if (n == 0)
        words[n++] = "cc";
    return n;
}

/*
 * First line of `$CC --version`, computed once per process.  Returns a
 * static string, or NULL with err filled when the compiler cannot be run.
 */
static const char *compiler_version(char *err, size_t errlen)
{
    static char version[256];
    if (version[0])
        return version;

    char storage[PATH_MAX];
    char *argv[MAX_CC_WORDS + 1];
    size_t n = compiler_words(storage, sizeof storage, argv);
    argv[n++] = "--version";
    argv[n] = NULL;
    avo_tail *out = calloc(1, sizeof *out);
    if (!out) {
        avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        return NULL;
    }
    avo_supervise_result r;
    if (spawn_capture(argv, NULL, 10, out, &r, err, errlen) < 0) {
        free(out);
        return NULL;
    }
    if (r.timed_out || !WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0 || out->len == 0) {
        avo_error(err, errlen, AVO_ECHILD, "cannot run the compiler '%s --version'", argv[0]);
        free(out);
        return NULL;
    }
    size_t len = strcspn(out->data, "\n");
    if (len > out->len)
        len = out->len;
    if (len >= sizeof version)
        len = sizeof version - 1;
    memcpy(version, out->data, len);
    version[len] = '\0';
    free(out);
    return version;
}

/* Space-joined flags into a new string (caller frees); NULL when out of memory. */
static char *join_flags(const char *const *flags, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(flags[i]) + 1;
    char *s = malloc(len), *p = s;
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s%s", i ? " " : "", flags[i]);
    *p = '\0';
    return s;
}

/*
 * The first #include of `source` that names an absolute path or climbs
 * with "..", copied into `bad`; 0 when there is none.  The sandbox hides
 * such files anyway; this names the mistake before the compiler runs.
 */
static int forbidden_include(const char *source, char *bad, size_t len)
{
    for (const char *line = source; line && *line; line = strchr(line, '\n'), line += !!line) {
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#')
            p++;
        else if (p[0] == '%' && p[1] == ':')
            p += 2;
        else
            continue;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "include", 7) != 0)
            continue;
        p += 7;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != '"' && *p != '<')
            continue;
        char close = *p == '"' ? '"' : '>';
        const char *name = p + 1, *end = strchr(name, close);
        size_t n = end ? (size_t)(end - name) : strcspn(name, "\n");
        int absolute = n > 0 && name[0] == '/';
        int climbs = 0;
        for (size_t i = 0; i + 1 < n; i++)
            if (name[i] == '.' && name[i + 1] == '.' && (i == 0 || name[i - 1] == '/') &&
                (i + 2 == n || name[i + 2] == '/'))
                climbs = 1;
        if (absolute || climbs) {
            snprintf(bad, len, "%.*s", (int)(n > 200 ? 200 : n), name);
            return 1;
        }
    }
    return 0;
}

/* Bytes of the cache's .so files, and evict the least recently used ones
 * (by mtime, which a hit refreshes) until under 90% of the bound. */
static void cache_trim(const char *dir)
{
    const char *env = getenv("AVO_CACHE_MAX_MB");
    double max_mb = env && *env ? strtod(env, NULL) : CACHE_MAX_MB;
    if (!(max_mb > 0))
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    typedef struct entry {
        char name[256];
        time_t mtime;
        off_t size;
    } entry;
    entry *list = NULL;
    size_t n = 0, cap = 0;
    double total = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 4 || strcmp(de->d_name + len - 3, ".so") != 0 || len >= 256)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            entry *grown = realloc(list, cap * sizeof *list);
            if (!grown)
                break;
            list = grown;
        }
        snprintf(list[n].name, sizeof list[n].name, "%s", de->d_name);
        list[n].mtime = st.st_mtime;
        list[n].size = st.st_size;
        total += (double)st.st_size;
        n++;
    }
    double limit = max_mb * 1024 * 1024;
    while (total > limit * 0.9 && n > 0) {
        size_t oldest = 0;
        for (size_t i = 1; i < n; i++)
            if (list[i].mtime < list[oldest].mtime)
                oldest = i;
        char sum[300];
        snprintf(sum, sizeof sum, "%s.sum", list[oldest].name);
        unlinkat(dirfd(d), list[oldest].name, 0);
        unlinkat(dirfd(d), sum, 0);
        total -= (double)list[oldest].size;
        list[oldest] = list[--n];
    }
    free(list);
    closedir(d);
}

/*
 * Open the cached object at `path` if its bytes hash to the id in
 * path.sum.  Returns an O_RDONLY fd, or -1 when there is no valid entry
 * (a tampered or half-removed one is deleted, so it is rebuilt).
 */
static int cache_open_valid(const char *path, int *ret_repaired)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    char sum_path[PATH_MAX + 8], expect[AVO_HASH_HEXLEN + 2] = "", got[AVO_HASH_HEXLEN + 1];
    snprintf(sum_path, sizeof sum_path, "%s.sum", path);
    int sfd = open(sum_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = sfd >= 0 ? read(sfd, expect, AVO_HASH_HEXLEN) : -1;
    if (sfd >= 0)
        close(sfd);
    size_t len = 0;
    char *data = read_fd_all(fd, (size_t)1 << 30, &len);
    int ok = n == AVO_HASH_HEXLEN && data && avo_hash_hex(data, len, got) == 0 &&
             memcmp(got, expect, AVO_HASH_HEXLEN) == 0;
    free(data);
    if (!ok) {
        close(fd);
        unlink(path);
        unlink(sum_path);
        *ret_repaired = 1;
        return -1;
    }
    utimensat(AT_FDCWD, path, NULL, 0); /* recently used */
    return fd;
}

/* Put `data` into the cache as `path` (+ .sum), atomically. */
static int cache_insert(const char *path, const char *data, size_t len)
{
    char hex[AVO_HASH_HEXLEN + 1], tmp[PATH_MAX + 32], sum_path[PATH_MAX + 8];
    if (avo_hash_hex(data, len, hex) < 0)
        return -EIO;
    snprintf(sum_path, sizeof sum_path, "%s.sum", path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int rc = write_file(tmp, hex, AVO_HASH_HEXLEN, 0644);
    if (rc == 0 && rename(tmp, sum_path) < 0)
        rc = -errno;
    if (rc == 0)
        rc = write_file(tmp, data, len, 0644);
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0)
        unlink(tmp);
    return rc;
}

/* One compiled shared object, opened. */
typedef struct build {
    char path[PATH_MAX];
    int fd; /* O_RDONLY on the object whose bytes were checked; -1 */
    int cache_hit, repaired;
} build;

/* A private directory under `cache_dir` (a compile directory, or a
 * candidate's scratch), writable by the sandbox's uid `uid`. */
static int make_compile_dir(const char *cache_dir, const char *key, uid_t uid, char *dir,
                            size_t len)
{
    snprintf(dir, len, "%s/tmp-%s-XXXXXX", cache_dir, key);
    if (!mkdtemp(dir))
        return -errno;
    if (geteuid() == 0 && chown(dir, uid, uid) < 0)
        return -errno;
    return chmod(dir, 0700) < 0 ? -errno : 0;
}

/*
 * Compile `source` into the cache (base flags, evaluator cflags and, when
 * with_knobs, the job's knobs) or find it there.  On success returns 0 with
 * `out` set (out->fd open, the caller closes it).  On failure fills status,
 * reason and log of `result` ("compile_error", "timeout" or "error", and for
 * the reference "invalid" or "error") and returns -1.  `flags_text` (may be
 * NULL) receives the joined flag string whenever it could be built (caller
 * frees).
 */
static int compile_cached(const cpu_job *job, const char *source, int with_knobs, const char *what,
                          build *out, char **flags_text, json_t *result)
{
    char err[AVO_ERRLEN];
    int is_reference = !with_knobs;
    out->fd = -1;
    const char *version = compiler_version(err, sizeof err);
    if (!version) {
        avo_result_fail(result, "error", "%s", err);
        return -1;
    }

    const avo_jobspec *spec = &job->spec;
    size_t nlink = with_knobs && job->link[0] ? 2 : 0;
    size_t nflags = BASE_FLAGS_N + job->ncflags + nlink + (with_knobs ? spec->nknobs : 0);
    const char **flags = calloc(nflags + 1, sizeof *flags);
    char *flag_string = NULL, *knob_string = NULL, *object = NULL;
    int rc = -1;
    avo_tail *log = NULL;
    char dir[PATH_MAX] = "";
    avo_sandbox_lease lease = {.fd = -1};
    if (!flags)
        goto oom;
    size_t k = 0;
    for (size_t i = 0; i < BASE_FLAGS_N; i++)
        flags[k++] = base_flags[i];
    for (size_t i = 0; i < job->ncflags; i++)
        flags[k++] = job->cflags[i];
    for (size_t i = 0; i < nlink; i++)
        flags[k++] = job->link[i];
    for (size_t i = 0; with_knobs && i < spec->nknobs; i++)
        flags[k++] = spec->knobs[i];
    flag_string = join_flags(flags, nflags);
    knob_string = join_flags((const char *const *)spec->knobs, with_knobs ? spec->nknobs : 0);
    if (!flag_string || !knob_string)
        goto oom;

    char bad[256];
    if (forbidden_include(source, bad, sizeof bad)) {
        avo_result_fail(result, is_reference ? "invalid" : "compile_error",
                        "%scompile error: #include \"%s\" is not allowed (only system headers "
                        "and the evaluator's own)",
                        is_reference ? "reference " : "", bad);
        goto done;
    }

    const char *parts[] = {source, knob_string, flag_string, version};
    char key[AVO_HASH_HEXLEN + 1];
    if (avo_hash_parts(parts, 4, key) < 0) {
        avo_result_fail(result, "error", "cannot hash the %s source", what);
        goto done;
    }
    int e = avo_mkdir_p(spec->cache_dir);
    if (e < 0) {
        avo_result_fail(result, "error", "cannot create cache directory %s: %s", spec->cache_dir,
                        strerror(-e));
        goto done;
    }
    snprintf(out->path, sizeof out->path, "%s/%s.so", spec->cache_dir, key);
    out->fd = cache_open_valid(out->path, &out->repaired);
    out->cache_hit = out->fd >= 0;
    if (out->cache_hit) {
        rc = 0;
        goto done;
    }

    /* The compiler's own uid, apart from every other sandbox. */
    if (avo_sandbox_uid_acquire(&lease, err, sizeof err) < 0) {
        avo_result_fail(result, "error", "%s", err);
        goto done;
    }
    /* A private directory, so the compiler's messages name "kernel.c". */
    if ((e = make_compile_dir(spec->cache_dir, key, lease.uid, dir, sizeof dir)) < 0) {
        avo_result_fail(result, "error", "cannot create a compile directory in %s: %s",
                        spec->cache_dir, strerror(-e));
        goto done;
    }
    char src_path[PATH_MAX + 16], so_path[PATH_MAX + 16];
    snprintf(src_path, sizeof src_path, "%s/kernel.c", dir);
    snprintf(so_path, sizeof so_path, "%s/kernel.so", dir);
    e = write_file(src_path, source, strlen(source), 0644);
    if (e < 0) {
        avo_result_fail(result, "error", "cannot write %s: %s", src_path, strerror(-e));
        goto done;
    }

    char storage[PATH_MAX];
    char *words[MAX_CC_WORDS];
    size_t nwords = compiler_words(storage, sizeof storage, words);
    char **argv = calloc(nwords + nflags + 4, sizeof *argv);
    log = calloc(1, sizeof *log);
    if (!argv || !log) {
        free(argv);
        goto oom;
    }
    size_t a = 0;
    for (size_t i = 0; i < nwords; i++)
        argv[a++] = words[i];
    for (size_t i = 0; i < nflags; i++)
        argv[a++] = (char *)flags[i];
    argv[a++] = "-o";
    argv[a++] = "kernel.so";
    argv[a++] = "kernel.c";
    argv[a] = NULL;
    /* A $CC outside the system directories is seen where it lies. */
    avo_sandbox_bind binds[2] = {{.source = dir, .target = "/build", .writable = 1}};
    char cc_dir[PATH_MAX];
    size_t nbinds = 1;
    if (strchr(words[0], '/') && words[0][0] == '/' && strncmp(words[0], "/usr/", 5) != 0) {
        snprintf(cc_dir, sizeof cc_dir, "%s", words[0]);
        *strrchr(cc_dir, '/') = '\0';
        if (cc_dir[0])
            binds[nbinds++] = (avo_sandbox_bind){.source = cc_dir, .target = cc_dir};
    }
    avo_sandbox_opts box = {.profile = AVO_SANDBOX_COMPILER,
                            .binds = binds,
                            .nbinds = nbinds,
                            .chdir_to = "/build",
                            .cpu_s = ceil(spec->compile_timeout_s),
                            .memory_mb = job->compile_memory_mb,
                            .file_mb = COMPILE_FILE_MB,
                            .nofile = 256,
                            .nproc = 32,
                            .uid = lease.uid};
    avo_supervise_result r;
    compile_facts facts = {.oom_kills_before = oom_kills()};
    e = spawn_capture(argv, &box, spec->compile_timeout_s, log, &r, err, sizeof err);
    facts.oom_kills_after = oom_kills();
    compile_dir_state(dir, &facts);
    free(argv);
    if (e < 0) {
        avo_result_fail(result, "error", "%s", err);
        goto done;
    }
    if (r.timed_out || (WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGXCPU)) {
        avo_result_fail(result, is_reference ? "error" : "timeout", "%scompile timed out after %gs",
                        is_reference ? "reference: " : "", spec->compile_timeout_s);
        avo_result_set_log(result, log->data, log->len, AVO_TAIL_MAX);
        goto done;
    }
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
        char line[512];
        compile_fault fault;
        avo_result_error_line(log->data, log->len, cc_error_markers,
                              "the compiler failed without a message", line, sizeof line);
        if ((fault = compile_failure(r.status, &facts, (double)r.usage.ru_maxrss / 1024.0,
                                     job->compile_memory_mb)) == CC_ENVIRONMENT)
            avo_result_fail(result, "error", "the compiler failed for the environment (%s): %s",
                            facts.dir_readonly ? "its directory's filesystem is read-only"
                            : facts.dir_full   ? "its directory's filesystem is full"
                            : WIFSIGNALED(r.status) ? "killed by a signal avo did not send"
                                                    : "the kernel killed a process for memory",
                            line);
        else if (fault == CC_LIMIT_MEMORY)
            avo_result_fail(result, is_reference ? "invalid" : "compile_error",
                            "%scompile error: the compiler failed near its memory limit of %g MiB "
                            "(limits.compile_memory_mb): %s",
                            is_reference ? "reference " : "", job->compile_memory_mb, line);
        else if (fault == CC_LIMIT_FILE)
            avo_result_fail(result, is_reference ? "invalid" : "compile_error",
                            "%scompile error: the compiler's output exceeds %d MiB: %s",
                            is_reference ? "reference " : "", COMPILE_FILE_MB, line);
        else if (is_reference)
            avo_result_fail(result, "invalid", "reference compile error: %s", line);
        else
            avo_result_fail(result, "compile_error", "compile error: %s", line);
        avo_result_set_log(result, log->data, log->len, AVO_TAIL_MAX);
        goto done;
    }
    int so_fd = open(so_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    size_t len = 0;
    object = so_fd >= 0 ? read_fd_all(so_fd, (size_t)COMPILE_FILE_MB << 20, &len) : NULL;
    if (so_fd >= 0)
        close(so_fd);
    if (!object || (e = cache_insert(out->path, object, len)) < 0 ||
        (out->fd = open(out->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
        avo_result_fail(result, "error", "cannot store the compiled %s in %s: %s", what,
                        spec->cache_dir, strerror(object && e < 0 ? -e : errno));
        goto done;
    }
    cache_trim(spec->cache_dir);
    rc = 0;
    goto done;

oom:
    avo_result_fail(result, "error", "out of memory");
done:
    if (dir[0])
        remove_tree(dir);
    avo_sandbox_uid_release(&lease);
    if (flags_text) {
        *flags_text = flag_string;
        flag_string = NULL;
    }
    free(object);
    free(log);
    free(flag_string);
    free(knob_string);
    free(flags);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Argument slots in shared memory                                          */

/*
 * Where each argument of config `cfg` lives in a slot, computed the same way
 * by judge and candidate: the slot starts with a guard page; each buffer's
 * data is DATA_ALIGN-aligned and ends at most DATA_ALIGN - 1 bytes before a
 * page end, with at least GUARD_MIN canary bytes before it, and is followed
 * by a guard page (PROT_NONE in the candidate), so an overrun faults or
 * breaks a canary, and every byte outside the data is checked.
 */
typedef struct slot_layout {
    size_t offset[AVO_JOBSPEC_MAX_ARGS]; /* of the data within the slot */
    size_t bytes[AVO_JOBSPEC_MAX_ARGS];
    size_t slot_bytes, page;
} slot_layout;

static void layout_compute(const avo_jobspec *spec, const avo_config_spec *cfg, slot_layout *l)
{
    memset(l, 0, sizeof *l);
    l->page = (size_t)sysconf(_SC_PAGESIZE);
    size_t at = l->page;
    for (size_t i = 0; i < spec->nargs; i++) {
        if (spec->args[i].kind == AVO_ARG_SCALAR)
            continue;
        size_t bytes = cfg->lengths[i] * avo_dtype_size(spec->args[i].type);
        size_t data = (bytes + DATA_ALIGN - 1) / DATA_ALIGN * DATA_ALIGN;
        if (data == 0)
            data = DATA_ALIGN;
        size_t pages = (data + GUARD_MIN + l->page - 1) / l->page;
        l->bytes[i] = bytes;
        l->offset[i] = at + pages * l->page - data;
        at += (pages + 1) * l->page;
    }
    l->slot_bytes = at;
}

/* The config a command names: >= 0 a timed config, < 0 check config -1 - i. */
static const avo_config_spec *config_at(const avo_jobspec *spec, int32_t index)
{
    if (index >= 0)
        return (size_t)index < spec->nconfigs ? &spec->configs[index] : NULL;
    size_t i = (size_t)(-1 - (int64_t)index);
    return i < spec->ncheck_configs ? &spec->check_configs[i] : NULL;
}

static int32_t config_index(const avo_jobspec *spec, const avo_config_spec *cfg)
{
    if (cfg >= spec->configs && cfg < spec->configs + spec->nconfigs)
        return (int32_t)(cfg - spec->configs);
    return (int32_t)(-1 - (cfg - spec->check_configs));
}

/* ------------------------------------------------------------------------ */
/* The candidate process                                                    */

enum { CMD_LAYOUT = 1, CMD_CALL = 2, CMD_EXIT = 3 };

/* A command from judge to candidate; the answer is nonce + 1. */
typedef struct harness_cmd {
    uint64_t nonce;
    uint32_t op;
    int32_t config;
    uint64_t nslots;
} harness_cmd;

/* Startup answers of the candidate, before any command: on CAND_SETUP_FD
 * whether the sandbox is set up (SETUP_*, written and closed before the
 * kernel is loaded, so only our code ever holds it), then on CAND_ACK_FD
 * whether the kernel loaded (HELLO_*; a constructor could forge these, and
 * each is the candidate's failure or a plain start). */
enum { SETUP_DONE = 'R', SETUP_FAILED = 'E' };
enum { HELLO_READY = 'R', HELLO_LOAD_FAILED = 'L', HELLO_NO_SYMBOL = 'S' };

/* A kernel as libffi calls it: the real signature lives in the cif. */
typedef void (*kernel_fn)(void);

/* libffi's description of the kernel's signature. */
typedef struct call_sig {
    ffi_cif cif;
    ffi_type *types[AVO_JOBSPEC_MAX_ARGS];
} call_sig;

static int call_sig_init(const avo_jobspec *spec, call_sig *sig)
{
    for (size_t i = 0; i < spec->nargs; i++) {
        const avo_arg_spec *arg = &spec->args[i];
        if (arg->kind != AVO_ARG_SCALAR)
            sig->types[i] = &ffi_type_pointer;
        else if (arg->type == AVO_DT_F32)
            sig->types[i] = &ffi_type_float;
        else if (arg->type == AVO_DT_F64)
            sig->types[i] = &ffi_type_double;
        else if (arg->type == AVO_DT_I32)
            sig->types[i] = &ffi_type_sint32;
        else
            sig->types[i] = &ffi_type_sint64;
    }
    return ffi_prep_cif(&sig->cif, FFI_DEFAULT_ABI, (unsigned)spec->nargs, &ffi_type_void,
                        sig->types) == FFI_OK
               ? 0
               : -1;
}

/* Call `fn` with scalars of `cfg` and buffers at `ptrs`. */
static void call_kernel(const avo_jobspec *spec, call_sig *sig, kernel_fn fn,
                        const avo_config_spec *cfg, void **ptrs)
{
    void *values[AVO_JOBSPEC_MAX_ARGS];
    for (size_t i = 0; i < spec->nargs; i++)
        values[i] = spec->args[i].kind == AVO_ARG_SCALAR ? (void *)&cfg->scalars[i] : &ptrs[i];
    ffi_call(&sig->cif, fn, NULL, values);
}

/* Copy the object behind CAND_SO_FD into the sandbox's temporary directory
 * ($TMPDIR: /tmp of the view, or "." for a scratch without one) and load it. */
static void *candidate_load(void)
{
    size_t len = 0;
    char *data = read_fd_all(CAND_SO_FD, (size_t)COMPILE_FILE_MB << 20, &len);
    close(CAND_SO_FD);
    const char *tmp = getenv("TMPDIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/kernel.so", tmp ? tmp : "/tmp");
    if (!data || write_file(path, data, len, 0700) < 0) {
        dprintf(2, "cannot stage the kernel: %s\n", strerror(errno));
        free(data);
        return NULL;
    }
    free(data);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *e = dlerror();
        dprintf(2, "%s\n", e ? e : "dlopen failed");
    }
    return handle;
}

/*
 * The candidate process, after fork from the judge: fds are 0 (/dev/null),
 * 1 and 2 (the log), CAND_CMD_FD, CAND_ACK_FD, CAND_REGION_FD, CAND_SO_FD
 * and CAND_SETUP_FD.  Sandboxes itself as `uid` (when root) before the
 * kernel is loaded (so a constructor runs sandboxed too), says so on
 * CAND_SETUP_FD and closes it, then serves commands.  Never returns.
 */
static _Noreturn void candidate_main(const cpu_job *job, uid_t uid)
{
    const avo_jobspec *spec = &job->spec;
    char hello = HELLO_LOAD_FAILED;
    avo_sandbox_bind scratch = {.source = job->scratch, .target = "/tmp", .writable = 1};
    avo_sandbox_opts box = {.profile = AVO_SANDBOX_CANDIDATE,
                            .binds = &scratch,
                            .nbinds = job->scratch ? 1 : 0,
                            .chdir_to = job->scratch ? "/tmp" : NULL,
                            .cpu_s = spec->cpu_s,
                            .memory_mb = spec->memory_mb,
                            .file_mb = CANDIDATE_FILE_MB,
                            .nofile = 16,
                            .threads = spec->threads,
                            .uid = uid};
    char why[AVO_ERRLEN];
    if (avo_sandbox_enter(&box, why, sizeof why) < 0) {
        /* Still our own code: the reason travels to the judge. */
        char msg[AVO_ERRLEN + 1];
        msg[0] = SETUP_FAILED;
        size_t n = strlen(why);
        memcpy(msg + 1, why, n);
        write_all(CAND_SETUP_FD, msg, n + 1);
        _exit(126);
    }
    char done = SETUP_DONE;
    write_all(CAND_SETUP_FD, &done, 1);
    close(CAND_SETUP_FD); /* before any code of the kernel, constructors included */
    /* A BLAS or OpenMP library the kernel links starts no more threads than
     * it may (its constructor reads these; seccomp refuses the rest). */
    avo_cpulib_thread_env(spec->threads);
    void *handle = candidate_load();
    void *sym = handle ? dlsym(handle, spec->entry) : NULL;
    if (handle && !sym)
        hello = HELLO_NO_SYMBOL;
    if (sym)
        hello = HELLO_READY;
    write_all(CAND_ACK_FD, &hello, 1);
    if (!sym)
        _exit(3);
    kernel_fn fn;
    memcpy(&fn, &sym, sizeof fn); /* object to function pointer, as POSIX allows */
    call_sig sig;
    if (call_sig_init(spec, &sig) < 0)
        _exit(4);

    unsigned char *region = NULL;
    size_t region_bytes = 0;
    slot_layout l;
    const avo_config_spec *cfg = NULL;
    for (;;) {
        harness_cmd cmd;
        if (read_all(CAND_CMD_FD, &cmd, sizeof cmd) < 0)
            _exit(0);
        if (cmd.op == CMD_EXIT)
            _exit(0);
        cfg = config_at(spec, cmd.config);
        if (!cfg)
            _exit(5);
        if (cmd.op == CMD_LAYOUT) {
            layout_compute(spec, cfg, &l);
            if (region)
                munmap(region, region_bytes);
            region_bytes = l.slot_bytes * cmd.nslots;
            region =
                mmap(NULL, region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, CAND_REGION_FD, 0);
            if (region == MAP_FAILED)
                _exit(6);
            for (uint64_t s = 0; s < cmd.nslots; s++) {
                unsigned char *slot = region + s * l.slot_bytes;
                mprotect(slot, l.page, PROT_NONE);
                for (size_t i = 0; i < spec->nargs; i++)
                    if (spec->args[i].kind != AVO_ARG_SCALAR) {
                        size_t end = (l.offset[i] + l.bytes[i] + l.page - 1) / l.page * l.page;
                        if (l.bytes[i] == 0)
                            end = (l.offset[i] + 1 + l.page - 1) / l.page * l.page;
                        mprotect(slot + end, l.page, PROT_NONE);
                    }
            }
        } else if (cmd.op == CMD_CALL && region) {
            for (uint64_t s = 0; s < cmd.nslots; s++) {
                void *ptrs[AVO_JOBSPEC_MAX_ARGS];
                for (size_t i = 0; i < spec->nargs; i++)
                    ptrs[i] = region + s * l.slot_bytes + l.offset[i];
                call_kernel(spec, &sig, fn, cfg, ptrs);
            }
        }
        uint64_t ack = cmd.nonce + 1;
        if (write_all(CAND_ACK_FD, &ack, sizeof ack) < 0)
            _exit(0);
    }
}

/* ------------------------------------------------------------------------ */
/* The judge process                                                        */

/* The judge's device (judge.h): the candidate process and the region. */
typedef struct cpu_device {
    const cpu_job *job;
    pid_t cand;
    int cmd_fd, ack_fd, region_fd;
    unsigned char *region;
    size_t region_bytes, slots;
    slot_layout l;
    const avo_config_spec *cfg;
    kernel_fn ref_fn;
    call_sig sig;
    const char *status;  /* verdict when the device fails: crashed, timeout, wrong, error */
    clockid_t cpu_clock; /* the candidate process's CPU-time clock */
    int have_cpu_clock, use_cpu_clock; /* it exists; samples are read from it */
    int stopped;                       /* SIGSTOPped after its last command, until the next one */
    double stopped_cpu;                /* its CPU time when it stopped */
    int judge_killed;                  /* the judge sent it SIGKILL */
} cpu_device;

/* Set in the judge when its candidate was killed from outside: the verdict
 * says so ("outside"), and the worker runs the job once more. */
static int killed_outside;

/*
 * Whether a candidate that ended with wait status `status` was killed from
 * outside: by SIGKILL or SIGTERM that the judge did not send.  Only facts
 * the kernel cannot fake count: its seccomp filter refuses it SIGKILL and
 * SIGTERM to itself, signalling timers, mq_notify, SIGIO ownership, a
 * parent-death signal and CPU-time limits of its own (eval/sandbox.c), so
 * such a death came from another process (a user's kill, the OOM killer).
 * Without seccomp nothing proves it: never.
 */
static int death_from_outside(int status, int judge_killed)
{
#if AVO_HAVE_SECCOMP
    return WIFSIGNALED(status) && !judge_killed &&
           (WTERMSIG(status) == SIGKILL || WTERMSIG(status) == SIGTERM);
#else
    (void)status, (void)judge_killed;
    return 0;
#endif
}

/* Name how the candidate ended (wait status and usage of its reap). */
static int candidate_ended(cpu_device *d, int status, const struct rusage *usage, char *why,
                           size_t len)
{
    double cpu = timeval_s(usage->ru_utime) + timeval_s(usage->ru_stime);
    d->cand = -1;
    d->status = "crashed";
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (sig == SIGXCPU ||
            (sig == SIGKILL && d->job->spec.cpu_s > 0 && cpu >= d->job->spec.cpu_s)) {
            d->status = "timeout";
            snprintf(why, len, "exceeded the CPU time limit of %gs", d->job->spec.cpu_s);
            return -1;
        }
        char name[128];
        avo_supervise_signal_name(sig, name, sizeof name);
        if (death_from_outside(status, d->judge_killed)) {
            killed_outside = 1;
            snprintf(why, len,
                     "killed by %s from outside (not by its judge; a kernel cannot send it "
                     "itself)",
                     name);
            return -1;
        }
        snprintf(why, len, "crashed with %s", name);
    } else {
        snprintf(why, len, "kernel process exited with status %d",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    return -1;
}

/* The candidate died or hung up: kill and reap it, name how.  A process
 * that is dying closes its pipes before it can be reaped: it gets 200 ms
 * to end by itself, so how it died is not hidden by the judge's SIGKILL. */
static int candidate_gone(cpu_device *d, char *why, size_t len)
{
    int status = 0;
    struct rusage usage = {0};
    pid_t r = 0;
    for (int i = 0; i < 200 && r == 0; i++) {
        r = wait4(d->cand, &status, WNOHANG, &usage);
        if (r < 0 && errno == EINTR)
            r = 0;
        if (r == 0) {
            struct timespec ms = {0, 1000000L};
            nanosleep(&ms, NULL);
        }
    }
    if (r != d->cand) {
        d->judge_killed = 1;
        kill(d->cand, SIGKILL);
        while (wait4(d->cand, &status, 0, &usage) < 0 && errno == EINTR)
            ;
    }
    return candidate_ended(d, status, &usage, why, len);
}

/*
 * Stop the candidate once it has answered a command, so nothing it does
 * after its acknowledgement (finishing outputs while the judge checks them,
 * reading the next call's inputs while the judge fills them, all off the
 * clock) can happen: it stays stopped until the next command.
 */
static int candidate_stop(cpu_device *d, char *why, size_t len)
{
    int status = 0;
    struct rusage usage = {0};
    kill(d->cand, SIGSTOP);
    while (wait4(d->cand, &status, WUNTRACED, &usage) < 0 && errno == EINTR)
        ;
    if (WIFSTOPPED(status)) {
        d->stopped = 1;
        return 0;
    }
    return candidate_ended(d, status, &usage, why, len);
}

/*
 * The clock a sample is read from.  A single-threaded kernel is timed by
 * its process's CPU time, which the kernel accounts and the candidate
 * cannot touch: it counts the work however the candidate spreads it over
 * the call, and not the wait for a CPU after the judge's command (or a
 * preemption) on a busy machine.  A kernel allowed threads is timed by the
 * wall clock, which its threads' work cannot run ahead of.
 */
static double candidate_clock(const cpu_device *d)
{
    struct timespec t;
    if (!d->use_cpu_clock || clock_gettime(d->cpu_clock, &t) < 0)
        return avo_monotonic();
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The candidate process's CPU time (all its threads), -1 if unknown. */
static double candidate_cpu(const cpu_device *d)
{
    struct timespec t;
    if (!d->have_cpu_clock || clock_gettime(d->cpu_clock, &t) < 0)
        return -1;
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU time a stopped candidate may seem to gain: the end of the stop itself
 * (after the judge's wait returned, it may still be preempted on its way
 * off the CPU: 606 us seen on a loaded 2-core machine).  Whatever it gains
 * is charged to its next call on the CPU-time clock; past this much it
 * woke itself, which no honest kernel does. */
#define STOPPED_CPU_LIMIT_S 20e-3

/*
 * Send a command and wait for its acknowledgement; the candidate is
 * stopped again afterwards (all but CMD_EXIT).
 *
 * A stopped candidate must still be stopped when the next command comes:
 * CPU time it gained meanwhile is charged to this call (CPU-time clock),
 * and more than STOPPED_CPU_LIMIT_S means it woke itself (a timer's signal,
 * SIGCONT from a handler) and broke the protocol.  The sample's clock starts before the
 * SIGCONT, so a SIGCONT handler's work counts, and on the CPU-time clock it
 * ends once the candidate is stopped, so work after the acknowledgement
 * counts too.
 */
static int command(cpu_device *d, uint32_t op, const avo_config_spec *cfg, size_t nslots,
                   double *ret_s, char *why, size_t len)
{
    harness_cmd cmd = {
        .op = op, .config = cfg ? config_index(&d->job->spec, cfg) : 0, .nslots = nslots};
    if (getrandom(&cmd.nonce, sizeof cmd.nonce, 0) != sizeof cmd.nonce) {
        d->status = "error";
        snprintf(why, len, "no randomness from getrandom");
        return -1;
    }
    double t0 = candidate_clock(d);
    if (d->stopped) {
        double cpu = candidate_cpu(d);
        double gained = cpu >= 0 && d->stopped_cpu >= 0 ? cpu - d->stopped_cpu : 0;
        if (gained > STOPPED_CPU_LIMIT_S) {
            d->status = "wrong";
            snprintf(why, len,
                     "ran while stopped after answering (%.0f us of CPU time off the clock: "
                     "it woke itself)",
                     gained * 1e6);
            return -1;
        }
        if (d->use_cpu_clock && gained > 0)
            t0 -= gained; /* work done while stopped counts as this call's */
        kill(d->cand, SIGCONT);
        d->stopped = 0;
    }
    if (write_all(d->cmd_fd, &cmd, sizeof cmd) < 0)
        return candidate_gone(d, why, len);
    uint64_t ack;
    if (read_all(d->ack_fd, &ack, sizeof ack) < 0)
        return candidate_gone(d, why, len);
    double t1 = candidate_clock(d);
    if (ack != cmd.nonce + 1) {
        d->status = "wrong";
        snprintf(why, len, "broke the harness protocol (a forged or early acknowledgement)");
        return -1;
    }
    if (op != CMD_EXIT) {
        int rc = candidate_stop(d, why, len);
        if (rc < 0)
            return rc;
        if (d->use_cpu_clock)
            t1 = candidate_clock(d);
        d->stopped_cpu = candidate_cpu(d);
    }
    if (ret_s)
        *ret_s = t1 - t0;
    return 0;
}

static int dev_layout(void *self, const avo_config_spec *cfg, size_t nslots, size_t *ret_max_slots,
                      char *why, size_t len)
{
    cpu_device *d = self;
    layout_compute(&d->job->spec, cfg, &d->l);
    size_t max_slots = ((size_t)REGION_MAX_MB << 20) / d->l.slot_bytes;
    if (max_slots < 1)
        max_slots = 1;
    if (ret_max_slots)
        *ret_max_slots = max_slots;
    if (nslots > max_slots)
        nslots = max_slots;
    size_t bytes = d->l.slot_bytes * nslots;
    if (d->region)
        munmap(d->region, d->region_bytes);
    d->region = NULL;
    if (ftruncate(d->region_fd, (off_t)bytes) < 0 && errno != EPERM) {
        d->status = "error";
        snprintf(why, len, "cannot size the argument region (%zu bytes): %s", bytes,
                 strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(d->region_fd, &st) < 0 || (size_t)st.st_size < bytes) {
        d->status = "error";
        snprintf(why, len, "cannot size the argument region (%zu bytes)", bytes);
        return -1;
    }
    d->region = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, d->region_fd, 0);
    if (d->region == MAP_FAILED) {
        d->region = NULL;
        d->status = "error";
        snprintf(why, len, "cannot map the argument region: %s", strerror(errno));
        return -1;
    }
    d->region_bytes = bytes;
    d->slots = nslots;
    d->cfg = cfg;
    avo_measure_guard_fill_at(d->region, bytes, 0);
    return command(d, CMD_LAYOUT, cfg, nslots, NULL, why, len);
}

static unsigned char *dev_data(void *self, size_t slot, size_t arg)
{
    cpu_device *d = self;
    return d->region + slot * d->l.slot_bytes + d->l.offset[arg];
}

/* Every byte of slot s outside the argument data holds the guard pattern. */
static int dev_guards_intact(void *self, size_t slot, const char **ret_arg)
{
    cpu_device *d = self;
    const avo_jobspec *spec = &d->job->spec;
    size_t base = slot * d->l.slot_bytes, at = 0;
    *ret_arg = "";
    for (size_t i = 0; i < spec->nargs; i++) {
        if (spec->args[i].kind == AVO_ARG_SCALAR)
            continue;
        size_t start = d->l.offset[i], end = start + d->l.bytes[i];
        if (!avo_measure_guard_intact_at(d->region + base + at, start - at, base + at)) {
            *ret_arg = spec->args[i].name;
            return 0;
        }
        at = end;
        size_t next = (end + d->l.page - 1) / d->l.page * d->l.page + d->l.page;
        if (d->l.bytes[i] == 0)
            next = (start + 1 + d->l.page - 1) / d->l.page * d->l.page + d->l.page;
        if (!avo_measure_guard_intact_at(d->region + base + at, next - at, base + at)) {
            *ret_arg = spec->args[i].name;
            return 0;
        }
        at = next;
    }
    return avo_measure_guard_intact_at(d->region + base + at, d->l.slot_bytes - at, base + at);
}

static int dev_run_candidate(void *self, const avo_config_spec *cfg, size_t nslots, double *ret_s,
                             char *why, size_t len)
{
    cpu_device *d = self;
    (void)cfg;
    return command(d, CMD_CALL, d->cfg, nslots, ret_s, why, len);
}

static int dev_run_reference(void *self, const avo_config_spec *cfg, void **buffers, char *why,
                             size_t len)
{
    cpu_device *d = self;
    (void)why, (void)len;
    call_kernel(&d->job->spec, &d->sig, d->ref_fn, cfg, buffers);
    return 0;
}

static void report(json_t *msg)
{
    if (msg)
        avo_proto_send(REPORT_FD, msg, NULL, 0);
    json_decref(msg);
}

static _Noreturn void judge_done(const char *status, const char *reason)
{
    json_t *text = reason ? avo_result_text(reason, strlen(reason)) : json_null();
    report(json_pack("{s:{s:s, s:o*, s:b}}", "done", "status", status, "reason", text, "outside",
                     killed_outside && !strcmp(status, "crashed")));
    _exit(0);
}

/* Fork the candidate with exactly its fds; returns its pid or -1. */
static pid_t start_candidate(const cpu_job *job, uid_t uid, int cmd_rd, int ack_wr, int region_fd,
                             int so_fd, int setup_wr)
{
    pid_t judge = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != judge)
        _exit(127);
    int fds[5] = {cmd_rd, ack_wr, region_fd, so_fd, setup_wr};
    int moved[5];
    for (int i = 0; i < 5; i++) /* above every target first, then into place */
        moved[i] = fcntl(fds[i], F_DUPFD, 100);
    for (int i = 0; i < 5; i++)
        if (moved[i] < 0 || dup2(moved[i], CAND_CMD_FD + i) < 0)
            _exit(127);
    close_range(CAND_SETUP_FD + 1, ~0u, 0);
    candidate_main(job, uid);
}

/*
 * The judge process, after fork: stdout/stderr go to the log pipe, the
 * report pipe is REPORT_FD, `so_fd` is the candidate's object, everything
 * else is closed.  Starts the candidate before anything of the reference
 * exists, then judges config by config, reporting as it goes.  Never returns.
 */
static _Noreturn void judge_main(const cpu_job *job, int so_fd, const char *ref_so)
{
    const avo_jobspec *spec = &job->spec;
    static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        signal(crash_signals[i], SIG_DFL); /* die by the signal, whatever we inherited */
    signal(SIGPIPE, SIG_IGN);              /* a candidate that hangs up is an answer */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    avo_sandbox_harden();
    avo_sandbox_scrub_secrets(); /* the worker's transport key, if it has one */

    /* A uid of the candidate's own, held while the judge lives. */
    char err[AVO_ERRLEN];
    avo_sandbox_lease lease;
    if (avo_sandbox_uid_acquire(&lease, err, sizeof err) < 0)
        judge_done("error", err);
    if (job->scratch && geteuid() == 0 && chown(job->scratch, lease.uid, lease.uid) < 0)
        judge_done("error", "cannot give the kernel's scratch directory to its uid");
    int cmd[2], ack[2], setup[2];
    int region_fd = memfd_create("avo-arguments", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (region_fd < 0 || pipe2(cmd, O_CLOEXEC) < 0 || pipe2(ack, O_CLOEXEC) < 0 ||
        pipe2(setup, O_CLOEXEC) < 0)
        judge_done("error", "cannot create the candidate's pipes or memory");
    /* The candidate may map the region, but never shrink it under the judge. */
    fcntl(region_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL);
    cpu_device d = {.job = job, .cmd_fd = cmd[1], .ack_fd = ack[0], .region_fd = region_fd};
    d.cand = start_candidate(job, lease.uid, cmd[0], ack[1], region_fd, so_fd, setup[1]);
    if (d.cand < 0)
        judge_done("error", "cannot fork the kernel process");
    d.have_cpu_clock = clock_getcpuclockid(d.cand, &d.cpu_clock) == 0;
    d.use_cpu_clock = spec->threads == 1 && d.have_cpu_clock;
    close(cmd[0]);
    close(ack[1]);
    close(setup[1]);
    close(so_fd);

    if (avo_sandbox_seccomp_trusted(1, err, sizeof err) < 0)
        judge_done("error", err);

    /* Set-up first, on the pipe the kernel never holds: only a failure
     * reported there is the machine's. */
    char setup_text[AVO_ERRLEN] = "";
    ssize_t got = read(setup[0], setup_text, sizeof setup_text - 1);
    close(setup[0]);
    if (got <= 0 || setup_text[0] != SETUP_DONE) {
        setup_text[got > 0 ? got : 0] = '\0';
        judge_done("error", got > 1 && setup_text[0] == SETUP_FAILED
                                ? setup_text + 1
                                : "the kernel's sandbox could not be set up");
    }

    char hello = 0;
    if (read_all(d.ack_fd, &hello, 1) < 0 || hello != HELLO_READY) {
        char why[512];
        if (hello == HELLO_NO_SYMBOL) {
            snprintf(why, sizeof why, "symbol '%.200s' not found in candidate", spec->entry);
            judge_done("invalid", why);
        }
        if (hello != 0 && hello != HELLO_LOAD_FAILED) {
            /* Written by the kernel's own code (a constructor): no answer
             * the harness gives. */
            kill(d.cand, SIGKILL);
            snprintf(why, sizeof why,
                     "the kernel wrote a start answer of its own (byte 0x%02x) before the "
                     "harness's",
                     (unsigned char)hello);
            judge_done("crashed", why);
        }
        int status = 0;
        while (waitpid(d.cand, &status, 0) < 0 && errno == EINTR)
            ;
        if (hello == HELLO_LOAD_FAILED)
            judge_done("compile_error", "link error: the kernel does not load (see log)");
        d.cand = -1;
        if (WIFSIGNALED(status)) {
            char name[128];
            avo_supervise_signal_name(WTERMSIG(status), name, sizeof name);
            killed_outside = death_from_outside(status, 0);
            snprintf(why, sizeof why, "%s %s while loading",
                     killed_outside ? "killed from outside by" : "crashed with", name);
        } else {
            snprintf(why, sizeof why, "kernel process exited with status %d while loading",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        }
        judge_done("crashed", why);
    }

    void *handle = dlopen(ref_so, RTLD_NOW | RTLD_LOCAL);
    void *sym = handle ? dlsym(handle, spec->ref_entry) : NULL;
    if (!sym) {
        const char *e = dlerror();
        snprintf(err, sizeof err, "reference: %s", e ? e : "entry point not found");
        judge_done("invalid", err);
    }
    memcpy(&d.ref_fn, &sym, sizeof d.ref_fn);
    if (call_sig_init(spec, &d.sig) < 0)
        judge_done("invalid", "libffi cannot describe the argument list");

    avo_judge_device dev = {.self = &d,
                            .layout = dev_layout,
                            .data = dev_data,
                            .guards_intact = dev_guards_intact,
                            .run_candidate = dev_run_candidate,
                            .run_reference = dev_run_reference};
    size_t total = spec->nconfigs + spec->ncheck_configs;
    for (size_t c = 0; c < total; c++) {
        int timed = c < spec->nconfigs;
        const avo_config_spec *cfg =
            timed ? &spec->configs[c] : &spec->check_configs[c - spec->nconfigs];
        report(json_pack("{s:s}", "progress", cfg->name));
        json_t *entry = avo_result_config_new(cfg->name);
        char reason[1024];
        d.status = NULL;
        int outcome = avo_judge_config(spec, &dev, cfg, timed, entry, reason, sizeof reason);
        report(json_pack("{s:o}", timed ? "config" : "check", entry));
        if (outcome == AVO_JUDGE_WRONG)
            judge_done("wrong", reason);
        if (outcome == AVO_JUDGE_FAILED)
            judge_done(d.status ? d.status : "error", reason);
    }
    command(&d, CMD_EXIT, NULL, 0, NULL, err, sizeof err);
    judge_done("ok", NULL);
}

/* Move the judge's pipes to their fixed numbers, the candidate's object
 * above them, and close the rest.  Returns the object's new fd. */
static int judge_fds(int log_fd, int report_fd, int so_fd)
{
    int so = fcntl(so_fd, F_DUPFD_CLOEXEC, 10);
    int rep = fcntl(report_fd, F_DUPFD, 10);
    int log = fcntl(log_fd, F_DUPFD, 10);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0 && devnull != 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    log_fd = log;
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    dup2(rep, REPORT_FD);
    dup2(so, REPORT_FD + 1);
    fcntl(REPORT_FD + 1, F_SETFD, FD_CLOEXEC);
    close_range(REPORT_FD + 2, ~0u, 0);
    return REPORT_FD + 1;
}

/* What the worker learned from the judge's report. */
typedef struct judge_report {
    char progress[256]; /* config being run at the end, "" if none */
    int in_config;      /* a progress came with no entry after it */
    json_t *done;       /* the verdict message, or NULL */
} judge_report;

/* Parse the framed messages in buf: entries go to `configs` and `checks`. */
static void parse_report(const avo_proto_buf *buf, json_t *configs, json_t *checks, judge_report *r)
{
    size_t at = 0;
    json_t *msg;
    while ((msg = avo_proto_decode(buf, &at))) {
        const char *progress = json_string_value(json_object_get(msg, "progress"));
        json_t *entry = json_object_get(msg, "config");
        json_t *check = json_object_get(msg, "check");
        json_t *done = json_object_get(msg, "done");
        if (progress) {
            snprintf(r->progress, sizeof r->progress, "%s", progress);
            r->in_config = 1;
        } else if (json_is_object(entry)) {
            json_array_append(configs, entry);
            r->in_config = 0;
        } else if (json_is_object(check)) {
            json_array_append(checks, check);
            r->in_config = 0;
        } else if (json_is_object(done) && !r->done) {
            r->done = json_incref(done);
        }
        json_decref(msg);
    }
}

static int proto_sink(int fd, void *ctx)
{
    return avo_proto_drain(fd, ctx);
}

/*
 * Fork the judge for this job and watch it until it ends or its deadline
 * passes (then its process group, candidate included, is killed).  Sets
 * status, reason, log, run_s, configs and checks of `result`.
 */
static void run_judge(const cpu_job *job, int cand_fd, const char *ref_so, json_t *result)
{
    const avo_jobspec *spec = &job->spec;
    int report_pipe[2], log_pipe[2];
    if (pipe2(report_pipe, O_CLOEXEC) < 0) {
        avo_result_fail(result, "error", "pipe: %s", strerror(errno));
        return;
    }
    if (pipe2(log_pipe, O_CLOEXEC) < 0) {
        avo_result_fail(result, "error", "pipe: %s", strerror(errno));
        close(report_pipe[0]);
        close(report_pipe[1]);
        return;
    }
    double start = avo_monotonic();
    pid_t worker = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* The judge dies with its worker, which dies with the engine: a
         * killed engine leaves no kernel spinning. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != worker)
            _exit(127);
        int so = judge_fds(log_pipe[1], report_pipe[1], cand_fd);
        judge_main(job, so, ref_so);
    }
    int fork_errno = errno;
    close(report_pipe[1]);
    close(log_pipe[1]);
    if (pid < 0) {
        close(report_pipe[0]);
        close(log_pipe[0]);
        avo_result_fail(result, "error", "fork: %s", strerror(fork_errno));
        return;
    }
    setpgid(pid, pid);
    fcntl(report_pipe[0], F_SETFL, O_NONBLOCK);
    fcntl(log_pipe[0], F_SETFL, O_NONBLOCK);

    avo_tail *log = calloc(1, sizeof *log);
    avo_tail scratch; /* only used if the log buffer could not be allocated */
    scratch.len = 0;
    avo_proto_buf reports = {0};
    avo_supervise_sink sinks[2] = {{report_pipe[0], proto_sink, &reports},
                                   {log_pipe[0], avo_tail_drain, log ? log : &scratch}};
    avo_supervise_result r;
    avo_supervise_wait(pid, start + spec->timeout_s, sinks, 2, &r);
    close(report_pipe[0]);
    close(log_pipe[0]);
    json_object_set_new(result, "run_s", json_real(avo_monotonic() - start));

    json_t *configs = json_object_get(result, "configs");
    json_t *checks = json_array();
    judge_report rep = {.done = NULL};
    parse_report(&reports, configs, checks, &rep);
    free(reports.data);
    if (json_array_size(checks) > 0)
        json_object_set(result, "checks", checks);
    json_decref(checks);

    char where[300];
    if (rep.progress[0] && rep.in_config)
        snprintf(where, sizeof where, "in config %s", rep.progress);
    else if (rep.progress[0])
        snprintf(where, sizeof where, "after config %s", rep.progress);
    else
        snprintf(where, sizeof where, "before the first config");

    if (rep.done && !r.timed_out) {
        const char *st = json_string_value(json_object_get(rep.done, "status"));
        json_object_set_new(result, "status", json_string(st ? st : "error"));
        json_object_set(result, "reason", json_object_get(rep.done, "reason"));
        if (json_is_true(json_object_get(rep.done, "outside")))
            json_object_set_new(result, "killed_outside", json_true());
    } else if (r.timed_out) {
        avo_result_fail(result, "timeout", "timed out after %gs %s", spec->timeout_s, where);
    } else if (WIFSIGNALED(r.status)) {
        char name[128];
        avo_supervise_signal_name(WTERMSIG(r.status), name, sizeof name);
        avo_result_fail(result, "error", "the judge died with %s %s", name, where);
    } else {
        avo_result_fail(result, "error", "the judge exited with status %d without a verdict %s",
                        WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1, where);
    }
    json_decref(rep.done);

    /* The config that was cut short still counts as attempted. */
    if (!rep.done && rep.in_config) {
        json_t *entry = avo_result_config_new(rep.progress);
        if (entry) {
            json_object_set(entry, "reason", json_object_get(result, "reason"));
            json_array_append_new(configs, entry);
        }
    }
    const char *final = json_string_value(json_object_get(result, "status"));
    if (log && log->len && final && strcmp(final, "ok") != 0)
        avo_result_set_log(result, log->data, log->len, AVO_TAIL_MAX);
    free(log);
}

/*
 * The candidate process was killed from outside (death_from_outside): not
 * its doing, so the job runs once more, in a fresh judge and kernel process
 * and an emptied scratch directory, and that verdict stands; a second such
 * death is charged ("crashed").  `result` keeps the first death's reason in
 * "retried".
 */
static void judge_again(cpu_job *job, int cand_fd, const char *ref_so, char *scratch,
                        size_t scratch_len, json_t *result)
{
    const char *first = json_string_value(json_object_get(result, "reason"));
    json_t *retried = json_pack("{s:s}", "reason", first ? first : "killed from outside");
    json_object_del(result, "killed_outside");
    json_array_clear(json_object_get(result, "configs"));
    json_object_del(result, "checks");
    json_object_del(result, "log");
    if (scratch[0]) {
        remove_tree(scratch);
        const char *tmp = getenv("TMPDIR");
        int e = make_compile_dir(tmp && *tmp ? tmp : "/tmp", "avo-kernel", geteuid(), scratch,
                                 scratch_len);
        if (e < 0) {
            scratch[0] = '\0';
            json_decref(retried);
            avo_result_fail(result, "error", "cannot create the kernel's scratch directory: %s",
                            strerror(-e));
            return;
        }
        job->scratch = scratch;
    }
    run_judge(job, cand_fd, ref_so, result);
    if (retried)
        json_object_set_new(result, "retried", retried);
    if (json_is_true(json_object_get(result, "killed_outside"))) {
        json_object_del(result, "killed_outside");
        const char *again = json_string_value(json_object_get(result, "reason"));
        avo_result_fail(result, "crashed", "%s, on the retry in a fresh process too",
                        again ? again : "killed from outside");
    }
}

/* ------------------------------------------------------------------------ */

/*
 * The backend entry point: parse, compile both sources, judge.  Always
 * returns a result (caller owns) with status and reason set; NULL only when
 * even the result skeleton cannot be allocated.
 */
static json_t *cpu_run_job(const json_t *job)
{
    json_t *result = avo_result_new(job, "ok", NULL);
    if (!result)
        return NULL;
    char err[AVO_ERRLEN];
    cpu_job spec;
    if (cpu_job_parse(job, &spec, err, sizeof err) < 0) {
        avo_result_fail(result, "invalid", "%s", err);
        cpu_job_free(&spec);
        return result;
    }

    const char *version = compiler_version(err, sizeof err);
    if (version)
        json_object_set_new(result, "compiler", json_string(version));
    avo_sandbox_mechanism mechanism;
    if (avo_sandbox_select(&mechanism, err, sizeof err) < 0) {
        avo_result_fail(result, "error", "%s", err);
        cpu_job_free(&spec);
        return result;
    }
    json_object_set_new(result, "sandbox", json_string(avo_sandbox_mechanism_name(mechanism)));
    json_object_set_new(result, "threads", json_integer(spec.spec.threads));
    /* A library baseline (cpulib.h): the library must load before its
     * adapter is compiled, or the baseline is unavailable, saying why. */
    const json_t *library = json_object_get(job, "library");
    if (library && !json_is_null(library)) {
        json_t *info = NULL;
        int e = avo_cpulib_probe(library, spec.spec.threads, spec.spec.timeout_s, &info, err,
                                 sizeof err);
        if (e < 0) {
            avo_result_fail(result, e == AVO_EINVAL ? "invalid" : "unavailable", "%s", err);
            cpu_job_free(&spec);
            return result;
        }
        json_object_set_new(result, "baseline", info);
    }
    double t0 = avo_monotonic();
    build cand = {.fd = -1}, ref = {.fd = -1};
    char *flags = NULL;
    int rc = compile_cached(&spec, spec.spec.source, 1, "candidate", &cand, &flags, result);
    if (flags)
        json_object_set_new(result, "cflags", json_string(flags));
    free(flags);
    json_object_set_new(result, "cache_hit", json_boolean(rc == 0 && cand.cache_hit));
    if (cand.repaired)
        json_object_set_new(result, "cache_repaired", json_true());
    /* compile_only: the candidate's compile status and log, nothing run. */
    int compile_only = json_is_true(json_object_get(job, "compile_only"));
    if (rc == 0 && !compile_only)
        rc = compile_cached(&spec, spec.spec.ref_source, 0, "reference", &ref, NULL, result);
    json_object_set_new(result, "compile_s", json_real(avo_monotonic() - t0));
    /* Without a view the candidate has no private /tmp: a directory of its
     * own stands in for it, removed once the judge and its candidate ended. */
    char scratch[PATH_MAX] = "";
    if (rc == 0 && !compile_only && mechanism != AVO_SANDBOX_NAMESPACES) {
        const char *tmp = getenv("TMPDIR");
        /* the judge gives it to its candidate's uid once it holds one */
        int e = make_compile_dir(tmp && *tmp ? tmp : "/tmp", "avo-kernel", geteuid(), scratch,
                                 sizeof scratch);
        if (e < 0) {
            avo_result_fail(result, "error", "cannot create the kernel's scratch directory: %s",
                            strerror(-e));
            rc = -1;
        }
        spec.scratch = scratch;
    }
    if (rc == 0 && !compile_only) {
        run_judge(&spec, cand.fd, ref.path, result);
        if (json_is_true(json_object_get(result, "killed_outside")))
            judge_again(&spec, cand.fd, ref.path, scratch, sizeof scratch, result);
    }
    if (scratch[0])
        remove_tree(scratch);
    if (cand.fd >= 0)
        close(cand.fd);
    if (ref.fd >= 0)
        close(ref.fd);
    cpu_job_free(&spec);
    return result;
}

const avo_backend avo_backend_cpu = {"cpu", cpu_run_job, &cpu_rules};
