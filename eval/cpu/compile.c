/*
 * compile.c — the CPU backend's compile step: the host C compiler ($CC,
 * default cc) in a sandbox of its own (eval/sandbox.h) with a deadline,
 * into the compile cache (eval/cache.h: cache_dir/<key>.so, the key a hash
 * of source, knobs, flags and the compiler's version).  A failed compile is
 * charged to the source or to the machine by what the worker observed
 * (compile_failure), never by what the compiler printed.
 */
#include "avo_config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/avo.h"
#include "core/backend.h"
#include "eval/cache.h"
#include "eval/cpu/cpu_job.h"
#include "core/hash.h"
#include "eval/includes.h"
#include "eval/sandbox.h"
#include "eval/supervise.h"

#define MAX_CC_WORDS 16 /* words in $CC */
#define BASE_FLAGS_N 4

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
/* Small utilities                                                          */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

void avo_cpu_remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int avo_cpu_private_dir(const char *parent, const char *key, uid_t uid, char *dir, size_t len)
{
    snprintf(dir, len, "%s/tmp-%s-XXXXXX", parent, key);
    if (!mkdtemp(dir))
        return -errno;
    if (geteuid() == 0 && chown(dir, uid, uid) < 0)
        return -errno;
    return chmod(dir, 0700) < 0 ? -errno : 0;
}

/* ------------------------------------------------------------------------ */
/* Running the compiler                                                     */

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
    pid_t pid = avo_supervise_fork(AVO_CHILD_OWN_GROUP);
    if (pid < 0) {
        int e = errno;
        close(pipefd[0]);
        close(pipefd[1]);
        close(setup[0]);
        close(setup[1]);
        return avo_error(err, errlen, AVO_ECHILD, "fork: %s", strerror(e));
    }
    if (pid == 0) {
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
                avo_write_all(status_fd, why, strlen(why));
                _exit(127);
            }
        } else {
            struct rlimit cpu = {(rlim_t)ceil(timeout_s) + 1, (rlim_t)ceil(timeout_s) + 2};
            setrlimit(RLIMIT_CPU, &cpu);
            setenv("LC_ALL", "C", 1);
        }
        execvp(argv[0], argv);
        int e = errno;
        char why[AVO_ERRLEN];
        if (e == EACCES && avo_sandbox_explain_exec(argv[0], why, sizeof why))
            dprintf(status_fd, "cannot run '%s': %s: %s", argv[0], strerror(e), why);
        else
            dprintf(status_fd, "cannot run '%s': %s", argv[0], strerror(e));
        _exit(127);
    }
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
const char *avo_cpu_compiler_version(char *err, size_t errlen)
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

/* ------------------------------------------------------------------------ */
/* Compiling into the cache, step by step                                   */

/* The flags of one compile: base flags, the evaluator's cflags, a library
 * baseline's link flags and (candidate only) the job's knobs. */
typedef struct compile_flags {
    const char **list; /* borrowed strings, owned array */
    size_t n;
    char *text;  /* list joined with spaces, owned */
    char *knobs; /* the knobs joined, owned ("" for the reference) */
} compile_flags;

static void compile_flags_free(compile_flags *f)
{
    free(f->list);
    free(f->text);
    free(f->knobs);
}

/* Assemble the flags; AVO_ENOMEM when out of memory (what was built stays
 * in `f`, released by compile_flags_free). */
static int compile_flags_build(const cpu_job *job, int with_knobs, compile_flags *f)
{
    const avo_jobspec *spec = &job->spec;
    size_t nlink = with_knobs && job->link[0] ? 2 : 0;
    size_t nknobs = with_knobs ? spec->nknobs : 0;
    memset(f, 0, sizeof *f);
    f->list = calloc(BASE_FLAGS_N + job->ncflags + nlink + nknobs + 1, sizeof *f->list);
    if (!f->list)
        return AVO_ENOMEM;
    for (size_t i = 0; i < BASE_FLAGS_N; i++)
        f->list[f->n++] = base_flags[i];
    for (size_t i = 0; i < job->ncflags; i++)
        f->list[f->n++] = job->cflags[i];
    for (size_t i = 0; i < nlink; i++)
        f->list[f->n++] = job->link[i];
    for (size_t i = 0; i < nknobs; i++)
        f->list[f->n++] = spec->knobs[i];
    f->text = join_flags(f->list, f->n);
    f->knobs = join_flags((const char *const *)spec->knobs, nknobs);
    return f->text && f->knobs ? 0 : AVO_ENOMEM;
}

/* The CPU rule of the #include gate (includes.h): system and relative
 * headers, but no absolute path and no "..".  The sandbox hides such files
 * anyway; this names the mistake before the compiler runs (and is the
 * defence where no sandbox view hides them).  Lines are also read as
 * written (AVO_INCLUDES_RAW_LINES): the C compiler's reading of raw strings
 * and digit separators depends on the evaluator's -std.  The refused name
 * goes to ctx (a char[256]). */
static int include_stays_inside(const avo_include *inc, void *ctx, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    if (!inc->delim || !avo_include_name_escapes(inc->name, inc->name_len))
        return 0;
    snprintf(ctx, 256, "%.*s", (int)(inc->name_len > 200 ? 200 : inc->name_len), inc->name);
    return AVO_EINVAL;
}

/* 0 when every #include of `source` stays inside; else -1 with the
 * result's status and reason set. */
static int check_includes(const char *source, int is_reference, json_t *result)
{
    char bad[256] = "", err[AVO_ERRLEN];
    int rc = avo_includes_scan(source, "kernel", AVO_INCLUDES_RAW_LINES, include_stays_inside, bad,
                               err, sizeof err);
    if (rc == 0)
        return 0;
    if (rc == AVO_ENOMEM)
        avo_result_fail(result, "error", "out of memory");
    else
        avo_result_fail(result, is_reference ? "invalid" : "compile_error",
                        "%scompile error: #include \"%s\" is not allowed (only system headers "
                        "and the evaluator's own)",
                        is_reference ? "reference " : "", bad);
    return -1;
}

/*
 * The cache entry for this compile: its key (into key) and path (into
 * out->path), opened into out->fd when a valid entry is there.  Returns 1 on
 * a hit, 0 on a miss, -1 with the result's status and reason set.
 */
static int cache_lookup(const cpu_job *job, const char *source, const compile_flags *f,
                        const char *version, const char *what, char key[AVO_HASH_HEXLEN + 1],
                        cpu_build *out, json_t *result)
{
    const char *parts[] = {source, f->knobs, f->text, version};
    if (avo_hash_parts(parts, 4, key) < 0) {
        avo_result_fail(result, "error", "cannot hash the %s source", what);
        return -1;
    }
    int e = avo_mkdir_p(job->spec.cache_dir);
    if (e < 0) {
        avo_result_fail(result, "error", "cannot create cache directory %s: %s",
                        job->spec.cache_dir, strerror(-e));
        return -1;
    }
    snprintf(out->path, sizeof out->path, "%s/%s.so", job->spec.cache_dir, key);
    out->fd = avo_cache_open(out->path, (size_t)1 << 30, NULL, NULL, &out->repaired);
    out->cache_hit = out->fd >= 0;
    return out->cache_hit;
}

/*
 * Run the compiler on dir/kernel.c into dir/kernel.so in the compiler's
 * sandbox as `uid`, seen at /build.  Returns 0 with how it ended in *ret and
 * what the worker saw around it in *facts, or a negative code with err set
 * when it could not be started.
 */
static int run_compiler(const cpu_job *job, const compile_flags *f, const char *dir, uid_t uid,
                        avo_tail *log, avo_supervise_result *ret, compile_facts *facts, char *err,
                        size_t errlen)
{
    char storage[PATH_MAX];
    char *words[MAX_CC_WORDS];
    size_t nwords = compiler_words(storage, sizeof storage, words);
    char **argv = calloc(nwords + f->n + 4, sizeof *argv);
    if (!argv)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    size_t a = 0;
    for (size_t i = 0; i < nwords; i++)
        argv[a++] = words[i];
    for (size_t i = 0; i < f->n; i++)
        argv[a++] = (char *)f->list[i];
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
    const avo_jobspec *spec = &job->spec;
    avo_sandbox_opts box = {.profile = AVO_SANDBOX_COMPILER,
                            .binds = binds,
                            .nbinds = nbinds,
                            .chdir_to = "/build",
                            .cpu_s = ceil(spec->compile_timeout_s),
                            .memory_mb = job->compile_memory_mb,
                            .file_mb = COMPILE_FILE_MB,
                            .nofile = 256,
                            .nproc = 32,
                            .uid = uid};
    facts->oom_kills_before = oom_kills();
    int e = spawn_capture(argv, &box, spec->compile_timeout_s, log, ret, err, errlen);
    facts->oom_kills_after = oom_kills();
    compile_dir_state(dir, facts);
    free(argv);
    return e;
}

/*
 * The verdict on a compiler run that ended as `r`: 0 when it succeeded,
 * else -1 with the result's status, reason and log set, charged as
 * compile_failure decides.
 */
static int compile_verdict(const cpu_job *job, int is_reference, const avo_supervise_result *r,
                           const compile_facts *facts, const avo_tail *log, json_t *result)
{
    const char *ref = is_reference ? "reference " : "";
    if (r->timed_out || (WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGXCPU)) {
        avo_result_fail(result, is_reference ? "error" : "timeout", "%scompile timed out after %gs",
                        is_reference ? "reference: " : "", job->spec.compile_timeout_s);
        avo_result_set_log(result, log->data, log->len, AVO_TAIL_MAX);
        return -1;
    }
    if (WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0)
        return 0;
    char line[512];
    avo_result_error_line(log->data, log->len, cc_error_markers,
                          "the compiler failed without a message", line, sizeof line);
    const char *charged = is_reference ? "invalid" : "compile_error";
    switch (compile_failure(r->status, facts, (double)r->usage.ru_maxrss / 1024.0,
                            job->compile_memory_mb)) {
    case CC_ENVIRONMENT:
        avo_result_fail(result, "error", "the compiler failed for the environment (%s): %s",
                        facts->dir_readonly      ? "its directory's filesystem is read-only"
                        : facts->dir_full        ? "its directory's filesystem is full"
                        : WIFSIGNALED(r->status) ? "killed by a signal avo did not send"
                                                 : "the kernel killed a process for memory",
                        line);
        break;
    case CC_LIMIT_MEMORY:
        avo_result_fail(result, charged,
                        "%scompile error: the compiler failed near its memory limit of %g MiB "
                        "(limits.compile_memory_mb): %s",
                        ref, job->compile_memory_mb, line);
        break;
    case CC_LIMIT_FILE:
        avo_result_fail(result, charged,
                        "%scompile error: the compiler's output exceeds %d MiB: %s", ref,
                        COMPILE_FILE_MB, line);
        break;
    case CC_SOURCE:
        avo_result_fail(result, charged, "%scompile error: %s", ref, line);
        break;
    }
    avo_result_set_log(result, log->data, log->len, AVO_TAIL_MAX);
    return -1;
}

/* Put the compiled dir/kernel.so into the cache at out->path, open it into
 * out->fd and trim the cache.  0, or -1 with the result's status and
 * reason set. */
static int store_object(const cpu_job *job, const char *dir, const char *what, cpu_build *out,
                        json_t *result)
{
    char so_path[PATH_MAX + 16];
    snprintf(so_path, sizeof so_path, "%s/kernel.so", dir);
    int so_fd = open(so_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    size_t len = 0;
    char *object = so_fd >= 0 ? avo_read_fd(so_fd, (size_t)COMPILE_FILE_MB << 20, &len) : NULL;
    int e = object ? 0 : -errno;
    if (so_fd >= 0)
        close(so_fd);
    if (e == 0)
        e = avo_cache_insert(out->path, object, len);
    free(object);
    if (e == 0 && (out->fd = open(out->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
        e = -errno;
    if (e < 0) {
        avo_result_fail(result, "error", "cannot store the compiled %s in %s: %s", what,
                        job->spec.cache_dir, strerror(-e));
        return -1;
    }
    avo_cache_trim(job->spec.cache_dir, ".so");
    return 0;
}

/* A cache miss: compile `source` in a private directory as a uid of the
 * compiler's own, then store the object.  0, or -1 with the result set. */
static int compile_fresh(const cpu_job *job, const char *source, int is_reference, const char *what,
                         const compile_flags *f, const char *key, cpu_build *out, json_t *result)
{
    const avo_jobspec *spec = &job->spec;
    char err[AVO_ERRLEN], dir[PATH_MAX] = "";
    avo_sandbox_lease lease = {.fd = -1};
    avo_tail *log = NULL;
    int rc = -1, e;
    /* The compiler's own uid, apart from every other sandbox. */
    if (avo_sandbox_uid_acquire(&lease, err, sizeof err) < 0) {
        avo_result_fail(result, "error", "%s", err);
        goto done;
    }
    /* A private directory, so the compiler's messages name "kernel.c". */
    if ((e = avo_cpu_private_dir(spec->cache_dir, key, lease.uid, dir, sizeof dir)) < 0) {
        avo_result_fail(result, "error", "cannot create a compile directory in %s: %s",
                        spec->cache_dir, strerror(-e));
        goto done;
    }
    char src_path[PATH_MAX + 16];
    snprintf(src_path, sizeof src_path, "%s/kernel.c", dir);
    if ((e = avo_write_file(src_path, source, strlen(source), 0644)) < 0) {
        avo_result_fail(result, "error", "cannot write %s: %s", src_path, strerror(-e));
        goto done;
    }
    avo_supervise_result r;
    compile_facts facts = {0};
    if (!(log = calloc(1, sizeof *log))) {
        avo_result_fail(result, "error", "out of memory");
        goto done;
    }
    if (run_compiler(job, f, dir, lease.uid, log, &r, &facts, err, sizeof err) < 0) {
        avo_result_fail(result, "error", "%s", err);
        goto done;
    }
    if (compile_verdict(job, is_reference, &r, &facts, log, result) == 0)
        rc = store_object(job, dir, what, out, result);
done:
    if (dir[0])
        avo_cpu_remove_tree(dir);
    avo_sandbox_uid_release(&lease);
    free(log);
    return rc;
}

int avo_cpu_compile(const cpu_job *job, const char *source, int with_knobs, const char *what,
                    cpu_build *out, char **flags_text, json_t *result)
{
    char err[AVO_ERRLEN], key[AVO_HASH_HEXLEN + 1];
    int is_reference = !with_knobs;
    out->fd = -1;
    const char *version = avo_cpu_compiler_version(err, sizeof err);
    if (!version) {
        avo_result_fail(result, "error", "%s", err);
        return -1;
    }
    compile_flags f;
    int rc = -1;
    if (compile_flags_build(job, with_knobs, &f) < 0)
        avo_result_fail(result, "error", "out of memory");
    else if (check_includes(source, is_reference, result) == 0) {
        int hit = cache_lookup(job, source, &f, version, what, key, out, result);
        rc = hit < 0 ? -1
             : hit   ? 0
                     : compile_fresh(job, source, is_reference, what, &f, key, out, result);
    }
    if (flags_text) {
        *flags_text = f.text;
        f.text = NULL;
    }
    compile_flags_free(&f);
    return rc;
}
