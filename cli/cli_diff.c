/*
 * cli_diff.c — `avo diff A B`: what changed from candidate A to B (source,
 * knobs, scores).  The comparison is diff.c's; this file prints it.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"
#include "cli/cli.h"
#include "core/diff.h"

/* A number or "-" for null, in a field of `width`. */
static void print_num(const json_t *v, int width, const char *fmt)
{
    if (json_is_number(v))
        printf(fmt, width, json_number_value(v));
    else
        printf("%*s", width, "-");
}

static void print_value(const json_t *v)
{
    if (!v || json_is_null(v)) {
        printf("(none)");
        return;
    }
    char *text = json_dumps(v, JSON_ENCODE_ANY);
    printf("%s", avo_cli_inert(json_is_string(v) ? json_string_value(v) : text ? text : "?", 0));
    free(text);
}

static void print_diff(const json_t *d)
{
    const json_t *score = json_object_get(d, "score");
    printf("diff #%lld -> #%lld\n", (long long)json_integer_value(json_object_get(d, "a")),
           (long long)json_integer_value(json_object_get(d, "b")));
    printf("score    ");
    print_num(json_object_get(score, "a"), 1, "%*.6g");
    printf(" -> ");
    print_num(json_object_get(score, "b"), 1, "%*.6g");
    if (json_is_number(json_object_get(score, "delta")))
        printf("  (%+.4g", json_number_value(json_object_get(score, "delta")));
    if (json_is_number(json_object_get(score, "ratio")))
        printf(", %.3fx", json_number_value(json_object_get(score, "ratio")));
    if (json_is_number(json_object_get(score, "delta")))
        printf(")");
    printf("\n\nknobs\n");
    const json_t *knobs = json_object_get(d, "knobs");
    size_t i;
    json_t *k;
    json_array_foreach(knobs, i, k)
    {
        const char *change = json_string_value(json_object_get(k, "change"));
        printf("  %s: ", avo_cli_inert(json_string_value(json_object_get(k, "name")), 0));
        print_value(json_object_get(k, "old"));
        printf(" -> ");
        print_value(json_object_get(k, "new"));
        if (strcmp(change, "changed") != 0)
            printf("  (%s)", change);
        printf("\n");
    }
    if (json_array_size(knobs) == 0)
        printf("  (unchanged)\n");

    const json_t *configs = json_object_get(d, "configs");
    if (json_array_size(configs)) {
        printf("\n%-16s %-8s %10s %10s %10s %8s %11s %11s\n", "config", "unit", "A", "B",
               "delta", "B/A", "median A", "median B");
        json_t *c;
        json_array_foreach(configs, i, c)
        {
            const char *unit = json_string_value(json_object_get(c, "unit"));
            printf("%-16s %-8s ", json_string_value(json_object_get(c, "name")), unit ? unit : "-");
            print_num(json_object_get(c, "a"), 10, "%*.4g");
            printf(" ");
            print_num(json_object_get(c, "b"), 10, "%*.4g");
            printf(" ");
            print_num(json_object_get(c, "delta"), 10, "%+*.4g");
            printf(" ");
            print_num(json_object_get(c, "ratio"), 7, "%*.3f");
            printf("x ");
            const json_t *ma = json_object_get(c, "median_s_a");
            const json_t *mb = json_object_get(c, "median_s_b");
            if (json_is_number(ma))
                printf("%9.4gms ", json_number_value(ma) * 1e3);
            else
                printf("%11s ", "-");
            if (json_is_number(mb))
                printf("%9.4gms", json_number_value(mb) * 1e3);
            else
                printf("%11s", "-");
            printf("\n");
        }
    }
    const char *patch = json_string_value(json_object_get(d, "source_diff"));
    if (patch && *patch)
        printf("\n%s", avo_cli_inert(patch, AVO_INERT_LINES));
    else
        printf("\nsource: identical\n");
}

static const avo_cli_option diff_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 'd', NULL},
    {"json", AVO_OPT_FLAG, "json", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static int diff_candidates(const char *db, const int64_t ids[2], int json);

int avo_cli_diff(const avo_cli_command *cmd, int argc, char **argv)
{
    json_t *opts = json_object();
    int first;
    int rc = avo_cli_parse_options(argc, argv, diff_options, cmd->usage, opts, &first);
    int64_t ids[2] = {0, 0};
    if (rc < 0 && argc - first != 2)
        rc = avo_cli_usage_error(cmd->usage, "%s", "expected two candidate ids");
    for (int i = 0; rc < 0 && i < 2; i++)
        if ((ids[i] = avo_cli_parse_id(argv[first + i])) < 0)
            rc = avo_cli_usage_error(
                cmd->usage, "candidate id must be a positive integer, got '%s'", argv[first + i]);
    if (rc < 0)
        rc = diff_candidates(avo_cli_opt_string(opts, "db", "avo.db"), ids,
                             json_is_true(json_object_get(opts, "json")));
    json_decref(opts);
    return rc;
}

/* Print the difference between candidates ids[0] and ids[1] of `db`. */
static int diff_candidates(const char *db, const int64_t ids[2], int json)
{
    avo_archive *ar = avo_cli_open_archive(db);
    if (!ar)
        return 1;
    json_t *cand[2] = {NULL, NULL}, *d = NULL;
    char err[AVO_ERRLEN];
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        rc = avo_archive_candidate_get(ar, ids[i], 1, &cand[i], err, sizeof err);
        if (rc == AVO_ENOTFOUND)
            snprintf(err, sizeof err, "no candidate #%lld", (long long)ids[i]);
    }
    if (rc == 0)
        rc = avo_diff_compare(cand[0], cand[1], &d, err, sizeof err);
    json_decref(cand[0]);
    json_decref(cand[1]);
    avo_archive_free(ar);
    if (rc < 0)
        return avo_cli_fail(rc, err, db);
    if (json)
        avo_cli_print_json(d);
    else
        print_diff(d);
    json_decref(d);
    return 0;
}
