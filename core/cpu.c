/*
 * cpu.c — the CPU backend: compile a candidate and its reference with the
 * host C compiler into a content-addressed cache of shared objects, then
 * verify and time the candidate in a forked runner (docs/protocol.md).
 *
 * Two processes take part in a job:
 *
 *   worker  parses the job, compiles (the compiler runs as a child with a
 *           deadline), forks the runner, watches it with poll() until its
 *           deadline, and turns what the runner reported, or how it died,
 *           into one result.
 *   runner  sandboxes itself (rlimits, a network namespace, seccomp), loads
 *           both shared objects and, config by config, fills fresh inputs,
 *           calls candidate and reference through libffi, checks and times.
 *           It reports on REPORT_FD as framed JSON messages (core/proto.h):
 *             {"progress": name}                 entering a config
 *             {"config": {...}}                  that config's result entry
 *             {"done": {"status", "reason"}}     the verdict, always last
 *           so a runner that dies still tells which config killed it.
 *
 * The candidate shares the runner's address space and could forge the
 * runner's report; the sandbox keeps it from reaching anything beyond the
 * runner, and the worker alone decides deadlines and signals.
 *
 * Cache invariant: cache_dir/<key>.so exists only complete, because every
 * compile writes into a private temporary directory and renames into place;
 * concurrent workers compiling the same key both succeed.
 */
#include "avo_config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ffi.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if AVO_HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "avo.h"
#include "backend.h"
#include "hash.h"
#include "jobspec.h"
#include "measure.h"
#include "pcg.h"
#include "proto.h"

#if defined(__SANITIZE_ADDRESS__)
#define CPU_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CPU_UNDER_ASAN 1
#endif
#endif

#define LOG_MAX 8192      /* bytes of compiler or runner output kept */
#define GUARD_BYTES 64    /* canary bytes before and after each candidate buffer */
#define BUFFER_ALIGN 64   /* alignment of every buffer handed to a kernel */
#define REPORT_FD 3       /* the runner's report pipe, as seen by the runner */
#define RUNNER_NOFILE 32  /* enough for dlopen, not for mischief */
#define MAX_CC_WORDS 16   /* words in $CC */
#define POLL_SLICE_MS 100 /* longest sleep between checks on a child */
#define BASE_FLAGS_N 4

static const char *const base_flags[BASE_FLAGS_N] = {"-O3", "-march=native", "-fPIC", "-shared"};

/* What marks the line of a compiler log that a reason quotes. */
static const char *const cc_error_markers[] = {"error:", "Error:", NULL};

/* What a compiler says when the machine, not the source, failed it. */
static const char *const cc_environment_markers[] = {"No space left on device",
                                                     "Read-only file system",
                                                     "Disk quota exceeded",
                                                     "virtual memory exhausted",
                                                     "out of memory allocating",
                                                     "Cannot allocate memory",
                                                     "Killed signal terminated program",
                                                     NULL};

/*
 * Whether a failed compile failed for the environment (an infrastructure
 * fault, status "error") rather than for the source: the compiler was
 * killed by a signal (the OOM killer, a limit) or its log says the disk is
 * full or read-only or memory ran out.
 */
static int compile_environment_failure(int status, const char *log, size_t len)
{
    if (WIFSIGNALED(status))
        return 1;
    for (const char *const *m = cc_environment_markers; *m; m++)
        if (memmem(log, len, *m, strlen(*m)))
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The job, parsed once into C values                                       */

/* The shared part of a job (jobspec.h) and what only this backend reads. */
typedef struct cpu_job {
    avo_jobspec spec;
    const char *source, *entry, *ref_source, *ref_entry; /* borrowed */
    const char **cflags;                                 /* borrowed strings, owned array */
    size_t ncflags;
} cpu_job;

/* Plain C types only; zero-length buffers are fine on the host; the runner
 * has rlimits, so limits.cpu_s and limits.memory_mb apply. */
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
    j->source = json_string_value(json_object_get(job, "source"));
    j->entry = json_string_value(json_object_get(job, "entry"));
    const json_t *ref = json_object_get(job, "reference");
    j->ref_source = json_string_value(json_object_get(ref, "source"));
    j->ref_entry = json_string_value(json_object_get(ref, "entry"));
    if (!j->source || !j->entry)
        return avo_error(err, errlen, AVO_EINVAL, "job needs \"source\" and \"entry\" strings");
    if (!j->ref_source || !j->ref_entry)
        return avo_error(err, errlen, AVO_EINVAL,
                         "job needs a \"reference\" with \"source\" and \"entry\"");

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
    return avo_jobspec_parse(job, &cpu_rules, &j->spec, err, errlen);
}

/* ------------------------------------------------------------------------ */
/* Small utilities                                                          */

/* The last LOG_MAX bytes of a stream. */
typedef struct tail_buf {
    char data[LOG_MAX];
    size_t len;
} tail_buf;

static void tail_append(tail_buf *t, const char *p, size_t n)
{
    if (n > LOG_MAX) {
        p += n - LOG_MAX;
        n = LOG_MAX;
    }
    if (t->len + n > LOG_MAX) {
        size_t drop = t->len + n - LOG_MAX;
        memmove(t->data, t->data + drop, t->len - drop);
        t->len -= drop;
    }
    memcpy(t->data + t->len, p, n);
    t->len += n;
}

/* Remove a compile directory and the files in it (no subdirectories). */
static void remove_compile_dir(const char *dir)
{
    static const char *const names[] = {"kernel.c", "kernel.so"};
    char path[PATH_MAX + 16];
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    size_t len = strlen(text);
    while (len > 0) {
        ssize_t n = write(fd, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            return -e;
        }
        text += n;
        len -= (size_t)n;
    }
    return close(fd) < 0 ? -errno : 0;
}

/* Read what is available on a non-blocking fd into the tail `t`.  Returns 1
 * at end of file or on an error that ends the stream, 0 when the fd has no
 * more for now. */
static int drain_log(int fd, tail_buf *t)
{
    char chunk[4096];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : 1;
        if (n == 0)
            return 1;
        tail_append(t, chunk, (size_t)n);
    }
}

/* Short name of a signal ("SIGSEGV"), or NULL if not a common one. */
static const char *signal_abbrev(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGABRT:
        return "SIGABRT";
    case SIGKILL:
        return "SIGKILL";
    case SIGTERM:
        return "SIGTERM";
    case SIGXCPU:
        return "SIGXCPU";
    case SIGXFSZ:
        return "SIGXFSZ";
    case SIGSYS:
        return "SIGSYS";
    case SIGTRAP:
        return "SIGTRAP";
    case SIGPIPE:
        return "SIGPIPE";
    case SIGINT:
        return "SIGINT";
    case SIGHUP:
        return "SIGHUP";
    case SIGALRM:
        return "SIGALRM";
    default:
        return NULL;
    }
}

static void describe_signal(int sig, char *buf, size_t len)
{
    const char *abbrev = signal_abbrev(sig);
    const char *text = strsignal(sig);
    if (abbrev)
        snprintf(buf, len, "%s (%s)", abbrev, text ? text : "unknown");
    else
        snprintf(buf, len, "signal %d (%s)", sig, text ? text : "unknown");
}

/*
 * Milliseconds for the next poll() while waiting on a child: a full slice
 * while its pipes are open (they wake us), and once they are closed a pause
 * that starts at 1 ms and doubles, since the child is most likely exiting.
 * Never past the deadline, `left` seconds away.
 */
static int wait_slice_ms(double left, int pipes_open, int *idle_ms)
{
    int ms = POLL_SLICE_MS;
    if (!pipes_open) {
        ms = *idle_ms;
        *idle_ms = ms * 2 > POLL_SLICE_MS ? POLL_SLICE_MS : ms * 2;
    }
    int left_ms = (int)(left * 1000) + 1;
    return ms < left_ms ? ms : left_ms;
}

static double timeval_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* ------------------------------------------------------------------------ */
/* Compiling                                                                */

/*
 * Run argv (argv[0] found through PATH) in directory `dir` with stdin from
 * /dev/null and stdout and stderr captured into `out`, in a process group of
 * its own, under LC_ALL=C and a CPU limit a little above the deadline that
 * its children (cc1, as) inherit.  At the wall-clock deadline the whole group
 * is killed with SIGKILL.  Returns 0 with the wait status and whether the
 * deadline struck, or a negative AVO_E* code (err filled) if it could not be
 * started.  An exec failure shows as exit status 127 with a line in `out`.
 */
static int spawn_capture(char *const argv[], const char *dir, double timeout_s, tail_buf *out,
                         int *ret_status, int *ret_timed_out, char *err, size_t errlen)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return avo_error(err, errlen, AVO_EIO, "pipe: %s", strerror(errno));
    double deadline = avo_monotonic() + timeout_s;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(pipefd[0]);
        close(pipefd[1]);
        return avo_error(err, errlen, AVO_ECHILD, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(pipefd[1], 1);
        dup2(pipefd[1], 2);
        close_range(3, ~0u, 0); /* the engine's pipes are none of its business */
        rlim_t cpu = (rlim_t)ceil(timeout_s) + 1;
        struct rlimit lim = {cpu, cpu + 1};
        setrlimit(RLIMIT_CPU, &lim);
        setenv("LC_ALL", "C", 1);
        if (dir && chdir(dir) < 0) {
            dprintf(2, "avo: cannot enter %s: %s\n", dir, strerror(errno));
            _exit(127);
        }
        execvp(argv[0], argv);
        dprintf(2, "avo: cannot run '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here, so the group exists before any kill */
    close(pipefd[1]);
    fcntl(pipefd[0], F_SETFL, O_NONBLOCK);

    int timed_out = 0, reaped = 0, open_pipe = 1, status = 0, idle_ms = 1;
    while (!reaped) {
        double left = deadline - avo_monotonic();
        if (left <= 0) {
            kill(-pid, SIGKILL);
            timed_out = 1;
            break;
        }
        struct pollfd p = {.fd = open_pipe ? pipefd[0] : -1, .events = POLLIN};
        poll(&p, 1, wait_slice_ms(left, open_pipe, &idle_ms)); /* deadline bounds errors */
        if (open_pipe && drain_log(pipefd[0], out))
            open_pipe = 0;
        /* The pipe may close before the child exits, or outlive it. */
        reaped = waitpid(pid, &status, WNOHANG) == pid;
    }
    if (!reaped)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    drain_log(pipefd[0], out);
    close(pipefd[0]);
    kill(-pid, SIGKILL); /* leftovers of the group, if any */
    *ret_status = status;
    *ret_timed_out = timed_out;
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
    tail_buf *out = calloc(1, sizeof *out);
    if (!out) {
        avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        return NULL;
    }
    int status, timed_out;
    if (spawn_capture(argv, NULL, 10, out, &status, &timed_out, err, errlen) < 0) {
        free(out);
        return NULL;
    }
    if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || out->len == 0) {
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

/* One compiled shared object. */
typedef struct build {
    char path[PATH_MAX];
    int cache_hit;
} build;

/*
 * Compile `source` into the cache (base flags, evaluator cflags and, when
 * with_knobs, the job's knobs) or find it there.  On success returns 0 with
 * out->path set.  On failure fills status, reason and log of `result`
 * ("compile_error", "timeout" or "error", and for the reference always
 * "invalid" or "error") and returns -1.  `flags_text` (may be NULL) receives
 * the joined flag string whenever it could be built (caller frees).
 */
static int compile_cached(const cpu_job *job, const char *source, int with_knobs, const char *what,
                          build *out, char **flags_text, json_t *result)
{
    char err[AVO_ERRLEN];
    int is_reference = !with_knobs;
    const char *version = compiler_version(err, sizeof err);
    if (!version) {
        avo_result_fail(result, "error", "%s", err);
        return -1;
    }

    const avo_jobspec *spec = &job->spec;
    size_t nflags = BASE_FLAGS_N + job->ncflags + (with_knobs ? spec->nknobs : 0);
    const char **flags = calloc(nflags + 1, sizeof *flags);
    char *flag_string = NULL, *knob_string = NULL;
    int rc = -1;
    tail_buf *log = NULL;
    char dir[PATH_MAX] = "";
    if (!flags)
        goto oom;
    size_t k = 0;
    for (size_t i = 0; i < BASE_FLAGS_N; i++)
        flags[k++] = base_flags[i];
    for (size_t i = 0; i < job->ncflags; i++)
        flags[k++] = job->cflags[i];
    for (size_t i = 0; with_knobs && i < spec->nknobs; i++)
        flags[k++] = spec->knobs[i];
    flag_string = join_flags(flags, nflags);
    knob_string = join_flags((const char *const *)spec->knobs, with_knobs ? spec->nknobs : 0);
    if (!flag_string || !knob_string)
        goto oom;

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
    out->cache_hit = access(out->path, R_OK) == 0;
    if (out->cache_hit) {
        rc = 0;
        goto done;
    }

    /* A private directory, so the compiler's messages name "kernel.c". */
    snprintf(dir, sizeof dir, "%s/tmp-%s-XXXXXX", spec->cache_dir, key);
    if (!mkdtemp(dir)) {
        avo_result_fail(result, "error", "cannot create a directory in %s: %s", spec->cache_dir,
                        strerror(errno));
        dir[0] = '\0';
        goto done;
    }
    char src_path[PATH_MAX + 16], so_path[PATH_MAX + 16];
    snprintf(src_path, sizeof src_path, "%s/kernel.c", dir);
    snprintf(so_path, sizeof so_path, "%s/kernel.so", dir);
    e = write_file(src_path, source);
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
    int status, timed_out;
    e = spawn_capture(argv, dir, spec->compile_timeout_s, log, &status, &timed_out, err,
                      sizeof err);
    free(argv);
    if (e < 0) {
        avo_result_fail(result, "error", "%s", err);
        goto done;
    }
    if (timed_out) {
        avo_result_fail(result, is_reference ? "error" : "timeout", "%scompile timed out after %gs",
                        is_reference ? "reference: " : "", spec->compile_timeout_s);
        avo_result_set_log(result, log->data, log->len, LOG_MAX);
        goto done;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char line[512];
        avo_result_error_line(log->data, log->len, cc_error_markers,
                              "the compiler failed without a message", line, sizeof line);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && strncmp(log->data, "avo: ", 5) == 0)
            avo_result_fail(result, "error", "%s", line + 5);
        else if (compile_environment_failure(status, log->data, log->len))
            avo_result_fail(result, "error", "the compiler failed for the environment: %s", line);
        else if (is_reference)
            avo_result_fail(result, "invalid", "reference compile error: %s", line);
        else
            avo_result_fail(result, "compile_error", "compile error: %s", line);
        avo_result_set_log(result, log->data, log->len, LOG_MAX);
        goto done;
    }
    if (rename(so_path, out->path) < 0) {
        avo_result_fail(result, "error", "cannot move the compiled %s into %s: %s", what,
                        spec->cache_dir, strerror(errno));
        goto done;
    }
    rc = 0;
    goto done;

oom:
    avo_result_fail(result, "error", "out of memory");
done:
    if (dir[0])
        remove_compile_dir(dir);
    if (flags_text) {
        *flags_text = flag_string;
        flag_string = NULL;
    }
    free(log);
    free(flag_string);
    free(knob_string);
    free(flags);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The runner: buffers, inputs, checks, timing                              */

/* Buffers of one config: candidate (guarded), reference, and saved inputs. */
typedef struct config_buffers {
    void **cand_base; /* allocations, guard included */
    void **cand;      /* what the candidate sees */
    void **ref;
    void **saved; /* inputs as generated (in and inout) */
    size_t *bytes;
    avo_measure_view *views; /* the above, as the checker reads them */
} config_buffers;

static void buffers_free(config_buffers *b, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        if (b->cand_base)
            free(b->cand_base[i]);
        if (b->ref)
            free(b->ref[i]);
        if (b->saved)
            free(b->saved[i]);
    }
    free(b->cand_base);
    free(b->cand);
    free(b->ref);
    free(b->saved);
    free(b->bytes);
    free(b->views);
    memset(b, 0, sizeof *b);
}

static void *aligned_buffer(size_t bytes)
{
    void *p = NULL;
    size_t size = (bytes + BUFFER_ALIGN - 1) / BUFFER_ALIGN * BUFFER_ALIGN;
    if (posix_memalign(&p, BUFFER_ALIGN, size ? size : BUFFER_ALIGN) != 0)
        return NULL;
    return p;
}

/* Allocate every buffer of config `cfg`; candidate buffers get guards.
 * Returns 0 or -1 with the name of the failing buffer in *ret_failed. */
static int buffers_alloc(const avo_jobspec *spec, const avo_config_spec *cfg, config_buffers *b,
                         const char **ret_failed)
{
    size_t n = spec->nargs;
    b->cand_base = calloc(n, sizeof *b->cand_base);
    b->cand = calloc(n, sizeof *b->cand);
    b->ref = calloc(n, sizeof *b->ref);
    b->saved = calloc(n, sizeof *b->saved);
    b->bytes = calloc(n, sizeof *b->bytes);
    b->views = calloc(n, sizeof *b->views);
    *ret_failed = "(bookkeeping)";
    if (!b->cand_base || !b->cand || !b->ref || !b->saved || !b->bytes || !b->views)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const avo_arg_spec *arg = &spec->args[i];
        b->views[i].arg = arg;
        if (arg->kind == AVO_ARG_SCALAR)
            continue;
        *ret_failed = arg->name;
        size_t bytes = cfg->lengths[i] * avo_dtype_size(arg->type);
        b->bytes[i] = bytes;
        b->cand_base[i] = aligned_buffer(GUARD_BYTES + bytes + GUARD_BYTES);
        b->ref[i] = aligned_buffer(bytes);
        if (!b->cand_base[i] || !b->ref[i])
            return -1;
        b->cand[i] = (unsigned char *)b->cand_base[i] + GUARD_BYTES;
        avo_measure_guard_fill(b->cand_base[i], GUARD_BYTES);
        avo_measure_guard_fill((unsigned char *)b->cand[i] + bytes, GUARD_BYTES);
        if (arg->kind != AVO_ARG_OUT && !(b->saved[i] = aligned_buffer(bytes)))
            return -1;
        b->views[i] = (avo_measure_view){.arg = arg,
                                         .length = cfg->lengths[i],
                                         .cand = b->cand_base[i],
                                         .ref = b->ref[i],
                                         .saved = b->saved[i]};
    }
    return 0;
}

/*
 * Fresh inputs for trial `trial` of config `cfg` (avo_measure_trial_rng).
 * Inputs go to saved, candidate and reference buffers; outputs of both are
 * poisoned.
 */
static void prepare_trial(const avo_jobspec *spec, const avo_config_spec *cfg, config_buffers *b,
                          int trial)
{
    avo_pcg32 rng;
    avo_measure_trial_rng(&rng, spec->seed, cfg->name, trial);
    for (size_t i = 0; i < spec->nargs; i++) {
        const avo_arg_spec *arg = &spec->args[i];
        if (arg->kind == AVO_ARG_SCALAR)
            continue;
        if (arg->kind == AVO_ARG_OUT) {
            avo_measure_poison(b->cand[i], arg->type, cfg->lengths[i]);
            avo_measure_poison(b->ref[i], arg->type, cfg->lengths[i]);
            continue;
        }
        avo_measure_fill_uniform(b->saved[i], arg->type, arg->lo, arg->hi, cfg->lengths[i], &rng,
                                 AVO_DRAW_DOUBLE);
        memcpy(b->cand[i], b->saved[i], b->bytes[i]);
        memcpy(b->ref[i], b->saved[i], b->bytes[i]);
    }
}

/* A kernel as libffi calls it: the real signature lives in the cif. */
typedef void (*kernel_fn)(void);

/* The runner's view of both kernels. */
typedef struct runner_ctx {
    const avo_jobspec *spec;
    ffi_cif cif;
    ffi_type **types;
    kernel_fn cand_fn;
    kernel_fn ref_fn;
    void **cand_values; /* per argument: address of the value libffi passes */
    void **ref_values;
} runner_ctx;

/* Point the libffi argument arrays at this config's buffers and scalars. */
static void bind_arguments(runner_ctx *ctx, const avo_config_spec *cfg, config_buffers *b)
{
    for (size_t i = 0; i < ctx->spec->nargs; i++) {
        if (ctx->spec->args[i].kind == AVO_ARG_SCALAR) {
            ctx->cand_values[i] = &cfg->scalars[i];
            ctx->ref_values[i] = &cfg->scalars[i];
        } else {
            ctx->cand_values[i] = &b->cand[i];
            ctx->ref_values[i] = &b->ref[i];
        }
    }
}

/* The timing sampler (avo_measure_sampler): seconds per call of `batch`
 * back-to-back candidate calls. */
static int time_batch(void *opaque, uint64_t batch, double *ret_s)
{
    runner_ctx *ctx = opaque;
    double t0 = avo_monotonic();
    for (uint64_t i = 0; i < batch; i++)
        ffi_call(&ctx->cif, ctx->cand_fn, NULL, ctx->cand_values);
    *ret_s = (avo_monotonic() - t0) / (double)batch;
    return 0;
}

/* Time the candidate on the inputs now in its buffers (avo_measure_time).
 * Fills median_s, spread and samples of `entry`. */
static void time_candidate(runner_ctx *ctx, json_t *entry, double *ret_median)
{
    avo_measure_timing t;
    avo_measure_time(ctx->spec, UINT64_C(1) << 40, time_batch, ctx, &t);
    json_object_set_new(entry, "median_s", json_real(t.median_s));
    json_object_set_new(entry, "spread", json_real(t.spread));
    json_object_set_new(entry, "samples", json_integer((json_int_t)t.samples));
    *ret_median = t.median_s;
}

/*
 * Verify and time one config.  Fills `entry`; returns 0 when correct, else
 * -1 with *ret_status ("wrong" or "error") and a reason (config named).
 */
static int run_config(runner_ctx *ctx, const avo_config_spec *cfg, json_t *entry,
                      const char **ret_status, char *reason, size_t len)
{
    const avo_jobspec *spec = ctx->spec;
    config_buffers b = {0};
    const char *failed;
    char why[512];
    double max_error = 0, error = 0;
    int rc = -1;
    *ret_status = "wrong";

    if (buffers_alloc(spec, cfg, &b, &failed) < 0) {
        *ret_status = "error";
        snprintf(reason, len, "config %s: cannot allocate buffer %s", cfg->name, failed);
        goto done;
    }
    bind_arguments(ctx, cfg, &b);
    for (int trial = 0; trial < spec->trials; trial++) {
        prepare_trial(spec, cfg, &b, trial);
        ffi_call(&ctx->cif, ctx->ref_fn, NULL, ctx->ref_values);
        ffi_call(&ctx->cif, ctx->cand_fn, NULL, ctx->cand_values);
        int bad = avo_measure_check(b.views, spec->nargs, GUARD_BYTES, &error, why, sizeof why);
        if (error > max_error || isnan(error))
            max_error = error;
        json_object_set_new(entry, "max_error", json_real(max_error));
        if (bad) {
            snprintf(reason, len, "config %s: %s", cfg->name, why);
            goto done;
        }
    }

    if (spec->timing) {
        double med;
        time_candidate(ctx, entry, &med);
        /* In-place kernels change their inout buffers on every call: start
         * them over and call once more; otherwise judge the last timed call. */
        int has_inout = 0;
        for (size_t i = 0; i < spec->nargs; i++)
            if (spec->args[i].kind == AVO_ARG_INOUT) {
                memcpy(b.cand[i], b.saved[i], b.bytes[i]);
                has_inout = 1;
            }
        if (has_inout) {
            for (size_t i = 0; i < spec->nargs; i++)
                if (spec->args[i].kind == AVO_ARG_OUT)
                    avo_measure_poison(b.cand[i], spec->args[i].type, cfg->lengths[i]);
            ffi_call(&ctx->cif, ctx->cand_fn, NULL, ctx->cand_values);
        }
        if (avo_measure_check(b.views, spec->nargs, GUARD_BYTES, &error, why, sizeof why) < 0) {
            snprintf(reason, len, "config %s: output of timed runs differs from reference: %s",
                     cfg->name, why);
            goto done;
        }
        if (med > 0) {
            json_object_set_new(entry, "gflops", json_real(cfg->flops / med / 1e9));
            json_object_set_new(entry, "gbs", json_real(cfg->bytes / med / 1e9));
        }
    }
    json_object_set_new(entry, "correct", json_true());
    rc = 0;
done:
    if (rc < 0) {
        json_t *text = avo_result_text(reason, strlen(reason));
        json_object_set_new(entry, "reason", text ? text : json_null());
    }
    buffers_free(&b, spec->nargs);
    return rc;
}

/* Best-effort: a network namespace of our own, with no interfaces. */
static void sandbox_network(void)
{
    if (unshare(CLONE_NEWNET) == 0)
        return;
    unshare(CLONE_NEWUSER | CLONE_NEWNET);
}

static void sandbox_limits(const avo_jobspec *spec)
{
    struct rlimit lim;
    if (spec->cpu_s > 0) {
        rlim_t cpu = (rlim_t)ceil(spec->cpu_s);
        lim = (struct rlimit){cpu, cpu + 1}; /* SIGXCPU, then SIGKILL a second later */
        setrlimit(RLIMIT_CPU, &lim);
    }
#ifndef CPU_UNDER_ASAN /* AddressSanitizer reserves terabytes of address space */
    if (spec->memory_mb > 0) {
        rlim_t bytes = (rlim_t)(spec->memory_mb * 1024.0 * 1024.0);
        lim = (struct rlimit){bytes, bytes};
        setrlimit(RLIMIT_AS, &lim);
    }
#endif
    lim = (struct rlimit){RUNNER_NOFILE, RUNNER_NOFILE};
    setrlimit(RLIMIT_NOFILE, &lim);
    lim = (struct rlimit){0, 0};
    setrlimit(RLIMIT_CORE, &lim);
}

#if AVO_HAVE_SECCOMP
/*
 * Install a seccomp filter that lets everything through except network
 * access, new processes and programs, debugging other processes, and
 * signals to anyone but ourselves; those fail with EPERM (clone3 with
 * ENOSYS, so threads fall back to clone).  Returns 0 or -1 with err filled.
 */
static int sandbox_seccomp(char *err, size_t errlen)
{
    static const int denied[] = {
        SCMP_SYS(socket),
        SCMP_SYS(socketpair),
        SCMP_SYS(connect),
        SCMP_SYS(bind),
        SCMP_SYS(listen),
        SCMP_SYS(accept),
        SCMP_SYS(accept4),
        SCMP_SYS(execve),
        SCMP_SYS(execveat),
        SCMP_SYS(fork),
        SCMP_SYS(vfork),
        SCMP_SYS(ptrace),
        SCMP_SYS(process_vm_readv),
        SCMP_SYS(process_vm_writev),
        SCMP_SYS(io_uring_setup),
        SCMP_SYS(pidfd_send_signal),
    };
    static const int self_only[] = {SCMP_SYS(kill), SCMP_SYS(tkill), SCMP_SYS(tgkill),
                                    SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo)};
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        avo_error(err, errlen, AVO_ENOMEM, "seccomp_init failed");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof denied / sizeof denied[0]; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), denied[i], 0);
    /* Spelled out rather than SCMP_A0(), which leaves fields to the reader. */
    const struct scmp_arg_cmp not_self = {
        .arg = 0, .op = SCMP_CMP_NE, .datum_a = (scmp_datum_t)getpid(), .datum_b = 0};
    const struct scmp_arg_cmp no_thread = {
        .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = CLONE_THREAD, .datum_b = 0};
    for (size_t i = 0; rc == 0 && i < sizeof self_only / sizeof self_only[0]; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), self_only[i], 1, not_self);
    if (rc == 0) /* clone(2) takes its flags first on x86-64 and arm64 */
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, no_thread);
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (rc == 0)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc < 0) {
        avo_error(err, errlen, AVO_EIO,
                  "cannot install the seccomp filter (%s); build with -Dseccomp=disabled "
                  "to run kernels without it",
                  strerror(-rc));
        return -1;
    }
    return 0;
}
#endif

static void report(json_t *msg)
{
    if (msg)
        avo_proto_send(REPORT_FD, msg, NULL, 0);
    json_decref(msg);
}

static _Noreturn void runner_done(const char *status, const char *reason)
{
    json_t *text = reason ? avo_result_text(reason, strlen(reason)) : json_null();
    report(json_pack("{s:{s:s, s:o*}}", "done", "status", status, "reason", text));
    _exit(0);
}

/* Load `path` and look up `entry`; on failure ends the runner. */
static kernel_fn load_kernel(const char *path, const char *entry, int is_reference)
{
    char reason[1024];
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *e = dlerror();
        snprintf(reason, sizeof reason, "%s%s",
                 is_reference ? "reference: " : "link error: ", e ? e : "dlopen failed");
        runner_done(is_reference ? "invalid" : "compile_error", reason);
    }
    dlerror();
    void *sym = dlsym(handle, entry);
    if (!sym) {
        snprintf(reason, sizeof reason, "symbol '%.200s' not found in %s", entry,
                 is_reference ? "reference" : "candidate");
        runner_done("invalid", reason);
    }
    kernel_fn fn;
    memcpy(&fn, &sym, sizeof fn); /* object to function pointer, as POSIX allows */
    return fn;
}

/*
 * The runner process, after fork: stdout/stderr go to the log pipe, the
 * report pipe is REPORT_FD, everything else is closed.  Sandboxes itself
 * before any candidate code (even a constructor) runs, then verifies and
 * times each config in order, reporting as it goes.  Never returns.
 */
static _Noreturn void runner_main(const cpu_job *job, const char *cand_so, const char *ref_so)
{
    const avo_jobspec *spec = &job->spec;
    static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE,  SIGILL, SIGABRT,
                                        SIGXCPU, SIGSYS, SIGTRAP, SIGPIPE};
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
        signal(crash_signals[i], SIG_DFL); /* die by the signal, whatever we inherited */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    sandbox_limits(spec);
    sandbox_network();
#if AVO_HAVE_SECCOMP
    char err[AVO_ERRLEN];
    if (sandbox_seccomp(err, sizeof err) < 0)
        runner_done("error", err);
#endif

    runner_ctx ctx = {.spec = spec};
    ctx.types = calloc(spec->nargs, sizeof *ctx.types);
    ctx.cand_values = calloc(spec->nargs, sizeof *ctx.cand_values);
    ctx.ref_values = calloc(spec->nargs, sizeof *ctx.ref_values);
    if (!ctx.types || !ctx.cand_values || !ctx.ref_values)
        runner_done("error", "runner out of memory");
    for (size_t i = 0; i < spec->nargs; i++) {
        const avo_arg_spec *arg = &spec->args[i];
        if (arg->kind != AVO_ARG_SCALAR)
            ctx.types[i] = &ffi_type_pointer;
        else if (arg->type == AVO_DT_F32)
            ctx.types[i] = &ffi_type_float;
        else if (arg->type == AVO_DT_F64)
            ctx.types[i] = &ffi_type_double;
        else if (arg->type == AVO_DT_I32)
            ctx.types[i] = &ffi_type_sint32;
        else
            ctx.types[i] = &ffi_type_sint64;
    }
    if (ffi_prep_cif(&ctx.cif, FFI_DEFAULT_ABI, (unsigned)spec->nargs, &ffi_type_void, ctx.types) !=
        FFI_OK)
        runner_done("invalid", "libffi cannot describe the argument list");

    ctx.ref_fn = load_kernel(ref_so, job->ref_entry, 1);
    ctx.cand_fn = load_kernel(cand_so, job->entry, 0);

    for (size_t c = 0; c < spec->nconfigs; c++) {
        const avo_config_spec *cfg = &spec->configs[c];
        report(json_pack("{s:s}", "progress", cfg->name));
        json_t *entry = avo_result_config_new(cfg->name);
        const char *status;
        char reason[1024];
        int rc = run_config(&ctx, cfg, entry, &status, reason, sizeof reason);
        report(json_pack("{s:o}", "config", entry));
        if (rc < 0)
            runner_done(status, reason);
    }
    runner_done("ok", NULL);
}

/* Move the runner's pipes to their fixed numbers and close the rest. */
static void runner_fds(int log_fd, int report_fd)
{
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0 && devnull != 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    if (report_fd != REPORT_FD)
        dup2(report_fd, REPORT_FD);
    else
        fcntl(REPORT_FD, F_SETFD, 0);
    if (close_range(REPORT_FD + 1, ~0u, 0) < 0)
        for (int fd = REPORT_FD + 1; fd < 1024; fd++)
            close(fd);
}

/* What the worker learned from a runner's report. */
typedef struct runner_report {
    char progress[256]; /* config being run at the end, "" if none */
    int in_config;      /* a progress came with no config entry after it */
    json_t *done;       /* the verdict message, or NULL */
} runner_report;

/* Parse the framed messages in buf: config entries go to `configs`. */
static void parse_report(const avo_proto_buf *buf, json_t *configs, runner_report *r)
{
    size_t at = 0;
    json_t *msg;
    while ((msg = avo_proto_decode(buf, &at))) {
        const char *progress = json_string_value(json_object_get(msg, "progress"));
        json_t *entry = json_object_get(msg, "config");
        json_t *done = json_object_get(msg, "done");
        if (progress) {
            snprintf(r->progress, sizeof r->progress, "%s", progress);
            r->in_config = 1;
        } else if (json_is_object(entry)) {
            json_array_append(configs, entry);
            r->in_config = 0;
        } else if (json_is_object(done) && !r->done) {
            r->done = json_incref(done);
        }
        json_decref(msg);
    }
}

/*
 * Fork the runner for this job and watch it until it ends or its deadline
 * passes (then it is killed).  Sets status, reason, log, run_s and configs
 * of `result`.  The runner is always reaped.
 */
static void run_runner(const cpu_job *job, const char *cand_so, const char *ref_so, json_t *result)
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
        /* The runner dies with its worker, which dies with the engine: a
         * killed engine leaves no kernel spinning. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != worker)
            _exit(127);
        runner_fds(log_pipe[1], report_pipe[1]);
        runner_main(job, cand_so, ref_so);
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
    fcntl(report_pipe[0], F_SETFL, O_NONBLOCK);
    fcntl(log_pipe[0], F_SETFL, O_NONBLOCK);

    tail_buf *log = calloc(1, sizeof *log);
    tail_buf scratch; /* only used if the log buffer could not be allocated */
    tail_buf *sink = log ? log : &scratch;
    avo_proto_buf reports = {0};
    double deadline = start + spec->timeout_s;
    int killed = 0, reaped = 0, status = 0, report_open = 1, log_open = 1, idle_ms = 1;
    struct rusage usage = {0};
    scratch.len = 0;

    /* Until the runner is reaped: it may close its pipes and go on running,
     * and a descendant may hold them open after it exits. */
    while (!reaped) {
        double left = deadline - avo_monotonic();
        if (left <= 0) {
            kill(pid, SIGKILL);
            killed = 1;
            break;
        }
        struct pollfd p[2] = {{.fd = report_open ? report_pipe[0] : -1, .events = POLLIN},
                              {.fd = log_open ? log_pipe[0] : -1, .events = POLLIN}};
        poll(p, 2,
             wait_slice_ms(left, report_open || log_open, &idle_ms)); /* deadline bounds errors */
        if (report_open && avo_proto_drain(report_pipe[0], &reports)) /* a flood is cut off */
            report_open = 0;
        if (log_open && drain_log(log_pipe[0], sink))
            log_open = 0;
        reaped = wait4(pid, &status, WNOHANG, &usage) == pid;
    }
    if (!reaped)
        while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR)
            ;
    avo_proto_drain(report_pipe[0], &reports);
    drain_log(log_pipe[0], sink);
    close(report_pipe[0]);
    close(log_pipe[0]);
    json_object_set_new(result, "run_s", json_real(avo_monotonic() - start));

    json_t *configs = json_object_get(result, "configs");
    runner_report r = {.done = NULL};
    parse_report(&reports, configs, &r);
    free(reports.data);

    char where[300];
    if (r.progress[0] && r.in_config)
        snprintf(where, sizeof where, "in config %s", r.progress);
    else if (r.progress[0])
        snprintf(where, sizeof where, "after config %s", r.progress);
    else
        snprintf(where, sizeof where, "before the first config");
    double cpu_used = timeval_s(usage.ru_utime) + timeval_s(usage.ru_stime);

    if (r.done) {
        const char *st = json_string_value(json_object_get(r.done, "status"));
        json_object_set_new(result, "status", json_string(st ? st : "error"));
        json_object_set(result, "reason", json_object_get(r.done, "reason"));
        json_decref(r.done);
    } else if (killed) {
        avo_result_fail(result, "timeout", "timed out after %gs %s", spec->timeout_s, where);
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (sig == SIGXCPU || (sig == SIGKILL && spec->cpu_s > 0 && cpu_used >= spec->cpu_s)) {
            avo_result_fail(result, "timeout", "exceeded the CPU time limit of %gs %s", spec->cpu_s,
                            where);
        } else {
            char name[128];
            describe_signal(sig, name, sizeof name);
            avo_result_fail(result, "crashed", "crashed with %s %s", name, where);
        }
    } else {
        avo_result_fail(result, "crashed", "runner exited with status %d without a verdict %s",
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1, where);
    }

    /* The config that was cut short still counts as attempted. */
    if (!r.done && r.in_config) {
        json_t *entry = avo_result_config_new(r.progress);
        if (entry) {
            json_object_set(entry, "reason", json_object_get(result, "reason"));
            json_array_append_new(configs, entry);
        }
    }
    const char *final = json_string_value(json_object_get(result, "status"));
    if (log && log->len && final && strcmp(final, "ok") != 0)
        avo_result_set_log(result, log->data, log->len, LOG_MAX);
    free(log);
}

/* ------------------------------------------------------------------------ */

/*
 * The backend entry point: parse, compile both sources, run.  Always returns
 * a result (caller owns) with status and reason set; NULL only when even the
 * result skeleton cannot be allocated.
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
    double t0 = avo_monotonic();
    build cand = {0}, ref = {0};
    char *flags = NULL;
    int rc = compile_cached(&spec, spec.source, 1, "candidate", &cand, &flags, result);
    if (flags)
        json_object_set_new(result, "cflags", json_string(flags));
    free(flags);
    json_object_set_new(result, "cache_hit", json_boolean(rc == 0 && cand.cache_hit));
    /* compile_only: the candidate's compile status and log, nothing run. */
    int compile_only = json_is_true(json_object_get(job, "compile_only"));
    if (rc == 0 && !compile_only)
        rc = compile_cached(&spec, spec.ref_source, 0, "reference", &ref, NULL, result);
    json_object_set_new(result, "compile_s", json_real(avo_monotonic() - t0));
    if (rc == 0 && !compile_only)
        run_runner(&spec, cand.path, ref.path, result);
    cpu_job_free(&spec);
    return result;
}

const avo_backend avo_backend_cpu = {"cpu", cpu_run_job, &cpu_rules};
