/*
 * backend.c — the table of built-in backends, the result skeleton every
 * backend starts from and the helpers that fill it (docs/protocol.md).
 */
#include "core/backend.h"

#include "core/avo.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const avo_backend *const backends[] = {&avo_backend_cpu, &avo_backend_cuda};

const avo_backend *avo_backend_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

/*
 * New result object {id, status, reason, configs: []} for `job`: the id is
 * copied from the job (null when it has none), reason is null when NULL.
 * The caller owns the result; the job is not touched.  Returns NULL only when
 * out of memory or when reason is not valid UTF-8.
 */
json_t *avo_result_new(const json_t *job, const char *status, const char *reason)
{
    const json_t *id = job ? json_object_get(job, "id") : NULL;
    return json_pack("{s:o, s:s, s:o, s:[]}", "id", id ? json_deep_copy(id) : json_null(), "status",
                     status ? status : "error", "reason",
                     reason ? json_string(reason) : json_null(), "configs");
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

json_t *avo_result_text(const char *s, size_t n)
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

void avo_result_fail(json_t *result, const char *status, const char *fmt, ...)
{
    char reason[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    json_object_set_new(result, "status", json_string(status));
    json_t *text = avo_result_text(reason, strlen(reason));
    json_object_set_new(result, "reason", text ? text : json_null());
}

void avo_result_set_log(json_t *result, const char *log, size_t n, size_t max)
{
    if (n > max) {
        log += n - max;
        n = max;
    }
    json_t *text = avo_result_text(log, n);
    if (text)
        json_object_set_new(result, "log", text);
}

/* Whether line[0..n) contains one of the NULL-terminated markers. */
static int line_has(const char *line, size_t n, const char *const *markers)
{
    for (size_t i = 0; markers[i]; i++)
        if (memmem(line, n, markers[i], strlen(markers[i])))
            return 1;
    return 0;
}

void avo_result_error_line(const char *log, size_t n, const char *const *markers,
                           const char *fallback, char *buf, size_t len)
{
    const char *end = log + n, *pick = log;
    for (const char *line = log; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t linelen = nl ? (size_t)(nl - line) : (size_t)(end - line);
        if (line_has(line, linelen, markers)) {
            pick = line;
            break;
        }
        line = nl ? nl + 1 : end;
    }
    const char *nl = memchr(pick, '\n', (size_t)(end - pick));
    size_t picklen = nl ? (size_t)(nl - pick) : (size_t)(end - pick);
    if (picklen == 0)
        snprintf(buf, len, "%s", fallback);
    else
        snprintf(buf, len, "%.*s", (int)(picklen < 400 ? picklen : 400), pick);
}

json_t *avo_result_config_new(const char *name)
{
    return json_pack("{s:s, s:b, s:n, s:f, s:f, s:i, s:f, s:f, s:n}", "name", name, "correct", 0,
                     "max_error", "median_s", 0.0, "spread", 0.0, "samples", 0, "gflops", 0.0,
                     "gbs", 0.0, "reason");
}

static const char *const result_statuses[] = {
    "ok", "compile_error", "wrong", "crashed", "timeout", "invalid", "error", "unavailable", NULL};

/* The config of the job's list `key` that `name` names, or NULL. */
static const json_t *job_config(const json_t *job, const char *key, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(job, key), i, c)
    {
        const char *n = json_string_value(json_object_get(c, "name"));
        if (n && strcmp(n, name) == 0)
            return c;
    }
    return NULL;
}

#define RATE_RTOL 1e-6 /* the judge computes the same quotient; this is rounding */

/*
 * Whether entry e's rate `key` (when present) is what the judge computes
 * from the job's own work and the entry's median time: work / median_s /
 * scale, and 0 without a time.  A worker cannot claim a rate its time does
 * not give (the rate is what the search ranks by).  0, or AVO_EPROTO.
 */
static int check_rate(const json_t *e, const char *name, const char *key, double work, double scale,
                      char *err, size_t errlen)
{
    const json_t *v = json_object_get(e, key);
    if (!v || json_is_null(v))
        return 0;
    double claimed = json_number_value(v);
    double median = json_number_value(json_object_get(e, "median_s"));
    double expect = median > 0 ? work / median / scale : 0;
    if (fabs(claimed - expect) <= RATE_RTOL * fabs(expect))
        return 0;
    return avo_error(err, errlen, AVO_EPROTO,
                     "config '%.100s': %s %.6g is not the job's work over its median time "
                     "(%.6g / %.6g s gives %.6g)",
                     name, key, claimed, work, median, expect);
}

/* Entries of `list` (a result's configs or checks): objects naming configs
 * of the job's `key` list, each once, numbers finite and not negative.  An
 * entry may say "unavailable" only in a baseline job's result, and then
 * claims nothing: not correct, no time, no TFLOPS. */
static int validate_entries(const json_t *job, const json_t *list, const char *key, char *err,
                            size_t errlen)
{
    static const char *const numbers[] = {"max_error", "median_s", "spread", "samples",
                                          "gflops",    "gbs",      "tflops", NULL};
    if (!list)
        return 0;
    if (!json_is_array(list))
        return avo_error(err, errlen, AVO_EPROTO, "\"%s\" is not a list", key);
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        const char *name = json_string_value(json_object_get(e, "name"));
        if (!json_is_object(e) || !name)
            return avo_error(err, errlen, AVO_EPROTO, "a %s entry has no name", key);
        const json_t *config = job_config(job, key, name);
        if (!config)
            return avo_error(err, errlen, AVO_EPROTO, "entry for unknown config '%.100s'", name);
        for (size_t k = 0; k < i; k++)
            if (!strcmp(json_string_value(json_object_get(json_array_get(list, k), "name")), name))
                return avo_error(err, errlen, AVO_EPROTO, "config '%.100s' reported twice", name);
        const json_t *correct = json_object_get(e, "correct");
        if (correct && !json_is_boolean(correct))
            return avo_error(err, errlen, AVO_EPROTO, "config '%.100s': correct is no boolean",
                             name);
        const json_t *unavailable = json_object_get(e, "unavailable");
        if (unavailable && !json_is_null(unavailable)) {
            if (!json_is_string(json_object_get(job, "baseline")))
                return avo_error(err, errlen, AVO_EPROTO,
                                 "config '%.100s' unavailable in a job that runs no baseline",
                                 name);
            if (!json_is_string(unavailable))
                return avo_error(err, errlen, AVO_EPROTO,
                                 "config '%.100s': unavailable is not a reason", name);
            const json_t *median = json_object_get(e, "median_s"),
                         *tf = json_object_get(e, "tflops");
            if (json_is_true(correct) ||
                (json_is_number(median) && json_number_value(median) > 0) ||
                (json_is_number(tf) && json_number_value(tf) > 0))
                return avo_error(err, errlen, AVO_EPROTO,
                                 "config '%.100s' is unavailable yet claims a result", name);
        }
        for (size_t k = 0; numbers[k]; k++) {
            const json_t *v = json_object_get(e, numbers[k]);
            if (v && !json_is_null(v) &&
                (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0))
                return avo_error(err, errlen, AVO_EPROTO, "config '%.100s': bad %s", name,
                                 numbers[k]);
        }
        double flops = json_number_value(json_object_get(config, "flops"));
        double bytes = json_number_value(json_object_get(config, "bytes"));
        int rc = check_rate(e, name, "gflops", flops, 1e9, err, errlen);
        if (rc == 0)
            rc = check_rate(e, name, "tflops", flops, 1e12, err, errlen);
        if (rc == 0)
            rc = check_rate(e, name, "gbs", bytes, 1e9, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int avo_result_validate(const json_t *job, const json_t *result, char *err, size_t errlen)
{
    if (!json_is_object(result))
        return avo_error(err, errlen, AVO_EPROTO, "the result is not an object");
    const char *status = json_string_value(json_object_get(result, "status"));
    size_t s = 0;
    while (status && result_statuses[s] && strcmp(status, result_statuses[s]) != 0)
        s++;
    if (!status || !result_statuses[s])
        return avo_error(err, errlen, AVO_EPROTO, "unknown status '%.40s'",
                         status ? status : "(none)");
    const json_t *reason = json_object_get(result, "reason");
    if (reason && !json_is_null(reason) && !json_is_string(reason))
        return avo_error(err, errlen, AVO_EPROTO, "the reason is not text");
    const char *baseline = json_string_value(json_object_get(job, "baseline"));
    /* A library baseline (cpulib.h) is unavailable when its library is. */
    const json_t *library = json_object_get(job, "library");
    if (!baseline && (!library || json_is_null(library)) && strcmp(status, "unavailable") == 0)
        return avo_error(err, errlen, AVO_EPROTO,
                         "status unavailable for a job that runs no baseline");
    const json_t *names = json_object_get(result, "baseline");
    if (baseline && !strcmp(status, "ok") &&
        (!json_is_object(names) || !json_is_string(json_object_get(names, "name")) ||
         strcmp(json_string_value(json_object_get(names, "name")), baseline) != 0))
        return avo_error(err, errlen, AVO_EPROTO, "baseline result does not name baseline '%.40s'",
                         baseline);
    const json_t *configs = json_object_get(result, "configs");
    int rc = validate_entries(job, configs, "configs", err, errlen);
    if (rc == 0)
        rc = validate_entries(job, json_object_get(result, "checks"), "check_configs", err, errlen);
    if (rc < 0 || strcmp(status, "ok") != 0 || json_is_true(json_object_get(job, "compile_only")))
        return rc;
    /* "ok" claims every config verified (a baseline's: verified or
     * unavailable, and at least one verified). */
    size_t i;
    json_t *c;
    int verified = 0;
    json_array_foreach(json_object_get(job, "configs"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        int found = 0;
        size_t k;
        json_t *e;
        json_array_foreach(configs, k, e)
        {
            if (!name || strcmp(name, json_string_value(json_object_get(e, "name"))) != 0)
                continue;
            if (json_is_true(json_object_get(e, "correct")))
                found = 1, verified++;
            else if (baseline && json_is_string(json_object_get(e, "unavailable")))
                found = 1;
        }
        if (!found)
            return avo_error(err, errlen, AVO_EPROTO, "status ok without config '%.100s' correct",
                             name ? name : "?");
    }
    if (baseline && verified == 0 && json_array_size(json_object_get(job, "configs")) > 0)
        return avo_error(err, errlen, AVO_EPROTO,
                         "status ok without any config verified (all unavailable)");
    return 0;
}
