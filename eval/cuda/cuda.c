/*
 * cuda.c — the CUDA backend: parse a job, compile candidate and reference
 * with NVRTC into a content-addressed cache of cubins, read their resource
 * usage out of the cubin, and either stop there (compile-only: no GPU
 * needed) or hand both to the device side (cuda_device.c) to verify and time.
 *
 * NVRTC runs in a compile child, never in the worker itself
 * (nvrtc_child.h).  The child returns one framed JSON message with the log,
 * the lowered names and the cubin in base64; the same message is the entry
 * <cache_dir>/<key>.json of the compile cache (eval/cache.h: written
 * complete, checked against its checksum on every read, trimmed by least
 * recent use).
 *
 * Headers: #include resolves only to headers the evaluator provides (passed
 * to NVRTC in memory) and to headers of the toolkit itself
 * (cuda_fp16.h/.hpp, cuda_bf16.h/.hpp, which NVRTC 13 does not build in,
 * and those of mma.h and cuda_pipeline.h), read from the include folder
 * avo_cuda_include_dir finds for the NVRTC in use (the toolkit's or the pip
 * wheels').  Every #include is checked before compiling (cuda_pure.c, on
 * the lexer of eval/includes.c) and no -I or --pre-include option is
 * accepted, so a kernel cannot read a host file.
 *
 * A baseline job (`"baseline": name`, docs/protocol.md) compiles only the
 * reference; the named vendor library (vendor.h) runs where the candidate
 * would, and a library that cannot be loaded makes the result `unavailable`.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/avo.h"
#include "core/backend.h"
#include "eval/baseline.h"
#include "eval/cache.h"
#include "eval/cuda/cuda_api.h"
#include "eval/cuda/cuda_job.h"
#include "eval/cuda/cuda_pure.h"
#include "core/hash.h"
#include "eval/cuda/nvrtc_child.h"
#include "core/proto.h"
#include "eval/supervise.h"
#include "eval/cuda/vendor.h"

#define LOG_MAX 16384 /* bytes of NVRTC log kept in a result */

/* Toolkit headers NVRTC may include, by the name NVRTC looks them up by;
 * read from the toolkit (at toolkit_headers[i].path under its include directory),
 * never from -I.  The first four must be there; mma.h (WMMA) and
 * cuda_pipeline.h (cp.async) come with what they include themselves. */
static const struct toolkit_header {
    const char *name; /* as #include names it */
    const char *path; /* under the toolkit's include directory */
} toolkit_headers[] = {
    {"cuda_fp16.h", "cuda_fp16.h"},
    {"cuda_fp16.hpp", "cuda_fp16.hpp"},
    {"cuda_bf16.h", "cuda_bf16.h"},
    {"cuda_bf16.hpp", "cuda_bf16.hpp"},
    {"mma.h", "mma.h"},
    {"crt/mma.h", "crt/mma.h"},
    {"mma.hpp", "crt/mma.hpp"}, /* crt/mma.h includes it by this name */
    {"cuda_pipeline.h", "cuda_pipeline.h"},
    {"cuda_pipeline_primitives.h", "cuda_pipeline_primitives.h"},
    {"cuda_pipeline_helpers.h", "cuda_pipeline_helpers.h"},
    {"cuda_awbarrier.h", "cuda_awbarrier.h"},
    {"cuda_awbarrier_primitives.h", "cuda_awbarrier_primitives.h"},
    {"cuda_awbarrier_helpers.h", "cuda_awbarrier_helpers.h"},
};
#define N_TOOLKIT_HEADERS ((int)(sizeof toolkit_headers / sizeof toolkit_headers[0]))

/* What marks the line of an NVRTC log that a reason quotes. */
static const char *const nvrtc_error_markers[] = {"error", NULL};

/* ------------------------------------------------------------------------ */
/* Small utilities                                                          */

/* Whole file into a new NUL-terminated string (caller frees), or NULL. */
static char *read_text_file(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 65536 + 1 > cap) {
            cap = cap ? cap * 2 : 131072;
            char *grown = cap <= max ? realloc(buf, cap) : NULL;
            if (!grown) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = grown;
        }
        size_t n = fread(buf + len, 1, 65536, f);
        len += n;
        if (n < 65536)
            break;
    }
    fclose(f);
    buf[len] = '\0';
    return buf;
}

/* ------------------------------------------------------------------------ */
/* The job                                                                  */

static void job_free(cuda_job *s)
{
    avo_jobspec_free(&s->spec);
    free(s->launches);
    free(s->ref_launches);
    free(s->check_launches);
    free(s->check_ref_launches);
    free(s->options);
    free(s->header_names);
    free(s->header_texts);
    free(s->name_exprs);
    memset(s, 0, sizeof *s);
}

/* An array of strings from job[key] into *ret (borrowed strings). */
static int parse_string_list(const json_t *job, const char *key, const char ***ret, size_t *ret_n,
                             char *err, size_t errlen)
{
    const json_t *list = json_object_get(job, key);
    *ret_n = 0;
    if (!list || json_is_null(list))
        return 0;
    if (!json_is_array(list))
        return avo_error(err, errlen, AVO_EINVAL, "\"%s\" must be a list of strings", key);
    *ret = calloc(json_array_size(list) + 1, sizeof **ret);
    if (!*ret)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < json_array_size(list); i++) {
        const char *s = json_string_value(json_array_get(list, i));
        if (!s)
            return avo_error(err, errlen, AVO_EINVAL, "\"%s\"[%zu] must be a string", key, i + 1);
        (*ret)[(*ret_n)++] = s;
    }
    return 0;
}

/* NVRTC options that could make the compiler read host files. */
static int option_allowed(const char *opt)
{
    static const char *const refused[] = {
        "-I", "--include-path", "-include", "--pre-include", "-dopt", "--use_fast_math_from_file"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (strncmp(opt, refused[i], strlen(refused[i])) == 0)
            return 0;
    if (strchr(opt, '@')) /* response files */
        return 0;
    return 1;
}

/* The launch geometry of candidate and reference for each config of the
 * job's list `key` (configs or check_configs; `configs` of the spec).  An
 * evaluator that could not compute one sends {"error": why} instead. */
static int parse_launch_list(const json_t *job, const char *key, const avo_config_spec *specs,
                             size_t n, int compile_only, int baseline,
                             avo_cuda_launch **ret_launches, avo_cuda_launch **ret_ref_launches,
                             char *err, size_t errlen)
{
    const json_t *configs = json_object_get(job, key);
    avo_cuda_launch *launches = *ret_launches = calloc(n ? n : 1, sizeof *launches);
    avo_cuda_launch *ref_launches = *ret_ref_launches = calloc(n ? n : 1, sizeof *ref_launches);
    if (!launches || !ref_launches)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    for (size_t c = 0; c < n; c++) {
        const json_t *cj = json_array_get(configs, c);
        const char *name = specs[c].name;
        char why[512];
        const char *launch_error =
            json_string_value(json_object_get(json_object_get(cj, "launch"), "error"));
        const char *ref_error =
            json_string_value(json_object_get(json_object_get(cj, "reference_launch"), "error"));
        if (baseline)
            launch_error = NULL; /* a baseline job has no candidate launch */
        /* Also when only compiling: the knobs that fail the evaluator's
         * launch functions make the candidate invalid, and the compile
         * tool says so rather than "ok". */
        if (launch_error)
            return avo_error(err, errlen, AVO_EINVAL, "config '%s': evaluator %s", name,
                             launch_error);
        if (ref_error)
            return avo_error(err, errlen, AVO_EINVAL, "config '%s': evaluator %s", name, ref_error);
        if (!baseline && (!compile_only || json_object_get(cj, "launch"))) {
            if (avo_cuda_launch_parse(json_object_get(cj, "launch"), &launches[c], why,
                                      sizeof why) < 0)
                return avo_error(err, errlen, AVO_EINVAL, "config '%s': candidate %s", name, why);
        }
        if (!compile_only && avo_cuda_launch_parse(json_object_get(cj, "reference_launch"),
                                                   &ref_launches[c], why, sizeof why) < 0)
            return avo_error(err, errlen, AVO_EINVAL, "config '%s': reference %s", name, why);
    }
    return 0;
}

/* Launch geometry of the timed configs and, unless compiling only, of the
 * check configs. */
static int parse_launches(const json_t *job, cuda_job *s, char *err, size_t errlen)
{
    int baseline = s->baseline != NULL;
    int rc = parse_launch_list(job, "configs", s->spec.configs, s->spec.nconfigs, s->compile_only,
                               baseline, &s->launches, &s->ref_launches, err, errlen);
    if (rc == 0)
        rc = parse_launch_list(job, "check_configs", s->spec.check_configs,
                               s->compile_only ? 0 : s->spec.ncheck_configs, s->compile_only,
                               baseline, &s->check_launches, &s->check_ref_launches, err, errlen);
    return rc;
}

/* Halves too; buffers of at least one element (a device allocation of 0
 * bytes fails); per-type tolerances; no process limits (the worker's are). */
static const avo_jobspec_rules cuda_rules = {
    .cache_name = "cuda",
    .last_type = AVO_DT_BF16,
    .min_length = 1,
    .max_length = (uint64_t)1 << 40,
    .per_type_tolerance = 1,
    .process_limits = 0,
    .max_trials = 100,
    .max_samples_cap = 100000,
    .min_sample_s = 0.0002,
    .target_spread = 0.01,
    .max_seconds = 3.0,
    .min_samples = 5,
    .max_samples = 50,
    .timeout_s = 60,
    .compile_timeout_s = 120,
};

/*
 * Fill `s` from `job` with the protocol's defaults.  On failure returns a
 * negative code with a reason in err; `s` must still be released with
 * job_free.  `s` borrows strings from `job`, which must outlive it.
 */
static int job_parse(const json_t *job, cuda_job *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->compile_only = json_is_true(json_object_get(job, "compile_only"));
    const json_t *baseline = json_object_get(job, "baseline");
    if (baseline && !json_is_null(baseline)) {
        const char *name = json_string_value(baseline);
        if (!name)
            return avo_error(err, errlen, AVO_EINVAL, "\"baseline\" must be a baseline's name");
        s->baseline = avo_baseline_find(name);
        if (!s->baseline || strcmp(s->baseline->backend, "cuda") != 0) {
            char known[256] = "";
            for (const avo_baseline_info *b = avo_baseline_list(); b->name; b++)
                if (strcmp(b->backend, "cuda") == 0)
                    snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                             known[0] ? ", " : "", b->name);
            s->baseline = NULL;
            return avo_error(err, errlen, AVO_EINVAL,
                             "unknown baseline '%.100s' (known on CUDA: %s)", name, known);
        }
        if (s->compile_only)
            return avo_error(err, errlen, AVO_EINVAL,
                             "a baseline job cannot be compile_only (there is nothing to compile)");
    }
    const json_t *arch = json_object_get(job, "arch");
    if (arch && !json_is_null(arch)) {
        s->arch = json_string_value(arch);
        if (!s->arch || avo_cuda_arch_cc(s->arch) < 0)
            return avo_error(err, errlen, AVO_EINVAL,
                             "\"arch\" must look like sm_90a, sm_80 or compute_90");
    }

    int rc = parse_string_list(job, "nvrtc_options", &s->options, &s->noptions, err, errlen);
    if (rc == 0)
        rc = parse_string_list(job, "name_expressions", &s->name_exprs, &s->nname_exprs, err,
                               errlen);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < s->noptions; i++)
        if (!option_allowed(s->options[i]))
            return avo_error(err, errlen, AVO_EINVAL,
                             "NVRTC option '%.100s' is not allowed (include paths and "
                             "pre-includes could read host files)",
                             s->options[i]);

    const json_t *headers = json_object_get(job, "headers");
    if (headers && !json_is_null(headers)) {
        if (!json_is_object(headers))
            return avo_error(err, errlen, AVO_EINVAL, "\"headers\" must be an object");
        size_t n = json_object_size(headers);
        if (n + N_TOOLKIT_HEADERS > AVO_NVRTC_MAX_HEADERS)
            return avo_error(err, errlen, AVO_EINVAL, "too many headers (at most %d)",
                             AVO_NVRTC_MAX_HEADERS - N_TOOLKIT_HEADERS);
        s->header_names = calloc(n + 1, sizeof *s->header_names);
        s->header_texts = calloc(n + 1, sizeof *s->header_texts);
        if (!s->header_names || !s->header_texts)
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        const char *name;
        json_t *text;
        json_object_foreach((json_t *)headers, name, text)
        {
            if (!json_is_string(text))
                return avo_error(err, errlen, AVO_EINVAL, "header '%.100s' must be text", name);
            if (!*name || strchr(name, '/') == name || strstr(name, ".."))
                return avo_error(err, errlen, AVO_EINVAL,
                                 "header name '%.100s' must be a relative name without '..'", name);
            s->header_names[s->nheaders] = name;
            s->header_texts[s->nheaders++] = json_string_value(text);
        }
    }

    rc = avo_jobspec_parse(job, &cuda_rules, &s->spec, err, errlen);
    if (rc == 0 && !s->baseline)
        rc = avo_jobspec_need_sources(&s->spec, !s->compile_only, err, errlen);
    if (rc == 0 && s->baseline && (!s->spec.ref_source || !s->spec.ref_entry))
        rc = avo_error(err, errlen, AVO_EINVAL,
                       "job needs a \"reference\" with \"source\" and \"entry\"");
    if (rc == 0 && s->baseline)
        rc = avo_vendor_check(s->baseline, &s->spec, err, errlen);
    if (rc < 0)
        return rc;
    if (s->baseline) {
        s->ref_source = s->spec.ref_source;
        s->ref_entry = s->spec.ref_entry;
        return parse_launches(job, s, err, errlen);
    }
    s->source = s->spec.source;
    s->entry = s->spec.entry;
    s->ref_source = s->spec.ref_source;
    s->ref_entry = s->spec.ref_entry;
    if (!*s->entry)
        return avo_error(err, errlen, AVO_EINVAL, "job has an empty \"entry\"");
    rc = parse_launches(job, s, err, errlen);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Compiling                                                                */

/*
 * Check includes and assemble options, headers and name expressions for one
 * program.  Returns 0, or a negative code with status and reason set on
 * `result` ("compile_error" for a refused include of the candidate,
 * "invalid" for the reference or evaluator, "error" for infrastructure).
 */
static int compile_prepare(const cuda_job *job, const char *what, const char *source,
                           const char *entry, int with_knobs, const char *arch,
                           const avo_nvrtc_api *nvrtc, avo_nvrtc_input *in, json_t *result)
{
    int is_candidate = with_knobs;
    memset(in, 0, sizeof *in);
    in->what = what;
    in->source = source;
    char err[AVO_ERRLEN];

    /* Names a source may include: the evaluator's headers, then the toolkit's. */
    const char *allowed[AVO_NVRTC_MAX_HEADERS];
    int used[AVO_NVRTC_MAX_HEADERS] = {0};
    size_t nallowed = 0;
    for (size_t i = 0; i < job->nheaders; i++)
        allowed[nallowed++] = job->header_names[i];
    for (int i = 0; i < N_TOOLKIT_HEADERS; i++)
        allowed[nallowed++] = toolkit_headers[i].name;
    if (avo_cuda_check_includes(source, is_candidate ? "kernel" : "reference", allowed, nallowed,
                                used, err, sizeof err) < 0) {
        avo_result_fail(result, is_candidate ? "compile_error" : "invalid", "%s%s",
                        is_candidate ? "" : "reference: ", err);
        return AVO_EINVAL;
    }
    for (size_t i = 0; i < job->nheaders; i++) {
        char label[300];
        snprintf(label, sizeof label, "header %.200s", job->header_names[i]);
        if (avo_cuda_check_includes(job->header_texts[i], label, allowed, nallowed, used, err,
                                    sizeof err) < 0) {
            avo_result_fail(result, "invalid", "evaluator %s", err);
            return AVO_EINVAL;
        }
    }

    for (size_t i = 0; i < job->nheaders; i++) {
        in->header_names[in->nheaders] = job->header_names[i];
        in->headers[in->nheaders++] = job->header_texts[i];
    }
    int need_toolkit = 0;
    for (int i = 0; i < N_TOOLKIT_HEADERS; i++)
        need_toolkit |= used[job->nheaders + i];
    if (need_toolkit) {
        char dir[PATH_MAX];
        if (avo_cuda_include_dir(nvrtc, dir, sizeof dir, err, sizeof err) < 0) {
            avo_result_fail(result, "error", "the kernel includes CUDA headers, but %s", err);
            return AVO_ENOTFOUND;
        }
        for (int i = 0; i < N_TOOLKIT_HEADERS; i++) {
            char path[PATH_MAX + 32];
            snprintf(path, sizeof path, "%.*s/%s", PATH_MAX - 1, dir, toolkit_headers[i].path);
            in->owned_texts[i] = read_text_file(path, 16u << 20);
        }
        if (!in->owned_texts[0] || !in->owned_texts[2]) { /* the .h files at least */
            avo_result_fail(result, "error", "cannot read cuda_fp16.h and cuda_bf16.h in %s", dir);
            return AVO_EIO;
        }
        for (int i = 0; i < N_TOOLKIT_HEADERS; i++)
            if (in->owned_texts[i]) {
                in->header_names[in->nheaders] = toolkit_headers[i].name;
                in->headers[in->nheaders++] = in->owned_texts[i];
            }
    }

    snprintf(in->arch_option, sizeof in->arch_option, "--gpu-architecture=%s", arch);
    size_t nopt = 2 + job->noptions + (with_knobs ? job->spec.nknobs : 0);
    in->options = calloc(nopt + 1, sizeof *in->options);
    in->name_exprs = calloc(job->nname_exprs + 2, sizeof *in->name_exprs);
    if (!in->options || !in->name_exprs) {
        avo_result_fail(result, "error", "out of memory");
        return AVO_ENOMEM;
    }
    in->options[in->noptions++] = in->arch_option;
    in->options[in->noptions++] = "--ptxas-options=-v"; /* spill report into the log */
    for (size_t i = 0; i < job->noptions; i++)
        in->options[in->noptions++] = job->options[i];
    for (size_t i = 0; with_knobs && i < job->spec.nknobs; i++)
        in->options[in->noptions++] = job->spec.knobs[i];
    in->name_exprs[in->nname_exprs++] = entry;
    for (size_t i = 0; is_candidate && i < job->nname_exprs; i++)
        if (strcmp(job->name_exprs[i], entry) != 0)
            in->name_exprs[in->nname_exprs++] = job->name_exprs[i];
    return 0;
}

static void build_free(cuda_build *b)
{
    free(b->cubin);
    free(b->log);
    free(b->lowered_entry);
    free(b->kernels);
    memset(b, 0, sizeof *b);
}

/* NVRTC reports a name expression that names no kernel as a compile error. */
static int no_such_kernel(const char *what, const char *entry, const char *log, json_t *result)
{
    avo_result_fail(result, "invalid",
                    "%s has no __global__ kernel '%s' (declare it extern \"C\" or name the "
                    "template instance, e.g. kernel<128>)",
                    what, entry);
    avo_result_set_log(result, log, strlen(log), LOG_MAX);
    return AVO_ENOTFOUND;
}

/* The cache key of one compile: everything that goes into NVRTC, and
 * NVRTC's version.  0, or a negative code with the result set. */
static int compile_key(const avo_nvrtc_input *in, const avo_nvrtc_api *nvrtc,
                       char key[AVO_HASH_HEXLEN + 1], json_t *result)
{
    int major = 0, minor = 0;
    nvrtc->Version(&major, &minor);
    char version[32];
    snprintf(version, sizeof version, "nvrtc %d.%d", major, minor);
    size_t nparts = 3 + in->noptions + in->nname_exprs + 2 * (size_t)in->nheaders;
    const char **parts = calloc(nparts, sizeof *parts);
    if (!parts) {
        avo_result_fail(result, "error", "out of memory");
        return AVO_ENOMEM;
    }
    size_t k = 0;
    parts[k++] = version;
    parts[k++] = in->source;
    parts[k++] = "--";
    for (size_t i = 0; i < in->noptions; i++)
        parts[k++] = in->options[i];
    for (size_t i = 0; i < in->nname_exprs; i++)
        parts[k++] = in->name_exprs[i];
    for (int i = 0; i < in->nheaders; i++) {
        parts[k++] = in->header_names[i];
        parts[k++] = in->headers[i];
    }
    int rc = avo_hash_parts(parts, k, key);
    free(parts);
    if (rc < 0) {
        avo_result_fail(result, "error", "cannot hash the %s source", in->what);
        return AVO_EINVAL;
    }
    return 0;
}

/* The valid cache entry at `path` as a compile message, or NULL (a missing,
 * tampered or unreadable entry; a tampered one is deleted, cache.h). */
static json_t *cache_read(const char *path, int *ret_repaired)
{
    char *text = NULL;
    size_t len = 0;
    int fd = avo_cache_open(path, AVO_PROTO_MAX, &text, &len, ret_repaired);
    if (fd < 0)
        return NULL;
    close(fd);
    json_t *msg = json_loadb(text, len, 0, NULL);
    free(text);
    if (!json_is_object(msg)) {
        json_decref(msg);
        return NULL;
    }
    return msg;
}

/* Store a successful compile's message as the entry at `path` and trim
 * the cache; failures are cheap to repeat and never cached.  A cache that
 * cannot be written costs only the next compile. */
static void cache_write(const cuda_job *job, const char *path, const json_t *msg)
{
    if (!json_is_string(json_object_get(msg, "cubin")))
        return;
    char *text = json_dumps(msg, JSON_COMPACT);
    if (text && avo_cache_insert(path, text, strlen(text)) == 0)
        avo_cache_trim(job->spec.cache_dir, ".json");
    free(text);
}

/*
 * The compile message for `in`: the cache's entry <cache_dir>/<key>.json
 * when a valid one is there (out->cache_hit), else a fresh compile's,
 * stored for next time.  NULL with the result set when the compile child
 * failed.
 */
static json_t *cached_or_compiled(const cuda_job *job, const avo_nvrtc_input *in, int is_candidate,
                                  const char *key, cuda_build *out, json_t *result)
{
    char path[PATH_MAX + 64] = "";
    json_t *msg = NULL;
    if (avo_mkdir_p(job->spec.cache_dir) == 0) {
        snprintf(path, sizeof path, "%s/%s.json", job->spec.cache_dir, key);
        msg = cache_read(path, &out->cache_repaired);
        out->cache_hit = msg != NULL;
    }
    if (!msg) {
        msg = avo_nvrtc_compile(in, job->spec.compile_timeout_s, is_candidate, result);
        if (msg && path[0])
            cache_write(job, path, msg);
    }
    return msg;
}

/* What NVRTC said in `msg`: its log into out->log, and for a failed
 * compile the verdict (0, or a negative code with the result set). */
static int compile_outcome(const json_t *msg, const char *what, const char *entry,
                           int is_candidate, cuda_build *out, json_t *result)
{
    const char *log = json_string_value(json_object_get(msg, "log"));
    out->log = strdup(log ? log : "");
    const char *infra = json_string_value(json_object_get(msg, "infra"));
    const char *error = json_string_value(json_object_get(msg, "error"));
    if (infra) {
        avo_result_fail(result, "error", "%s%s", is_candidate ? "" : "reference: ", infra);
        return AVO_EIO;
    }
    if (error && out->log && strstr(out->log, "__nv_name_map"))
        return no_such_kernel(what, entry, out->log, result);
    if (error) {
        char line[512];
        const char *log_text = out->log ? out->log : "";
        avo_result_error_line(log_text, strlen(log_text), nvrtc_error_markers,
                              "NVRTC failed without a message", line, sizeof line);
        avo_result_fail(result, is_candidate ? "compile_error" : "invalid", "%scompile error: %s",
                        is_candidate ? "" : "reference ", line);
        avo_result_set_log(result, log_text, strlen(log_text), LOG_MAX);
        return AVO_EINVAL;
    }
    return 0;
}

/* The cubin of a successful compile, its kernels and the entry among them,
 * into `out`.  0, or a negative code with the result set. */
static int read_cubin(const json_t *msg, const char *what, const char *entry, cuda_build *out,
                      json_t *result)
{
    const char *low = json_string_value(json_object_get(json_object_get(msg, "lowered"), entry));
    out->lowered_entry = strdup(low ? low : entry);
    const char *b64 = json_string_value(json_object_get(msg, "cubin"));
    out->cubin = b64 ? avo_nvrtc_base64_decode(b64, &out->cubin_len) : NULL;
    if (!out->cubin || !out->log || !out->lowered_entry) {
        avo_result_fail(result, "error", "corrupt compile result for the %s", what);
        return AVO_EIO;
    }
    char err[AVO_ERRLEN];
    int n = avo_cubin_parse(out->cubin, out->cubin_len, &out->kernels, err, sizeof err);
    if (n < 0) {
        avo_result_fail(result, "error", "%s: %s", what, err);
        return n;
    }
    out->nkernels = n;
    avo_cubin_merge_ptxas_log(out->kernels, n, out->log);
    for (int i = 0; i < n; i++)
        if (strcmp(out->kernels[i].name, out->lowered_entry) == 0)
            out->entry_kernel = &out->kernels[i];
    return out->entry_kernel ? 0 : no_such_kernel(what, entry, out->log, result);
}

/*
 * Compile one program (or find it in the cache) and read its cubin.
 * Returns 0 with *out filled, or a negative code with status, reason and log
 * set on `result`.
 */
static int compile_program(const cuda_job *job, const char *what, const char *source,
                           const char *entry, int with_knobs, const char *arch,
                           const avo_nvrtc_api *nvrtc, cuda_build *out, json_t *result)
{
    int is_candidate = with_knobs;
    avo_nvrtc_input in;
    char key[AVO_HASH_HEXLEN + 1];
    json_t *msg = NULL;
    memset(out, 0, sizeof *out);
    int rc = compile_prepare(job, what, source, entry, with_knobs, arch, nvrtc, &in, result);
    if (rc == 0)
        rc = compile_key(&in, nvrtc, key, result);
    if (rc == 0 && !(msg = cached_or_compiled(job, &in, is_candidate, key, out, result)))
        rc = AVO_ECHILD;
    if (rc == 0)
        rc = compile_outcome(msg, what, entry, is_candidate, out, result);
    if (rc == 0)
        rc = read_cubin(msg, what, entry, out, result);
    json_decref(msg);
    avo_nvrtc_input_free(&in);
    return rc;
}

/* The "compile" report of a build: arch, NVRTC version, per-kernel resources. */
static json_t *build_report(const cuda_build *b, const char *arch, const char *nvrtc_version)
{
    json_t *kernels = json_array();
    for (int i = 0; i < b->nkernels; i++) {
        const avo_cubin_kernel *k = &b->kernels[i];
        json_t *params = json_array();
        for (int p = 0; p < k->nparams; p++)
            json_array_append_new(params, json_integer(k->params[p].size));
        json_array_append_new(
            kernels, json_pack("{s:s, s:b, s:i, s:I, s:I, s:I, s:I, s:I, s:o}", "name", k->name,
                               "entry", k == b->entry_kernel, "registers", k->registers,
                               "local_bytes", (json_int_t)k->frame_bytes, "spill_store_bytes",
                               (json_int_t)k->spill_store_bytes, "spill_load_bytes",
                               (json_int_t)k->spill_load_bytes, "static_shared_bytes",
                               (json_int_t)k->static_shared_bytes, "max_stack_bytes",
                               (json_int_t)k->max_stack_bytes, "params", params));
    }
    return json_pack("{s:s, s:s, s:b, s:I, s:o}", "arch", arch, "nvrtc", nvrtc_version, "cache_hit",
                     b->cache_hit, "cubin_bytes", (json_int_t)b->cubin_len, "kernels", kernels);
}

/* The candidate's arguments as avo_cuda_arg values with placeholder
 * pointers, to check the count and sizes against the kernel. */
static int check_signature(const cuda_job *job, const cuda_build *b, char *err, size_t errlen)
{
    const avo_jobspec *spec = &job->spec;
    avo_cuda_arg *args = calloc(spec->nargs, sizeof *args);
    void **params = calloc(spec->nargs, sizeof *params);
    unsigned char packed[4096];
    int rc = AVO_ENOMEM;
    if (args && params) {
        for (size_t i = 0; i < spec->nargs; i++)
            args[i] = avo_cuda_arg_make(&spec->args[i], &spec->configs[0].scalars[i], 0);
        rc = avo_cuda_pack_args(args, spec->nargs, b->entry_kernel, packed, sizeof packed, params,
                                err, errlen);
    } else {
        avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    free(args);
    free(params);
    return rc < 0 ? rc : 0;
}

/* Architecture to compile for: the job's, else the device's, else none. */
static int pick_arch(const cuda_job *job, char *arch, size_t len, char *err, size_t errlen)
{
    if (job->arch) {
        snprintf(arch, len, "%s", job->arch);
        return 0;
    }
    const avo_driver_api *cu = avo_cuda_driver(err, errlen);
    if (!cu)
        return AVO_ENOTFOUND;
    CUdevice dev;
    const char *ordinal = getenv("AVO_CUDA_DEVICE");
    int major = 0, minor = 0;
    if (cu->DeviceGet(&dev, ordinal ? atoi(ordinal) : 0) != AVO_CUDA_SUCCESS ||
        cu->DeviceGetAttribute(&major, AVO_CU_DEV_COMPUTE_CAPABILITY_MAJOR, dev) != 0 ||
        cu->DeviceGetAttribute(&minor, AVO_CU_DEV_COMPUTE_CAPABILITY_MINOR, dev) != 0)
        return avo_error(err, errlen, AVO_EIO, "cannot query the GPU's compute capability");
    /* The arch-specific variant (sm_90a) enables wgmma/TMA on Hopper and later. */
    snprintf(arch, len, "sm_%d%d%s", major, minor, major >= 9 ? "a" : "");
    return 0;
}

/*
 * A baseline job (docs/protocol.md, "Baseline jobs"): the library loads (or
 * the result is `unavailable`), the reference compiles, and the device side
 * times the library call in the candidate's place.  Fills `result`.
 */
static void run_baseline(cuda_job *cj, json_t *result, int *ret_retire)
{
    char err[AVO_ERRLEN];
    cuda_build ref = {0};
    avo_vendor_lib lib;
    int loaded = avo_vendor_load(cj->baseline, &lib, err, sizeof err) == 0;
    json_object_set_new(result, "baseline",
                        json_pack("{s:s, s:s, s:s?, s:s?}", "name", cj->baseline->name, "library",
                                  cj->baseline->library, "version", loaded ? lib.version : NULL,
                                  "path", loaded ? lib.path : NULL));
    if (!loaded) {
        avo_result_fail(result, "unavailable", "%s", err);
        return;
    }
    const avo_nvrtc_api *nvrtc = avo_cuda_nvrtc(err, sizeof err);
    if (!nvrtc) {
        avo_result_fail(result, "error", "%s", err);
        return;
    }
    char arch[32];
    if (pick_arch(cj, arch, sizeof arch, err, sizeof err) < 0) {
        avo_result_fail(result, "error", "%s", err);
        return;
    }
    int major = 0, minor = 0;
    nvrtc->Version(&major, &minor);
    json_object_set_new(result, "compiler",
                        json_sprintf("NVRTC %d.%d (%s)", major, minor, nvrtc->path));
    double t0 = avo_monotonic();
    int rc = compile_program(cj, "reference", cj->ref_source, cj->ref_entry, 0, arch, nvrtc, &ref,
                             result);
    json_object_set_new(result, "compile_s", json_real(avo_monotonic() - t0));
    if (rc == 0)
        avo_cuda_device_run(cj, NULL, &ref, result, ret_retire);
    build_free(&ref);
}

/*
 * The backend entry point.  Always returns a result (caller owns); NULL only
 * when even the skeleton cannot be allocated.  A "retire": true field asks
 * the worker to exit after sending it (sticky device error).
 */
static json_t *cuda_run_job(const json_t *job)
{
    json_t *result = avo_result_new(job, "ok", NULL);
    if (!result)
        return NULL;
    char err[AVO_ERRLEN];
    cuda_job cj;
    cuda_build cand = {0}, ref = {0};
    if (job_parse(job, &cj, err, sizeof err) < 0) {
        avo_result_fail(result, "invalid", "%s", err);
        goto out;
    }
    if (cj.baseline) {
        int retire = 0;
        run_baseline(&cj, result, &retire);
        if (retire)
            json_object_set_new(result, "retire", json_true());
        goto out;
    }
    const avo_nvrtc_api *nvrtc = avo_cuda_nvrtc(err, sizeof err);
    if (!nvrtc) {
        avo_result_fail(result, "error", "%s", err);
        goto out;
    }
    char arch[32];
    if (pick_arch(&cj, arch, sizeof arch, err, sizeof err) < 0) {
        avo_result_fail(result, "error",
                        "%s; to compile without a GPU name a target (--arch sm_90a)", err);
        goto out;
    }
    int major = 0, minor = 0;
    nvrtc->Version(&major, &minor);
    char version[32];
    snprintf(version, sizeof version, "%d.%d", major, minor);
    json_object_set_new(result, "compiler", json_sprintf("NVRTC %s (%s)", version, nvrtc->path));
    /* Device code runs in this worker's CUDA context: no host sandbox of
     * eval/sandbox.c applies to it (docs/threat-model.md, "CUDA"). */
    json_object_set_new(result, "sandbox", json_string("cuda-context"));

    double t0 = avo_monotonic();
    int rc = compile_program(&cj, "candidate", cj.source, cj.entry, 1, arch, nvrtc, &cand, result);
    json_object_set_new(result, "cache_hit", json_boolean(rc == 0 && cand.cache_hit));
    if (cand.cache_repaired)
        json_object_set_new(result, "cache_repaired", json_true());
    if (cand.log && cand.log[0])
        avo_result_set_log(result, cand.log, strlen(cand.log), LOG_MAX);
    if (rc == 0) {
        json_object_set_new(result, "compile", build_report(&cand, arch, version));
        if (check_signature(&cj, &cand, err, sizeof err) < 0) {
            avo_result_fail(result, "invalid", "%s", err);
            rc = -1;
        }
    }
    if (rc == 0 && cj.compile_only) {
        /* The launch geometry against the target's documented limits. */
        avo_cuda_limits lim;
        avo_cuda_limits_for_arch(avo_cuda_arch_cc(arch), &lim);
        for (size_t i = 0; i < cj.spec.nconfigs && rc == 0; i++) {
            int optin;
            const avo_cuda_launch *l = &cj.launches[i];
            if (l->block[0] && avo_cuda_launch_check(l, cand.entry_kernel->static_shared_bytes,
                                                     &lim, &optin, err, sizeof err) < 0) {
                avo_result_fail(result, "invalid", "config %s: %s", cj.spec.configs[i].name, err);
                rc = -1;
            }
        }
    }
    if (rc == 0 && !cj.compile_only)
        rc = compile_program(&cj, "reference", cj.ref_source, cj.ref_entry, 0, arch, nvrtc, &ref,
                             result);
    json_object_set_new(result, "compile_s", json_real(avo_monotonic() - t0));
    if (rc < 0 || cj.compile_only)
        goto out;

    int retire = 0;
    avo_cuda_device_run(&cj, &cand, &ref, result, &retire);
    if (retire)
        json_object_set_new(result, "retire", json_true());
out:
    build_free(&cand);
    build_free(&ref);
    job_free(&cj);
    return result;
}

const avo_backend avo_backend_cuda = {"cuda", cuda_run_job, &cuda_rules};
