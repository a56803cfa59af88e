/*
 * cli_export.c — `avo export`: the archive as CSV, JSON or a git
 * repository of the lineage (export.c does the work).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avo.h"
#include "cli.h"
#include "export.h"

static const char usage_export[] =
    "usage: avo export [--db FILE] [--run ID] (--csv FILE [--what WHAT] | --json FILE |\n"
    "                  --git DIR)\n"
    "\n"
    "Export candidates (default: of every run).  FILE may be - for stdout; a\n"
    "regular file is replaced atomically, anything else (a device, a FIFO, a\n"
    "symlink) is written through.\n"
    "  --csv FILE         one row per candidate and config (RFC 4180)\n"
    "  --what WHAT        with --csv: candidates (default) or baselines (one row per\n"
    "                     baseline, device and config: the evaluator's baselines)\n"
    "  --json FILE        {\"runs\": [...], \"candidates\": [...], \"baselines\": [...]}\n"
    "                     with sources\n"
    "  --git DIR          a new git repository: one commit per candidate, crossovers\n"
    "                     as merge commits, tags c<ID>, branches main and best\n"
    "  --run ID           only this run\n"
    "  --db FILE          archive (default avo.db)\n";

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

int avo_cli_export(int argc, char **argv)
{
    json_t *opts = json_object();
    int first;
    int rc = avo_cli_parse_options(argc, argv, export_options, usage_export, opts, &first);
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
    else if (first != argc)
        rc = avo_cli_usage_error(usage_export, "unexpected argument '%s'", argv[first]);
    else if (given > 1)
        rc = avo_cli_usage_error(usage_export, "%s", "give one of --csv, --json and --git");
    else if (!given)
        rc = avo_cli_usage_error(usage_export, "%s", "export needs --csv, --json or --git");
    else if (!*target)
        rc = avo_cli_usage_error(usage_export, "%s", "empty output path");
    else if (json_object_get(opts, "what") && format != 'C')
        rc = avo_cli_usage_error(usage_export, "%s", "--what applies to --csv");
    else if (json_object_get(opts, "what") &&
             strcmp(avo_cli_opt_string(opts, "what", ""), "candidates") != 0 &&
             strcmp(avo_cli_opt_string(opts, "what", ""), "baselines") != 0)
        rc = avo_cli_usage_error(usage_export, "--what must be candidates or baselines, got '%s'",
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
