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

#include <jansson.h>

#include "archive.h"

enum { AVO_CLI_EXIT_USAGE = 2 };

int avo_cli_best(int argc, char **argv);
int avo_cli_show(int argc, char **argv);
int avo_cli_lineage(int argc, char **argv);
int avo_cli_runs(int argc, char **argv);
int avo_cli_diff(int argc, char **argv);
int avo_cli_export(int argc, char **argv);
int avo_cli_report(int argc, char **argv);
int avo_cli_serve(int argc, char **argv);  /* the live view in a browser (serve.c) */
int avo_cli_doctor(int argc, char **argv); /* CUDA toolkit, driver and GPUs found */
int avo_cli_kb(int argc, char **argv);     /* knowledge base: add, search, read, list */
int avo_cli_worker(int argc, char **argv); /* a worker: local (stdin/stdout) or --connect */

/* One command-line option of a command (see avo_cli_parse_options). */
typedef enum {
    AVO_OPT_STRING, /* --name VALUE: key = "VALUE" */
    AVO_OPT_FLAG,   /* --name: key = true */
    AVO_OPT_LIST,   /* --name VALUE, repeatable: key = ["VALUE", ...] */
    AVO_OPT_INT,    /* --name N with min <= N <= max: key = N */
    AVO_OPT_NUMBER, /* --name X with X > 0: key = X */
} avo_cli_option_kind;

#define AVO_OPT_UNBOUNDED (1LL << 62)

typedef struct avo_cli_option {
    const char *name; /* long name without "--"; NULL ends a table */
    avo_cli_option_kind kind;
    const char *key;  /* key set in the options object */
    long long min, max;
    char short_name;  /* e.g. 'o' for -o, or 0 */
    const char *what; /* what a bad value should have been ("a run id"), or NULL */
} avo_cli_option;

/*
 * Parse argv (argv[0] is the command) against `table` into `opts` (caller
 * owns).  Returns -1 and the index of the first operand in *ret_optind when
 * parsing succeeded; otherwise the exit status to return: 0 after printing
 * the usage for --help, 2 after a usage error naming the option.
 */
int avo_cli_parse_options(int argc, char **argv, const avo_cli_option *table, const char *usage,
                          json_t *opts, int *ret_optind);

/* String option `key` of a parsed options object, or `fallback`; the
 * pointer lives as long as `opts`. */
const char *avo_cli_opt_string(const json_t *opts, const char *key, const char *fallback);

/* 0 when arg is valid UTF-8; else prints that `what` is not (bytes
 * escaped) and returns AVO_CLI_EXIT_USAGE.  Paths and arguments travel as
 * JSON text, which must be UTF-8. */
int avo_cli_not_utf8(const char *what, const char *arg);

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

/*
 * Check an output path before anything is written: 0 when it may be
 * written, else prints why and returns AVO_CLI_EXIT_USAGE.  Refused: the
 * archive `db` itself (or its -wal/-shm, by name or through another path
 * to the same file) and any existing SQLite database, so `-o X.db` can
 * never overwrite an archive.  `what` names the output ("the report").
 */
int avo_cli_check_output(const char *output, const char *db, const char *what);

#endif
