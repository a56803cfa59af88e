/*
 * cli_export.c — `avo export`: the archive as CSV, JSON or a git
 * repository of the lineage (export.c does the work).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"
#include "cli/cli.h"
#include "cli/export.h"

static const avo_cli_option export_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 'd', NULL},
    {"run", AVO_OPT_INT, "run", 1, AVO_OPT_UNBOUNDED, 'r', "a run id"},
    {"csv", AVO_OPT_STRING, "csv", 0, 0, 0, NULL},
    {"json", AVO_OPT_STRING, "json", 0, 0, 0, NULL},
    {"git", AVO_OPT_STRING, "git", 0, 0, 0, NULL},
    {"what", AVO_OPT_STRING, "what", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static int export_run(const char *db, int64_t run, int format, const char *target);

int avo_cli_export(const avo_cli_command *cmd, int argc, char **argv)
{
    json_t *opts = json_object();
    const char *usage = cmd->usage;
    int rc = avo_cli_parse_options_only(argc, argv, export_options, usage, opts);
    static const struct {
        const char *key;
        int format;
    } formats[] = {{"csv", 'C'}, {"json", 'J'}, {"git", 'G'}};
    int format = 0, given = 0;
    const char *target = "";
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        if (json_object_get(opts, formats[i].key)) {
            format = formats[i].format;
            target = avo_cli_opt_string(opts, formats[i].key, "");
            given++;
        }
    }
    if (rc >= 0)
        ;
    else if (given > 1)
        rc = avo_cli_usage_error(usage, "%s", "give one of --csv, --json and --git");
    else if (!given)
        rc = avo_cli_usage_error(usage, "%s", "export needs --csv, --json or --git");
    else if (!*target)
        rc = avo_cli_usage_error(usage, "%s", "empty output path");
    else if (json_object_get(opts, "what") && format != 'C')
        rc = avo_cli_usage_error(usage, "%s", "--what applies to --csv");
    else if (json_object_get(opts, "what") &&
             strcmp(avo_cli_opt_string(opts, "what", ""), "candidates") != 0 &&
             strcmp(avo_cli_opt_string(opts, "what", ""), "baselines") != 0)
        rc = avo_cli_usage_error(usage, "--what must be candidates or baselines, got '%s'",
                                 avo_cli_opt_string(opts, "what", ""));
    else if (avo_cli_check_output(target, avo_cli_opt_string(opts, "db", "avo.db"), "the export"))
        rc = AVO_CLI_EXIT_USAGE;
    else
        rc = export_run(avo_cli_opt_string(opts, "db", "avo.db"),
                        json_integer_value(json_object_get(opts, "run")),
                        format == 'C' &&
                                strcmp(avo_cli_opt_string(opts, "what", ""), "baselines") == 0
                            ? 'B'
                            : format,
                        target);
    json_decref(opts);
    return rc;
}

/* Export run `run` (0: every run) of `db` as CSV ('C'), the baselines' CSV
 * ('B'), JSON ('J') or git ('G'). */
static int export_run(const char *db, int64_t run, int format, const char *target)
{
    avo_archive *ar = avo_cli_open_archive(db);
    if (!ar)
        return 1;
    char err[AVO_ERRLEN];
    int rc;
    if (format == 'G') {
        size_t commits = 0;
        rc = avo_export_git(ar, run, target, &commits, err, sizeof err);
        if (rc == 0)
            fprintf(stderr, "avo: exported %zu candidates as commits to %s\n", commits, target);
    } else {
        avo_strbuf text = {0};
        rc = format == 'C'   ? avo_export_csv(ar, run, &text, err, sizeof err)
             : format == 'B' ? avo_export_csv_baselines(ar, run, &text, err, sizeof err)
                             : avo_export_json(ar, run, &text, err, sizeof err);
        if (rc == 0)
            rc = avo_export_save(target, avo_strbuf_text(&text), text.len, err, sizeof err);
        if (rc == 0 && strcmp(target, "-") != 0)
            fprintf(stderr, "avo: wrote %s\n", target);
        avo_strbuf_free(&text);
    }
    avo_archive_free(ar);
    return rc < 0 ? avo_cli_fail(rc, err, db) : 0;
}
