/*
 * jobspec.c — parsing the backend-independent part of a job (see jobspec.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/avo.h"
#include "core/jobspec.h"

static void free_configs(avo_config_spec *configs, size_t n)
{
    for (size_t i = 0; configs && i < n; i++) {
        free(configs[i].scalars);
        free(configs[i].lengths);
    }
    free(configs);
}

void avo_jobspec_free(avo_jobspec *s)
{
    if (!s)
        return;
    free_configs(s->configs, s->nconfigs);
    free_configs(s->check_configs, s->ncheck_configs);
    for (size_t i = 0; s->knobs && i < s->nknobs; i++)
        free(s->knobs[i]);
    free(s->knobs);
    for (size_t i = 0; s->ys_knobs && i < s->ys_nknobs; i++)
        free(s->ys_knobs[i]);
    free(s->ys_knobs);
    free(s->args);
    free(s->cache_dir);
    memset(s, 0, sizeof *s);
}

int avo_jobspec_number(const json_t *obj, const char *key, double fallback, double *ret)
{
    const json_t *v = obj ? json_object_get(obj, key) : NULL;
    if (!v || json_is_null(v)) {
        *ret = fallback;
        return 0;
    }
    if (!json_is_number(v))
        return -1;
    *ret = json_number_value(v);
    return 0;
}

int avo_jobspec_identifier_ok(const char *name)
{
    if (!(*name == '_' || (*name >= 'A' && *name <= 'Z') || (*name >= 'a' && *name <= 'z')))
        return 0;
    for (const char *p = name; *p; p++)
        if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Knobs as sorted "-DNAME=VALUE" flags: integers and reals in decimal,
 * booleans as 1/0, strings verbatim.  Sorted, so that the same knobs in
 * another order hash to the same compile.  `field` names the object in
 * messages ("knobs", "yardstick.knobs"). */
static int parse_knob_flags(const json_t *knobs, const char *field, char ***ret, size_t *ret_n,
                            char *err, size_t errlen)
{
    if (!knobs || json_is_null(knobs))
        return 0;
    if (!json_is_object(knobs))
        return avo_error(err, errlen, AVO_EINVAL, "\"%s\" must be an object", field);
    char **flags = calloc(json_object_size(knobs) + 1, sizeof *flags);
    if (!flags)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    *ret = flags;
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)knobs, name, v)
    {
        if (!avo_jobspec_identifier_ok(name))
            return avo_error(err, errlen, AVO_EINVAL, "%s: knob name '%.64s' is not a C identifier",
                             field, name);
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
                             "%s: knob '%s' must be a number, boolean or string", field, name);
        size_t len = strlen(name) + strlen(text) + 4;
        char *flag = malloc(len);
        if (!flag)
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        snprintf(flag, len, "-D%s=%s", name, text);
        flags[(*ret_n)++] = flag;
    }
    qsort(flags, *ret_n, sizeof *flags, compare_strings);
    return 0;
}

static int parse_knobs(const json_t *job, avo_jobspec *s, char *err, size_t errlen)
{
    return parse_knob_flags(json_object_get(job, "knobs"), "knobs", &s->knobs, &s->nknobs, err,
                            errlen);
}

/*
 * The yardstick (absent or null: none): {"source", "knobs"}, the trusted
 * kernel the judge times beside the candidate, sample by sample, on the
 * same inputs; only where the rules allow it.
 */
static int parse_yardstick(const json_t *job, const avo_jobspec_rules *rules, avo_jobspec *s,
                           char *err, size_t errlen)
{
    const json_t *ys = json_object_get(job, "yardstick");
    if (!ys || json_is_null(ys))
        return 0;
    if (!rules->yardstick)
        return avo_error(err, errlen, AVO_EINVAL,
                         "\"yardstick\": the %s backend does not time a yardstick (cpu only)",
                         rules->cache_name);
    if (!json_is_object(ys) || !json_is_string(json_object_get(ys, "source")))
        return avo_error(err, errlen, AVO_EINVAL,
                         "\"yardstick\" must be an object with a \"source\" string");
    s->ys_source = json_string_value(json_object_get(ys, "source"));
    return parse_knob_flags(json_object_get(ys, "knobs"), "yardstick.knobs", &s->ys_knobs,
                            &s->ys_nknobs, err, errlen);
}

/* The job-wide tolerance, overridden by tolerance.<type> for `type`.
 * -1 when a field is not a number or a value is negative. */
static int parse_type_tolerance(const json_t *tol, avo_dtype type, double *atol, double *rtol)
{
    if (avo_jobspec_number(tol, "atol", 1e-4, atol) < 0 ||
        avo_jobspec_number(tol, "rtol", 1e-4, rtol) < 0)
        return -1;
    const json_t *per = json_object_get(tol, avo_dtype_name(type));
    if (per && (avo_jobspec_number(per, "atol", *atol, atol) < 0 ||
                avo_jobspec_number(per, "rtol", *rtol, rtol) < 0))
        return -1;
    return (*atol < 0 || *rtol < 0) ? -1 : 0;
}

/* "f32, f64, i32 or i64": the types the rules accept, for messages. */
static void type_list(const avo_jobspec_rules *rules, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int t = 0; t <= (int)rules->last_type && at < len; t++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s",
                               t == 0                       ? ""
                               : t == (int)rules->last_type ? " or "
                                                            : ", ",
                               avo_dtype_name((avo_dtype)t));
}

/* The job's "args": names unique, kinds and types known, ranges ordered. */
static int parse_args(const json_t *job, const avo_jobspec_rules *rules, avo_jobspec *s, char *err,
                      size_t errlen)
{
    static const char *const kinds[] = {"scalar", "in", "out", "inout"};
    const json_t *args = json_object_get(job, "args");
    const json_t *tol = json_object_get(job, "tolerance");
    if (!json_is_array(args) || json_array_size(args) == 0)
        return avo_error(err, errlen, AVO_EINVAL, "job has no \"args\" list");
    if (json_array_size(args) > AVO_JOBSPEC_MAX_ARGS)
        return avo_error(err, errlen, AVO_EINVAL, "a kernel takes at most %d arguments",
                         AVO_JOBSPEC_MAX_ARGS);
    s->nargs = json_array_size(args);
    s->args = calloc(s->nargs, sizeof *s->args);
    if (!s->args)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->nargs; i++) {
        const json_t *a = json_array_get(args, i);
        avo_arg_spec *arg = &s->args[i];
        arg->name = json_string_value(json_object_get(a, "name"));
        if (!arg->name)
            return avo_error(err, errlen, AVO_EINVAL, "argument %zu has no name", i + 1);
        const char *kind = json_string_value(json_object_get(a, "kind"));
        int k = 0;
        while (k < 4 && !(kind && strcmp(kind, kinds[k]) == 0))
            k++;
        if (k == 4)
            return avo_error(err, errlen, AVO_EINVAL,
                             "argument '%s': kind must be scalar, in, out or inout", arg->name);
        arg->kind = (avo_arg_kind)k;
        if (avo_dtype_parse(json_string_value(json_object_get(a, "type")), &arg->type) < 0 ||
            arg->type > rules->last_type) {
            char types[80];
            type_list(rules, types, sizeof types);
            return avo_error(err, errlen, AVO_EINVAL, "argument '%s': type must be %s", arg->name,
                             types);
        }
        arg->lo = -1.0;
        arg->hi = 1.0;
        const json_t *range = json_object_get(a, "range");
        if (range && !json_is_null(range)) {
            const json_t *lo = json_array_get(range, 0), *hi = json_array_get(range, 1);
            if (json_array_size(range) != 2 || !json_is_number(lo) || !json_is_number(hi) ||
                json_number_value(lo) > json_number_value(hi))
                return avo_error(err, errlen, AVO_EINVAL,
                                 "argument '%s': range must be [low, high]", arg->name);
            arg->lo = json_number_value(lo);
            arg->hi = json_number_value(hi);
        }
        if (rules->per_type_tolerance &&
            parse_type_tolerance(tol, arg->type, &arg->atol, &arg->rtol) < 0)
            return avo_error(err, errlen, AVO_EINVAL, "tolerance for %s must be numbers >= 0",
                             avo_dtype_name(arg->type));
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->args[j].name, arg->name) == 0)
                return avo_error(err, errlen, AVO_EINVAL, "argument '%s' appears twice", arg->name);
    }
    return 0;
}

/* Convert a config's value for scalar `arg` (halves rounded from f32);
 * -1 when it is not a number, or not an integer in range for an integer. */
static int parse_scalar(const avo_arg_spec *arg, const json_t *v, avo_scalar *ret)
{
    if (!json_is_number(v))
        return -1;
    double d = json_number_value(v);
    switch (arg->type) {
    case AVO_DT_F32:
        ret->f32 = (float)d;
        return 0;
    case AVO_DT_F64:
        ret->f64 = d;
        return 0;
    case AVO_DT_F16:
        ret->bits16 = avo_f32_to_f16((float)d);
        return 0;
    case AVO_DT_BF16:
        ret->bits16 = avo_f32_to_bf16((float)d);
        return 0;
    default:
        break;
    }
    if (!json_is_integer(v))
        return -1;
    json_int_t n = json_integer_value(v);
    if (arg->type == AVO_DT_I32) {
        if (n < INT32_MIN || n > INT32_MAX)
            return -1;
        ret->i32 = (int32_t)n;
    } else {
        ret->i64 = (int64_t)n;
    }
    return 0;
}

/* The job's "configs": a value for every scalar and a length for every
 * buffer argument, so no backend meets a hole. */
static int parse_config_list(const json_t *configs, const avo_jobspec_rules *rules, avo_jobspec *s,
                             avo_config_spec **ret, size_t *ret_n, char *err, size_t errlen)
{
    size_t n = json_array_size(configs);
    *ret_n = 0;
    *ret = calloc(n ? n : 1, sizeof **ret);
    if (!*ret)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    *ret_n = n;
    for (size_t c = 0; c < n; c++) {
        const json_t *cj = json_array_get(configs, c);
        avo_config_spec *cfg = &(*ret)[c];
        cfg->name = json_string_value(json_object_get(cj, "name"));
        if (!cfg->name)
            return avo_error(err, errlen, AVO_EINVAL, "config %zu has no name", c + 1);
        cfg->scalars = calloc(s->nargs, sizeof *cfg->scalars);
        cfg->lengths = calloc(s->nargs, sizeof *cfg->lengths);
        if (!cfg->scalars || !cfg->lengths)
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        if (avo_jobspec_number(cj, "flops", 0, &cfg->flops) < 0 ||
            avo_jobspec_number(cj, "bytes", 0, &cfg->bytes) < 0)
            return avo_error(err, errlen, AVO_EINVAL,
                             "config '%s': flops and bytes must be numbers", cfg->name);
        const json_t *scalars = json_object_get(cj, "scalars");
        const json_t *lengths = json_object_get(cj, "lengths");
        for (size_t i = 0; i < s->nargs; i++) {
            const avo_arg_spec *arg = &s->args[i];
            if (arg->kind == AVO_ARG_SCALAR) {
                if (parse_scalar(arg, json_object_get(scalars, arg->name), &cfg->scalars[i]) < 0)
                    return avo_error(err, errlen, AVO_EINVAL,
                                     "config '%s': scalar '%s' is missing or not a valid %s",
                                     cfg->name, arg->name,
                                     avo_dtype_is_float(arg->type) ? "number" : "integer");
                continue;
            }
            const json_t *len = json_object_get(lengths, arg->name);
            json_int_t n = json_integer_value(len);
            if (!json_is_integer(len) || n < 0 || (uint64_t)n < rules->min_length ||
                (uint64_t)n > rules->max_length)
                return avo_error(err, errlen, AVO_EINVAL,
                                 "config '%s': length of buffer '%s' is missing or invalid",
                                 cfg->name, arg->name);
            cfg->lengths[i] = (size_t)n;
        }
        for (size_t d = 0; d < c; d++)
            if (strcmp((*ret)[d].name, cfg->name) == 0)
                return avo_error(err, errlen, AVO_EINVAL, "config '%s' appears twice", cfg->name);
    }
    return 0;
}

/*
 * The configs that are verified and timed, and the extra sizes that are only
 * verified ("check_configs", optional): names unique within each list and
 * across both, so a result can never carry one name twice.
 */
static int parse_configs(const json_t *job, const avo_jobspec_rules *rules, avo_jobspec *s,
                         char *err, size_t errlen)
{
    const json_t *configs = json_object_get(job, "configs");
    if (!json_is_array(configs) || json_array_size(configs) == 0)
        return avo_error(err, errlen, AVO_EINVAL, "job has no \"configs\" list");
    int rc = parse_config_list(configs, rules, s, &s->configs, &s->nconfigs, err, errlen);
    const json_t *checks = json_object_get(job, "check_configs");
    if (rc < 0 || !checks || json_is_null(checks))
        return rc;
    if (!json_is_array(checks))
        return avo_error(err, errlen, AVO_EINVAL, "\"check_configs\" must be a list of configs");
    rc = parse_config_list(checks, rules, s, &s->check_configs, &s->ncheck_configs, err, errlen);
    for (size_t i = 0; rc == 0 && i < s->ncheck_configs; i++)
        for (size_t j = 0; j < s->nconfigs; j++)
            if (strcmp(s->check_configs[i].name, s->configs[j].name) == 0)
                return avo_error(err, errlen, AVO_EINVAL,
                                 "check config '%s' has the name of a timed config",
                                 s->configs[j].name);
    return rc;
}

/* Tolerance (job-wide, unless per type), trials, timing and limits. */
static int parse_settings(const json_t *job, const avo_jobspec_rules *rules, avo_jobspec *s,
                          char *err, size_t errlen)
{
    const json_t *tol = json_object_get(job, "tolerance");
    const json_t *timing = json_object_get(job, "timing");
    const json_t *limits = json_object_get(job, "limits");
    double atol = 0, rtol = 0, trials, min_samples, max_samples, min_checks;
    int global_tolerance = !rules->per_type_tolerance;
    if ((global_tolerance && (avo_jobspec_number(tol, "atol", 1e-4, &atol) < 0 ||
                              avo_jobspec_number(tol, "rtol", 1e-4, &rtol) < 0)) ||
        avo_jobspec_number(job, "trials", 2, &trials) < 0 ||
        avo_jobspec_number(timing, "min_sample_s", rules->min_sample_s, &s->min_sample_s) < 0 ||
        avo_jobspec_number(timing, "min_samples", rules->min_samples, &min_samples) < 0 ||
        avo_jobspec_number(timing, "max_samples", rules->max_samples, &max_samples) < 0 ||
        avo_jobspec_number(timing, "target_spread", rules->target_spread, &s->target_spread) < 0 ||
        avo_jobspec_number(timing, "max_seconds", rules->max_seconds, &s->max_seconds) < 0 ||
        avo_jobspec_number(timing, "check_rate", AVO_JOBSPEC_CHECK_RATE, &s->check_rate) < 0 ||
        avo_jobspec_number(timing, "min_checks", AVO_JOBSPEC_MIN_CHECKS, &min_checks) < 0 ||
        avo_jobspec_number(limits, "timeout_s", rules->timeout_s, &s->timeout_s) < 0 ||
        avo_jobspec_number(limits, "compile_timeout_s", rules->compile_timeout_s,
                           &s->compile_timeout_s) < 0 ||
        (rules->process_limits &&
         (avo_jobspec_number(limits, "memory_mb", rules->memory_mb, &s->memory_mb) < 0 ||
          avo_jobspec_number(limits, "cpu_s", rules->cpu_s, &s->cpu_s) < 0)))
        return avo_error(err, errlen, AVO_EINVAL,
                         "%strials, timing and limits fields must be numbers",
                         global_tolerance ? "tolerance, " : "");
    if ((global_tolerance && (atol < 0 || rtol < 0)) || !(s->timeout_s > 0) ||
        !(s->compile_timeout_s > 0))
        return avo_error(err, errlen, AVO_EINVAL, "%stimeouts %s> 0",
                         global_tolerance ? "tolerances must be >= 0 and " : "",
                         global_tolerance ? "" : "must be ");
    for (size_t i = 0; global_tolerance && i < s->nargs; i++) {
        s->args[i].atol = atol;
        s->args[i].rtol = rtol;
    }
    double cap = rules->max_samples_cap;
    s->trials = trials < 2 ? 2 : trials > rules->max_trials ? rules->max_trials : (int)trials;
    s->min_samples = min_samples < 1 ? 1 : min_samples > cap ? (int)cap : (int)min_samples;
    s->max_samples = max_samples < s->min_samples ? s->min_samples
                     : max_samples > cap          ? (int)cap
                                                  : (int)max_samples;
    if (!(s->check_rate > 0 && s->check_rate <= 1))
        return avo_error(err, errlen, AVO_EINVAL, "timing.check_rate must be in (0, 1]");
    s->min_checks = min_checks < 1                ? 1
                    : min_checks > s->max_samples ? s->max_samples
                                                  : (int)min_checks;
    const json_t *enabled = json_object_get(timing, "enabled");
    s->timing = enabled ? json_is_true(enabled) : 1;
    const json_t *seed = json_object_get(job, "seed");
    if (seed && !json_is_integer(seed))
        return avo_error(err, errlen, AVO_EINVAL, "\"seed\" must be an integer");
    s->seed = (uint64_t)json_integer_value(seed);
    double threads;
    if (avo_jobspec_number(job, "threads", 1, &threads) < 0 || threads < 1 ||
        threads > AVO_JOBSPEC_MAX_THREADS || threads != (int)threads)
        return avo_error(err, errlen, AVO_EINVAL, "\"threads\" must be an integer in [1, %d]",
                         AVO_JOBSPEC_MAX_THREADS);
    s->threads = (int)threads;
    return 0;
}

/* The kernel's and the reference's source and entry point (borrowed; a
 * backend says which it needs, avo_jobspec_need_sources). */
static int parse_sources(const json_t *job, avo_jobspec *s, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    s->source = json_string_value(json_object_get(job, "source"));
    s->entry = json_string_value(json_object_get(job, "entry"));
    const json_t *ref = json_object_get(job, "reference");
    s->ref_source = json_string_value(json_object_get(ref, "source"));
    s->ref_entry = json_string_value(json_object_get(ref, "entry"));
    return 0;
}

int avo_jobspec_need_sources(const avo_jobspec *s, int need_reference, char *err, size_t errlen)
{
    if (!s->source || !s->entry)
        return avo_error(err, errlen, AVO_EINVAL, "job needs \"source\" and \"entry\" strings");
    if (need_reference && (!s->ref_source || !s->ref_entry))
        return avo_error(err, errlen, AVO_EINVAL,
                         "job needs a \"reference\" with \"source\" and \"entry\"");
    return 0;
}

int avo_jobspec_parse(const json_t *job, const avo_jobspec_rules *rules, avo_jobspec *ret,
                      char *err, size_t errlen)
{
    memset(ret, 0, sizeof *ret);
    int rc = parse_sources(job, ret, err, errlen);
    if (rc == 0)
        rc = parse_knobs(job, ret, err, errlen);
    if (rc == 0)
        rc = parse_yardstick(job, rules, ret, err, errlen);
    if (rc == 0)
        rc = parse_args(job, rules, ret, err, errlen);
    if (rc == 0)
        rc = parse_configs(job, rules, ret, err, errlen);
    if (rc == 0)
        rc = parse_settings(job, rules, ret, err, errlen);
    if (rc == 0 && ret->ys_source && ret->threads != 1)
        rc = avo_error(err, errlen, AVO_EINVAL,
                       "\"yardstick\" needs \"threads\": 1 (the judge runs it, and starts no "
                       "thread)");
    if (rc < 0)
        return rc;
    /* The folder rule is the compile cache's own (avo_cache_dir). */
    ret->cache_dir =
        avo_cache_dir(json_string_value(json_object_get(job, "cache_dir")), rules->cache_name);
    if (!ret->cache_dir)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    if (strlen(ret->cache_dir) > PATH_MAX - 128)
        return avo_error(err, errlen, AVO_EINVAL, "\"cache_dir\" is too long");
    return 0;
}

char *avo_cache_dir(const char *given, const char *backend)
{
    char path[PATH_MAX];
    if (given && *given) {
        size_t len = strlen(given);
        if (len >= 4 && strcmp(given + len - 4, "/cpu") == 0 && strcmp(backend, "cpu") != 0)
            snprintf(path, sizeof path, "%.*s/%s", (int)(len - 4), given, backend);
        else
            snprintf(path, sizeof path, "%s", given);
        /* A given path longer than PATH_MAX is kept whole, to be refused by name. */
        return len + strlen(backend) + 2 > sizeof path ? strdup(given) : strdup(path);
    }
    const char *root = getenv("AVO_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (root && *root)
        snprintf(path, sizeof path, "%s/%s", root, backend);
    else if (xdg && *xdg)
        snprintf(path, sizeof path, "%s/avo/%s", xdg, backend);
    else if (home && *home)
        snprintf(path, sizeof path, "%s/.cache/avo/%s", home, backend);
    else
        snprintf(path, sizeof path, "/tmp/avo-cache-%ld/%s", (long)getuid(), backend);
    return strdup(path);
}
