/*
 * cli.h — the research-workflow commands of the avo CLI (runs, diff,
 * export, report), one file each (cli_<name>.c), and the helpers they
 * share.  Each command takes argv from the command name on and returns
 * the exit status: 0 success, 1 failure, 2 usage error.  These files print;
 * the work itself is in library modules (archive, diff, export, report).
 */
#ifndef AVO_CLI_H
#define AVO_CLI_H

#include <stdint.h>

#include "archive.h"

enum { AVO_CLI_EXIT_USAGE = 2 };

int avo_cli_runs(int argc, char **argv);
int avo_cli_diff(int argc, char **argv);
int avo_cli_export(int argc, char **argv);
int avo_cli_report(int argc, char **argv);
int avo_cli_doctor(int argc, char **argv); /* CUDA toolkit, driver and GPUs found */
int avo_cli_kb(int argc, char **argv);     /* knowledge base: add, search, read, list */

/* Print "avo: <fmt with arg>" and the usage to stderr; returns 2. */
int avo_cli_usage_error(const char *usage, const char *fmt, const char *arg);

/* A positive id ("12" or "#12"), or -1. */
int64_t avo_cli_parse_id(const char *s);

/* Open an archive that must already exist; prints why not and returns NULL
 * (so a typo never creates an empty archive). */
avo_archive *avo_cli_open_archive(const char *db);

/* Print "avo: " and the error of a failed archive call, naming the run or
 * candidate the user asked for when it is missing; returns 1. */
int avo_cli_fail(int rc, const char *err, const char *db);

#endif
