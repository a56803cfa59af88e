/*
 * cli_report.c — `avo report`: write the HTML report of a run (report.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "avo.h"
#include "cli.h"
#include "export.h"
#include "report.h"

static const char usage_report[] =
    "usage: avo report [--db FILE] [--run ID] -o FILE.html\n"
    "\n"
    "Write one self-contained HTML page about a run (default: the latest): score\n"
    "trajectory, scores per generation, the best candidate's lineage, the top\n"
    "versions with sources and diffs, run metadata and LLM spend.\n"
    "  -o, --output FILE  where to write the page (required)\n"
    "  --run ID           the run to report on\n"
    "  --db FILE          archive (default avo.db)\n";

int avo_cli_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'},     {"run", required_argument, NULL, 'r'},
        {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *db = "avo.db", *output = NULL;
    int64_t run = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hd:r:o:", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            db = optarg;
            break;
        case 'r':
            if ((run = avo_cli_parse_id(optarg)) < 0)
                return avo_cli_usage_error(usage_report, "--run needs a run id, got '%s'", optarg);
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            fputs(usage_report, stdout);
            return 0;
        default:
            return avo_cli_usage_error(usage_report, "%s", "unrecognised option");
        }
    }
    if (optind != argc)
        return avo_cli_usage_error(usage_report, "unexpected argument '%s'", argv[optind]);
    if (!output || !*output)
        return avo_cli_usage_error(usage_report, "%s", "report needs -o FILE.html");

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
    fprintf(stderr, "avo: wrote %s\n", output);
    return 0;
}
