/*
 * cli.h — the commands of the avo CLI, one file per command family
 * (cli_<name>.c; cli_lua.c for those implemented in Lua), the table that
 * names them (commands.c) and the helpers they share.  These files print;
 * the work itself is in library modules (archive, diff, export, report)
 * and in Lua (lua/avo/cli.lua).
 */
#ifndef AVO_CLI_H
#define AVO_CLI_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "store/archive.h"
#include "core/strbuf.h"

enum { AVO_CLI_EXIT_USAGE = 2 };

/*
 * One command of `avo`.  The table of them (avo_cli_commands, commands.c)
 * is the one place that names a command, describes it in `avo --help` and
 * holds its usage, which `avo NAME --help` prints and every usage error of
 * the command repeats; the handler reads its usage from here, so help and
 * errors cannot disagree.
 */
typedef struct avo_cli_command avo_cli_command;
struct avo_cli_command {
    const char *name;     /* argv[1] */
    const char *synopsis; /* its entry in `avo --help` ("run SCRIPT.lua"); NULL: hidden */
    const char *summary;  /* what it does, one line ('\n' continues it, indented) */
    const char *usage;    /* `avo NAME --help` */
    /* argv from the command name on; returns the exit status: 0 success,
     * 1 failure, 2 usage error (more where the command's usage says so). */
    int (*handler)(const avo_cli_command *cmd, int argc, char **argv);
};

/* The commands, ended by an entry with a NULL name. */
extern const avo_cli_command avo_cli_commands[];

/* The command called `name`, or NULL. */
const avo_cli_command *avo_cli_command_find(const char *name);

/* Print `avo --help` (the commands of the table with their summaries). */
void avo_cli_print_usage(FILE *out);

/* The handlers (one cli_<name>.c per command family). */
int avo_cli_run(const avo_cli_command *cmd, int argc, char **argv);        /* cli_lua.c */
int avo_cli_eval(const avo_cli_command *cmd, int argc, char **argv);       /* cli_lua.c */
int avo_cli_resume(const avo_cli_command *cmd, int argc, char **argv);     /* cli_lua.c */
int avo_cli_replay(const avo_cli_command *cmd, int argc, char **argv);     /* cli_lua.c */
int avo_cli_rebench(const avo_cli_command *cmd, int argc, char **argv);    /* cli_lua.c */
int avo_cli_experiment(const avo_cli_command *cmd, int argc, char **argv); /* cli_lua.c */
int avo_cli_best(const avo_cli_command *cmd, int argc, char **argv);       /* cli_query.c */
int avo_cli_show(const avo_cli_command *cmd, int argc, char **argv);       /* cli_query.c */
int avo_cli_lineage(const avo_cli_command *cmd, int argc, char **argv);    /* cli_query.c */
int avo_cli_runs(const avo_cli_command *cmd, int argc, char **argv);
int avo_cli_diff(const avo_cli_command *cmd, int argc, char **argv);
int avo_cli_export(const avo_cli_command *cmd, int argc, char **argv);
int avo_cli_report(const avo_cli_command *cmd, int argc, char **argv);
int avo_cli_serve(const avo_cli_command *cmd, int argc, char **argv);  /* cli_serve.c, serve.c */
int avo_cli_doctor(const avo_cli_command *cmd, int argc, char **argv); /* toolkit, driver, GPUs */
int avo_cli_kb(const avo_cli_command *cmd, int argc, char **argv);     /* add, search, read, list */
int avo_cli_worker(const avo_cli_command *cmd, int argc, char **argv); /* local or --connect */

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

/* avo_cli_parse_options for a command without operands: one is a usage
 * error ("unexpected argument 'X'").  Same returns. */
int avo_cli_parse_options_only(int argc, char **argv, const avo_cli_option *table,
                               const char *usage, json_t *opts);

/* String option `key` of a parsed options object, or `fallback`; the
 * pointer lives as long as `opts`. */
const char *avo_cli_opt_string(const json_t *opts, const char *key, const char *fallback);

/* 0 when arg is valid UTF-8; else prints that `what` is not (bytes
 * escaped) and returns AVO_CLI_EXIT_USAGE.  Paths and arguments travel as
 * JSON text, which must be UTF-8. */
int avo_cli_not_utf8(const char *what, const char *arg);

/* Print "avo: <fmt with arg>" and the usage to stderr; returns 2. */
int avo_cli_usage_error(const char *usage, const char *fmt, const char *arg);

/* Print `value` to stdout as JSON (indented, keys sorted): what --json prints. */
void avo_cli_print_json(const json_t *value);

/*
 * `s` made inert for a terminal (avo_strbuf_inert; NULL reads as ""): what a
 * candidate, a model or a server wrote (logs, reasons, notes, sources,
 * knob values), before text mode prints it.  `flags` AVO_INERT_LINES keeps
 * its newlines (a multi-line log), 0 shows them (a one-line reason).  The
 * text is in one of 8 buffers owned by this function, reused in turn: valid
 * until the 8th next call, so a printf may take several.  "?" when out of
 * memory.
 */
const char *avo_cli_inert(const char *s, int flags);

/* A positive id ("12" or "#12"), or -1. */
int64_t avo_cli_parse_id(const char *s);

/* Open an archive that must already exist; prints why not and returns NULL
 * (so a typo never creates an empty archive). */
avo_archive *avo_cli_open_archive(const char *db);

/* Warn on stderr when `ar` (opened from `db`) fails PRAGMA quick_check. */
void avo_cli_warn_damaged(avo_archive *ar, const char *db);

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
