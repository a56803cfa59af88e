/*
 * cpu.c — the CPU backend: compile a candidate and its reference with the
 * host C compiler, in a sandbox, into the compile cache (eval/cache.h);
 * then judge the candidate from a process it cannot reach
 * (docs/protocol.md, docs/threat-model.md).
 *
 * Three processes take part in a job:
 *
 *   worker     parses the job, compiles (compile.c: each compiler run
 *              sandboxed, with a deadline), forks the judge, watches it
 *              until its deadline, and turns what the judge reported, or
 *              how it died, into one result (this file).
 *   judge      trusted: forks the candidate first, then loads the
 *              reference, and config by config fills inputs, runs reference
 *              and candidate, checks and times (device.c, eval/judge.c).
 *              It reports on a pipe to the worker in framed JSON messages.
 *   candidate  untrusted: an unprivileged process in its own namespaces
 *              that loads the kernel and calls it on the judge's command
 *              (candidate.c).
 *
 * cpu_job.h is the files' shared view of a job and of their pipes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/avo.h"
#include "core/backend.h"
#include "eval/cpu/cpu_job.h"
#include "eval/cpu/cpulib.h"
#include "core/jobspec.h"
#include "eval/libraries.h"
#include "core/proto.h"
#include "eval/sandbox.h"
#include "eval/supervise.h"

/* ------------------------------------------------------------------------ */
/* The job, parsed once into C values                                       */

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
    .yardstick = 1,
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
    j->libraries = json_object_get(job, "libraries");
    if (!avo_libraries_policy_valid(j->libraries, err, errlen))
        return AVO_EINVAL;
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
/* The judge, seen from the worker                                          */

/* What the worker learned from the judge's report. */
typedef struct judge_report {
    char progress[256]; /* config being run at the end, "" if none */
    int in_config;      /* a progress came with no entry after it */
    json_t *done;       /* the verdict message, or NULL */
    json_t *libraries;  /* what the judge saw the kernel load (libraries.h), or NULL */
    json_t *unobserved; /* ...or why it could not see it */
    int pinned;         /* the CPU the judge and its candidate ran on (pin.c), -1: any */
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
        json_t *libraries = json_object_get(msg, "libraries");
        json_t *unobserved = json_object_get(msg, "libraries_unobserved");
        json_t *pinned = json_object_get(msg, "pinned");
        if (json_is_integer(pinned)) {
            r->pinned = (int)json_integer_value(pinned);
        } else if (json_is_array(libraries) && !r->libraries) {
            r->libraries = json_incref(libraries);
        } else if (json_is_string(unobserved) && !r->unobserved) {
            r->unobserved = json_incref(unobserved);
        } else if (progress) {
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
    /* The judge dies with its worker, which dies with the engine: a killed
     * engine leaves no kernel spinning. */
    pid_t pid = avo_supervise_fork(AVO_CHILD_OWN_GROUP | AVO_CHILD_CRASH_DEFAULT);
    if (pid == 0)
        avo_cpu_judge_main(job, log_pipe[1], report_pipe[1], cand_fd, ref_so);
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
    judge_report rep = {.done = NULL, .pinned = -1};
    parse_report(&reports, configs, checks, &rep);
    free(reports.data);
    if (rep.libraries)
        json_object_set_new(result, "libraries", rep.libraries);
    if (rep.unobserved)
        json_object_set_new(result, "libraries_unobserved", rep.unobserved);
    if (rep.pinned >= 0)
        json_object_set_new(result, "cpu", json_integer(rep.pinned));
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
    } else {
        char how[128];
        if (avo_supervise_death(r.status, how, sizeof how))
            avo_result_fail(result, "error", "the judge died with %s %s", how, where);
        else
            avo_result_fail(result, "error", "the judge exited with %s without a verdict %s", how,
                            where);
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
    json_object_del(result, "libraries");
    json_object_del(result, "libraries_unobserved");
    if (scratch[0]) {
        avo_cpu_remove_tree(scratch);
        const char *tmp = getenv("TMPDIR");
        int e = avo_cpu_private_dir(tmp && *tmp ? tmp : "/tmp", "avo-kernel", geteuid(), scratch,
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

/*
 * The yardstick (the evaluator's seed at its knobs' first values): compiled
 * as a candidate is, with its own knobs and without a library baseline's
 * link flags, so it shares the seed's own compile in the cache.  A seed
 * that does not compile is the evaluator's mistake: "invalid".
 */
static int compile_yardstick(const cpu_job *job, cpu_build *out, json_t *result)
{
    cpu_job ys = *job;
    ys.spec.knobs = job->spec.ys_knobs;
    ys.spec.nknobs = job->spec.ys_nknobs;
    ys.link[0] = ys.link[1] = NULL;
    if (avo_cpu_compile(&ys, job->spec.ys_source, 1, "yardstick", out, NULL, result) == 0)
        return 0;
    const char *status = json_string_value(json_object_get(result, "status"));
    const char *reason = json_string_value(json_object_get(result, "reason"));
    char *why = strdup(reason ? reason : "it does not compile");
    avo_result_fail(result, !status || !strcmp(status, "compile_error") ? "invalid" : status,
                    "yardstick (the evaluator's seed): %s", why ? why : "it does not compile");
    free(why);
    return -1;
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

    const char *version = avo_cpu_compiler_version(err, sizeof err);
    if (version)
        json_object_set_new(result, "compiler", json_string(version));
    avo_sandbox_mechanism mechanism;
    if (avo_sandbox_select(&mechanism, err, sizeof err) < 0) {
        avo_result_fail(result, "error", "%s", err);
        cpu_job_free(&spec);
        return result;
    }
    json_object_set_new(result, "sandbox", json_string(avo_sandbox_mechanism_name(mechanism)));
    /* Uids avo chose itself (the default range is not mapped here): said
     * with every result, where a reader of the archive looks. */
    avo_sandbox_uid_plan plan;
    if (avo_sandbox_uids(&plan, err, sizeof err) == 0 && plan.picked)
        json_object_set_new(result, "sandbox_uids",
                            json_pack("{s:I, s:I, s:b, s:s}", "first", (json_int_t)plan.base,
                                      "count", (json_int_t)plan.count, "shared", plan.shared,
                                      "how", plan.how));
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
    cpu_build cand = {.fd = -1}, ref = {.fd = -1}, ys = {.fd = -1};
    char *flags = NULL;
    int rc = avo_cpu_compile(&spec, spec.spec.source, 1, "candidate", &cand, &flags, result);
    if (flags)
        json_object_set_new(result, "cflags", json_string(flags));
    free(flags);
    json_object_set_new(result, "cache_hit", json_boolean(rc == 0 && cand.cache_hit));
    if (cand.repaired)
        json_object_set_new(result, "cache_repaired", json_true());
    /* compile_only: the candidate's compile status and log, nothing run. */
    int compile_only = json_is_true(json_object_get(job, "compile_only"));
    if (rc == 0 && !compile_only)
        rc = avo_cpu_compile(&spec, spec.spec.ref_source, 0, "reference", &ref, NULL, result);
    if (rc == 0 && !compile_only && spec.spec.ys_source) {
        rc = compile_yardstick(&spec, &ys, result);
        spec.ys_so = rc == 0 ? ys.path : NULL;
    }
    json_object_set_new(result, "compile_s", json_real(avo_monotonic() - t0));
    /* Without a view the candidate has no private /tmp: a directory of its
     * own stands in for it, removed once the judge and its candidate ended. */
    char scratch[PATH_MAX] = "";
    if (rc == 0 && !compile_only && mechanism != AVO_SANDBOX_NAMESPACES) {
        const char *tmp = getenv("TMPDIR");
        /* the judge gives it to its candidate's uid once it holds one */
        int e = avo_cpu_private_dir(tmp && *tmp ? tmp : "/tmp", "avo-kernel", geteuid(), scratch,
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
        avo_cpu_remove_tree(scratch);
    if (cand.fd >= 0)
        close(cand.fd);
    if (ref.fd >= 0)
        close(ref.fd);
    if (ys.fd >= 0)
        close(ys.fd);
    cpu_job_free(&spec);
    return result;
}

const avo_backend avo_backend_cpu = {"cpu", cpu_run_job, &cpu_rules};
