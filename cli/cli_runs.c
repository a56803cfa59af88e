/*
 * cli_runs.c — `avo runs`: the runs in an archive with their budgets,
 * candidate counts, best candidate and, for agent runs, attempts.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/avo.h"
#include "cli/cli.h"
#include "cli/compare.h"
#include "cli/paired.h"

static void print_time(double t, const char *fmt)
{
    char buf[64] = "-";
    if (isfinite(t) && t > 0) {
        time_t s = (time_t)t;
        struct tm tm;
        localtime_r(&s, &tm);
        strftime(buf, sizeof buf, fmt, &tm);
    }
    printf("%-19s", buf);
}

/* "jobs 2, max-evals 30, max-time 60s, max-tokens 5000, max-usd 2" from the
 * run config. */
static void budgets(const json_t *config, char *buf, size_t n)
{
    static const struct {
        const char *key, *label, *unit;
    } fields[] = {
        {"jobs", "jobs", ""},
        {"max_evals", "max-evals", ""},
        {"max_time", "max-time", "s"},
        {"max_tokens", "max-tokens", ""},
        {"max_usd", "max-usd", ""},
    };
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const json_t *value = json_object_get(config, fields[i].key);
        if (json_is_number(value) && len < n)
            len += snprintf(buf + len, n - len, "%s%s %g%s", len ? ", " : "", fields[i].label,
                            json_number_value(value), fields[i].unit);
    }
    if (!len)
        snprintf(buf, n, "-");
}

/* Whether the run's agent made any attempt (avo_archive_run_summary). */
static int has_attempts(const json_t *run)
{
    const json_t *attempts = json_object_get(run, "attempts");
    return json_object_size(json_object_get(attempts, "outcomes")) > 0;
}

static const avo_cli_option runs_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 'd', NULL},
    {"json", AVO_OPT_FLAG, "json", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static int list_runs(const char *db, int json);

int avo_cli_runs(const avo_cli_command *cmd, int argc, char **argv)
{
    json_t *opts = json_object();
    int rc = avo_cli_parse_options_only(argc, argv, runs_options, cmd->usage, opts);
    if (rc < 0)
        rc = list_runs(avo_cli_opt_string(opts, "db", "avo.db"),
                       json_is_true(json_object_get(opts, "json")));
    json_decref(opts);
    return rc;
}

/* The runs of archive `db` (avo_archive_runs), each re-timed run's best
 * its re-timed #1 (paired.h): "retimed_best" and its figures as "retimed"
 * (null and {paired: false} otherwise); best_id and best_score stay the
 * search's recorded best.  NULL after saying why. */
static json_t *load_runs(const char *db, int *ret_rc)
{
    avo_archive *ar = avo_cli_open_archive(db);
    if (!ar) {
        *ret_rc = 1;
        return NULL;
    }
    json_t *runs = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_runs(ar, &runs, err, sizeof err);
    size_t k;
    json_t *item;
    json_array_foreach(rc < 0 ? NULL : runs, k, item)
    {
        json_t *data = avo_paired_load(ar, json_integer_value(json_object_get(item, "id")));
        json_int_t first = avo_paired_best(data);
        json_object_set_new(item, "retimed_best", first ? json_integer(first) : json_null());
        json_object_set_new(item, "retimed", avo_paired_json(data, first));
        json_decref(data);
    }
    avo_archive_free(ar);
    if (rc < 0) {
        *ret_rc = avo_cli_fail(rc, err, db);
        return NULL;
    }
    return runs;
}

/* Run `r`'s best column: the re-timed #1 and its median (marked "rt"),
 * else the recorded best, else "-". */
static void best_column(const json_t *r, const char *unit, char *out, size_t len)
{
    const json_t *best = json_object_get(r, "best_id");
    const json_t *retimed = json_object_get(r, "retimed");
    snprintf(out, len, "-");
    if (json_is_integer(json_object_get(r, "retimed_best")))
        snprintf(out, len, "#%lld %.4g%s%s rt",
                 (long long)json_integer_value(json_object_get(r, "retimed_best")),
                 json_number_value(json_object_get(retimed, "median")), unit ? " " : "",
                 unit ? unit : "");
    else if (json_is_integer(best))
        snprintf(out, len, "#%lld %.4g%s%s", (long long)json_integer_value(best),
                 json_number_value(json_object_get(r, "best_score")), unit ? " " : "",
                 unit ? unit : "");
}

/* Run `r`'s "vs baseline" column: a re-timed run's paired ratios to the
 * baselines (not the seed); else the recorded best against only its own
 * evaluator's baselines (all of them without a best). */
static void vs_column(const json_t *r, char *out, size_t len)
{
    const json_t *best = json_object_get(r, "best_id");
    json_t *own = json_is_integer(best)
                      ? avo_compare_of(json_object_get(r, "baselines"),
                                       json_string_value(json_object_get(r, "best_evaluator")))
                      : json_incref(json_object_get(r, "baselines"));
    avo_compare_column(own, json_number_value(json_object_get(r, "best_score")),
                       json_is_integer(best), out, len);
    json_decref(own);
    size_t j;
    const json_t *p;
    avo_strbuf pairs = {0};
    int paired = json_is_integer(json_object_get(r, "retimed_best"));
    json_array_foreach(paired ? json_object_get(json_object_get(r, "retimed"), "ratios") : NULL, j,
                       p)
    {
        const char *against = json_string_value(json_object_get(p, "against"));
        if (!against || strcmp(against, "seed") == 0)
            continue;
        avo_strbuf_printf(&pairs, "%s%.2fx %s", pairs.len ? ", " : "",
                          json_number_value(json_object_get(p, "median")), against);
    }
    if (pairs.len)
        snprintf(out, len, "%s paired", avo_strbuf_text(&pairs));
    avo_strbuf_free(&pairs);
}

/* One row of the table; `agent`: the attempts column is shown. */
static void print_run(const json_t *r, int agent)
{
    const char *unit = json_string_value(json_object_get(r, "unit"));
    if (unit && strcmp(unit, "score") == 0)
        unit = NULL; /* a plain score has no unit worth a column's room */
    char best_text[96], attempts_text[48] = "-", budget_text[96], vs_text[160];
    best_column(r, unit, best_text, sizeof best_text);
    if (has_attempts(r)) {
        const json_t *attempts = json_object_get(r, "attempts");
        snprintf(attempts_text, sizeof attempts_text, "%lld/%lld",
                 (long long)json_integer_value(json_object_get(attempts, "explored")),
                 (long long)json_integer_value(json_object_get(attempts, "committed")));
    }
    budgets(json_object_get(r, "config"), budget_text, sizeof budget_text);
    printf("%4lld  %-8s %6llu  ", (long long)json_integer_value(json_object_get(r, "id")),
           json_string_value(json_object_get(r, "status")),
           (unsigned long long)json_integer_value(json_object_get(r, "seed")));
    print_time(json_number_value(json_object_get(r, "started_at")), "%Y-%m-%d %H:%M:%S");
    printf(" ");
    print_time(json_number_value(json_object_get(r, "ended_at")), "%Y-%m-%d %H:%M:%S");
    const char *script = json_string_value(json_object_get(r, "script_path"));
    printf(" %6lld %6lld %6lld  %-24s ",
           (long long)json_integer_value(json_object_get(r, "candidates")),
           (long long)json_integer_value(json_object_get(r, "ok")),
           (long long)json_integer_value(json_object_get(r, "failed")), best_text);
    if (agent)
        printf("%-18s ", attempts_text);
    vs_column(r, vs_text, sizeof vs_text);
    printf("%-24s %-26s %s\n", avo_cli_inert(vs_text, 0), budget_text,
           avo_cli_inert(script ? script : "-", 0));
}

/* Print the runs of archive `db` as a table or as JSON. */
static int list_runs(const char *db, int json)
{
    int rc = 0;
    json_t *runs = load_runs(db, &rc);
    if (!runs)
        return rc;
    if (json) {
        avo_cli_print_json(runs);
        json_decref(runs);
        return 0;
    }
    if (json_array_size(runs) == 0) {
        printf("no runs in %s\n", db);
        json_decref(runs);
        return 0;
    }
    /* The attempts column only when some run has an agent's attempts. */
    int agent = 0;
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r)
    {
        agent |= has_attempts(r);
    }
    printf("%4s  %-8s %6s  %-19s %-19s %6s %6s %6s  %-24s ", "run", "status", "seed", "started",
           "ended", "cands", "ok", "failed", "best");
    if (agent)
        printf("%-18s ", "explored/committed");
    printf("%-24s %-26s %s\n", "vs baseline", "budgets", "script");
    json_array_foreach(runs, i, r)
    {
        print_run(r, agent);
    }
    /* Candidates neither ok nor failed: say so, as the run's summary did. */
    json_array_foreach(runs, i, r)
    {
        json_int_t pending = json_integer_value(json_object_get(r, "pending"));
        const char *status = json_string_value(json_object_get(r, "status"));
        if (pending > 0 && status && strcmp(status, "running") != 0)
            printf("run %lld: %lld candidate(s) pending (not evaluated; `avo resume --db %s "
                   "--run %lld` evaluates them)\n",
                   (long long)json_integer_value(json_object_get(r, "id")), (long long)pending, db,
                   (long long)json_integer_value(json_object_get(r, "id")));
    }
    json_decref(runs);
    return 0;
}
