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
#include <stdarg.h>
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

/* ------------------------------------------------------------------------ */
/* The job, parsed once into C values                                       */

typedef enum { KIND_SCALAR, KIND_IN, KIND_OUT, KIND_INOUT } arg_kind;
typedef enum { TYPE_F32, TYPE_F64, TYPE_I32, TYPE_I64 } value_type;

typedef union scalar_value {
    float f32;
    double f64;
    int32_t i32;
    int64_t i64;
} scalar_value;

typedef struct arg_spec {
    const char *name; /* borrowed from the job */
    arg_kind kind;
    value_type type;
    double lo, hi; /* input range */
} arg_spec;

typedef struct config_spec {
    const char *name;      /* borrowed from the job */
    scalar_value *scalars; /* per argument; set for scalar arguments */
    size_t *lengths;       /* per argument; element counts of buffers */
    double flops, bytes;
} config_spec;

typedef struct job_spec {
    const char *source, *entry, *ref_source, *ref_entry; /* borrowed */
    const char *cache_dir;                               /* owned */
    arg_spec *args;
    size_t nargs;
    config_spec *configs;
    size_t nconfigs;
    const char **cflags; /* borrowed strings, owned array */
    size_t ncflags;
    char **knobs; /* "-DNAME=VALUE", owned, sorted by name */
    size_t nknobs;
    double atol, rtol;
    uint64_t seed;
    int trials;
    int timing;
    double min_sample_s, target_spread, max_seconds;
    int min_samples, max_samples;
    double timeout_s, compile_timeout_s, cpu_s, memory_mb;
} job_spec;

static size_t type_size(value_type t)
{
    return t == TYPE_F32 || t == TYPE_I32 ? 4 : 8;
}

static int is_float(value_type t)
{
    return t == TYPE_F32 || t == TYPE_F64;
}

static void job_spec_free(job_spec *s)
{
    if (s->configs)
        for (size_t i = 0; i < s->nconfigs; i++) {
            free(s->configs[i].scalars);
            free(s->configs[i].lengths);
        }
    if (s->knobs)
        for (size_t i = 0; i < s->nknobs; i++)
            free(s->knobs[i]);
    free(s->configs);
    free(s->knobs);
    free(s->args);
    free(s->cflags);
    free((char *)s->cache_dir);
    memset(s, 0, sizeof *s);
}

/* A number field of `obj`, or `fallback` when absent; -1 when not a number. */
static int get_number(const json_t *obj, const char *key, double fallback, double *ret)
{
    const json_t *v = obj ? json_object_get(obj, key) : NULL;
    if (!v) {
        *ret = fallback;
        return 0;
    }
    if (!json_is_number(v))
        return -1;
    *ret = json_number_value(v);
    return 0;
}

static int parse_type(const char *s, value_type *ret)
{
    static const char *const names[] = {"f32", "f64", "i32", "i64"};
    for (int i = 0; i < 4; i++)
        if (s && strcmp(s, names[i]) == 0) {
            *ret = (value_type)i;
            return 0;
        }
    return -1;
}

static int parse_kind(const char *s, arg_kind *ret)
{
    static const char *const names[] = {"scalar", "in", "out", "inout"};
    for (int i = 0; i < 4; i++)
        if (s && strcmp(s, names[i]) == 0) {
            *ret = (arg_kind)i;
            return 0;
        }
    return -1;
}

/* The job's "args": names unique, kinds and types known, ranges ordered. */
static int parse_args(const json_t *job, job_spec *s, char *err, size_t errlen)
{
    const json_t *args = json_object_get(job, "args");
    if (!json_is_array(args) || json_array_size(args) == 0)
        return avo_error(err, errlen, AVO_EINVAL, "job has no \"args\" list");
    s->nargs = json_array_size(args);
    s->args = calloc(s->nargs, sizeof *s->args);
    if (!s->args)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->nargs; i++) {
        const json_t *a = json_array_get(args, i);
        arg_spec *arg = &s->args[i];
        arg->name = json_string_value(json_object_get(a, "name"));
        if (!arg->name)
            return avo_error(err, errlen, AVO_EINVAL, "argument %zu has no name", i + 1);
        if (parse_kind(json_string_value(json_object_get(a, "kind")), &arg->kind) < 0)
            return avo_error(err, errlen, AVO_EINVAL,
                             "argument '%s': kind must be scalar, in, out or inout", arg->name);
        if (parse_type(json_string_value(json_object_get(a, "type")), &arg->type) < 0)
            return avo_error(err, errlen, AVO_EINVAL,
                             "argument '%s': type must be f32, f64, i32 or i64", arg->name);
        arg->lo = -1.0;
        arg->hi = 1.0;
        const json_t *range = json_object_get(a, "range");
        if (range) {
            const json_t *lo = json_array_get(range, 0), *hi = json_array_get(range, 1);
            if (json_array_size(range) != 2 || !json_is_number(lo) || !json_is_number(hi) ||
                json_number_value(lo) > json_number_value(hi))
                return avo_error(err, errlen, AVO_EINVAL,
                                 "argument '%s': range must be [low, high]", arg->name);
            arg->lo = json_number_value(lo);
            arg->hi = json_number_value(hi);
        }
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->args[j].name, arg->name) == 0)
                return avo_error(err, errlen, AVO_EINVAL, "argument '%s' appears twice", arg->name);
    }
    return 0;
}

/* Convert a config's scalar value for argument `arg`; -1 when unusable. */
static int parse_scalar(const arg_spec *arg, const json_t *v, scalar_value *ret)
{
    if (!json_is_number(v))
        return -1;
    if (is_float(arg->type)) {
        double d = json_number_value(v);
        if (arg->type == TYPE_F32)
            ret->f32 = (float)d;
        else
            ret->f64 = d;
        return 0;
    }
    if (!json_is_integer(v))
        return -1;
    json_int_t n = json_integer_value(v);
    if (arg->type == TYPE_I32) {
        if (n < INT32_MIN || n > INT32_MAX)
            return -1;
        ret->i32 = (int32_t)n;
    } else {
        ret->i64 = (int64_t)n;
    }
    return 0;
}

/* The job's "configs": a value for every scalar and a length for every
 * buffer argument, so the runner never meets a hole. */
static int parse_configs(const json_t *job, job_spec *s, char *err, size_t errlen)
{
    const json_t *configs = json_object_get(job, "configs");
    if (!json_is_array(configs) || json_array_size(configs) == 0)
        return avo_error(err, errlen, AVO_EINVAL, "job has no \"configs\" list");
    s->nconfigs = json_array_size(configs);
    s->configs = calloc(s->nconfigs, sizeof *s->configs);
    if (!s->configs)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    for (size_t c = 0; c < s->nconfigs; c++) {
        const json_t *cj = json_array_get(configs, c);
        config_spec *cfg = &s->configs[c];
        cfg->name = json_string_value(json_object_get(cj, "name"));
        if (!cfg->name)
            return avo_error(err, errlen, AVO_EINVAL, "config %zu has no name", c + 1);
        cfg->scalars = calloc(s->nargs, sizeof *cfg->scalars);
        cfg->lengths = calloc(s->nargs, sizeof *cfg->lengths);
        if (!cfg->scalars || !cfg->lengths)
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        if (get_number(cj, "flops", 0, &cfg->flops) < 0 ||
            get_number(cj, "bytes", 0, &cfg->bytes) < 0)
            return avo_error(err, errlen, AVO_EINVAL,
                             "config '%s': flops and bytes must be numbers", cfg->name);
        const json_t *scalars = json_object_get(cj, "scalars");
        const json_t *lengths = json_object_get(cj, "lengths");
        for (size_t i = 0; i < s->nargs; i++) {
            const arg_spec *arg = &s->args[i];
            if (arg->kind == KIND_SCALAR) {
                if (parse_scalar(arg, json_object_get(scalars, arg->name), &cfg->scalars[i]) < 0)
                    return avo_error(err, errlen, AVO_EINVAL,
                                     "config '%s': scalar '%s' is missing or not a valid %s",
                                     cfg->name, arg->name,
                                     is_float(arg->type) ? "number" : "integer");
                continue;
            }
            const json_t *len = json_object_get(lengths, arg->name);
            json_int_t n = json_integer_value(len);
            if (!json_is_integer(len) || n < 0 || (uint64_t)n > SIZE_MAX / 8 / 2)
                return avo_error(err, errlen, AVO_EINVAL,
                                 "config '%s': length of buffer '%s' is missing or invalid",
                                 cfg->name, arg->name);
            cfg->lengths[i] = (size_t)n;
        }
    }
    return 0;
}

static int knob_name_ok(const char *name)
{
    if (!(*name == '_' || (*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z')))
        return 0;
    for (const char *p = name; *p; p++)
        if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

static int compare_knobs(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Knobs as sorted "-DNAME=VALUE" flags: integers and reals in decimal,
 * booleans as 1/0, strings verbatim. */
static int parse_knobs(const json_t *job, job_spec *s, char *err, size_t errlen)
{
    const json_t *knobs = json_object_get(job, "knobs");
    if (!knobs || json_is_null(knobs))
        return 0;
    if (!json_is_object(knobs))
        return avo_error(err, errlen, AVO_EINVAL, "\"knobs\" must be an object");
    s->knobs = calloc(json_object_size(knobs) + 1, sizeof *s->knobs);
    if (!s->knobs)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)knobs, name, v)
    {
        if (!knob_name_ok(name))
            return avo_error(err, errlen, AVO_EINVAL, "knob name '%.64s' is not a C identifier",
                             name);
        char value[64];
        const char *text = value;
        if (json_is_integer(v))
            snprintf(value, sizeof value, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else if (json_is_real(v))
            snprintf(value, sizeof value, "%.17g", json_real_value(v));
        else if (json_is_boolean(v))
            snprintf(value, sizeof value, "%d", json_is_true(v));
        else if (json_is_string(v))
            text = json_string_value(v);
        else
            return avo_error(err, errlen, AVO_EINVAL,
                             "knob '%s' must be a number, boolean or string", name);
        size_t len = strlen(name) + strlen(text) + 4;
        char *flag = malloc(len);
        if (!flag)
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        snprintf(flag, len, "-D%s=%s", name, text);
        s->knobs[s->nknobs++] = flag;
    }
    qsort(s->knobs, s->nknobs, sizeof *s->knobs, compare_knobs);
    return 0;
}

static char *default_cache_dir(void)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char path[PATH_MAX];
    if (xdg && *xdg)
        snprintf(path, sizeof path, "%s/avo/cpu", xdg);
    else if (home && *home)
        snprintf(path, sizeof path, "%s/.cache/avo/cpu", home);
    else
        snprintf(path, sizeof path, "/tmp/avo-cache-%ld/cpu", (long)getuid());
    return strdup(path);
}

/*
 * Fill `s` from `job`, filling in the protocol's defaults.  On failure
 * returns a negative code with a one-line reason in err; `s` must then still
 * be released with job_spec_free.  `s` borrows strings from `job`, which must
 * outlive it.
 */
static int job_spec_parse(const json_t *job, job_spec *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->source = json_string_value(json_object_get(job, "source"));
    s->entry = json_string_value(json_object_get(job, "entry"));
    const json_t *ref = json_object_get(job, "reference");
    s->ref_source = json_string_value(json_object_get(ref, "source"));
    s->ref_entry = json_string_value(json_object_get(ref, "entry"));
    if (!s->source || !s->entry)
        return avo_error(err, errlen, AVO_EINVAL, "job needs \"source\" and \"entry\" strings");
    if (!s->ref_source || !s->ref_entry)
        return avo_error(err, errlen, AVO_EINVAL,
                         "job needs a \"reference\" with \"source\" and \"entry\"");

    const json_t *cflags = json_object_get(job, "cflags");
    if (cflags && !json_is_null(cflags)) {
        if (!json_is_array(cflags))
            return avo_error(err, errlen, AVO_EINVAL, "\"cflags\" must be a list of strings");
        s->cflags = calloc(json_array_size(cflags) + 1, sizeof *s->cflags);
        if (!s->cflags)
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        for (size_t i = 0; i < json_array_size(cflags); i++) {
            s->cflags[i] = json_string_value(json_array_get(cflags, i));
            if (!s->cflags[i])
                return avo_error(err, errlen, AVO_EINVAL, "\"cflags\" must be a list of strings");
        }
        s->ncflags = json_array_size(cflags);
    }

    int rc = parse_knobs(job, s, err, errlen);
    if (rc == 0)
        rc = parse_args(job, s, err, errlen);
    if (rc == 0)
        rc = parse_configs(job, s, err, errlen);
    if (rc < 0)
        return rc;

    const json_t *tol = json_object_get(job, "tolerance");
    const json_t *timing = json_object_get(job, "timing");
    const json_t *limits = json_object_get(job, "limits");
    double trials, min_samples, max_samples;
    if (get_number(tol, "atol", 1e-4, &s->atol) < 0 ||
        get_number(tol, "rtol", 1e-4, &s->rtol) < 0 || get_number(job, "trials", 2, &trials) < 0 ||
        get_number(timing, "min_sample_s", 0.001, &s->min_sample_s) < 0 ||
        get_number(timing, "min_samples", 5, &min_samples) < 0 ||
        get_number(timing, "max_samples", 40, &max_samples) < 0 ||
        get_number(timing, "target_spread", 0.02, &s->target_spread) < 0 ||
        get_number(timing, "max_seconds", 2.0, &s->max_seconds) < 0 ||
        get_number(limits, "timeout_s", 30, &s->timeout_s) < 0 ||
        get_number(limits, "compile_timeout_s", 60, &s->compile_timeout_s) < 0 ||
        get_number(limits, "memory_mb", 4096, &s->memory_mb) < 0 ||
        get_number(limits, "cpu_s", 60, &s->cpu_s) < 0)
        return avo_error(err, errlen, AVO_EINVAL,
                         "tolerance, trials, timing and limits fields must be numbers");
    if (s->atol < 0 || s->rtol < 0 || !(s->timeout_s > 0) || !(s->compile_timeout_s > 0))
        return avo_error(err, errlen, AVO_EINVAL, "tolerances must be >= 0 and timeouts > 0");
    s->trials = trials < 2 ? 2 : trials > 1000 ? 1000 : (int)trials;
    s->min_samples = min_samples < 1 ? 1 : min_samples > 1e6 ? 1000000 : (int)min_samples;
    s->max_samples = max_samples < s->min_samples ? s->min_samples
                     : max_samples > 1e6          ? 1000000
                                                  : (int)max_samples;
    const json_t *enabled = json_object_get(timing, "enabled");
    s->timing = enabled ? json_is_true(enabled) : 1;

    const json_t *seed = json_object_get(job, "seed");
    if (seed && !json_is_integer(seed))
        return avo_error(err, errlen, AVO_EINVAL, "\"seed\" must be an integer");
    s->seed = (uint64_t)json_integer_value(seed);

    const char *cache_dir = json_string_value(json_object_get(job, "cache_dir"));
    s->cache_dir = cache_dir && *cache_dir ? strdup(cache_dir) : default_cache_dir();
    if (!s->cache_dir)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    if (strlen(s->cache_dir) > PATH_MAX - 128)
        return avo_error(err, errlen, AVO_EINVAL, "\"cache_dir\" is too long");
    return 0;
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

/* Length of the valid UTF-8 sequence at s[0..n), 0 when invalid or NUL. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf; /* bounds of the second byte */
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        if (c == 0xed)
            hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return len;
}

/* A JSON string of arbitrary bytes (compiler or kernel output): bytes that
 * are not valid UTF-8 become '?'.  New reference, NULL when out of memory. */
static json_t *json_text(const char *s, size_t n)
{
    char *clean = malloc(n + 1);
    if (!clean)
        return NULL;
    size_t out = 0;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_sequence((const unsigned char *)s + i, n - i);
        if (len == 0) {
            clean[out++] = '?';
            i++;
        } else {
            memcpy(clean + out, s + i, len);
            out += len;
            i += len;
        }
    }
    json_t *str = json_stringn(clean, out);
    free(clean);
    return str;
}

/* Set status and a printf-formatted reason on a result. */
static void result_fail(json_t *result, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void result_fail(json_t *result, const char *status, const char *fmt, ...)
{
    char reason[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    json_object_set_new(result, "status", json_string(status));
    json_t *text = json_text(reason, strlen(reason));
    json_object_set_new(result, "reason", text ? text : json_null());
}

static void result_set_log(json_t *result, const tail_buf *log)
{
    json_t *text = json_text(log->data, log->len);
    if (text)
        json_object_set_new(result, "log", text);
}

static int mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -ENAMETOOLONG;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
        return -errno;
    return 0;
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

/* A growing byte buffer (the runner's report); data is owned. */
typedef struct byte_buf {
    char *data;
    size_t len, cap;
} byte_buf;

/* Read what is available on a non-blocking fd into `t`, or into `grow` when
 * that is non-NULL (up to AVO_PROTO_MAX bytes).  Returns 1 at end of file or
 * on an error that ends the stream, 0 when the fd has no more for now. */
static int drain_fd(int fd, tail_buf *t, byte_buf *grow)
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
        if (!grow) {
            tail_append(t, chunk, (size_t)n);
            continue;
        }
        if (grow->len + (size_t)n > grow->cap) {
            size_t cap = grow->cap ? grow->cap * 2 : 8192;
            while (cap < grow->len + (size_t)n)
                cap *= 2;
            if (cap > AVO_PROTO_MAX)
                return 1; /* a runner flooding its report gets cut off */
            char *data = realloc(grow->data, cap);
            if (!data)
                return 1;
            grow->data = data;
            grow->cap = cap;
        }
        memcpy(grow->data + grow->len, chunk, (size_t)n);
        grow->len += (size_t)n;
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
        if (open_pipe && drain_fd(pipefd[0], out, NULL))
            open_pipe = 0;
        /* The pipe may close before the child exits, or outlive it. */
        reaped = waitpid(pid, &status, WNOHANG) == pid;
    }
    if (!reaped)
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    drain_fd(pipefd[0], out, NULL);
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

/* The first line of a compiler log that reports an error (or the first
 * line at all), copied into buf. */
static void first_error_line(const tail_buf *log, char *buf, size_t len)
{
    const char *start = log->data, *end = log->data + log->len, *pick = NULL;
    for (const char *line = start; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%.*s", (int)(n < sizeof tmp ? n : sizeof tmp - 1), line);
        if (strstr(tmp, "error:") || strstr(tmp, "Error:")) {
            pick = line;
            break;
        }
        line = nl ? nl + 1 : end;
    }
    if (!pick)
        pick = start;
    const char *nl = memchr(pick, '\n', (size_t)(end - pick));
    size_t n = nl ? (size_t)(nl - pick) : (size_t)(end - pick);
    if (n == 0) {
        snprintf(buf, len, "the compiler failed without a message");
        return;
    }
    snprintf(buf, len, "%.*s", (int)(n < 400 ? n : 400), pick);
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
static int compile_cached(const job_spec *spec, const char *source, int with_knobs,
                          const char *what, build *out, char **flags_text, json_t *result)
{
    char err[AVO_ERRLEN];
    int is_reference = !with_knobs;
    const char *version = compiler_version(err, sizeof err);
    if (!version) {
        result_fail(result, "error", "%s", err);
        return -1;
    }

    size_t nflags = BASE_FLAGS_N + spec->ncflags + (with_knobs ? spec->nknobs : 0);
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
    for (size_t i = 0; i < spec->ncflags; i++)
        flags[k++] = spec->cflags[i];
    for (size_t i = 0; with_knobs && i < spec->nknobs; i++)
        flags[k++] = spec->knobs[i];
    flag_string = join_flags(flags, nflags);
    knob_string = join_flags((const char *const *)spec->knobs, with_knobs ? spec->nknobs : 0);
    if (!flag_string || !knob_string)
        goto oom;

    const char *parts[] = {source, knob_string, flag_string, version};
    char key[AVO_HASH_HEXLEN + 1];
    if (avo_hash_parts(parts, 4, key) < 0) {
        result_fail(result, "error", "cannot hash the %s source", what);
        goto done;
    }
    int e = mkdir_p(spec->cache_dir);
    if (e < 0) {
        result_fail(result, "error", "cannot create cache directory %s: %s", spec->cache_dir,
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
        result_fail(result, "error", "cannot create a directory in %s: %s", spec->cache_dir,
                    strerror(errno));
        dir[0] = '\0';
        goto done;
    }
    char src_path[PATH_MAX + 16], so_path[PATH_MAX + 16];
    snprintf(src_path, sizeof src_path, "%s/kernel.c", dir);
    snprintf(so_path, sizeof so_path, "%s/kernel.so", dir);
    e = write_file(src_path, source);
    if (e < 0) {
        result_fail(result, "error", "cannot write %s: %s", src_path, strerror(-e));
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
        result_fail(result, "error", "%s", err);
        goto done;
    }
    if (timed_out) {
        result_fail(result, is_reference ? "error" : "timeout", "%scompile timed out after %gs",
                    is_reference ? "reference: " : "", spec->compile_timeout_s);
        result_set_log(result, log);
        goto done;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char line[512];
        first_error_line(log, line, sizeof line);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && strncmp(log->data, "avo: ", 5) == 0)
            result_fail(result, "error", "%s", line + 5);
        else if (is_reference)
            result_fail(result, "invalid", "reference compile error: %s", line);
        else
            result_fail(result, "compile_error", "compile error: %s", line);
        result_set_log(result, log);
        goto done;
    }
    if (rename(so_path, out->path) < 0) {
        result_fail(result, "error", "cannot move the compiled %s into %s: %s", what,
                    spec->cache_dir, strerror(errno));
        goto done;
    }
    rc = 0;
    goto done;

oom:
    result_fail(result, "error", "out of memory");
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
} config_buffers;

static const unsigned char guard_pattern[8] = {0xa7, 0x5c, 0x3e, 0x91, 0xd2, 0x48, 0x6b, 0xf0};

static void fill_guard(unsigned char *p)
{
    for (size_t i = 0; i < GUARD_BYTES; i++)
        p[i] = guard_pattern[i % sizeof guard_pattern];
}

static int guard_intact(const unsigned char *p)
{
    for (size_t i = 0; i < GUARD_BYTES; i++)
        if (p[i] != guard_pattern[i % sizeof guard_pattern])
            return 0;
    return 1;
}

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
static int buffers_alloc(const job_spec *spec, const config_spec *cfg, config_buffers *b,
                         const char **ret_failed)
{
    size_t n = spec->nargs;
    b->cand_base = calloc(n, sizeof *b->cand_base);
    b->cand = calloc(n, sizeof *b->cand);
    b->ref = calloc(n, sizeof *b->ref);
    b->saved = calloc(n, sizeof *b->saved);
    b->bytes = calloc(n, sizeof *b->bytes);
    *ret_failed = "(bookkeeping)";
    if (!b->cand_base || !b->cand || !b->ref || !b->saved || !b->bytes)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const arg_spec *arg = &spec->args[i];
        if (arg->kind == KIND_SCALAR)
            continue;
        *ret_failed = arg->name;
        size_t bytes = cfg->lengths[i] * type_size(arg->type);
        b->bytes[i] = bytes;
        b->cand_base[i] = aligned_buffer(GUARD_BYTES + bytes + GUARD_BYTES);
        b->ref[i] = aligned_buffer(bytes);
        if (!b->cand_base[i] || !b->ref[i])
            return -1;
        b->cand[i] = (unsigned char *)b->cand_base[i] + GUARD_BYTES;
        fill_guard(b->cand_base[i]);
        fill_guard((unsigned char *)b->cand[i] + bytes);
        if (arg->kind != KIND_OUT && !(b->saved[i] = aligned_buffer(bytes)))
            return -1;
    }
    return 0;
}

/* Poison bit patterns: a quiet NaN for floats, 0xdeadbeef for integers. */
static const uint32_t poison32_f = 0x7fc0deadu;
static const uint64_t poison64_f = 0x7ff80000deadbeefull;
static const uint32_t poison32_i = 0xdeadbeefu;
static const uint64_t poison64_i = 0xdeadbeefdeadbeefull;

static void poison(void *buf, value_type t, size_t n)
{
    if (type_size(t) == 4) {
        uint32_t v = t == TYPE_F32 ? poison32_f : poison32_i, *p = buf;
        for (size_t i = 0; i < n; i++)
            p[i] = v;
    } else {
        uint64_t v = t == TYPE_F64 ? poison64_f : poison64_i, *p = buf;
        for (size_t i = 0; i < n; i++)
            p[i] = v;
    }
}

static int is_poison(const void *buf, value_type t, size_t i)
{
    switch (t) {
    case TYPE_F32:
        return ((const uint32_t *)buf)[i] == poison32_f;
    case TYPE_I32:
        return ((const uint32_t *)buf)[i] == poison32_i;
    case TYPE_F64:
        return ((const uint64_t *)buf)[i] == poison64_f;
    default:
        return ((const uint64_t *)buf)[i] == poison64_i;
    }
}

static double element(const void *buf, value_type t, size_t i)
{
    switch (t) {
    case TYPE_F32:
        return ((const float *)buf)[i];
    case TYPE_F64:
        return ((const double *)buf)[i];
    case TYPE_I32:
        return ((const int32_t *)buf)[i];
    default:
        return (double)((const int64_t *)buf)[i];
    }
}

/* Fill n elements with uniform values in [lo, hi] (integers: inclusive). */
static void fill_uniform(void *buf, const arg_spec *arg, size_t n, avo_pcg32 *rng)
{
    double lo = arg->lo, hi = arg->hi;
    if (is_float(arg->type)) {
        for (size_t i = 0; i < n; i++) {
            double u = avo_pcg32_double(rng);
            if (arg->type == TYPE_F32)
                ((float *)buf)[i] = (float)(lo + (hi - lo) * u);
            else
                ((double *)buf)[i] = lo + (hi - lo) * u;
        }
        return;
    }
    int64_t ilo = (int64_t)ceil(lo), ihi = (int64_t)floor(hi);
    if (arg->type == TYPE_I32) {
        ilo = ilo < INT32_MIN ? INT32_MIN : ilo;
        ihi = ihi > INT32_MAX ? INT32_MAX : ihi;
    }
    if (ihi < ilo)
        ihi = ilo;
    uint64_t span = (uint64_t)ihi - (uint64_t)ilo + 1; /* 0 means all of 2^64 */
    for (size_t i = 0; i < n; i++) {
        uint64_t r;
        if (span != 0 && span <= UINT32_MAX)
            r = avo_pcg32_bounded(rng, (uint32_t)span);
        else {
            r = (uint64_t)avo_pcg32_next(rng) << 32 | avo_pcg32_next(rng);
            if (span)
                r %= span; /* bias below 2^-32 for such wide ranges */
        }
        int64_t v = (int64_t)((uint64_t)ilo + r);
        if (arg->type == TYPE_I32)
            ((int32_t *)buf)[i] = (int32_t)v;
        else
            ((int64_t *)buf)[i] = v;
    }
}

/*
 * Fresh inputs for trial `trial` of config `cfg`, from the stream
 * "inputs/<config>/<trial>" of the job seed, drawn buffer by buffer in
 * argument order.  Inputs go to saved, candidate and reference buffers;
 * outputs of both are poisoned.
 */
static void prepare_trial(const job_spec *spec, const config_spec *cfg, config_buffers *b,
                          int trial)
{
    char name[512];
    snprintf(name, sizeof name, "inputs/%s/%d", cfg->name, trial);
    avo_pcg32 rng;
    avo_pcg32_derive(&rng, spec->seed, name);
    for (size_t i = 0; i < spec->nargs; i++) {
        const arg_spec *arg = &spec->args[i];
        if (arg->kind == KIND_SCALAR)
            continue;
        if (arg->kind == KIND_OUT) {
            poison(b->cand[i], arg->type, cfg->lengths[i]);
            poison(b->ref[i], arg->type, cfg->lengths[i]);
            continue;
        }
        fill_uniform(b->saved[i], arg, cfg->lengths[i], &rng);
        memcpy(b->cand[i], b->saved[i], b->bytes[i]);
        memcpy(b->ref[i], b->saved[i], b->bytes[i]);
    }
}

/*
 * Check the candidate's buffers after a call against the reference, in the
 * documented order: guards, unmodified inputs, fully written outputs, finite
 * outputs, tolerance.  *max_error receives the largest absolute error (when
 * the tolerance pass is reached).  Returns 0 when correct, else -1 with a
 * reason (without the config prefix) in buf.
 */
static int check_outputs(const job_spec *spec, const config_spec *cfg, const config_buffers *b,
                         double *max_error, char *buf, size_t len)
{
    for (size_t i = 0; i < spec->nargs; i++)
        if (spec->args[i].kind != KIND_SCALAR &&
            (!guard_intact(b->cand_base[i]) ||
             !guard_intact((const unsigned char *)b->cand[i] + b->bytes[i]))) {
            snprintf(buf, len, "wrote out of bounds of buffer %s", spec->args[i].name);
            return -1;
        }
    for (size_t i = 0; i < spec->nargs; i++)
        if (spec->args[i].kind == KIND_IN && memcmp(b->cand[i], b->saved[i], b->bytes[i]) != 0) {
            snprintf(buf, len, "modified input buffer %s", spec->args[i].name);
            return -1;
        }
    for (size_t i = 0; i < spec->nargs; i++) {
        const arg_spec *arg = &spec->args[i];
        if (arg->kind != KIND_OUT)
            continue;
        for (size_t e = 0; e < cfg->lengths[i]; e++)
            if (is_poison(b->cand[i], arg->type, e) && !is_poison(b->ref[i], arg->type, e)) {
                snprintf(buf, len, "output not fully written (element %s[%zu])", arg->name, e);
                return -1;
            }
    }
    for (size_t i = 0; i < spec->nargs; i++) {
        const arg_spec *arg = &spec->args[i];
        if (arg->kind != KIND_OUT && arg->kind != KIND_INOUT)
            continue;
        if (!is_float(arg->type))
            continue;
        for (size_t e = 0; e < cfg->lengths[i]; e++)
            if (!isfinite(element(b->cand[i], arg->type, e))) {
                snprintf(buf, len, "non-finite value at %s[%zu]", arg->name, e);
                return -1;
            }
    }

    double worst = 0, worst_bad = -1;
    const char *bad_name = NULL;
    size_t bad_index = 0;
    for (size_t i = 0; i < spec->nargs; i++) {
        const arg_spec *arg = &spec->args[i];
        if (arg->kind != KIND_OUT && arg->kind != KIND_INOUT)
            continue;
        for (size_t e = 0; e < cfg->lengths[i]; e++) {
            double x = element(b->cand[i], arg->type, e), r = element(b->ref[i], arg->type, e);
            double error = fabs(x - r);
            if (!(error <= worst))
                worst = error; /* NaN from a broken reference propagates */
            if (!(error <= spec->atol + spec->rtol * fabs(r)) && !(error <= worst_bad)) {
                worst_bad = error;
                bad_name = arg->name;
                bad_index = e;
            }
        }
    }
    *max_error = worst;
    if (bad_name) {
        snprintf(buf, len, "max error %.1e at %s[%zu] exceeds tolerance (atol %g, rtol %g)",
                 worst_bad, bad_name, bad_index, spec->atol, spec->rtol);
        return -1;
    }
    return 0;
}

/* A kernel as libffi calls it: the real signature lives in the cif. */
typedef void (*kernel_fn)(void);

/* The runner's view of both kernels. */
typedef struct runner_ctx {
    const job_spec *spec;
    ffi_cif cif;
    ffi_type **types;
    kernel_fn cand_fn;
    kernel_fn ref_fn;
    void **cand_values; /* per argument: address of the value libffi passes */
    void **ref_values;
} runner_ctx;

/* Point the libffi argument arrays at this config's buffers and scalars. */
static void bind_arguments(runner_ctx *ctx, const config_spec *cfg, config_buffers *b)
{
    for (size_t i = 0; i < ctx->spec->nargs; i++) {
        if (ctx->spec->args[i].kind == KIND_SCALAR) {
            ctx->cand_values[i] = &cfg->scalars[i];
            ctx->ref_values[i] = &cfg->scalars[i];
        } else {
            ctx->cand_values[i] = &b->cand[i];
            ctx->ref_values[i] = &b->ref[i];
        }
    }
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n), n >= 1; sorts v. */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Median and MAD/median of the samples (each a per-call time). */
static void sample_stats(const double *samples, size_t n, double *ret_median, double *ret_spread)
{
    double *tmp = malloc(n * sizeof *tmp);
    if (!tmp) {
        *ret_median = samples[n - 1];
        *ret_spread = 0;
        return;
    }
    memcpy(tmp, samples, n * sizeof *tmp);
    double m = median(tmp, n);
    for (size_t i = 0; i < n; i++)
        tmp[i] = fabs(samples[i] - m);
    double mad = median(tmp, n);
    free(tmp);
    *ret_median = m;
    *ret_spread = m > 0 ? mad / m : 0;
}

/* Seconds taken by `batch` back-to-back candidate calls. */
static double time_batch(runner_ctx *ctx, uint64_t batch)
{
    double t0 = avo_monotonic();
    for (uint64_t i = 0; i < batch; i++)
        ffi_call(&ctx->cif, ctx->cand_fn, NULL, ctx->cand_values);
    return avo_monotonic() - t0;
}

/*
 * Time the candidate on the inputs now in its buffers: one warm-up call, a
 * batch size doubled until one sample lasts min_sample_s, then samples until
 * min_samples are in and the spread is under target, or max_samples or
 * max_seconds is reached.  Fills median_s, spread and samples of `entry`.
 */
static void time_candidate(runner_ctx *ctx, json_t *entry, double *ret_median)
{
    const job_spec *spec = ctx->spec;
    double start = avo_monotonic();
    double *samples = malloc((size_t)spec->max_samples * sizeof *samples);
    size_t n = 0;
    double med = 0, spread = 0;

    time_batch(ctx, 1);
    uint64_t batch = 1;
    double t = time_batch(ctx, batch);
    while (t < spec->min_sample_s && batch < (UINT64_C(1) << 40) &&
           avo_monotonic() - start < spec->max_seconds) {
        batch *= 2;
        t = time_batch(ctx, batch);
    }
    if (samples) {
        samples[n++] = t / (double)batch; /* the sample that ended calibration counts */
        while (n < (size_t)spec->max_samples && avo_monotonic() - start < spec->max_seconds) {
            if (n >= (size_t)spec->min_samples) {
                sample_stats(samples, n, &med, &spread);
                if (spread < spec->target_spread)
                    break;
            }
            samples[n++] = time_batch(ctx, batch) / (double)batch;
        }
        sample_stats(samples, n, &med, &spread);
        free(samples);
    } else {
        med = t / (double)batch;
        n = 1;
    }
    json_object_set_new(entry, "median_s", json_real(med));
    json_object_set_new(entry, "spread", json_real(spread));
    json_object_set_new(entry, "samples", json_integer((json_int_t)n));
    *ret_median = med;
}

/* A config entry with the fields every entry carries. */
static json_t *config_entry_new(const char *name)
{
    return json_pack("{s:s, s:b, s:n, s:f, s:f, s:i, s:f, s:f, s:n}", "name", name, "correct", 0,
                     "max_error", "median_s", 0.0, "spread", 0.0, "samples", 0, "gflops", 0.0,
                     "gbs", 0.0, "reason");
}

/*
 * Verify and time one config.  Fills `entry`; returns 0 when correct, else
 * -1 with *ret_status ("wrong" or "error") and a reason (config named).
 */
static int run_config(runner_ctx *ctx, const config_spec *cfg, json_t *entry,
                      const char **ret_status, char *reason, size_t len)
{
    const job_spec *spec = ctx->spec;
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
        int bad = check_outputs(spec, cfg, &b, &error, why, sizeof why);
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
            if (spec->args[i].kind == KIND_INOUT) {
                memcpy(b.cand[i], b.saved[i], b.bytes[i]);
                has_inout = 1;
            }
        if (has_inout) {
            for (size_t i = 0; i < spec->nargs; i++)
                if (spec->args[i].kind == KIND_OUT)
                    poison(b.cand[i], spec->args[i].type, cfg->lengths[i]);
            ffi_call(&ctx->cif, ctx->cand_fn, NULL, ctx->cand_values);
        }
        if (check_outputs(spec, cfg, &b, &error, why, sizeof why) < 0) {
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
        json_t *text = json_text(reason, strlen(reason));
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

static void sandbox_limits(const job_spec *spec)
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
    json_t *text = reason ? json_text(reason, strlen(reason)) : json_null();
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
static _Noreturn void runner_main(const job_spec *spec, const char *cand_so, const char *ref_so)
{
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
        const arg_spec *arg = &spec->args[i];
        if (arg->kind != KIND_SCALAR)
            ctx.types[i] = &ffi_type_pointer;
        else if (arg->type == TYPE_F32)
            ctx.types[i] = &ffi_type_float;
        else if (arg->type == TYPE_F64)
            ctx.types[i] = &ffi_type_double;
        else if (arg->type == TYPE_I32)
            ctx.types[i] = &ffi_type_sint32;
        else
            ctx.types[i] = &ffi_type_sint64;
    }
    if (ffi_prep_cif(&ctx.cif, FFI_DEFAULT_ABI, (unsigned)spec->nargs, &ffi_type_void, ctx.types) !=
        FFI_OK)
        runner_done("invalid", "libffi cannot describe the argument list");

    ctx.ref_fn = load_kernel(ref_so, spec->ref_entry, 1);
    ctx.cand_fn = load_kernel(cand_so, spec->entry, 0);

    for (size_t c = 0; c < spec->nconfigs; c++) {
        const config_spec *cfg = &spec->configs[c];
        report(json_pack("{s:s}", "progress", cfg->name));
        json_t *entry = config_entry_new(cfg->name);
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
static void parse_report(const byte_buf *buf, json_t *configs, runner_report *r)
{
    size_t at = 0;
    while (buf->len - at >= 4) {
        const unsigned char *h = (const unsigned char *)buf->data + at;
        size_t len = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
        if (len > buf->len - at - 4)
            break;
        json_t *msg = json_loadb(buf->data + at + 4, len, 0, NULL);
        at += 4 + len;
        if (!msg)
            break;
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
static void run_runner(const job_spec *spec, const char *cand_so, const char *ref_so,
                       json_t *result)
{
    int report_pipe[2], log_pipe[2];
    if (pipe2(report_pipe, O_CLOEXEC) < 0) {
        result_fail(result, "error", "pipe: %s", strerror(errno));
        return;
    }
    if (pipe2(log_pipe, O_CLOEXEC) < 0) {
        result_fail(result, "error", "pipe: %s", strerror(errno));
        close(report_pipe[0]);
        close(report_pipe[1]);
        return;
    }
    double start = avo_monotonic();
    pid_t pid = fork();
    if (pid == 0) {
        runner_fds(log_pipe[1], report_pipe[1]);
        runner_main(spec, cand_so, ref_so);
    }
    int fork_errno = errno;
    close(report_pipe[1]);
    close(log_pipe[1]);
    if (pid < 0) {
        close(report_pipe[0]);
        close(log_pipe[0]);
        result_fail(result, "error", "fork: %s", strerror(fork_errno));
        return;
    }
    fcntl(report_pipe[0], F_SETFL, O_NONBLOCK);
    fcntl(log_pipe[0], F_SETFL, O_NONBLOCK);

    tail_buf *log = calloc(1, sizeof *log);
    tail_buf scratch; /* only used if the log buffer could not be allocated */
    tail_buf *sink = log ? log : &scratch;
    byte_buf reports = {0};
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
        if (report_open && drain_fd(report_pipe[0], NULL, &reports))
            report_open = 0;
        if (log_open && drain_fd(log_pipe[0], sink, NULL))
            log_open = 0;
        reaped = wait4(pid, &status, WNOHANG, &usage) == pid;
    }
    if (!reaped)
        while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR)
            ;
    drain_fd(report_pipe[0], NULL, &reports);
    drain_fd(log_pipe[0], sink, NULL);
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
        result_fail(result, "timeout", "timed out after %gs %s", spec->timeout_s, where);
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (sig == SIGXCPU || (sig == SIGKILL && spec->cpu_s > 0 && cpu_used >= spec->cpu_s)) {
            result_fail(result, "timeout", "exceeded the CPU time limit of %gs %s", spec->cpu_s,
                        where);
        } else {
            char name[128];
            describe_signal(sig, name, sizeof name);
            result_fail(result, "crashed", "crashed with %s %s", name, where);
        }
    } else {
        result_fail(result, "crashed", "runner exited with status %d without a verdict %s",
                    WIFEXITED(status) ? WEXITSTATUS(status) : -1, where);
    }

    /* The config that was cut short still counts as attempted. */
    if (!r.done && r.in_config) {
        json_t *entry = config_entry_new(r.progress);
        if (entry) {
            json_object_set(entry, "reason", json_object_get(result, "reason"));
            json_array_append_new(configs, entry);
        }
    }
    const char *final = json_string_value(json_object_get(result, "status"));
    if (log && log->len && final && strcmp(final, "ok") != 0)
        result_set_log(result, log);
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
    job_spec spec;
    if (job_spec_parse(job, &spec, err, sizeof err) < 0) {
        result_fail(result, "invalid", "%s", err);
        job_spec_free(&spec);
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
    job_spec_free(&spec);
    return result;
}

const avo_backend avo_backend_cpu = {"cpu", cpu_run_job};
