/*
 * test_jobspec.c — the backend-independent job parser under the CPU and the
 * CUDA rules: knobs become sorted -D flags, arguments and configs are read
 * with each backend's types and defaults, and every malformed field gives a
 * one-line reason that names it.  The rules are the backends' own tables
 * (avo_backend.rules).  Also the element types of dtype.h.
 */
#include "core/dtype.h"
#include "core/jobspec.h"

#include "core/avo.h"
#include "core/backend.h"
#include "check.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The rules the two backends really use. */
#define cpu_like (*avo_backend_cpu.rules)
#define cuda_like (*avo_backend_cuda.rules)

/* saxpy-like: n (i32), alpha (f32), x (in), y (inout); one config. */
static json_t *base_job(void)
{
    json_t *job = json_pack(
        "{s:{s:i, s:b, s:s, s:f},"
        " s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s, s:[f, f]}, {s:s, s:s, s:s}],"
        " s:[{s:s, s:{s:i, s:f}, s:{s:i, s:i}, s:f, s:f}],"
        " s:{s:f, s:f}, s:i, s:i, s:{s:i, s:f, s:i}, s:s}",
        "knobs", "TILE", 64, "UNROLL", 1, "MODE", "fast", "SCALE", 0.5, "args", "name", "n", "kind",
        "scalar", "type", "i32", "name", "alpha", "kind", "scalar", "type", "f32", "name", "x",
        "kind", "in", "type", "f32", "range", 0.0, 2.0, "name", "y", "kind", "inout", "type", "f32",
        "configs", "name", "small", "scalars", "n", 100, "alpha", 2.5, "lengths", "x", 100, "y",
        100, "flops", 200.0, "bytes", 1200.0, "tolerance", "atol", 1e-5, "rtol", 1e-3, "seed", 99,
        "trials", 5000, "timing", "max_samples", 7, "check_rate", 0.25, "min_checks", 50,
        "cache_dir", "/tmp/avo-x/cpu");
    if (!job) {
        fprintf(stderr, "cannot build the test job\n");
        exit(1);
    }
    return job;
}

/* Parse `job` (taking it) under `rules`; returns the code, reason in err. */
static int parse(json_t *job, const avo_jobspec_rules *rules, avo_jobspec *spec, char *err,
                 size_t errlen)
{
    int rc = avo_jobspec_parse(job, rules, spec, err, errlen);
    json_decref(job);
    return rc;
}

/* A job that must fail with a reason containing `part`. */
static void expect_error(json_t *job, const avo_jobspec_rules *rules, const char *part)
{
    avo_jobspec spec;
    char err[AVO_ERRLEN] = "";
    json_incref(job);
    int rc = avo_jobspec_parse(job, rules, &spec, err, sizeof err);
    CHECK_INT(rc, AVO_EINVAL);
    CHECK_CONTAINS(err, part);
    avo_jobspec_free(&spec);
    json_decref(job);
}

static void test_good_job(void)
{
    json_t *job = base_job();
    avo_jobspec spec;
    char err[AVO_ERRLEN] = "";
    json_incref(job);
    CHECK_INT(parse(job, &cpu_like, &spec, err, sizeof err), 0);
    CHECK_INT(spec.nknobs, 4);
    if (spec.nknobs == 4) { /* sorted by name; booleans 1/0; reals exact */
        CHECK_STR(spec.knobs[0], "-DMODE=fast");
        CHECK_STR(spec.knobs[1], "-DSCALE=0.5");
        CHECK_STR(spec.knobs[2], "-DTILE=64");
        CHECK_STR(spec.knobs[3], "-DUNROLL=1");
    }
    CHECK_INT(spec.nargs, 4);
    CHECK_INT(spec.args[0].kind, AVO_ARG_SCALAR);
    CHECK_INT(spec.args[0].type, AVO_DT_I32);
    CHECK_INT(spec.args[3].kind, AVO_ARG_INOUT);
    CHECK(spec.args[2].lo == 0.0 && spec.args[2].hi == 2.0);
    CHECK(spec.args[3].lo == -1.0 && spec.args[3].hi == 1.0);
    CHECK(spec.args[3].atol == 1e-5 && spec.args[3].rtol == 1e-3);
    CHECK_INT(spec.nconfigs, 1);
    CHECK_STR(spec.configs[0].name, "small");
    CHECK_INT(spec.configs[0].scalars[0].i32, 100);
    CHECK(spec.configs[0].scalars[1].f32 == 2.5f);
    CHECK_INT(spec.configs[0].lengths[2], 100);
    CHECK(spec.configs[0].flops == 200.0 && spec.configs[0].bytes == 1200.0);
    CHECK_INT(spec.seed, 99);
    CHECK_INT(spec.trials, 1000); /* clamped to the rules' cap */
    CHECK_INT(spec.max_samples, 7);
    CHECK_INT(spec.min_samples, 5);
    CHECK(spec.check_rate == 0.25);
    CHECK_INT(spec.min_checks, 7); /* at most max_samples */
    CHECK(spec.timing == 1);
    CHECK(spec.timeout_s == 30 && spec.memory_mb == 4096 && spec.cpu_s == 60);
    CHECK_STR(spec.cache_dir, "/tmp/avo-x/cpu");
    avo_jobspec_free(&spec);
    avo_jobspec_free(&spec); /* idempotent */
    avo_jobspec_free(NULL);

    /* The CUDA rules: its own defaults, per-type tolerance, the sibling cache. */
    json_object_set_new(json_object_get(job, "tolerance"), "f32", json_pack("{s:f}", "atol", 0.25));
    CHECK_INT(parse(job, &cuda_like, &spec, err, sizeof err), 0);
    CHECK_INT(spec.trials, 100);
    CHECK(spec.timeout_s == 60 && spec.compile_timeout_s == 120);
    CHECK(spec.args[3].atol == 0.25 && spec.args[3].rtol == 1e-3);
    CHECK_STR(spec.cache_dir, "/tmp/avo-x/cuda");
    avo_jobspec_free(&spec);
}

static void test_halves(void)
{
    json_t *job = base_job();
    json_object_set_new(json_array_get(json_object_get(job, "args"), 1), "type",
                        json_string("bf16"));
    expect_error(job, &cpu_like, "argument 'alpha': type must be f32, f64, i32 or i64");
    avo_jobspec spec;
    char err[AVO_ERRLEN] = "";
    CHECK_INT(parse(job, &cuda_like, &spec, err, sizeof err), 0);
    CHECK_INT(spec.args[1].type, AVO_DT_BF16);
    CHECK_INT(spec.configs[0].scalars[1].bits16, avo_f32_to_bf16(2.5f));
    avo_jobspec_free(&spec);
}

/* Each malformed field, one at a time, named in the reason. */
static void test_errors(void)
{
    json_t *job = base_job();
    json_object_set_new(json_object_get(job, "knobs"), "1TILE", json_integer(3));
    expect_error(job, &cpu_like, "knob name '1TILE' is not a C identifier");
    json_decref(job);

    job = base_job();
    json_object_set_new(json_object_get(job, "knobs"), "TILE", json_array());
    expect_error(job, &cpu_like, "knob 'TILE' must be a number, boolean or string");
    json_decref(job);

    job = base_job();
    json_object_set_new(json_array_get(json_object_get(job, "args"), 2), "type", json_string("f8"));
    expect_error(job, &cuda_like, "argument 'x': type must be f32, f64, i32, i64, f16 or bf16");
    json_decref(job);

    job = base_job();
    json_object_set_new(json_array_get(json_object_get(job, "args"), 2), "kind",
                        json_string("output"));
    expect_error(job, &cpu_like, "argument 'x': kind must be scalar, in, out or inout");
    json_decref(job);

    job = base_job();
    json_object_set_new(json_array_get(json_object_get(job, "args"), 2), "range",
                        json_pack("[f, f]", 1.0, -1.0));
    expect_error(job, &cpu_like, "argument 'x': range must be [low, high]");
    json_decref(job);

    job = base_job();
    json_object_set_new(json_array_get(json_object_get(job, "args"), 2), "name", json_string("y"));
    expect_error(job, &cpu_like, "argument 'y' appears twice");
    json_decref(job);

    job = base_job();
    json_object_del(json_object_get(json_array_get(json_object_get(job, "configs"), 0), "lengths"),
                    "x");
    expect_error(job, &cpu_like, "config 'small': length of buffer 'x' is missing or invalid");
    json_decref(job);

    job = base_job(); /* zero elements: fine on the host, not on a GPU */
    json_object_set_new(
        json_object_get(json_array_get(json_object_get(job, "configs"), 0), "lengths"), "x",
        json_integer(0));
    {
        avo_jobspec spec;
        char err[AVO_ERRLEN];
        json_incref(job);
        CHECK_INT(parse(job, &cpu_like, &spec, err, sizeof err), 0);
        avo_jobspec_free(&spec);
    }
    expect_error(job, &cuda_like, "length of buffer 'x' is missing or invalid");
    json_decref(job);

    job = base_job();
    json_object_set_new(
        json_object_get(json_array_get(json_object_get(job, "configs"), 0), "scalars"), "n",
        json_real(1.5));
    expect_error(job, &cpu_like, "config 'small': scalar 'n' is missing or not a valid integer");
    json_decref(job);

    job = base_job();
    json_object_set_new(json_object_get(job, "tolerance"), "atol", json_integer(-1));
    expect_error(job, &cpu_like, "tolerances must be >= 0 and timeouts > 0");
    expect_error(job, &cuda_like, "tolerance for i32 must be numbers >= 0");
    json_decref(job);

    job = base_job();
    json_object_set_new(job, "limits", json_pack("{s:s}", "timeout_s", "soon"));
    expect_error(job, &cpu_like, "tolerance, trials, timing and limits fields must be numbers");
    expect_error(job, &cuda_like, "trials, timing and limits fields must be numbers");
    json_decref(job);

    job = base_job();
    json_object_set_new(job, "seed", json_string("x"));
    expect_error(job, &cpu_like, "\"seed\" must be an integer");
    json_decref(job);

    for (int bad = 0; bad < 2; bad++) { /* a rate of 0 would compare nothing */
        job = base_job();
        json_object_set_new(job, "timing", json_pack("{s:f}", "check_rate", bad ? 1.5 : 0.0));
        expect_error(job, &cpu_like, "timing.check_rate must be in (0, 1]");
        json_decref(job);
    }

    job = base_job();
    json_object_set_new(job, "configs", json_array());
    expect_error(job, &cpu_like, "job has no \"configs\" list");
    json_decref(job);
}

/* Absent or null fields take the defaults; the cache defaults to XDG. */
static void test_defaults(void)
{
    json_t *job = json_pack("{s:[{s:s, s:s, s:s}], s:[{s:s, s:{s:i}}], s:n, s:{s:n}}", "args",
                            "name", "x", "kind", "out", "type", "f64", "configs", "name", "c",
                            "lengths", "x", 3, "knobs", "timing", "max_seconds");
    avo_jobspec spec;
    char err[AVO_ERRLEN] = "";
    setenv("XDG_CACHE_HOME", "/tmp/avo-xdg", 1);
    unsetenv("AVO_CACHE"); /* the test suite's own; it comes first in the folder rule */
    CHECK_INT(parse(job, &cuda_like, &spec, err, sizeof err), 0);
    CHECK_INT(spec.nknobs, 0);
    CHECK(spec.max_seconds == 3.0 && spec.min_sample_s == 0.0002);
    CHECK(spec.args[0].atol == 1e-4 && spec.args[0].rtol == 1e-4);
    CHECK_INT(spec.trials, 2);
    CHECK(spec.check_rate == 0.25);
    CHECK_INT(spec.min_checks, 3);
    CHECK_STR(spec.cache_dir, "/tmp/avo-xdg/avo/cuda");
    avo_jobspec_free(&spec);
    /* $AVO_CACHE, the engine's and a worker node's override, comes first. */
    setenv("AVO_CACHE", "/tmp/avo-root", 1);
    job = json_pack("{s:[{s:s, s:s, s:s}], s:[{s:s, s:{s:i}}]}", "args", "name", "x", "kind", "out",
                    "type", "f64", "configs", "name", "c", "lengths", "x", 3);
    CHECK_INT(parse(job, &cuda_like, &spec, err, sizeof err), 0);
    CHECK_STR(spec.cache_dir, "/tmp/avo-root/cuda");
    avo_jobspec_free(&spec);
}

static void test_identifiers_and_numbers(void)
{
    CHECK(avo_jobspec_identifier_ok("_A1"));
    CHECK(!avo_jobspec_identifier_ok("A-1"));
    CHECK(!avo_jobspec_identifier_ok(""));
    json_t *o = json_pack("{s:f, s:s, s:n}", "a", 2.0, "b", "x", "c");
    double v = 0;
    CHECK(avo_jobspec_number(o, "a", 1, &v) == 0 && v == 2.0);
    CHECK(avo_jobspec_number(o, "b", 1, &v) < 0);
    CHECK(avo_jobspec_number(o, "c", 7, &v) == 0 && v == 7);
    CHECK(avo_jobspec_number(NULL, "a", 5, &v) == 0 && v == 5);
    json_decref(o);
}

static void test_dtypes(void)
{
    avo_dtype t;
    CHECK(avo_dtype_parse("i64", &t) == 0 && t == AVO_DT_I64);
    CHECK(avo_dtype_parse(NULL, &t) < 0);
    CHECK_STR(avo_dtype_name(AVO_DT_F16), "f16");
    CHECK_STR(avo_dtype_name((avo_dtype)17), "?");
    CHECK_INT(avo_dtype_size(AVO_DT_F16), 2);
    CHECK_INT(avo_dtype_size(AVO_DT_I32), 4);
    CHECK(avo_dtype_is_float(AVO_DT_BF16) && !avo_dtype_is_float(AVO_DT_I64));
    CHECK_INT(avo_f32_to_f16(1.0f), 0x3c00);
    CHECK(avo_f16_to_f32(0x3c00) == 1.0f);
    CHECK_INT(avo_f32_to_bf16(1.0f), 0x3f80);
    CHECK(avo_bf16_to_f32(0x3f80) == 1.0f);
}

/* Extra verified-only sizes, threads, and the sources a backend needs. */
static void test_checks_threads_sources(void)
{
    json_t *job = base_job();
    json_object_set_new(job, "check_configs",
                        json_pack("[{s:s, s:{s:i, s:f}, s:{s:i, s:i}}]", "name", "check-1",
                                  "scalars", "n", 7, "alpha", 1.0, "lengths", "x", 7, "y", 7));
    json_object_set_new(job, "threads", json_integer(4));
    json_object_set_new(job, "source", json_string("void k(void) {}"));
    json_object_set_new(job, "entry", json_string("k"));
    avo_jobspec spec;
    char err[AVO_ERRLEN] = "";
    json_incref(job);
    CHECK_INT(parse(job, &cpu_like, &spec, err, sizeof err), 0);
    CHECK_INT(spec.ncheck_configs, 1);
    CHECK_STR(spec.check_configs[0].name, "check-1");
    CHECK_INT(spec.check_configs[0].lengths[2], 7);
    CHECK_INT(spec.threads, 4);
    CHECK_STR(spec.entry, "k");
    CHECK_INT(avo_jobspec_need_sources(&spec, 0, err, sizeof err), 0);
    CHECK_INT(avo_jobspec_need_sources(&spec, 1, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "\"reference\"");
    avo_jobspec_free(&spec);

    json_object_set_new(job, "threads", json_integer(0));
    expect_error(job, &cpu_like, "\"threads\" must be an integer in [1, 256]");
    json_object_set_new(job, "threads", json_real(1.5));
    expect_error(job, &cpu_like, "\"threads\"");
    json_object_del(job, "threads");

    /* A check config named like a timed one would make a result ambiguous. */
    json_object_set_new(json_array_get(json_object_get(job, "check_configs"), 0), "name",
                        json_string("small"));
    expect_error(job, &cpu_like, "check config 'small' has the name of a timed config");
    json_object_set_new(job, "check_configs", json_string("all"));
    expect_error(job, &cpu_like, "\"check_configs\" must be a list");
    json_object_set_new(job, "check_configs", json_null());

    /* The same name twice in one list. */
    json_t *configs = json_object_get(job, "configs");
    json_array_append_new(configs, json_deep_copy(json_array_get(configs, 0)));
    expect_error(job, &cpu_like, "config 'small' appears twice");
    json_decref(job);
}

/* The yardstick: its source borrowed and its knobs as sorted flags on the
 * cpu backend; refused where the backend does not time one; malformed
 * fields named. */
static void test_yardstick(void)
{
    json_t *job = base_job();
    json_object_set_new(job, "yardstick",
                        json_pack("{s:s, s:{s:i, s:b}}", "source", "void k(void) {}", "knobs",
                                  "TILE", 8, "FAST", 1));
    avo_jobspec spec;
    char err[AVO_ERRLEN] = "";
    json_incref(job); /* the source is borrowed from it */
    CHECK_INT(parse(job, &cpu_like, &spec, err, sizeof err), 0);
    CHECK_STR(spec.ys_source, "void k(void) {}");
    CHECK_INT((long long)spec.ys_nknobs, 2);
    CHECK_STR(spec.ys_knobs[0], "-DFAST=1");
    CHECK_STR(spec.ys_knobs[1], "-DTILE=8");
    avo_jobspec_free(&spec);
    json_decref(job);

    job = base_job();
    CHECK_INT(parse(job, &cpu_like, &spec, err, sizeof err), 0);
    CHECK(spec.ys_source == NULL && spec.ys_nknobs == 0);
    avo_jobspec_free(&spec);

    job = base_job();
    json_object_set_new(job, "yardstick", json_pack("{s:s}", "source", "void k(void) {}"));
    expect_error(job, &cuda_like, "\"yardstick\": the cuda backend does not time a yardstick");
    json_decref(job);

    job = base_job();
    json_object_set_new(job, "yardstick", json_pack("{s:s}", "source", "void k(void) {}"));
    json_object_set_new(job, "threads", json_integer(4));
    expect_error(job, &cpu_like, "\"yardstick\" needs \"threads\": 1");
    json_decref(job);

    job = base_job();
    json_object_set_new(job, "yardstick", json_string("seed"));
    expect_error(job, &cpu_like, "\"yardstick\" must be an object with a \"source\" string");
    json_decref(job);

    job = base_job();
    json_object_set_new(job, "yardstick",
                        json_pack("{s:s, s:{s:[]}}", "source", "x", "knobs", "TILE"));
    expect_error(job, &cpu_like, "yardstick.knobs: knob 'TILE' must be a number, boolean or string");
    json_decref(job);
}

int main(void)
{
    test_checks_threads_sources();
    test_good_job();
    test_halves();
    test_errors();
    test_defaults();
    test_identifiers_and_numbers();
    test_dtypes();
    test_yardstick();
    return check_finish();
}
