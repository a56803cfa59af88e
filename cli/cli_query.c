/*
 * cli_query.c — avo best, avo show, avo lineage: read one run's results
 * from an archive and print them for people (or as JSON with --json).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/archive.h"
#include "core/avo.h"
#include "cli/cli.h"
#include "cli/compare.h"
#include "core/diff.h"
#include "cli/paired.h"


typedef struct query_opts {
    const char *db;
    long long id;
    long long run;
    int json;
    int source;
} query_opts;

static const avo_cli_option query_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 0, NULL},
    {"run", AVO_OPT_INT, "run", 1, AVO_OPT_UNBOUNDED, 0, "a run id"},
    {"json", AVO_OPT_FLAG, "json", 0, 0, 0, NULL},
    {"source", AVO_OPT_FLAG, "source", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

/* Parse the options shared by best/show/lineage into q (strings point into
 * *ret_opts, which the caller frees).  Returns -1 to continue, or an exit
 * status. */
static int parse_query(int argc, char **argv, const char *usage, int need_id, query_opts *q,
                       json_t **ret_opts)
{
    json_t *opts = *ret_opts = json_object();
    int first;
    int rc = avo_cli_parse_options(argc, argv, query_options, usage, opts, &first);
    if (rc >= 0)
        return rc;
    const char *db = json_string_value(json_object_get(opts, "db"));
    *q = (query_opts){
        .db = db ? db : "avo.db",
        .run = json_integer_value(json_object_get(opts, "run")),
        .json = json_is_true(json_object_get(opts, "json")),
        .source = json_is_true(json_object_get(opts, "source")),
    };
    if (need_id) {
        if (first != argc - 1)
            return avo_cli_usage_error(usage, "%s", "expected one candidate id");
        if ((q->id = avo_cli_parse_id(argv[first])) < 1)
            return avo_cli_usage_error(usage, "candidate id must be a positive integer, got '%s'",
                                       argv[first]);
    } else if (first != argc) {
        return avo_cli_usage_error(usage, "unexpected argument '%s'", argv[first]);
    }
    return -1;
}

static double num(const json_t *obj, const char *key)
{
    return json_number_value(json_object_get(obj, key));
}

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static void print_knobs(const json_t *knobs)
{
    const char *key;
    json_t *value;
    int first = 1;
    json_object_foreach((json_t *)knobs, key, value)
    {
        char *text = json_dumps(value, JSON_ENCODE_ANY);
        const char *shown = json_is_string(value) ? json_string_value(value) : text;
        printf("%s%s=%s", first ? "" : " ", avo_cli_inert(key, 0),
               avo_cli_inert(shown ? shown : "?", 0));
        free(text);
        first = 0;
    }
    if (first)
        printf("(none)");
}

/* After "this candidate 0.41x": its ratio to baseline `row` per config,
 * "; per config 128x128x128 0.05x, odd unavailable (...)". */
static void print_config_ratios(const json_t *c, const json_t *row)
{
    size_t i;
    const json_t *cfg;
    const char *sep = "; per config ";
    json_array_foreach(json_object_get(c, "configs"), i, cfg)
    {
        const char *unit = NULL, *their_unit = NULL;
        double mine = avo_diff_config_metric(cfg, &unit), theirs = 0;
        char why[600];
        if (!(mine > 0))
            continue;
        if (avo_compare_config(row, str(cfg, "name"), &theirs, &their_unit, why, sizeof why) &&
            theirs > 0 && unit && their_unit && strcmp(unit, their_unit) == 0)
            printf("%s%s %.2fx", sep, str(cfg, "name"), mine / theirs);
        else
            printf("%s%s %s", sep, str(cfg, "name"), avo_cli_inert(why, 0));
        sep = ", ";
    }
}

/*
 * The re-timing at the end of the candidate's run (lua/avo/retime.lua, the
 * last "retimed" event): the candidate's re-timed median and interval, and
 * the ranking after re-timing.
 */
static void print_retimed(const json_t *c, const json_t *data)
{
    size_t i;
    const json_t *e;
    const json_t *ranked = json_object_get(data, "ranked"), *dropped = json_object_get(data, "dropped");
    printf("\nre-timed at the end of run %lld: top %zu of %s, %lld rounds interleaved, each a fresh "
           "process (median, 95%% interval of another process's measurement):\n",
           (long long)json_integer_value(json_object_get(c, "run_id")),
           json_array_size(ranked) + json_array_size(dropped), str(data, "evaluator"),
           (long long)json_integer_value(json_object_get(data, "rounds")));
    json_int_t id = json_integer_value(json_object_get(c, "id"));
    int found = 0;
    json_array_foreach(ranked, i, e)
    {
        json_int_t eid = json_integer_value(json_object_get(e, "id"));
        printf("  %lld. #%lld %.4g [%.4g, %.4g] (recorded %.4g)",
               (long long)json_integer_value(json_object_get(e, "rank")), (long long)eid,
               num(e, "median"), num(e, "low"), num(e, "high"), num(e, "recorded"));
        avo_strbuf ratios = {0};
        avo_paired_text(&ratios, e);
        printf("%s%s%s\n", ratios.len ? ", " : "", avo_strbuf_text(&ratios),
               eid == id ? "  <- this candidate" : "");
        avo_strbuf_free(&ratios);
        found |= eid == id;
    }
    /* The seed and the evaluator's baselines, timed in the same rounds. */
    const json_t *seed = json_object_get(data, "seed");
    if (seed && !avo_paired_entry(data, json_integer_value(json_object_get(seed, "id")))) {
        if (json_object_get(seed, "median"))
            printf("  seed #%lld in the same rounds: %.4g [%.4g, %.4g] (recorded %.4g)\n",
                   (long long)json_integer_value(json_object_get(seed, "id")), num(seed, "median"),
                   num(seed, "low"), num(seed, "high"), num(seed, "recorded"));
        else
            printf("  seed #%lld in the same rounds: %s\n",
                   (long long)json_integer_value(json_object_get(seed, "id")), str(seed, "why"));
    }
    json_array_foreach(json_object_get(data, "baselines"), i, e)
    {
        if (json_object_get(e, "median"))
            printf("  baseline %s in the same rounds: %.4g [%.4g, %.4g]\n", str(e, "name"),
                   num(e, "median"), num(e, "low"), num(e, "high"));
        else
            printf("  baseline %s in the same rounds: %s\n", str(e, "name"),
                   avo_cli_inert(str(e, "why"), 0));
    }
    json_array_foreach(dropped, i, e)
    {
        json_int_t eid = json_integer_value(json_object_get(e, "id"));
        printf("  -  #%lld out: %s%s\n", (long long)eid, avo_cli_inert(str(e, "why"), 0),
               eid == id ? "  <- this candidate" : "");
        found |= eid == id;
    }
    const json_t *first = json_array_get(ranked, 0);
    if (first && json_integer_value(json_object_get(first, "id")) != id)
        printf("  after re-timing the fastest is #%lld, not this candidate\n",
               (long long)json_integer_value(json_object_get(first, "id")));
    if (!found)
        printf("  this candidate was not among them\n");
}

static void print_candidate(const json_t *c, int with_source)
{
    printf("candidate #%lld  run %lld  generation %lld  operator %s\n",
           (long long)json_integer_value(json_object_get(c, "id")),
           (long long)json_integer_value(json_object_get(c, "run_id")),
           (long long)json_integer_value(json_object_get(c, "generation")),
           avo_cli_inert(str(c, "operator"), 0));
    printf("status   %s", str(c, "status"));
    if (*str(c, "reason"))
        printf(" — %s", avo_cli_inert(str(c, "reason"), 0));
    printf("\nscore    %.6g (recorded in the search)\n", num(c, "score"));
    if (json_object_get(c, "retimed") && strcmp(str(c, "status"), "ok") == 0) {
        /* The figure that holds: re-timed in fresh processes, paired with
         * the seed and the baselines round by round (paired.h). */
        avo_strbuf text = {0};
        avo_paired_lines(&text, json_object_get(c, "run_retimed"),
                         json_integer_value(json_object_get(c, "id")),
                         json_string_value(json_object_get(c, "unit")));
        fputs(avo_strbuf_text(&text), stdout);
        avo_strbuf_free(&text);
    }
    const json_t *recorded_best = json_object_get(c, "recorded_best");
    if (recorded_best) {
        printf("the search's recorded best is #%lld (%.6g), ",
               (long long)json_integer_value(json_object_get(recorded_best, "id")),
               num(recorded_best, "score"));
        if (json_is_integer(json_object_get(recorded_best, "rank")))
            printf("re-timed #%lld\n",
                   (long long)json_integer_value(json_object_get(recorded_best, "rank")));
        else
            printf("not re-timed ok\n");
    }
    printf("knobs    ");
    print_knobs(json_object_get(c, "knobs"));
    printf("\nsource   %s\n", str(c, "source_hash"));
    size_t i;
    json_t *item;
    printf("parents ");
    json_array_foreach(json_object_get(c, "parents"), i, item)
        printf(" #%lld (%s)", (long long)json_integer_value(json_object_get(item, "id")),
               str(item, "role"));
    if (json_array_size(json_object_get(c, "parents")) == 0)
        printf(" (none)");
    printf("\n");
    if (*str(c, "note"))
        printf("note     %s\n", avo_cli_inert(str(c, "note"), 0));
    /* What the judge saw it load beyond its object and the runtime
     * (eval/libraries.h); absent for results that predate it or CUDA. */
    const json_t *result = json_object_get(c, "result");
    const json_t *libs = json_object_get(result, "libraries");
    if (json_is_array(libs)) {
        printf("libraries");
        json_array_foreach(libs, i, item)
            printf("%s%s", i ? ", " : " ",
                   avo_cli_inert(json_string_value(item) ? json_string_value(item) : "?", 0));
        printf("%s\n", json_array_size(libs) ? "" : " none beyond its object and the runtime");
    } else if (json_string_value(json_object_get(result, "libraries_unobserved"))) {
        printf("libraries not observed: %s\n",
               avo_cli_inert(json_string_value(json_object_get(result, "libraries_unobserved")), 0));
    }
    json_t *configs = json_object_get(c, "configs");
    if (json_array_size(configs) > 0) {
        /* With a yardstick (timing.yardstick): the paired speed-up over the
         * seed timed beside it, per config. */
        int paired = 0;
        json_array_foreach(configs, i, item)
        {
            paired |= json_is_number(json_object_get(item, "vs_yardstick"));
        }
        printf("\n%-16s %7s %10s %10s %12s %7s %8s %10s%s\n", "config", "correct", "GFLOP/s", "GB/s",
               "median", "spread", "samples", "max error", paired ? "   x seed" : "");
        json_array_foreach(configs, i, item)
        {
            printf("%-16s %7s %10.3f %10.3f %10.4gms %6.1f%% %8lld %10.3g", str(item, "name"),
                   json_is_true(json_object_get(item, "correct")) ? "yes" : "NO", num(item, "gflops"),
                   num(item, "gbs"), num(item, "median_s") * 1e3, num(item, "spread") * 100,
                   (long long)json_integer_value(json_object_get(item, "samples")),
                   num(item, "max_error"));
            if (paired && json_is_number(json_object_get(item, "vs_yardstick")))
                printf(" %8.3f", num(item, "vs_yardstick"));
            printf("\n");
            if (*str(item, "reason"))
                printf("  %s\n", avo_cli_inert(str(item, "reason"), 0));
        }
    }
    const json_t *baselines = json_object_get(c, "run_baselines");
    if (json_array_size(baselines) > 0) {
        /* The run's baselines: the candidate's ratio to each one that measured,
         * the status and reason of each one that did not. */
        printf("\nbaselines of run %lld (measured beside the search; ratios unpaired):\n",
               (long long)json_integer_value(json_object_get(c, "run_id")));
        const char *evaluator = json_string_value(json_object_get(c, "evaluator"));
        json_array_foreach(baselines, i, item)
        {
            char text[600];
            avo_compare_describe(item, NULL, text, sizeof text);
            printf("  %s (%s)", avo_cli_inert(text, 0), str(item, "device"));
            if (!avo_compare_owned(item, evaluator)) {
                /* another workload: never compared with (issue 21) */
                printf(": of evaluator %s, not this candidate's (%s)\n",
                       *str(item, "evaluator") ? str(item, "evaluator") : "unknown",
                       evaluator ? evaluator : "unknown");
                continue;
            }
            if (avo_compare_usable(item) && strcmp(str(c, "status"), "ok") == 0) {
                printf(": this candidate %.2fx", num(c, "score") / num(item, "score"));
                print_config_ratios(c, item);
            }
            printf("\n");
        }
    }
    const json_t *retimed = json_object_get(c, "run_retimed");
    if (retimed)
        print_retimed(c, retimed);
    if (*str(c, "log") && strcmp(str(c, "status"), "ok") != 0)
        printf("\nlog:\n%s\n", avo_cli_inert(str(c, "log"), AVO_INERT_LINES));
    if (with_source)
        printf("\n%s", avo_cli_inert(str(c, "source"), AVO_INERT_LINES));
}

/*
 * One query command: what it fetches from the archive, what it says when
 * there is nothing, and how it prints a found value for people.
 */
typedef struct query_command {
    int need_id;
    int (*fetch)(avo_archive *ar, const query_opts *q, json_t **ret, char *err, size_t errlen);
    const char *missing; /* printf format taking the id (or nothing) and the db */
    void (*print)(const json_t *value, const query_opts *q);
} query_command;

/* For the text of best and show: the baselines of a candidate's run as its
 * "run_baselines" (none when it is not a candidate or they cannot be read). */
static void attach_baselines(avo_archive *ar, json_t *value)
{
    const json_t *run = json_object_get(value, "run_id");
    if (!json_is_object(value) || !json_is_integer(run) || !json_object_get(value, "score"))
        return;
    json_t *rows = NULL;
    char err[AVO_ERRLEN];
    if (avo_archive_baselines(ar, json_integer_value(run), &rows, err, sizeof err) == 0)
        json_object_set_new(value, "run_baselines", rows);
}

/*
 * A candidate's re-timed figures (paired.h) as its "retimed" ({paired:
 * false, why} when its run was not re-timed or it was not re-timed ok), the
 * run's unit as "unit", and for the text the run's whole re-timing as
 * "run_retimed".
 */
static void attach_retimed(avo_archive *ar, json_t *value, int json)
{
    const json_t *run = json_object_get(value, "run_id");
    if (!json_is_object(value) || !json_is_integer(run) || !json_object_get(value, "score"))
        return;
    json_t *data = avo_paired_load(ar, json_integer_value(run));
    json_object_set_new(value, "retimed",
                        avo_paired_json(data, json_integer_value(json_object_get(value, "id"))));
    if (data && !json)
        json_object_set(value, "run_retimed", data);
    json_t *summary = NULL;
    char err[AVO_ERRLEN];
    if (!json &&
        avo_archive_run_summary(ar, json_integer_value(run), &summary, err, sizeof err) == 0 &&
        json_is_string(json_object_get(summary, "unit")))
        json_object_set(value, "unit", json_object_get(summary, "unit"));
    json_decref(summary);
    json_decref(data);
}

/* Parse, open the archive, fetch, print: the shape every query shares. */
static int run_query(const query_command *cmd, const char *usage, int argc, char **argv)
{
    query_opts q;
    json_t *opts, *value = NULL;
    avo_archive *ar = NULL;
    int rc = parse_query(argc, argv, usage, cmd->need_id, &q, &opts);
    if (rc >= 0)
        goto out;
    rc = 1;
    ar = avo_cli_open_archive(q.db);
    if (!ar)
        goto out;
    char err[AVO_ERRLEN];
    int found = cmd->fetch(ar, &q, &value, err, sizeof err);
    if (found == AVO_ENOTFOUND) {
        fputs("avo: ", stderr);
        if (cmd->need_id)
            fprintf(stderr, cmd->missing, q.id, q.db);
        else
            fprintf(stderr, cmd->missing, q.db);
        fputc('\n', stderr);
    } else if (found < 0) {
        fprintf(stderr, "avo: %s\n", err);
    } else {
        attach_retimed(ar, value, q.json); /* candidates only */
        if (q.json) {
            avo_cli_print_json(value);
        } else {
            attach_baselines(ar, value);
            cmd->print(value, &q);
        }
        rc = 0;
    }
out:
    json_decref(value);
    avo_archive_free(ar);
    json_decref(opts);
    return rc;
}

static int fetch_best(avo_archive *ar, const query_opts *q, json_t **ret, char *err,
                      size_t errlen)
{
    if (q->run) {
        /* A run that does not exist is not a run without a verified candidate. */
        json_t *run = NULL;
        int rc = avo_archive_run_get(ar, q->run, &run, err, errlen);
        json_decref(run);
        if (rc == AVO_ENOTFOUND)
            return avo_error(err, errlen, AVO_EINVAL, "no run %lld in %s", q->run, q->db);
        if (rc < 0)
            return rc;
    }
    int rc = avo_archive_best(ar, q->run, ret, err, errlen);
    if (rc < 0)
        return rc;
    /* The best is the re-timed #1 where the run was re-timed (paired.h);
     * the search's recorded best is named beside it. */
    json_t *data = avo_paired_load(ar, json_integer_value(json_object_get(*ret, "run_id")));
    json_int_t recorded = json_integer_value(json_object_get(*ret, "id"));
    json_int_t first = avo_paired_best(data);
    json_t *retimed = NULL;
    if (first && first != recorded &&
        avo_archive_candidate_get(ar, first, 0, &retimed, err, errlen) == 0) {
        const json_t *e = avo_paired_entry(data, recorded);
        json_object_set_new(retimed, "recorded_best",
                            json_pack("{sIsfso}", "id", recorded, "score",
                                      json_number_value(json_object_get(*ret, "score")), "rank",
                                      e ? json_incref(json_object_get(e, "rank")) : json_null()));
        json_decref(*ret);
        *ret = retimed;
    }
    json_decref(data);
    return 0;
}

static void print_best(const json_t *c, const query_opts *q)
{
    (void)q;
    print_candidate(c, 0);
}

int avo_cli_best(const avo_cli_command *cmd, int argc, char **argv)
{
    static const query_command best = {0, fetch_best, "no verified candidate in %s", print_best};
    return run_query(&best, cmd->usage, argc, argv);
}

static int fetch_candidate(avo_archive *ar, const query_opts *q, json_t **ret, char *err,
                           size_t errlen)
{
    return avo_archive_candidate_get(ar, q->id, q->source || q->json, ret, err, errlen);
}

static void print_shown(const json_t *c, const query_opts *q)
{
    print_candidate(c, q->source);
}

int avo_cli_show(const avo_cli_command *cmd, int argc, char **argv)
{
    static const query_command show = {1, fetch_candidate, "no candidate #%lld in %s",
                                       print_shown};
    return run_query(&show, cmd->usage, argc, argv);
}

static const json_t *find_node(const json_t *nodes, long long id)
{
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i,
                       n) if (json_integer_value(json_object_get(n, "id")) == id) return n;
    return NULL;
}

/* Print node `id` and its ancestors below it; a node reached twice (a DAG
 * through crossover) is printed once and referred to afterwards. */
static void print_tree(const json_t *nodes, long long id, const char *role, char *prefix,
                       size_t prefix_len, int last, int depth, json_t *seen)
{
    const json_t *n = find_node(nodes, id);
    char key[32];
    snprintf(key, sizeof key, "%lld", id);
    if (depth > 0)
        printf("%s%s", prefix, last ? "└─ " : "├─ ");
    if (!n) {
        printf("#%lld (missing)\n", id);
        return;
    }
    printf("#%lld %s gen %lld %s score %.4g", id, str(n, "operator"),
           (long long)json_integer_value(json_object_get(n, "generation")), str(n, "status"),
           num(n, "score"));
    if (role && strcmp(role, "parent") != 0)
        printf(" [%s]", role);
    if (json_object_get(seen, key)) {
        printf(" (shown above)\n");
        return;
    }
    printf("\n");
    json_object_set_new(seen, key, json_true());
    const json_t *parents = json_object_get(n, "parents");
    size_t count = json_array_size(parents);
    size_t len = strlen(prefix);
    if (depth > 0 && len + 8 < prefix_len)
        strcat(prefix, last ? "   " : "│  ");
    for (size_t i = 0; i < count; i++) {
        const json_t *p = json_array_get(parents, i);
        print_tree(nodes, json_integer_value(json_object_get(p, "id")), str(p, "role"), prefix,
                   prefix_len, i + 1 == count, depth + 1, seen);
    }
    prefix[len] = '\0';
}

static int fetch_lineage(avo_archive *ar, const query_opts *q, json_t **ret, char *err,
                         size_t errlen)
{
    int rc = avo_archive_lineage(ar, q->id, ret, err, errlen);
    if (rc == 0 && json_array_size(*ret) == 0)
        rc = AVO_ENOTFOUND;
    return rc;
}

static void print_lineage(const json_t *nodes, const query_opts *q)
{
    char prefix[512] = "";
    json_t *seen = json_object();
    print_tree(nodes, q->id, NULL, prefix, sizeof prefix, 1, 0, seen);
    json_decref(seen);
}

int avo_cli_lineage(const avo_cli_command *cmd, int argc, char **argv)
{
    static const query_command lineage = {1, fetch_lineage, "no candidate #%lld in %s",
                                          print_lineage};
    return run_query(&lineage, cmd->usage, argc, argv);
}
