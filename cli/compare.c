/*
 * compare.c — a run's best against its baselines (compare.h).
 */
#include "cli/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/diff.h"

static const char *text_of(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

int avo_compare_usable(const json_t *row)
{
    const json_t *score = json_object_get(row, "score");
    return strcmp(text_of(row, "status"), "ok") == 0 && json_is_number(score) &&
           json_number_value(score) > 0 && isfinite(json_number_value(score));
}

int avo_compare_owned(const json_t *row, const char *evaluator)
{
    const char *owner = json_string_value(json_object_get(row, "evaluator"));
    if (!owner || !evaluator)
        return !owner && !evaluator;
    return strcmp(owner, evaluator) == 0;
}

json_t *avo_compare_of(const json_t *baselines, const char *evaluator)
{
    json_t *out = json_array();
    size_t i;
    const json_t *row;
    json_array_foreach((json_t *)baselines, i, row)
    {
        if (out && avo_compare_owned(row, evaluator))
            json_array_append(out, (json_t *)row);
    }
    return out;
}

const json_t *avo_compare_strongest(const json_t *baselines)
{
    const json_t *best = NULL;
    size_t i;
    const json_t *row;
    json_array_foreach((json_t *)baselines, i, row)
    {
        if (!avo_compare_usable(row))
            continue;
        if (!best || json_number_value(json_object_get(row, "score")) >
                         json_number_value(json_object_get(best, "score")))
            best = row;
    }
    return best;
}

void avo_compare_describe(const json_t *row, const char *unit, char *buf, size_t len)
{
    const char *name = text_of(row, "name");
    if (avo_compare_usable(row)) {
        snprintf(buf, len, "%s %.4g%s%s", name, json_number_value(json_object_get(row, "score")),
                 unit ? " " : "", unit ? unit : "");
        return;
    }
    const char *status = text_of(row, "status");
    const char *reason = text_of(row, "reason");
    snprintf(buf, len, "%s: %s (%s)", name, strcmp(status, "ok") == 0 ? "partial" : status,
             *reason ? reason : "no reason given");
}

void avo_compare_column(const json_t *baselines, double best_score, int have_best, char *buf,
                        size_t len)
{
    const json_t *strongest = avo_compare_strongest(baselines);
    if (strongest) {
        double score = json_number_value(json_object_get(strongest, "score"));
        if (have_best)
            snprintf(buf, len, "%.2fx %s", best_score / score, text_of(strongest, "name"));
        else
            snprintf(buf, len, "%s %.4g", text_of(strongest, "name"), score);
        return;
    }
    const json_t *first = json_array_get(baselines, 0);
    if (!first) {
        snprintf(buf, len, "-");
        return;
    }
    const char *status = text_of(first, "status");
    snprintf(buf, len, "%s %s%s", text_of(first, "name"),
             strcmp(status, "ok") == 0 ? "partial" : status,
             json_array_size(baselines) > 1 ? " ..." : "");
}

int avo_compare_config(const json_t *row, const char *name, double *ret_value,
                       const char **ret_unit, char *why, size_t why_len)
{
    const json_t *configs = json_object_get(json_object_get(row, "result"), "configs");
    size_t i;
    const json_t *cfg, *found = NULL;
    json_array_foreach((json_t *)configs, i, cfg)
    {
        if (strcmp(text_of(cfg, "name"), name) == 0)
            found = cfg;
    }
    if (!found) {
        snprintf(why, why_len, "not measured");
        return 0;
    }
    const json_t *unavailable = json_object_get(found, "unavailable");
    if (unavailable && !json_is_null(unavailable) && !json_is_false(unavailable)) {
        snprintf(why, why_len, "unavailable (%s)",
                 json_is_string(unavailable) ? json_string_value(unavailable) : "no reason given");
        return 0;
    }
    if (!json_is_true(json_object_get(found, "correct"))) {
        const char *reason = text_of(found, "reason");
        snprintf(why, why_len, "wrong%s%s%s", *reason ? " (" : "", reason, *reason ? ")" : "");
        return 0;
    }
    double v = avo_diff_config_metric(found, ret_unit);
    if (!(v > 0) || !isfinite(v)) {
        snprintf(why, why_len, "no time");
        return 0;
    }
    *ret_value = v;
    if (why_len)
        why[0] = '\0';
    return 1;
}

json_t *avo_compare_ratios(const json_t *cand, const json_t *baselines)
{
    json_t *out = json_object();
    if (!out || strcmp(text_of(cand, "status"), "ok") != 0)
        return out;
    const char *evaluator = json_string_value(json_object_get(cand, "evaluator"));
    json_int_t run = json_integer_value(json_object_get(cand, "run_id"));
    double score = json_number_value(json_object_get(cand, "score"));
    size_t i, k;
    const json_t *row, *cfg;
    json_array_foreach((json_t *)baselines, i, row)
    {
        if (json_integer_value(json_object_get(row, "run_id")) != run ||
            !avo_compare_owned(row, evaluator) || !avo_compare_usable(row))
            continue;
        json_t *configs = json_object();
        json_array_foreach(json_object_get(cand, "configs"), k, cfg)
        {
            const char *unit = NULL, *their_unit = NULL;
            double mine = avo_diff_config_metric(cfg, &unit), theirs = 0;
            char why[256];
            if (mine > 0 &&
                avo_compare_config(row, text_of(cfg, "name"), &theirs, &their_unit, why,
                                   sizeof why) &&
                unit && their_unit && strcmp(unit, their_unit) == 0)
                json_object_set_new(configs, text_of(cfg, "name"), json_real(mine / theirs));
        }
        json_object_set_new(out, text_of(row, "name"),
                            json_pack("{sfso}", "score",
                                      score / json_number_value(json_object_get(row, "score")),
                                      "configs", configs));
    }
    return out;
}

int avo_diff_candidates(avo_archive *ar, int64_t id_a, int64_t id_b, json_t **ret, char *err,
                        size_t errlen)
{
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "diff_candidates: missing argument");
    *ret = NULL;
    json_t *a = NULL, *b = NULL;
    int rc = avo_archive_candidate_get(ar, id_a, 1, &a, err, errlen);
    if (rc == 0)
        rc = avo_archive_candidate_get(ar, id_b, 1, &b, err, errlen);
    if (rc == 0)
        rc = avo_diff_compare(a, b, ret, err, errlen);
    json_decref(a);
    json_decref(b);
    return rc;
}
