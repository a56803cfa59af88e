/*
 * cpulib.c — probing a C library named as a CPU baseline (cpulib.h).
 */
#include "eval/cpu/cpulib.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/avo.h"
#include "eval/supervise.h"

#define PROBE_MAX_BYTES (64 * 1024) /* what the child may answer */

/* The variables of avo_cpulib_thread_env: a thread count, or a fixed value,
 * or NULL for unset (the library detects the CPU itself). */
static const char *const thread_names[] = {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                           "GOTO_NUM_THREADS", "MKL_NUM_THREADS",
                                           "BLIS_NUM_THREADS"};
static const struct {
    const char *name, *value;
} kernel_vars[] = {
    {"OPENBLAS_CORETYPE", NULL},     /* the core OpenBLAS detects for this CPU */
    {"OPENBLAS_L2_SIZE", NULL},      /* the L2 size it detects */
    {"OPENBLAS_BLOCK_FACTOR", NULL}, /* its own blocking */
    {"OPENBLAS_VERBOSE", "0"},       /* nothing printed into the judge's output */
};

void avo_cpulib_thread_env(int threads)
{
    char value[16];
    snprintf(value, sizeof value, "%d", threads > 0 ? threads : 1);
    for (size_t i = 0; i < sizeof thread_names / sizeof thread_names[0]; i++)
        setenv(thread_names[i], value, 1);
    for (size_t i = 0; i < sizeof kernel_vars / sizeof kernel_vars[0]; i++) {
        if (kernel_vars[i].value)
            setenv(kernel_vars[i].name, kernel_vars[i].value, 1);
        else
            unsetenv(kernel_vars[i].name);
    }
}

/* Records `name` as avo sets it: value `mine` in `set`, or (NULL) its name
 * in `unset`; and name: the environment's value in `differ` when that is
 * another. */
static void compare_env(json_t *set, json_t *unset, json_t *differ, const char *name,
                        const char *mine)
{
    const char *theirs = getenv(name);
    if (mine)
        json_object_set_new(set, name, json_string(mine));
    else
        json_array_append_new(unset, json_string(name));
    if (theirs && (!mine || strcmp(theirs, mine) != 0))
        json_object_set_new(differ, name, json_string(theirs));
}

/* Adds to `answer` what avo_cpulib_thread_env(threads) sets ("environment"
 * {name: value}), unsets ("environment_unset" [name]), and which of them
 * this process's environment had otherwise ("env_overridden" {name: its
 * value}, only when some). */
static void note_env(json_t *answer, int threads)
{
    char value[16];
    snprintf(value, sizeof value, "%d", threads > 0 ? threads : 1);
    json_t *set = json_object(), *unset = json_array(), *differ = json_object();
    for (size_t i = 0; i < sizeof thread_names / sizeof thread_names[0]; i++)
        compare_env(set, unset, differ, thread_names[i], value);
    for (size_t i = 0; i < sizeof kernel_vars / sizeof kernel_vars[0]; i++)
        compare_env(set, unset, differ, kernel_vars[i].name, kernel_vars[i].value);
    json_object_set_new(answer, "environment", set);
    json_object_set_new(answer, "environment_unset", unset);
    if (json_object_size(differ) > 0)
        json_object_set_new(answer, "env_overridden", differ);
    else
        json_decref(differ);
}

/* A function of `handle` by name as `const char *f(void)` or `int f(void)`;
 * NULL when missing. */
static void *symbol_of(void *handle, const char *name)
{
    dlerror();
    return name ? dlsym(handle, name) : NULL;
}

/*
 * The child's work: load, resolve, ask.  Writes one JSON object to `fd`:
 * the answer (cpulib.h) or {"missing": reason}.  Never returns.
 */
static _Noreturn void probe_child(const json_t *spec, int threads, int fd)
{
    avo_cpulib_thread_env(threads);
    const char *file = json_string_value(json_object_get(spec, "file"));
    const char *symbol = json_string_value(json_object_get(spec, "symbol"));
    json_t *out = json_object();
    void *handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *e = dlerror();
        json_object_set_new(out, "missing", json_string(e ? e : "dlopen failed"));
        goto answer;
    }
    if (!symbol_of(handle, symbol)) {
        json_object_set_new(out, "missing",
                            json_sprintf("%s has no symbol '%s'", file, symbol));
        goto answer;
    }
    json_object_set_new(out, "library", json_string(file));
    json_object_set_new(out, "symbol", json_string(symbol));
    json_object_set_new(out, "threads", json_integer(threads));
    struct link_map *map = NULL;
    char real[PATH_MAX];
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
        json_object_set_new(out, "path", json_string(realpath(map->l_name, real) ? real
                                                                                  : map->l_name));
    json_t *info = json_object();
    const char *key;
    const json_t *fn;
    json_object_foreach((json_t *)json_object_get(spec, "describe"), key, fn) {
        void *f = symbol_of(handle, json_string_value(fn));
        if (!f) {
            json_object_clear(out);
            json_object_set_new(out, "missing",
                                json_sprintf("%s has no function '%s' (describe.%s)", file,
                                             json_string_value(fn), key));
            json_decref(info);
            goto answer;
        }
        const char *(*describe)(void);
        memcpy(&describe, &f, sizeof describe);
        const char *text = describe();
        /* Libraries end these with a space or a newline (OpenBLAS does). */
        json_t *s = json_stringn(text ? text : "", text ? strcspn(text, "\n") : 0);
        const char *v = json_string_value(s);
        size_t n = v ? strlen(v) : 0;
        while (n > 0 && v[n - 1] == ' ')
            n--;
        json_object_set_new(key && !strcmp(key, "version") ? out : info, key,
                            json_stringn(v ? v : "", n));
        json_decref(s);
    }
    json_object_set_new(out, "info", info);
    const char *count_name = json_string_value(json_object_get(spec, "thread_count"));
    if (count_name) {
        void *f = symbol_of(handle, count_name);
        if (!f) {
            json_object_clear(out);
            json_object_set_new(out, "missing", json_sprintf("%s has no function '%s' "
                                                             "(thread_count)",
                                                             file, count_name));
            goto answer;
        }
        int (*count)(void);
        memcpy(&count, &f, sizeof count);
        json_object_set_new(out, "threads_reported", json_integer(count()));
    }
answer:;
    char *text = json_dumps(out, JSON_COMPACT);
    size_t len = text ? strlen(text) : 0;
    _exit(avo_write_all(fd, text, len) < 0 ? 2 : 0);
}

/* Read the child's answer from fd until EOF or the deadline; 0, or
 * AVO_ETIMEOUT / AVO_EIO. */
static int read_answer(int fd, double timeout_s, char *buf, size_t cap, size_t *ret_len)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    size_t len = 0;
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left = timeout_s - (double)(now.tv_sec - start.tv_sec) -
                      (double)(now.tv_nsec - start.tv_nsec) / 1e9;
        if (left <= 0)
            return AVO_ETIMEOUT;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return AVO_EIO;
        if (r == 0)
            continue;
        if (len == cap)
            return AVO_EIO;
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return AVO_EIO;
        if (n == 0)
            break;
        len += (size_t)n;
    }
    *ret_len = len;
    return 0;
}

int avo_cpulib_probe(const json_t *spec, int threads, double timeout_s, json_t **ret, char *err,
                     size_t errlen)
{
    *ret = NULL;
    const char *file = json_string_value(json_object_get(spec, "file"));
    const char *symbol = json_string_value(json_object_get(spec, "symbol"));
    const json_t *describe = json_object_get(spec, "describe");
    const json_t *count = json_object_get(spec, "thread_count");
    const json_t *install = json_object_get(spec, "install");
    if (!json_is_object(spec) || !file || !*file || !symbol || !*symbol ||
        (describe && !json_is_object(describe)) || (count && !json_is_string(count)) ||
        (install && !json_is_string(install)))
        return avo_error(err, errlen, AVO_EINVAL,
                         "\"library\" must be {file, symbol, describe?, thread_count?, install?} "
                         "with strings");
    const char *key;
    const json_t *fn;
    json_object_foreach((json_t *)describe, key, fn) {
        if (!json_is_string(fn))
            return avo_error(err, errlen, AVO_EINVAL,
                             "\"library\".describe.%s must be a function's name", key);
    }
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return avo_error(err, errlen, AVO_EIO, "pipe: %s", strerror(errno));
    fflush(NULL);
    /* A library that crashes while loading kills the child by its signal,
     * which the parent names; a handler inherited from the engine (a
     * sanitizer's) would turn the crash into an ordinary exit instead. */
    pid_t pid = avo_supervise_fork(AVO_CHILD_CRASH_DEFAULT);
    if (pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return avo_error(err, errlen, AVO_EIO, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(pipefd[0]);
        probe_child(spec, threads, pipefd[1]);
    }
    close(pipefd[1]);
    char *buf = malloc(PROBE_MAX_BYTES + 1);
    size_t len = 0;
    int rc = buf ? read_answer(pipefd[0], timeout_s, buf, PROBE_MAX_BYTES, &len) : AVO_ENOMEM;
    close(pipefd[0]);
    if (rc == AVO_ETIMEOUT)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    const char *hint = install ? json_string_value(install) : NULL;
    if (rc == AVO_ETIMEOUT) {
        free(buf);
        return avo_error(err, errlen, AVO_ETIMEOUT, "loading %s did not finish within %gs", file,
                         timeout_s);
    }
    if (rc < 0) {
        free(buf);
        return avo_error(err, errlen, rc, "cannot read what loading %s answered", file);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        free(buf);
        char how[128];
        int sig = avo_supervise_death(status, how, sizeof how);
        if (sig)
            return avo_error(err, errlen, AVO_ECHILD, "loading %s killed the probe (signal %d): %s",
                             file, sig, how);
        return avo_error(err, errlen, AVO_ECHILD, "loading %s ended the probe with %s", file, how);
    }
    buf[len] = '\0';
    json_t *answer = json_loads(buf, 0, NULL);
    free(buf);
    if (!json_is_object(answer)) {
        json_decref(answer);
        return avo_error(err, errlen, AVO_EPROTO, "loading %s gave no answer", file);
    }
    const char *missing = json_string_value(json_object_get(answer, "missing"));
    if (missing) {
        avo_error(err, errlen, AVO_ENOTFOUND, "%s%s%s", missing, hint ? "; install it: " : "",
                  hint ? hint : "");
        json_decref(answer);
        return AVO_ENOTFOUND;
    }
    /* What the timed calls run with, and what of this process's
     * environment it replaced (said beside the core wherever it is shown). */
    note_env(answer, threads);
    *ret = answer;
    return 0;
}
