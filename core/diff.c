/*
 * diff.c — candidate comparison.  Pure functions of two candidate objects;
 * the source diff is libgit2's (the same xdiff `git diff` uses), so the
 * text matches what a git export of the lineage shows.
 */
#include "core/diff.h"

#include <git2.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"

static pthread_once_t diff_once = PTHREAD_ONCE_INIT;
static int diff_init_rc;

static void diff_init(void)
{
    diff_init_rc = git_libgit2_init();
}

/* The one translation of libgit2 failures in this module. */
static int diff_git_error(int git_rc, const char *what, char *err, size_t errlen)
{
    const git_error *e = git_error_last();
    int code = (e && e->klass == GIT_ERROR_NOMEMORY) ? AVO_ENOMEM : AVO_EIO;
    if (e && e->message)
        return avo_error(err, errlen, code, "%s: %s", what, e->message);
    return avo_error(err, errlen, code, "%s: libgit2 error %d", what, git_rc);
}

int avo_diff_sources(const char *a, const char *b, const char *name, char **ret_patch, char *err,
                     size_t errlen)
{
    if (!a || !b || !name || !ret_patch)
        return avo_error(err, errlen, AVO_EINVAL, "diff_sources: missing argument");
    *ret_patch = NULL;
    pthread_once(&diff_once, diff_init);
    if (diff_init_rc < 0)
        return diff_git_error(diff_init_rc, "diff: libgit2 init", err, errlen);

    char path_a[512], path_b[512];
    snprintf(path_a, sizeof path_a, "a/%s", name);
    snprintf(path_b, sizeof path_b, "b/%s", name);
    git_diff_options opts;
    git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
    /* Paths given to git_patch_from_buffers are used as is; no prefix. */
    opts.old_prefix = "";
    opts.new_prefix = "";
    git_patch *patch = NULL;
    git_buf buf = {0};
    int grc = git_patch_from_buffers(&patch, a, strlen(a), path_a, b, strlen(b), path_b, &opts);
    if (grc == 0)
        grc = git_patch_to_buf(&buf, patch);
    int rc = 0;
    if (grc < 0) {
        rc = diff_git_error(grc, "diff sources", err, errlen);
    } else {
        /* A patch without hunks prints as just the header: no diff. */
        int empty = git_patch_num_hunks(patch) == 0;
        *ret_patch = strdup(empty || !buf.ptr ? "" : buf.ptr);
        if (!*ret_patch)
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    git_buf_dispose(&buf);
    git_patch_free(patch);
    return rc;
}

double avo_diff_config_metric(const json_t *config, const char **ret_unit)
{
    double gflops = json_number_value(json_object_get(config, "gflops"));
    double gbs = json_number_value(json_object_get(config, "gbs"));
    const char *unit = NULL;
    double v = NAN;
    if (gflops > 0) {
        unit = "GFLOP/s";
        v = gflops;
    } else if (gbs > 0) {
        unit = "GB/s";
        v = gbs;
    }
    if (ret_unit)
        *ret_unit = unit;
    return v;
}

/* A JSON number, or null for NAN/inf. */
static json_t *number_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* b / a, NAN when a is 0 or either is missing. */
static double ratio(double a, double b)
{
    return isfinite(a) && isfinite(b) && a != 0 ? b / a : NAN;
}

/* Value of key in obj as a double, NAN when absent or not a number. */
static double number(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Set obj[key] = v (stolen); 1 on failure so callers can OR up. */
static int put(json_t *obj, const char *key, json_t *v)
{
    return !v || json_object_set_new(obj, key, v) != 0;
}

static const json_t *find_config(const json_t *configs, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(configs, i, c)
    {
        const char *n = json_string_value(json_object_get(c, "name"));
        if (n && strcmp(n, name) == 0)
            return c;
    }
    return NULL;
}

/* One config row of the comparison; either side may be NULL. */
static json_t *config_delta(const char *name, const json_t *ca, const json_t *cb)
{
    const char *unit_a = NULL, *unit_b = NULL;
    double va = ca ? avo_diff_config_metric(ca, &unit_a) : NAN;
    double vb = cb ? avo_diff_config_metric(cb, &unit_b) : NAN;
    const char *unit = unit_a ? unit_a : unit_b;
    json_t *row = json_object();
    int bad = !row || put(row, "name", json_string(name)) ||
              put(row, "unit", unit ? json_string(unit) : json_null()) ||
              put(row, "a", number_or_null(va)) || put(row, "b", number_or_null(vb)) ||
              put(row, "delta", number_or_null(vb - va)) ||
              put(row, "ratio", number_or_null(ratio(va, vb))) ||
              put(row, "median_s_a", number_or_null(ca ? number(ca, "median_s") : NAN)) ||
              put(row, "median_s_b", number_or_null(cb ? number(cb, "median_s") : NAN));
    if (bad) {
        json_decref(row);
        return NULL;
    }
    return row;
}

/* Knob changes from a to b in name order (json objects iterate unordered). */
static int knob_changes(const json_t *ka, const json_t *kb, json_t *out)
{
    json_t *names = json_object();
    if (!names)
        return AVO_ENOMEM;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)ka, key, v) json_object_set_new(names, key, json_true());
    json_object_foreach((json_t *)kb, key, v) json_object_set_new(names, key, json_true());
    size_t n = json_object_size(names), i = 0;
    const char **sorted = calloc(n ? n : 1, sizeof *sorted);
    int rc = sorted ? 0 : AVO_ENOMEM;
    json_object_foreach(names, key, v) if (sorted) sorted[i++] = key;
    for (size_t j = 1; sorted && j < n; j++)
        for (size_t k = j; k > 0 && strcmp(sorted[k - 1], sorted[k]) > 0; k--) {
            const char *t = sorted[k];
            sorted[k] = sorted[k - 1];
            sorted[k - 1] = t;
        }
    for (size_t j = 0; rc == 0 && j < n; j++) {
        json_t *old = json_object_get(ka, sorted[j]), *new = json_object_get(kb, sorted[j]);
        if (old && new && json_equal(old, new))
            continue;
        /* 32 and "32" are the same knob value on the command line. */
        if (old && new) {
            char *to = json_dumps(old, JSON_ENCODE_ANY), *tn = json_dumps(new, JSON_ENCODE_ANY);
            const char *so = json_is_string(old) ? json_string_value(old) : to;
            const char *sn = json_is_string(new) ? json_string_value(new) : tn;
            int same = so && sn && strcmp(so, sn) == 0;
            free(to);
            free(tn);
            if (same)
                continue;
        }
        json_t *row = json_object();
        const char *change = !old ? "added" : !new ? "removed" : "changed";
        int bad = !row || put(row, "name", json_string(sorted[j])) ||
                  put(row, "old", old ? json_incref(old) : json_null()) ||
                  put(row, "new", new ? json_incref(new) : json_null()) ||
                  put(row, "change", json_string(change)) || json_array_append_new(out, row);
        if (bad)
            rc = AVO_ENOMEM;
    }
    free(sorted);
    json_decref(names);
    return rc;
}

int avo_diff_compare(const json_t *a, const json_t *b, json_t **ret, char *err, size_t errlen)
{
    if (!json_is_object(a) || !json_is_object(b) || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "diff_compare: missing argument");
    *ret = NULL;
    const char *sa = json_string_value(json_object_get(a, "source"));
    const char *sb = json_string_value(json_object_get(b, "source"));
    char *patch = NULL;
    int rc = avo_diff_sources(sa ? sa : "", sb ? sb : "", "kernel.c", &patch, err, errlen);
    if (rc < 0)
        return rc;

    json_t *out = json_object(), *knobs = json_array(), *configs = json_array();
    json_t *score = json_object();
    double score_a = number(a, "score"), score_b = number(b, "score");
    int bad = !out || !knobs || !configs || !score;
    bad |= put(score, "a", number_or_null(score_a)) || put(score, "b", number_or_null(score_b)) ||
           put(score, "delta", number_or_null(score_b - score_a)) ||
           put(score, "ratio", number_or_null(ratio(score_a, score_b)));
    if (!bad)
        bad |= knob_changes(json_object_get(a, "knobs"), json_object_get(b, "knobs"), knobs) < 0;

    const json_t *cfg_a = json_object_get(a, "configs"), *cfg_b = json_object_get(b, "configs");
    size_t i;
    json_t *c;
    json_array_foreach(cfg_a, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (name && !bad)
            bad |= json_array_append_new(configs, config_delta(name, c, find_config(cfg_b, name))) != 0;
    }
    json_array_foreach(cfg_b, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        if (name && !bad && !find_config(cfg_a, name))
            bad |= json_array_append_new(configs, config_delta(name, NULL, c)) != 0;
    }
    if (!bad)
        bad |= put(out, "a", json_incref(json_object_get(a, "id"))) ||
               put(out, "b", json_incref(json_object_get(b, "id"))) ||
               put(out, "source_diff", json_string(patch)) || put(out, "knobs", json_incref(knobs)) ||
               put(out, "configs", json_incref(configs)) || put(out, "score", json_incref(score));
    free(patch);
    json_decref(knobs);
    json_decref(configs);
    json_decref(score);
    if (bad) {
        json_decref(out);
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    *ret = out;
    return 0;
}
