/*
 * cli_kb.c — `avo kb add|search|read|list`: the knowledge base (kb.c) from
 * the command line.  The KB lives in --kb FILE, by default avo.db, the
 * default archive, so `avo kb add` followed by `avo run` gives the run's
 * agents the notes; a standalone file works the same way.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/avo.h"
#include "cli/cli.h"
#include "store/kb.h"

typedef struct kb_opts {
    const char *file;
    int limit;
    int json;
} kb_opts;

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static long long num(const json_t *obj, const char *key)
{
    return (long long)json_integer_value(json_object_get(obj, key));
}

/* Open the KB; unless `create`, the file must already exist (a typo never
 * creates an empty file).  Prints why not and returns NULL. */
static avo_kb *open_kb(const char *file, int create)
{
    struct stat sb;
    if (!create && stat(file, &sb) != 0) {
        fprintf(stderr, "avo: cannot open knowledge base %s: %s\n", file, strerror(errno));
        return NULL;
    }
    avo_kb *kb = NULL;
    char err[AVO_ERRLEN];
    if (avo_kb_open(&kb, file, err, sizeof err) < 0) {
        fprintf(stderr, "avo: %s\n", err);
        return NULL;
    }
    return kb;
}

static int kb_add(avo_kb *kb, int argc, char **argv)
{
    char err[AVO_ERRLEN];
    for (int i = 0; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
            int changed = 0;
            if (avo_kb_add_file(kb, argv[i], NULL, &changed, err, sizeof err) < 0) {
                fprintf(stderr, "avo: %s\n", err);
                return 1;
            }
            printf("%s: %s\n", argv[i], changed ? "indexed" : "unchanged");
            continue;
        }
        avo_kb_stats s;
        if (avo_kb_add_dir(kb, argv[i], &s, err, sizeof err) < 0) {
            fprintf(stderr, "avo: %s\n", err);
            return 1;
        }
        printf("%s: %d added, %d replaced, %d unchanged, %d removed, %d skipped (%d sections)\n",
               argv[i], s.added, s.replaced, s.unchanged, s.removed, s.skipped, s.sections);
    }
    return 0;
}

/* The snippet on one line. */
static void print_flat(const char *s)
{
    /* Runs of white space become one space; the rest is made inert (a
     * knowledge base holds what agents and models wrote). */
    char *flat = malloc(strlen(s) + 1);
    if (!flat) {
        fputs("?", stdout);
        return;
    }
    size_t n = 0;
    int space = 0;
    for (; *s; s++) {
        if (*s == '\n' || *s == '\r' || *s == '\t' || *s == ' ') {
            space = 1;
            continue;
        }
        if (space)
            flat[n++] = ' ';
        space = 0;
        flat[n++] = *s;
    }
    flat[n] = '\0';
    fputs(avo_cli_inert(flat, 0), stdout);
    free(flat);
}

static int kb_search(avo_kb *kb, const char *query, const kb_opts *o)
{
    json_t *hits = NULL;
    char err[AVO_ERRLEN];
    if (avo_kb_search(kb, query, o->limit, &hits, err, sizeof err) < 0) {
        fprintf(stderr, "avo: %s\n", err);
        return 1;
    }
    if (o->json) {
        avo_cli_print_json(hits);
    } else if (json_array_size(hits) == 0) {
        printf("no match for '%s' in %s\n", query, o->file);
    } else {
        size_t i;
        json_t *h;
        json_array_foreach(hits, i, h)
        {
            printf("%zu. %s  §%lld %s  (line %lld, score %.2f)\n   ", i + 1,
                   avo_cli_inert(str(h, "doc"), 0), num(h, "section"),
                   avo_cli_inert(str(h, "title"), 0), num(h, "line"),
                   json_number_value(json_object_get(h, "score")));
            print_flat(str(h, "snippet"));
            printf("\n");
        }
    }
    json_decref(hits);
    return 0;
}

static int kb_read(avo_kb *kb, const char *doc, const kb_opts *o)
{
    json_t *d = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_kb_read(kb, doc, &d, err, sizeof err);
    if (rc < 0) {
        if (rc == AVO_ENOTFOUND)
            fprintf(stderr, "avo: %s (%s)\n", err, o->file);
        else
            fprintf(stderr, "avo: %s\n", err);
        return 1;
    }
    if (o->json) {
        avo_cli_print_json(d);
    } else {
        const char *text = str(d, "text");
        fputs(avo_cli_inert(text, AVO_INERT_LINES), stdout);
        if (*text && text[strlen(text) - 1] != '\n')
            putchar('\n');
    }
    json_decref(d);
    return 0;
}

static int kb_list(avo_kb *kb, const kb_opts *o)
{
    json_t *docs = NULL;
    char err[AVO_ERRLEN];
    if (avo_kb_list(kb, &docs, err, sizeof err) < 0) {
        fprintf(stderr, "avo: %s\n", err);
        return 1;
    }
    if (o->json) {
        avo_cli_print_json(docs);
    } else if (json_array_size(docs) == 0) {
        printf("no documents in %s (add some with `avo kb add DIR --kb %s`)\n", o->file, o->file);
    } else {
        printf("%5s %-8s %8s %8s  %s\n", "id", "kind", "sections", "bytes", "path — title");
        size_t i;
        json_t *d;
        json_array_foreach(docs, i, d)
            printf("%5lld %-8s %8lld %8lld  %s — %s\n", num(d, "id"), str(d, "kind"),
                   num(d, "sections"), num(d, "bytes"), avo_cli_inert(str(d, "path"), 0),
                   avo_cli_inert(str(d, "title"), 0));
    }
    json_decref(docs);
    return 0;
}

static const avo_cli_option kb_options[] = {
    {"kb", AVO_OPT_STRING, "kb", 0, 0, 'k', NULL},
    {"limit", AVO_OPT_INT, "limit", 1, 1000, 'n', NULL},
    {"json", AVO_OPT_FLAG, "json", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static int kb_command(const char *usage, const kb_opts *o, const char *sub, int nargs,
                      char **args);

int avo_cli_kb(const avo_cli_command *cmd, int argc, char **argv)
{
    json_t *opts = json_object();
    int first;
    /* Options may follow the subcommand and its operands (getopt permutes). */
    int rc = avo_cli_parse_options(argc, argv, kb_options, cmd->usage, opts, &first);
    if (rc < 0 && first >= argc)
        rc = avo_cli_usage_error(cmd->usage, "%s",
                                 "kb needs a subcommand: add, search, read or list");
    if (rc < 0) {
        json_t *limit = json_object_get(opts, "limit");
        kb_opts o = {
            .file = avo_cli_opt_string(opts, "kb", "avo.db"),
            .limit = limit ? (int)json_integer_value(limit) : 10,
            .json = json_is_true(json_object_get(opts, "json")),
        };
        rc = kb_command(cmd->usage, &o, argv[first], argc - first - 1, argv + first + 1);
    }
    json_decref(opts);
    return rc;
}

/* Run subcommand `sub` with its operands. */
static int kb_command(const char *usage, const kb_opts *o_in, const char *sub, int nargs,
                      char **args)
{
    kb_opts o = *o_in;

    if (!strcmp(sub, "add")) {
        if (nargs < 1)
            return avo_cli_usage_error(usage, "%s", "kb add needs a directory or file");
        avo_kb *kb = open_kb(o.file, 1);
        if (!kb)
            return 1;
        int rc = kb_add(kb, nargs, args);
        avo_kb_free(kb);
        return rc;
    }
    if (!strcmp(sub, "search")) {
        if (nargs < 1)
            return avo_cli_usage_error(usage, "%s", "kb search needs a query");
        /* The words of the query may come as one argument or several. */
        size_t len = 1;
        for (int i = 0; i < nargs; i++)
            len += strlen(args[i]) + 1;
        char *query = calloc(1, len);
        if (!query) {
            fprintf(stderr, "avo: out of memory\n");
            return 1;
        }
        for (int i = 0; i < nargs; i++) {
            if (i)
                strcat(query, " ");
            strcat(query, args[i]);
        }
        int rc = 1;
        avo_kb *kb = open_kb(o.file, 0);
        if (kb)
            rc = kb_search(kb, query, &o);
        avo_kb_free(kb);
        free(query);
        return rc;
    }
    if (!strcmp(sub, "read")) {
        if (nargs != 1)
            return avo_cli_usage_error(usage, "%s", "kb read needs exactly one document");
        avo_kb *kb = open_kb(o.file, 0);
        if (!kb)
            return 1;
        int rc = kb_read(kb, args[0], &o);
        avo_kb_free(kb);
        return rc;
    }
    if (!strcmp(sub, "list")) {
        if (nargs != 0)
            return avo_cli_usage_error(usage, "unexpected argument '%s'", args[0]);
        avo_kb *kb = open_kb(o.file, 0);
        if (!kb)
            return 1;
        int rc = kb_list(kb, &o);
        avo_kb_free(kb);
        return rc;
    }
    return avo_cli_usage_error(usage, "unknown kb subcommand '%s'", sub);
}
