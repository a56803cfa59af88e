/*
 * cli_export.c — `avo export`: the archive as CSV, JSON or a git
 * repository of the lineage (export.c does the work).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avo.h"
#include "cli.h"
#include "export.h"

static const char usage_export[] =
    "usage: avo export [--db FILE] [--run ID] (--csv FILE | --json FILE | --git DIR)\n"
    "\n"
    "Export candidates (default: of every run).  FILE may be - for stdout.\n"
    "  --csv FILE         one row per candidate and config (RFC 4180)\n"
    "  --json FILE        {\"runs\": [...], \"candidates\": [...]} with sources\n"
    "  --git DIR          a new git repository: one commit per candidate, crossovers\n"
    "                     as merge commits, tags c<ID>, branches main and best\n"
    "  --run ID           only this run\n"
    "  --db FILE          archive (default avo.db)\n";

int avo_cli_export(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'},  {"run", required_argument, NULL, 'r'},
        {"csv", required_argument, NULL, 'C'}, {"json", required_argument, NULL, 'J'},
        {"git", required_argument, NULL, 'G'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *db = "avo.db", *target = NULL;
    int format = 0, c;
    int64_t run = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hd:r:", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            db = optarg;
            break;
        case 'r':
            if ((run = avo_cli_parse_id(optarg)) < 0)
                return avo_cli_usage_error(usage_export, "--run needs a run id, got '%s'", optarg);
            break;
        case 'C':
        case 'J':
        case 'G':
            if (format)
                return avo_cli_usage_error(usage_export, "%s",
                                           "give one of --csv, --json and --git");
            format = c;
            target = optarg;
            break;
        case 'h':
            fputs(usage_export, stdout);
            return 0;
        default:
            return avo_cli_usage_error(usage_export, "%s", "unrecognised option");
        }
    }
    if (optind != argc)
        return avo_cli_usage_error(usage_export, "unexpected argument '%s'", argv[optind]);
    if (!format)
        return avo_cli_usage_error(usage_export, "%s", "export needs --csv, --json or --git");
    if (!*target)
        return avo_cli_usage_error(usage_export, "%s", "empty output path");

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
        rc = format == 'C' ? avo_export_csv(ar, run, &text, err, sizeof err)
                           : avo_export_json(ar, run, &text, err, sizeof err);
        if (rc == 0 && strcmp(target, "-") == 0) {
            if (fwrite(avo_strbuf_text(&text), 1, text.len, stdout) != text.len ||
                fflush(stdout) != 0)
                rc = avo_error(err, sizeof err, AVO_EIO, "cannot write to stdout");
        } else if (rc == 0) {
            rc = avo_export_save(target, avo_strbuf_text(&text), text.len, err, sizeof err);
            if (rc == 0)
                fprintf(stderr, "avo: wrote %s\n", target);
        }
        avo_strbuf_free(&text);
    }
    avo_archive_free(ar);
    return rc < 0 ? avo_cli_fail(rc, err, db) : 0;
}
