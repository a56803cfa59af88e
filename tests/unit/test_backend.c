/*
 * test_backend.c — the result helpers every backend fills its answer with:
 * the result and config skeletons, UTF-8-safe log text, failing a result,
 * keeping the tail of a log and quoting a compiler's error line; and the
 * backend table and avo_mkdir_p.
 */
#include "core/avo.h"
#include "core/backend.h"

#include "check.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_skeletons(void)
{
    json_t *job = json_pack("{s:i}", "id", 5);
    json_t *r = avo_result_new(job, "ok", NULL);
    CHECK_INT(json_integer_value(json_object_get(r, "id")), 5);
    CHECK(json_is_null(json_object_get(r, "reason")));
    CHECK_INT(json_array_size(json_object_get(r, "configs")), 0);

    avo_result_fail(r, "wrong", "config %s: %d bad", "small", 3);
    CHECK_STR(json_string_value(json_object_get(r, "status")), "wrong");
    CHECK_STR(json_string_value(json_object_get(r, "reason")), "config small: 3 bad");
    avo_result_fail(r, "crashed", "%s", "bytes \xff\xfe here");
    CHECK_STR(json_string_value(json_object_get(r, "reason")), "bytes ?? here");

    json_t *entry = avo_result_config_new("n1000");
    CHECK_STR(json_string_value(json_object_get(entry, "name")), "n1000");
    CHECK(json_is_false(json_object_get(entry, "correct")));
    CHECK(json_is_null(json_object_get(entry, "max_error")));
    CHECK_INT(json_integer_value(json_object_get(entry, "samples")), 0);
    json_decref(entry);
    json_decref(r);
    json_decref(job);

    CHECK(avo_backend_find("cpu") == &avo_backend_cpu);
    CHECK(avo_backend_find("cuda") == &avo_backend_cuda);
    CHECK(avo_backend_find("tpu") == NULL);
    CHECK(avo_backend_find(NULL) == NULL);
}

static void test_text(void)
{
    /* Valid multi-byte sequences stay; overlongs, surrogates, stray
     * continuation bytes and a cut-off sequence become '?'. */
    const char in[] = "\xc3\xa9 \xe2\x82\xac \xc0\xaf \xed\xa0\x80 \x80 \xf0\x9f";
    json_t *s = avo_result_text(in, sizeof in - 1);
    CHECK_STR(json_string_value(s), "\xc3\xa9 \xe2\x82\xac ?? ??? ? ??");
    json_decref(s);
    s = avo_result_text("a\0b", 3); /* NUL is not passed through */
    CHECK_STR(json_string_value(s), "a?b");
    json_decref(s);

    json_t *r = json_object();
    avo_result_set_log(r, "0123456789", 10, 4);
    CHECK_STR(json_string_value(json_object_get(r, "log")), "6789");
    avo_result_set_log(r, "short", 5, 100);
    CHECK_STR(json_string_value(json_object_get(r, "log")), "short");
    json_decref(r);
}

static void test_error_line(void)
{
    static const char *const cc[] = {"error:", "Error:", NULL};
    char line[512];
    const char *log = "kernel.c:1: warning: x\nkernel.c:2:5: error: y undeclared\nmore\n";
    avo_result_error_line(log, strlen(log), cc, "none", line, sizeof line);
    CHECK_STR(line, "kernel.c:2:5: error: y undeclared");
    log = "ld: something odd\nsecond";
    avo_result_error_line(log, strlen(log), cc, "none", line, sizeof line);
    CHECK_STR(line, "ld: something odd");
    avo_result_error_line("", 0, cc, "the compiler failed without a message", line, sizeof line);
    CHECK_STR(line, "the compiler failed without a message");
    char longline[1000];
    memset(longline, 'x', sizeof longline - 1);
    longline[sizeof longline - 1] = '\0';
    avo_result_error_line(longline, strlen(longline), cc, "none", line, sizeof line);
    CHECK_INT(strlen(line), 400);
}

static void test_mkdir_p(void)
{
    char base[] = "/tmp/avo-test-backend-XXXXXX";
    if (!mkdtemp(base)) {
        CHECK(0);
        return;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/a/b/c", base);
    CHECK_INT(avo_mkdir_p(path), 0);
    CHECK_INT(avo_mkdir_p(path), 0); /* existing is fine */
    struct stat st;
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    char file[300];
    snprintf(file, sizeof file, "%s/f", base);
    FILE *f = fopen(file, "w");
    if (f)
        fclose(f);
    snprintf(path, sizeof path, "%s/f/sub", base);
    CHECK(avo_mkdir_p(path) < 0); /* a file in the way */
    char huge[5000];
    memset(huge, 'a', sizeof huge - 1);
    huge[0] = '/';
    huge[sizeof huge - 1] = '\0';
    CHECK(avo_mkdir_p(huge) < 0);
    unlink(file);
    snprintf(path, sizeof path, "%s/a/b/c", base);
    rmdir(path);
    snprintf(path, sizeof path, "%s/a/b", base);
    rmdir(path);
    snprintf(path, sizeof path, "%s/a", base);
    rmdir(path);
    rmdir(base);
}

/* A worker's result is believed only when it answers its job sensibly. */
static void test_validate(void)
{
    json_t *job =
        json_pack("{s:[{s:s}, {s:s, s:f, s:f}], s:[{s:s}]}", "configs", "name", "a", "name", "b",
                  "flops", 7e9, "bytes", 3e9, "check_configs", "name", "check-1");
    const char *bad[][2] = {
        /* a rate that is not the job's work over the median time (issue 18:
         * a forged 1e9 GFLOP/s), or a rate without a time */
        {"{\"status\": \"ok\", \"configs\": [{\"name\": \"a\", \"correct\": true}, "
         "{\"name\": \"b\", \"correct\": true, \"median_s\": 2, \"gflops\": 1e9}]}",
         "config 'b': gflops 1e+09 is not the job's work over its median time (7e+09 / 2 s "
         "gives 3.5)"},
        {"{\"status\": \"ok\", \"configs\": [{\"name\": \"a\", \"correct\": true}, "
         "{\"name\": \"b\", \"correct\": true, \"median_s\": 2, \"gflops\": 3.5001}]}",
         "config 'b': gflops 3.5001 is not"},
        {"{\"status\": \"ok\", \"configs\": [{\"name\": \"a\", \"correct\": true}, "
         "{\"name\": \"b\", \"correct\": true, \"median_s\": 2, \"gflops\": 3.5, \"gbs\": 9}]}",
         "config 'b': gbs 9 is not the job's work over its median time (3e+09 / 2 s gives 1.5)"},
        {"{\"status\": \"ok\", \"configs\": [{\"name\": \"a\", \"correct\": true}, "
         "{\"name\": \"b\", \"correct\": true, \"median_s\": 2, \"tflops\": 1}]}",
         "config 'b': tflops 1 is not"},
        {"{\"status\": \"wrong\", \"configs\": [{\"name\": \"b\", \"gflops\": 3.5}]}",
         "config 'b': gflops 3.5 is not the job's work over its median time (7e+09 / 0 s gives "
         "0)"},
        {"{\"status\": \"wrong\", \"configs\": [{\"name\": \"a\", \"median_s\": 1, "
         "\"gflops\": 2}]}",
         "config 'a': gflops 2 is not the job's work over its median time (0 / 1 s gives 0)"},
        {"{\"status\": \"splendid\"}", "unknown status 'splendid'"},
        {"{\"status\": \"wrong\", \"reason\": 7}", "reason is not text"},
        {"{\"status\": \"wrong\", \"configs\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}",
         "config 'a' reported twice"},
        {"{\"status\": \"wrong\", \"configs\": [{\"name\": \"zzz\"}]}", "unknown config 'zzz'"},
        {"{\"status\": \"wrong\", \"configs\": [{\"name\": \"a\", \"gflops\": -1}]}",
         "config 'a': bad gflops"},
        {"{\"status\": \"wrong\", \"configs\": [{\"name\": \"a\", \"correct\": 1}]}",
         "correct is no boolean"},
        {"{\"status\": \"ok\", \"configs\": [{\"name\": \"a\", \"correct\": true}]}",
         "status ok without config 'b' correct"},
        {"{\"status\": \"ok\", \"configs\": [{\"name\": \"a\", \"correct\": true}, "
         "{\"name\": \"b\", \"correct\": false}]}",
         "status ok without config 'b' correct"},
        {"{\"status\": \"wrong\", \"checks\": [{\"name\": \"a\"}]}", "unknown config 'a'"},
        {"[1]", "not an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *r = json_loads(bad[i][0], 0, NULL);
        char err[AVO_ERRLEN] = "";
        CHECK_INT(avo_result_validate(job, r, err, sizeof err), AVO_EPROTO);
        CHECK_CONTAINS(err, bad[i][1]);
        json_decref(r);
    }
    json_t *good = json_loads("{\"status\": \"ok\", \"reason\": null, \"configs\": "
                              "[{\"name\": \"b\", \"correct\": true, \"median_s\": 2, "
                              "\"gflops\": 3.5, \"gbs\": 1.5, \"tflops\": 0.0035}, "
                              "{\"name\": \"a\", \"correct\": true, \"max_error\": null, "
                              "\"median_s\": 0.5, \"gflops\": 0, \"gbs\": 0}], "
                              "\"checks\": [{\"name\": \"check-1\", \"correct\": true}]}",
                              0, NULL);
    char err[AVO_ERRLEN] = "";
    CHECK_INT(avo_result_validate(job, good, err, sizeof err), 0);
    json_decref(good);
    json_decref(job);
}

/* A baseline job's result: `unavailable` as a status and per config, never
 * for a candidate, never claiming a number; a forged ok is still refused. */
static void test_validate_baseline(void)
{
    json_t *job =
        json_pack("{s:s, s:[{s:s, s:f}, {s:s}], s:[{s:s}]}", "baseline", "cublas", "configs",
                  "name", "a", "flops", 2.5e9, "name", "b", "check_configs", "name", "check-1");
    json_t *candidate_job = json_pack("{s:[{s:s}, {s:s}]}", "configs", "name", "a", "name", "b");
    const char *bl = "\"baseline\": {\"name\": \"cublas\", \"library\": \"cuBLASLt\"}";
    char text[1024];
    const char *bad[][2] = {
        /* ok where one config is neither correct nor unavailable */
        {"{\"status\": \"ok\", %s, \"configs\": [{\"name\": \"a\", \"correct\": true}, "
         "{\"name\": \"b\", \"correct\": false}]}",
         "status ok without config 'b' correct"},
        /* ok with every config unavailable */
        {"{\"status\": \"ok\", %s, \"configs\": [{\"name\": \"a\", \"unavailable\": \"no\"}, "
         "{\"name\": \"b\", \"unavailable\": \"no\"}]}",
         "without any config verified"},
        /* an unavailable config that claims a time or correctness */
        {"{\"status\": \"ok\", %s, \"configs\": [{\"name\": \"a\", \"correct\": true}, "
         "{\"name\": \"b\", \"unavailable\": \"no\", \"median_s\": 0.5}]}",
         "config 'b' is unavailable yet claims a result"},
        {"{\"status\": \"ok\", %s, \"configs\": [{\"name\": \"a\", \"correct\": true}, "
         "{\"name\": \"b\", \"unavailable\": \"no\", \"correct\": true}]}",
         "config 'b' is unavailable yet claims a result"},
        {"{\"status\": \"ok\", %s, \"configs\": [{\"name\": \"a\", \"correct\": true}, "
         "{\"name\": \"b\", \"unavailable\": 3}]}",
         "unavailable is not a reason"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, bad[i][0], bl);
        json_t *r = json_loads(text, 0, NULL);
        char err[AVO_ERRLEN] = "";
        CHECK(r != NULL);
        CHECK_INT(avo_result_validate(job, r, err, sizeof err), AVO_EPROTO);
        CHECK_CONTAINS(err, bad[i][1]);
        json_decref(r);
    }
    /* ok without naming the baseline, or naming another */
    json_t *r = json_loads("{\"status\": \"ok\", \"configs\": [{\"name\": \"a\", \"correct\": "
                           "true}, {\"name\": \"b\", \"correct\": true}]}",
                           0, NULL);
    char err[AVO_ERRLEN] = "";
    CHECK_INT(avo_result_validate(job, r, err, sizeof err), AVO_EPROTO);
    CHECK_CONTAINS(err, "does not name baseline 'cublas'");
    json_object_set_new(r, "baseline", json_pack("{s:s}", "name", "cudnn_sdpa"));
    CHECK_INT(avo_result_validate(job, r, err, sizeof err), AVO_EPROTO);
    /* a candidate's result cannot be unavailable, nor have unavailable configs */
    CHECK_INT(avo_result_validate(candidate_job, r, err, sizeof err), 0);
    json_t *u = json_loads("{\"status\": \"unavailable\", \"reason\": \"no library\"}", 0, NULL);
    CHECK_INT(avo_result_validate(candidate_job, u, err, sizeof err), AVO_EPROTO);
    CHECK_CONTAINS(err, "status unavailable for a job that runs no baseline");
    CHECK_INT(avo_result_validate(job, u, err, sizeof err), 0);
    /* a library baseline's job (cpulib.h) may be unavailable: its library is missing */
    json_t *library_job = json_pack("{s:[{s:s}, {s:s}], s:{s:s, s:s}}", "configs", "name", "a",
                                    "name", "b", "library", "file", "libx.so.1", "symbol", "f");
    CHECK_INT(avo_result_validate(library_job, u, err, sizeof err), 0);
    json_decref(library_job);
    json_decref(u);
    u = json_loads("{\"status\": \"wrong\", \"configs\": [{\"name\": \"a\", \"unavailable\": "
                   "\"x\"}]}",
                   0, NULL);
    CHECK_INT(avo_result_validate(candidate_job, u, err, sizeof err), AVO_EPROTO);
    CHECK_CONTAINS(err, "config 'a' unavailable in a job that runs no baseline");
    json_decref(u);
    json_decref(r);
    /* the good ones: one config unavailable, the other verified */
    snprintf(text, sizeof text,
             "{\"status\": \"ok\", %s, \"configs\": [{\"name\": \"a\", \"correct\": true, "
             "\"median_s\": 0.001, \"tflops\": 2.5}, {\"name\": \"b\", \"correct\": false, "
             "\"median_s\": 0, \"unavailable\": \"cuDNN: no engine\"}], \"checks\": "
             "[{\"name\": \"check-1\", \"correct\": false, \"unavailable\": \"no\"}]}",
             bl);
    r = json_loads(text, 0, NULL);
    CHECK_INT(avo_result_validate(job, r, err, sizeof err), 0);
    json_decref(r);
    json_decref(candidate_job);
    json_decref(job);
}

int main(void)
{
    test_validate();
    test_validate_baseline();
    test_skeletons();
    test_text();
    test_error_line();
    test_mkdir_p();
    return check_finish();
}
