/*
 * cli_lua.c — the C half of the commands implemented in Lua (run, eval,
 * resume, replay, rebench, experiment; lua/avo/cli.lua): their options are
 * parsed and checked here, with the usage of the command table, and handed
 * to the Lua host as one options object.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/avo.h"
#include "cli/cli.h"
#include "cli/export.h"
#include "cli/view/experiment.h"
#include "lua/host.h"

/* Where the workers come from: the same options of run and resume (a
 * resumed run takes its workers as a new one does). */
#define WORKER_OPTIONS                                                                             \
    {"jobs", AVO_OPT_INT, "jobs", 0, 1024, 0, NULL},                                               \
        {"devices", AVO_OPT_STRING, "devices", 0, 0, 0, NULL},                                     \
        {"listen", AVO_OPT_STRING, "listen", 0, 0, 0, NULL},                                       \
        {"slurm", AVO_OPT_STRING, "slurm", 0, 0, 0, NULL}

static const avo_cli_option experiment_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 0, NULL},
    {"jobs", AVO_OPT_INT, "jobs", 1, 1024, 0, NULL},
    {"new", AVO_OPT_FLAG, "new", 0, 0, 0, NULL},
    {"retry-failed", AVO_OPT_FLAG, "retry_failed", 0, 0, 0, NULL},
    {"experiment", AVO_OPT_INT, "experiment", 1, AVO_OPT_UNBOUNDED, 0, "an experiment id"},
    {"out", AVO_OPT_STRING, "out", 0, 0, 0, NULL},
    {"debug", AVO_OPT_FLAG, "debug", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static const avo_cli_option run_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 0, NULL},
    {"seed", AVO_OPT_INT, "seed", 0, AVO_OPT_UNBOUNDED, 0, NULL},
    WORKER_OPTIONS,
    {"max-evals", AVO_OPT_INT, "max_evals", 1, AVO_OPT_UNBOUNDED, 0, NULL},
    {"max-time", AVO_OPT_NUMBER, "max_time", 0, 0, 0, NULL},
    {"max-usd", AVO_OPT_NUMBER, "max_usd", 0, 0, 0, NULL},
    {"max-tokens", AVO_OPT_INT, "max_tokens", 1, AVO_OPT_UNBOUNDED, 0, NULL},
    {"llm-replay", AVO_OPT_STRING, "llm_replay", 0, 0, 0, NULL},
    {"debug", AVO_OPT_FLAG, "debug", 0, 0, 0, NULL},
    {"retime", AVO_OPT_INT, "retime", 0, 1000, 0, NULL},
    {"retime-rounds", AVO_OPT_INT, "retime_rounds", 1, 1000, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static const avo_cli_option eval_options[] = {
    {"evaluator", AVO_OPT_STRING, "evaluator", 0, 0, 0, NULL},
    {"param", AVO_OPT_LIST, "params", 0, 0, 0, NULL},
    {"config", AVO_OPT_LIST, "configs", 0, 0, 0, NULL},
    {"seed", AVO_OPT_INT, "seed", 0, AVO_OPT_UNBOUNDED, 0, NULL},
    {"json", AVO_OPT_FLAG, "json", 0, 0, 0, NULL},
    {"compile-only", AVO_OPT_FLAG, "compile_only", 0, 0, 0, NULL},
    {"arch", AVO_OPT_STRING, "arch", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static const avo_cli_option resume_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 0, NULL},
    {"run", AVO_OPT_INT, "run", 1, AVO_OPT_UNBOUNDED, 0, "a run id"},
    WORKER_OPTIONS,
    {"takeover", AVO_OPT_FLAG, "takeover", 0, 0, 0, NULL},
    {"debug", AVO_OPT_FLAG, "debug", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static const avo_cli_option replay_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 0, NULL},
    {"out", AVO_OPT_STRING, "out", 0, 0, 0, NULL},
    {"run", AVO_OPT_INT, "run", 1, AVO_OPT_UNBOUNDED, 0, "a run id"},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static const avo_cli_option rebench_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 0, NULL},
    {"run", AVO_OPT_INT, "run", 1, AVO_OPT_UNBOUNDED, 0, "a run id"},
    {"top", AVO_OPT_INT, "top", 1, 1000, 0, NULL},
    {"rounds", AVO_OPT_INT, "rounds", 1, 1000, 0, NULL},
    {"devices", AVO_OPT_STRING, "devices", 0, 0, 0, NULL},
    {"json", AVO_OPT_FLAG, "json", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

/* avo run SCRIPT [KEY=VALUE ...] */
int avo_cli_run(const avo_cli_command *cmd, int argc, char **argv)
{
    json_t *opts = json_object();
    json_t *args = json_object();
    json_object_set_new(opts, "args", args);
    int first;
    int rc = avo_cli_parse_options(argc, argv, run_options, cmd->usage, opts, &first);
    if (rc >= 0)
        goto out;
    if (first >= argc) {
        rc = avo_cli_usage_error(cmd->usage, "%s", "run needs a script");
        goto out;
    }
    rc = avo_cli_not_utf8("the script path", argv[first]);
    if (rc)
        goto out;
    json_object_set_new(opts, "script", json_string(argv[first]));
    for (int i = first + 1; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (!eq || eq == argv[i]) {
            rc = avo_cli_usage_error(cmd->usage, "expected KEY=VALUE after the script, got '%s'",
                                     argv[i]);
            goto out;
        }
        rc = avo_cli_not_utf8("an argument", argv[i]);
        if (rc)
            goto out;
        char *key = strndup(argv[i], (size_t)(eq - argv[i]));
        if (!key) {
            rc = 1;
            goto out;
        }
        if (json_object_get(args, key)) {
            rc = avo_cli_usage_error(cmd->usage, "argument '%s' is given twice", key);
            free(key);
            goto out;
        }
        json_object_set_new(args, key, json_string(eq + 1));
        free(key);
    }
    rc = avo_host_command("run", opts);
out:
    json_decref(opts);
    return rc;
}

/* avo eval KERNEL --evaluator E ... */
int avo_cli_eval(const avo_cli_command *cmd, int argc, char **argv)
{
    json_t *opts = json_object();
    json_object_set_new(opts, "params", json_array());
    int first;
    int rc = avo_cli_parse_options(argc, argv, eval_options, cmd->usage, opts, &first);
    if (rc >= 0)
        goto out;
    if (first != argc - 1) {
        rc = avo_cli_usage_error(cmd->usage, "%s", "eval needs exactly one kernel file");
        goto out;
    }
    if (!json_object_get(opts, "evaluator")) {
        rc = avo_cli_usage_error(cmd->usage, "%s", "eval needs --evaluator");
        goto out;
    }
    rc = avo_cli_not_utf8("the kernel path", argv[first]);
    if (rc)
        goto out;
    json_object_set_new(opts, "kernel", json_string(argv[first]));
    rc = avo_host_command("eval", opts);
out:
    json_decref(opts);
    return rc;
}

/* avo resume / replay / rebench: commands on an existing archive, in Lua. */
static int recorded(const avo_cli_command *cmd, int argc, char **argv, const avo_cli_option *table)
{
    const char *command = cmd->name, *usage = cmd->usage;
    json_t *opts = json_object();
    int rc = avo_cli_parse_options_only(argc, argv, table, usage, opts);
    if (rc >= 0)
        goto out;
    const char *db = json_string_value(json_object_get(opts, "db"));
    if (!db) {
        rc = avo_cli_usage_error(usage, "%s needs --db", command);
        goto out;
    }
    if (!strcmp(command, "replay") && !json_object_get(opts, "out")) {
        rc = avo_cli_usage_error(usage, "%s", "replay needs --out NEW");
        goto out;
    }
    if (access(db, R_OK) != 0) {
        fprintf(stderr, "avo: cannot open archive %s: %s\n", db, strerror(errno));
        rc = 1;
        goto out;
    }
    rc = avo_host_command(command, opts);
out:
    json_decref(opts);
    return rc;
}

/* Write PREFIX.html, .csv and .json of an experiment's report (all or
 * none) and print its short table: what the view layer renders
 * (cli/view/experiment.h) of the statistics `report` that
 * lua/avo/experiment_report.lua computed. */
static int write_experiment_report(const json_t *report)
{
    const char *prefix = json_string_value(json_object_get(report, "out"));
    char *json = json_dumps(json_object_get(report, "document"),
                            JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    avo_strbuf html = {0}, csv = {0}, text = {0}, names[3] = {{0}};
    avo_view_experiment_html(&html, report);
    avo_view_experiment_csv(&csv, json_object_get(report, "document"));
    avo_strbuf_printf(&text, "%s\n", json ? json : "");
    static const char *const ext[3] = {"html", "csv", "json"};
    for (int i = 0; i < 3; i++)
        avo_strbuf_printf(&names[i], "%s.%s", prefix ? prefix : "experiment-report", ext[i]);
    char err[AVO_ERRLEN];
    int rc = AVO_ENOMEM;
    if (json && !html.failed && !csv.failed && !text.failed && !names[2].failed) {
        const char *paths[3] = {names[0].data, names[1].data, names[2].data};
        const char *data[3] = {avo_strbuf_text(&html), avo_strbuf_text(&csv), text.data};
        size_t len[3] = {html.len, csv.len, text.len};
        rc = avo_export_save_all(3, paths, data, len, err, sizeof err);
    } else {
        avo_error(err, sizeof err, rc, "out of memory");
    }
    if (rc < 0) {
        fprintf(stderr, "avo: %s\n", err);
    } else {
        avo_strbuf summary = {0};
        avo_view_experiment_summary(&summary, report);
        fputs(avo_cli_inert(avo_strbuf_text(&summary), AVO_INERT_LINES), stdout);
        avo_strbuf_free(&summary);
    }
    free(json);
    avo_strbuf_free(&html);
    avo_strbuf_free(&csv);
    avo_strbuf_free(&text);
    for (int i = 0; i < 3; i++)
        avo_strbuf_free(&names[i]);
    return rc < 0 ? 1 : 0;
}

/* avo experiment report: the statistics from Lua, the files from C. */
static int experiment_report(const json_t *opts)
{
    json_t *report = NULL;
    int rc = avo_host_call("experiment", opts, &report);
    if (rc == 0 && !json_is_object(report)) {
        fprintf(stderr, "avo: experiment report: the statistics came back empty\n");
        rc = 1;
    }
    if (rc == 0)
        rc = write_experiment_report(report);
    json_decref(report);
    return rc;
}

/* avo experiment FILE.lua | report | replay (lua/avo/experiment.lua) */
int avo_cli_experiment(const avo_cli_command *cmd, int argc, char **argv)
{
    json_t *opts = json_object();
    int first;
    int rc = avo_cli_parse_options(argc, argv, experiment_options, cmd->usage, opts, &first);
    if (rc >= 0)
        goto out;
    if (first != argc - 1) {
        rc = avo_cli_usage_error(cmd->usage, "%s",
                                 first >= argc ? "experiment needs FILE.lua, report or replay"
                                               : "experiment takes one FILE.lua, report or replay");
        goto out;
    }
    rc = avo_cli_not_utf8("the experiment file", argv[first]);
    if (rc)
        goto out;
    const char *what = argv[first];
    int sub = !strcmp(what, "report") || !strcmp(what, "replay");
    json_object_set_new(opts, sub ? "command" : "file", json_string(what));
    if (!sub && json_object_get(opts, "experiment")) {
        rc = avo_cli_usage_error(cmd->usage, "%s", "--experiment is for report and replay");
        goto out;
    }
    if (sub && (json_object_get(opts, "new") || json_object_get(opts, "jobs") ||
                json_object_get(opts, "retry_failed"))) {
        rc = avo_cli_usage_error(cmd->usage,
                                 "--new, --jobs and --retry-failed are not options of %s", what);
        goto out;
    }
    rc = sub && !strcmp(what, "report") ? experiment_report(opts)
                                         : avo_host_command("experiment", opts);
out:
    json_decref(opts);
    return rc;
}

int avo_cli_resume(const avo_cli_command *cmd, int argc, char **argv)
{
    return recorded(cmd, argc, argv, resume_options);
}

int avo_cli_replay(const avo_cli_command *cmd, int argc, char **argv)
{
    return recorded(cmd, argc, argv, replay_options);
}

int avo_cli_rebench(const avo_cli_command *cmd, int argc, char **argv)
{
    return recorded(cmd, argc, argv, rebench_options);
}
