/*
 * test_cpu.c — the CPU backend end to end through avo_backend_cpu.run_job:
 * a correct kernel is timed, and every way a candidate can fail (compiler
 * error, crash, abort, hang, CPU hog, wrong answer, NaN, unwritten or
 * overrun output, modified input, missing symbol, cheating after the
 * verification calls) gets its status and a reason that names the config.
 * Also: knobs reach the compiler, the compile cache hits, and with seccomp
 * the sandbox denies sockets, fork and signals to other processes.
 */
#include "avo_config.h"

#include "core/backend.h"

#include "check.h"

#include <dirent.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char cache_dir[] = "/tmp/avo-test-cpu-XXXXXX";

static const char *const reference_source =
    "void vadd_ref(int n, const float *a, const float *b, float *c)\n"
    "{\n"
    "    for (int i = 0; i < n; i++)\n"
    "        c[i] = a[i] + b[i];\n"
    "}\n";

/* The body of a candidate `vadd` with the reference's signature. */
#define VADD(body)                                                                                 \
    "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n"            \
    "void vadd(int n, const float *a, const float *b, float *c)\n{\n" body "}\n"

#define CORRECT_LOOP "    for (int i = 0; i < n; i++)\n        c[i] = a[i] + b[i];\n"

/*
 * A job for `source` defining `entry` against the vector-add reference: two
 * configs (n1000, n4099), quick timing, generous limits.  Caller owns it.
 */
static json_t *vadd_job(const char *source, const char *entry)
{
    json_t *job = json_pack(
        "{s:i, s:s, s:s, s:s, s:{}, s:{s:s, s:s},"
        " s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}],"
        " s:[{s:s, s:{s:i}, s:{s:i, s:i, s:i}, s:i, s:i},"
        "    {s:s, s:{s:i}, s:{s:i, s:i, s:i}, s:i, s:i}],"
        " s:{s:f, s:f}, s:i, s:i,"
        " s:{s:b, s:f, s:i, s:i, s:f, s:f},"
        " s:{s:i, s:i, s:i, s:i}, s:s}",
        "id", 7, "backend", "cpu", "source", source, "entry", entry, "knobs", "reference", "source",
        reference_source, "entry", "vadd_ref", "args", "name", "n", "kind", "scalar", "type", "i32",
        "name", "a", "kind", "in", "type", "f32", "name", "b", "kind", "in", "type", "f32", "name",
        "c", "kind", "out", "type", "f32", "configs", "name", "n1000", "scalars", "n", 1000,
        "lengths", "a", 1000, "b", 1000, "c", 1000, "flops", 1000, "bytes", 12000, "name", "n4099",
        "scalars", "n", 4099, "lengths", "a", 4099, "b", 4099, "c", 4099, "flops", 4099, "bytes",
        49188, "tolerance", "atol", 1e-5, "rtol", 1e-5, "seed", 1234567, "trials", 2, "timing",
        "enabled", 1, "min_sample_s", 0.0005, "min_samples", 3, "max_samples", 10, "target_spread",
        0.05, "max_seconds", 0.2, "limits", "timeout_s", 10, "compile_timeout_s", 30, "memory_mb",
        1024, "cpu_s", 10, "cache_dir", cache_dir);
    if (!job) {
        fprintf(stderr, "cannot build the test job\n");
        exit(1);
    }
    return job;
}

static void set_limit(json_t *job, const char *key, int value)
{
    json_object_set_new(json_object_get(job, "limits"), key, json_integer(value));
}

/* Run the job (taking it), check status and a reason substring (NULL: reason
 * must be null); dumps the result on a mismatch.  Returns the result. */
static json_t *expect(json_t *job, const char *status, const char *reason_part)
{
    json_t *result = avo_backend_cpu.run_job(job);
    json_decref(job);
    CHECK(result != NULL);
    if (!result)
        return json_object();
    const char *st = json_string_value(json_object_get(result, "status"));
    const char *reason = json_string_value(json_object_get(result, "reason"));
    int fine = st && strcmp(st, status) == 0 &&
               (reason_part ? reason && strstr(reason, reason_part) != NULL : reason == NULL);
    CHECK_STR(st, status);
    if (reason_part)
        CHECK_CONTAINS(reason, reason_part);
    else
        CHECK(reason == NULL);
    if (!fine) {
        char *text = json_dumps(result, JSON_INDENT(2));
        fprintf(stderr, "result: %s\n", text ? text : "?");
        free(text);
    }
    CHECK_INT(json_integer_value(json_object_get(result, "id")), 7);
    return result;
}

static const json_t *config_at(const json_t *result, size_t i)
{
    return json_array_get(json_object_get(result, "configs"), i);
}

static void test_correct(void)
{
    json_t *r = expect(vadd_job(VADD(CORRECT_LOOP), "vadd"), "ok", NULL);
    CHECK_INT(json_array_size(json_object_get(r, "configs")), 2);
    for (size_t i = 0; i < 2; i++) {
        const json_t *c = config_at(r, i);
        CHECK(json_is_true(json_object_get(c, "correct")));
        CHECK(json_number_value(json_object_get(c, "gflops")) > 0);
        CHECK(json_number_value(json_object_get(c, "gbs")) > 0);
        CHECK(json_number_value(json_object_get(c, "median_s")) > 0);
        CHECK(json_integer_value(json_object_get(c, "samples")) >= 1);
        CHECK(json_number_value(json_object_get(c, "max_error")) <= 1e-5);
        CHECK(json_is_null(json_object_get(c, "reason")));
    }
    CHECK_STR(json_string_value(json_object_get(config_at(r, 0), "name")), "n1000");
    CHECK_STR(json_string_value(json_object_get(config_at(r, 1), "name")), "n4099");
    CHECK(json_is_false(json_object_get(r, "cache_hit")));
    CHECK_CONTAINS(json_string_value(json_object_get(r, "cflags")), "-O3 -march=native");
    CHECK(json_string_length(json_object_get(r, "compiler")) > 0);
    CHECK(json_number_value(json_object_get(r, "run_s")) > 0);
    json_decref(r);

    /* The same source again comes from the cache. */
    r = expect(vadd_job(VADD(CORRECT_LOOP), "vadd"), "ok", NULL);
    CHECK(json_is_true(json_object_get(r, "cache_hit")));
    json_decref(r);
}

static void test_timing_disabled(void)
{
    json_t *job = vadd_job(VADD(CORRECT_LOOP), "vadd");
    json_object_set_new(json_object_get(job, "timing"), "enabled", json_false());
    json_t *r = expect(job, "ok", NULL);
    CHECK_INT(json_integer_value(json_object_get(config_at(r, 0), "samples")), 0);
    CHECK(json_number_value(json_object_get(config_at(r, 0), "median_s")) == 0);
    json_decref(r);
}

static void test_compile_error(void)
{
    json_t *r = expect(vadd_job(VADD("    this is not C;\n"), "vadd"), "compile_error",
                       "compile error: kernel.c:");
    CHECK_CONTAINS(json_string_value(json_object_get(r, "log")), "error:");
    CHECK_CONTAINS(json_string_value(json_object_get(r, "cflags")), "-shared");
    CHECK_INT(json_array_size(json_object_get(r, "configs")), 0);
    json_decref(r);
}

static void test_segfault(void)
{
    json_t *r = expect(vadd_job(VADD("    printf(\"hello from the kernel\\n\");\n"
                                     "    fflush(stdout);\n"
                                     "    *(volatile int *)0 = n;\n"),
                                "vadd"),
                       "crashed", "SIGSEGV");
    CHECK_CONTAINS(json_string_value(json_object_get(r, "reason")), "in config n1000");
    CHECK_CONTAINS(json_string_value(json_object_get(r, "log")), "hello from the kernel");
    CHECK_INT(json_array_size(json_object_get(r, "configs")), 1);
    CHECK(json_is_false(json_object_get(config_at(r, 0), "correct")));
    CHECK_CONTAINS(json_string_value(json_object_get(config_at(r, 0), "reason")), "SIGSEGV");
    json_decref(r);
}

static void test_abort(void)
{
    json_decref(expect(vadd_job(VADD("    abort();\n"), "vadd"), "crashed", "SIGABRT"));
}

/* Crash only in the second config: the first is reported as passed. */
static void test_crash_in_second_config(void)
{
    json_t *r = expect(vadd_job(VADD(CORRECT_LOOP "    if (n > 1000)\n        abort();\n"), "vadd"),
                       "crashed", "in config n4099");
    CHECK_INT(json_array_size(json_object_get(r, "configs")), 2);
    CHECK(json_is_true(json_object_get(config_at(r, 0), "correct")));
    CHECK(json_is_false(json_object_get(config_at(r, 1), "correct")));
    json_decref(r);
}

static void test_hang(void)
{
    json_t *job = vadd_job(VADD("    volatile int spin = 1;\n    while (spin) {}\n"), "vadd");
    set_limit(job, "timeout_s", 1);
    json_t *r = expect(job, "timeout", "timed out after 1s in config n1000");
    CHECK(json_number_value(json_object_get(r, "run_s")) < 5);
    json_decref(r);
}

/* Closing every pipe to the worker does not escape the deadline. */
static void test_hang_silently(void)
{
    json_t *job =
        vadd_job(VADD("    close(1);\n    close(2);\n    close(3);\n    pause();\n"), "vadd");
    set_limit(job, "timeout_s", 1);
    json_decref(expect(job, "timeout", "timed out after 1s"));
}

/* A chatty kernel: the log keeps only the last 8 KiB. */
static void test_chatty(void)
{
    json_t *r = expect(vadd_job(VADD("    for (int i = 0; i < 100000; i++)\n"
                                     "        fprintf(stderr, \"line %d\\n\", i);\n"
                                     "    abort();\n"),
                                "vadd"),
                       "crashed", "SIGABRT");
    const char *log = json_string_value(json_object_get(r, "log"));
    CHECK(log && strlen(log) <= 8192);
    CHECK_CONTAINS(log, "line 99999");
    json_decref(r);
}

/* A compiler that never finishes is killed at compile_timeout_s.  Runs last:
 * it changes $CC for the rest of the process. */
static void test_compile_timeout(void)
{
    char cc[sizeof cache_dir + 16];
    snprintf(cc, sizeof cc, "%s/slowcc", cache_dir);
    FILE *f = fopen(cc, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("#!/bin/sh\nexec sleep 30\n", f);
    fclose(f);
    chmod(cc, 0755);
    chmod(cache_dir, 0755); /* the compiler runs as the sandbox's uid */
    setenv("CC", cc, 1);
    json_t *job = vadd_job(VADD(CORRECT_LOOP "    /* not cached */\n"), "vadd");
    set_limit(job, "compile_timeout_s", 1);
    json_decref(expect(job, "timeout", "compile timed out after 1s"));
    unsetenv("CC");
}

static void test_cpu_limit(void)
{
    json_t *job = vadd_job(VADD("    volatile int spin = 2;\n    while (spin) {}\n"), "vadd");
    set_limit(job, "cpu_s", 1);
    json_decref(expect(job, "timeout", "CPU time limit"));
}

static void test_wrong(void)
{
    json_t *r = expect(vadd_job(VADD("    for (int i = 0; i < n; i++)\n"
                                     "        c[i] = a[i] - b[i];\n"),
                                "vadd"),
                       "wrong", "config n1000: max error");
    CHECK_CONTAINS(json_string_value(json_object_get(r, "reason")), "exceeds tolerance");
    /* Stopped at the first failing config. */
    CHECK_INT(json_array_size(json_object_get(r, "configs")), 1);
    const json_t *c = config_at(r, 0);
    CHECK(json_is_false(json_object_get(c, "correct")));
    CHECK(json_number_value(json_object_get(c, "max_error")) > 0.01);
    json_decref(r);
}

static void test_nan(void)
{
    json_decref(expect(vadd_job(VADD(CORRECT_LOOP "    c[n / 2] = NAN;\n"), "vadd"), "wrong",
                       "config n1000: non-finite value at c[500]"));
}

static void test_unwritten(void)
{
    json_decref(expect(vadd_job(VADD("    for (int i = 0; i < n - 1; i++)\n"
                                     "        c[i] = a[i] + b[i];\n"),
                                "vadd"),
                       "wrong", "not fully written (element c[999])"));
}

static void test_overrun(void)
{
    json_decref(expect(vadd_job(VADD("    for (int i = 0; i <= n; i++)\n"
                                     "        c[i] = a[i] + b[i];\n"),
                                "vadd"),
                       "wrong", "config n1000: wrote out of bounds of buffer c"));
}

static void test_modified_input(void)
{
    json_decref(expect(vadd_job(VADD(CORRECT_LOOP "    ((float *)a)[3] = 0;\n"), "vadd"), "wrong",
                       "config n1000: modified input buffer a"));
}

/* Correct while verified, wrong once called often (as in timing). */
static void test_cheat_after_verification(void)
{
    json_decref(expect(vadd_job(VADD("    static int calls;\n"
                                     "    calls++;\n"
                                     "    for (int i = 0; i < n; i++)\n"
                                     "        c[i] = calls > 4 ? 0 : a[i] + b[i];\n"),
                                "vadd"),
                       "wrong", "output of timed runs differs from reference"));
}

static void test_missing_symbol(void)
{
    json_decref(expect(vadd_job(VADD(CORRECT_LOOP), "vadd_fast"), "invalid",
                       "symbol 'vadd_fast' not found in candidate"));
}

static void test_malformed_job(void)
{
    json_t *job = vadd_job(VADD(CORRECT_LOOP), "vadd");
    json_object_del(job, "args");
    json_decref(expect(job, "invalid", "args"));

    job = vadd_job(VADD(CORRECT_LOOP), "vadd");
    json_object_del(json_object_get(json_array_get(json_object_get(job, "configs"), 1), "lengths"),
                    "c");
    json_decref(expect(job, "invalid", "config 'n4099': length of buffer 'c'"));
}

static void test_knobs(void)
{
    static const char *const source = VADD("#ifndef SCALE\n#error SCALE is not set\n#endif\n"
                                           "    for (int i = 0; i < n; i++)\n"
                                           "        c[i] = SCALE * (a[i] + b[i]) / 2;\n");
    json_t *job = vadd_job(source, "vadd");
    json_object_set_new(job, "knobs", json_pack("{s:i, s:s}", "SCALE", 2, "UNUSED", "x y"));
    json_t *r = expect(job, "ok", NULL);
    CHECK_CONTAINS(json_string_value(json_object_get(r, "cflags")), "-DSCALE=2 -DUNUSED=x y");
    json_decref(r);

    json_decref(expect(vadd_job(source, "vadd"), "compile_error", "SCALE is not set"));

    job = vadd_job(source, "vadd");
    json_object_set_new(job, "knobs", json_pack("{s:i}", "SCALE", 3));
    json_decref(expect(job, "wrong", "max error"));

    job = vadd_job(source, "vadd");
    json_object_set_new(job, "knobs", json_pack("{s:i}", "-o /tmp/x", 3));
    json_decref(expect(job, "invalid", "not a C identifier"));
}

/* In-place axpy: a float scalar and an inout buffer. */
static void test_inout(void)
{
    json_t *job = json_pack(
        "{s:i, s:s, s:s, s:s, s:{s:s, s:s}, s:[{s:s, s:s, s:s}, {s:s, s:s, s:s, s:[i, i]},"
        " {s:s, s:s, s:s}, {s:s, s:s, s:s}], s:[{s:s, s:{s:i, s:f}, s:{s:i, s:i}}],"
        " s:{s:f, s:f}, s:{s:b, s:f, s:f}, s:s}",
        "id", 7, "backend", "cpu", "entry", "axpy", "source",
        "void axpy(long n, const double *x, double a, double *y)\n"
        "{ for (long i = 0; i < n; i++) y[i] += a * x[i]; }\n",
        "reference", "entry", "axpy_ref", "source",
        "void axpy_ref(long n, const double *x, double a, double *y)\n"
        "{ for (long i = n - 1; i >= 0; i--) y[i] = a * x[i] + y[i]; }\n",
        "args", "name", "n", "kind", "scalar", "type", "i64", "name", "x", "kind", "in", "type",
        "f64", "range", -100, 100, "name", "a", "kind", "scalar", "type", "f64", "name", "y",
        "kind", "inout", "type", "f64", "configs", "name", "n777", "scalars", "n", 777, "a", 0.5,
        "lengths", "x", 777, "y", 777, "tolerance", "atol", 1e-12, "rtol", 1e-12, "timing",
        "enabled", 1, "min_sample_s", 0.0002, "max_seconds", 0.1, "cache_dir", cache_dir);
    json_t *r = expect(job, "ok", NULL);
    CHECK(json_integer_value(json_object_get(config_at(r, 0), "samples")) >= 1);
    json_decref(r);
}

static void test_sandbox(void)
{
#if AVO_HAVE_SECCOMP
    /* Correct output only if the forbidden calls all fail. */
    static const char *const source =
        "#include <signal.h>\n#include <sys/socket.h>\n#include <unistd.h>\n"
        "void vadd(int n, const float *a, const float *b, float *c)\n{\n"
        "    int s = socket(AF_INET, SOCK_STREAM, 0);\n"
        "    pid_t child = fork();\n"
        "    if (child == 0)\n        _exit(0);\n"
        "    int k = kill(getppid(), 0);\n"
        "    float bad = (s == -1 && child == -1 && k == -1) ? 0.0f : 1.0f;\n"
        "    for (int i = 0; i < n; i++)\n        c[i] = a[i] + b[i] + bad;\n"
        "}\n";
    json_t *job = vadd_job(source, "vadd");
    json_object_set_new(json_object_get(job, "timing"), "enabled", json_false());
    json_decref(expect(job, "ok", NULL));
#endif
}

/* A cached object whose bytes no longer match its hash is rebuilt, never
 * loaded: a poisoned cache cannot decide a later verdict. */
static void test_cache_tampered(void)
{
    const char *source = VADD(CORRECT_LOOP "    /* tamper */\n");
    json_t *r = expect(vadd_job(source, "vadd"), "ok", NULL);
    CHECK(!json_is_true(json_object_get(r, "cache_hit")));
    json_decref(r);
    r = expect(vadd_job(source, "vadd"), "ok", NULL);
    CHECK(json_is_true(json_object_get(r, "cache_hit")));
    json_decref(r);
    /* Overwrite every cached object of this test with a zero-writing kernel's
     * bytes (or garbage), keeping their names and .sum files. */
    DIR *d = opendir(cache_dir);
    CHECK(d != NULL);
    struct dirent *e;
    int tampered = 0;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0)
            continue;
        char path[sizeof cache_dir + 300];
        snprintf(path, sizeof path, "%s/%s", cache_dir, e->d_name);
        FILE *f = fopen(path, "r+b");
        if (f) {
            fseek(f, 200, SEEK_SET);
            fputs("tampered", f);
            fclose(f);
            tampered++;
        }
    }
    if (d)
        closedir(d);
    CHECK(tampered >= 2);
    r = expect(vadd_job(source, "vadd"), "ok", NULL);
    CHECK(!json_is_true(json_object_get(r, "cache_hit")));
    CHECK(json_is_true(json_object_get(r, "cache_repaired")));
    json_decref(r);
}

/* Writes far beyond a buffer (past any canary) and reads past an input's
 * end fault on the guard page that follows every buffer. */
static void test_far_out_of_bounds(void)
{
    json_t *r = expect(vadd_job(VADD(CORRECT_LOOP "    c[n + 100] = 1.0f;\n"), "vadd"), "crashed",
                       "SIGSEGV");
    json_decref(r);
    r = expect(vadd_job(VADD("    for (int i = 0; i < n; i++)\n"
                             "        c[i] = a[i] + b[i] + 0.0f * a[n + 16 + i];\n"),
                        "vadd"),
               "crashed", "SIGSEGV");
    json_decref(r);
}

/* Extra sizes: a kernel that only handles the timed configs' sizes fails on
 * a check config; the honest one passes and reports it. */
static void test_check_configs(void)
{
    const char *only_listed =
        VADD("    if (n != 1000 && n != 4099)\n        n = 1;\n" CORRECT_LOOP);
    json_t *job = vadd_job(only_listed, "vadd");
    json_object_set_new(job, "check_configs",
                        json_pack("[{s:s, s:{s:i}, s:{s:i, s:i, s:i}}]", "name", "check-1",
                                  "scalars", "n", 37, "lengths", "a", 37, "b", 37, "c", 37));
    json_incref(job);
    json_t *r = expect(job, "wrong", "config check-1:");
    json_decref(r);
    json_object_set_new(job, "source", json_string(VADD(CORRECT_LOOP)));
    r = expect(job, "ok", NULL);
    CHECK_INT(json_array_size(json_object_get(r, "checks")), 1);
    CHECK_STR(
        json_string_value(json_object_get(json_array_get(json_object_get(r, "checks"), 0), "name")),
        "check-1");
    CHECK_INT(json_array_size(json_object_get(r, "configs")), 2);
    json_decref(r);
}

/* An acknowledgement written before the command arrives (to look fast) is
 * caught: each answer must carry the command's secret nonce + 1. */
static void test_forged_ack(void)
{
    const char *source = "#include <unistd.h>\n#include <stdint.h>\n"
                         "static int calls;\n"
                         "void vadd(int n, const float *a, const float *b, float *c)\n{\n"
                         "    for (int i = 0; i < n; i++)\n        c[i] = a[i] + b[i];\n"
                         "    if (++calls == 3) {\n"
                         "        uint64_t fake[64] = {0};\n"
                         "        for (int fd = 0; fd < 16; fd++)\n"
                         "            (void)!write(fd, fake, sizeof fake);\n"
                         "    }\n"
                         "}\n";
    json_decref(expect(vadd_job(source, "vadd"), "wrong", "harness protocol"));
}

/* What the kernel's process sees: no /proc, no cache, no host files, a
 * minimal environment with a writable $TMPDIR (the view's /tmp, or under
 * landlock its scratch), and not the uid it was started with when root. */
static void test_candidate_view(void)
{
    char secret[256];
    snprintf(secret, sizeof secret, "%s/secret.txt", cache_dir);
    FILE *f = fopen(secret, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("secret", f);
        fclose(f);
    }
    setenv("AVO_TEST_SECRET_KEY", "sk-canary", 1);
    char source[4096];
    snprintf(source, sizeof source,
             "#include <fcntl.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n"
             "static int opens(const char *path, int flags)\n{\n"
             "    int fd = open(path, flags, 0600);\n"
             "    if (fd >= 0)\n        close(fd);\n"
             "    return fd >= 0;\n}\n"
             "static const char *tmp_file(void)\n{\n"
             "    static char path[512];\n"
             "    const char *dir = getenv(\"TMPDIR\");\n"
             "    snprintf(path, sizeof path, \"%%s/x\", dir ? dir : \"/nonexistent\");\n"
             "    return path;\n}\n"
             "void vadd(int n, const float *a, const float *b, float *c)\n{\n"
             "    int seen = opens(\"%s\", O_RDONLY) || opens(\"/proc/self/maps\", O_RDONLY)\n"
             "               || opens(\"%s\", O_RDONLY | O_DIRECTORY)\n"
             "               || opens(\"/etc/passwd\", O_RDONLY)\n"
             "               || getenv(\"AVO_TEST_SECRET_KEY\") != NULL\n"
             "               || !opens(tmp_file(), O_WRONLY | O_CREAT)\n"
             "               || (%d == 0 && geteuid() == 0);\n"
             "    for (int i = 0; i < n; i++)\n        c[i] = a[i] + b[i] + (float)seen;\n"
             "}\n",
             secret, cache_dir, (int)geteuid());
    json_decref(expect(vadd_job(source, "vadd"), "ok", NULL));
    unsetenv("AVO_TEST_SECRET_KEY");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(void)
{
    if (!mkdtemp(cache_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_correct();
    test_timing_disabled();
    test_compile_error();
    test_segfault();
    test_abort();
    test_crash_in_second_config();
    test_hang();
    test_hang_silently();
    test_chatty();
    test_cpu_limit();
    test_wrong();
    test_nan();
    test_unwritten();
    test_overrun();
    test_modified_input();
    test_cheat_after_verification();
    test_missing_symbol();
    test_malformed_job();
    test_knobs();
    test_inout();
    test_sandbox();
    test_cache_tampered();
    test_far_out_of_bounds();
    test_check_configs();
    test_forged_ack();
    test_candidate_view();
    test_compile_timeout();
    nftw(cache_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return check_finish();
}
