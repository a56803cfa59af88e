/*
 * cli_report.c — `avo report`: write the HTML report of a run (report.c).
 */
#include <stdio.h>
#include <string.h>

#include "core/avo.h"
#include "cli/cli.h"
#include "cli/export.h"
#include "cli/report.h"

static const avo_cli_option report_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 'd', NULL},
    {"run", AVO_OPT_INT, "run", 1, AVO_OPT_UNBOUNDED, 'r', "a run id"},
    {"output", AVO_OPT_STRING, "output", 0, 0, 'o', NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static int write_report(const char *db, int64_t run, const char *output);

int avo_cli_report(const avo_cli_command *cmd, int argc, char **argv)
{
    json_t *opts = json_object();
    int rc = avo_cli_parse_options_only(argc, argv, report_options, cmd->usage, opts);
    const char *output = avo_cli_opt_string(opts, "output", "");
    if (rc >= 0)
        ;
    else if (!*output)
        rc = avo_cli_usage_error(cmd->usage, "%s", "report needs -o FILE.html");
    else if (avo_cli_check_output(output, avo_cli_opt_string(opts, "db", "avo.db"), "the report"))
        rc = AVO_CLI_EXIT_USAGE;
    else
        rc = write_report(avo_cli_opt_string(opts, "db", "avo.db"),
                          json_integer_value(json_object_get(opts, "run")), output);
    json_decref(opts);
    return rc;
}

/* Write the HTML report of run `run` (0: the latest) of `db` to `output`. */
static int write_report(const char *db, int64_t run, const char *output)
{
    avo_archive *ar = avo_cli_open_archive(db);
    if (!ar)
        return 1;
    char err[AVO_ERRLEN];
    avo_strbuf html = {0};
    int rc = avo_report_html(ar, run, &html, err, sizeof err);
    avo_archive_free(ar);
    if (rc == 0)
        rc = avo_export_save(output, avo_strbuf_text(&html), html.len, err, sizeof err);
    avo_strbuf_free(&html);
    if (rc < 0)
        return avo_cli_fail(rc, err, db);
    if (strcmp(output, "-") != 0)
        fprintf(stderr, "avo: wrote %s\n", output);
    return 0;
}
