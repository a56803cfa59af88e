/*
 * cli_common.c — helpers shared by the cli_*.c commands.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/avo.h"
#include "cli/cli.h"
#include "core/strbuf.h"

int avo_cli_usage_error(const char *usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "avo: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n%s", usage);
    return AVO_CLI_EXIT_USAGE;
}

int64_t avo_cli_parse_id(const char *s)
{
    if (!s)
        return -1;
    if (*s == '#')
        s++;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 1)
        return -1;
    return v;
}

avo_archive *avo_cli_open_archive(const char *db)
{
    avo_archive *ar;
    char err[AVO_ERRLEN];
    if (avo_archive_open_read(&ar, db, err, sizeof err) < 0) {
        fprintf(stderr, "avo: %s\n", err);
        return NULL;
    }
    avo_cli_warn_damaged(ar, db);
    return ar;
}

void avo_cli_warn_damaged(avo_archive *ar, const char *db)
{
    /* A damaged file is still read (what it holds may be what the user
     * needs), but never silently: the answers may be incomplete. */
    char problem[256];
    if (avo_archive_quick_check(ar, problem, sizeof problem) == 0)
        fprintf(stderr,
                "avo: warning: archive %s is damaged (PRAGMA quick_check: %s); what follows"
                " is what could be read of it, and may be incomplete (README, \"A damaged"
                " archive\")\n",
                db, problem);
}

int avo_cli_fail(int rc, const char *err, const char *db)
{
    if (rc == AVO_ENOTFOUND && db)
        fprintf(stderr, "avo: %s in %s\n", err, db);
    else
        fprintf(stderr, "avo: %s\n", err);
    return 1;
}

const char *avo_cli_inert(const char *s, int flags)
{
    static avo_strbuf buffers[8];
    static unsigned next;
    avo_strbuf *b = &buffers[next++ % 8];
    avo_strbuf_free(b);
    if (!s)
        return "";
    if (avo_strbuf_inert(b, s, strlen(s), flags) < 0)
        return "?";
    return avo_strbuf_text(b);
}

void avo_cli_print_json(const json_t *value)
{
    char *text = json_dumps(value, JSON_INDENT(2) | JSON_SORT_KEYS);
    if (text)
        puts(text);
    free(text);
}

const char *avo_cli_opt_string(const json_t *opts, const char *key, const char *fallback)
{
    const char *s = json_string_value(json_object_get(opts, key));
    return s ? s : fallback;
}

/* Whether path names the same file as `db` or as one of its -wal/-shm. */
static int same_file_as_archive(const char *path, const struct stat *st, const char *db)
{
    static const char *const suffixes[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        char name[4096];
        snprintf(name, sizeof name, "%s%s", db, suffixes[i]);
        struct stat dst;
        if (strcmp(path, name) == 0)
            return 1;
        if (st && stat(name, &dst) == 0 && dst.st_dev == st->st_dev && dst.st_ino == st->st_ino)
            return 1;
    }
    return 0;
}

int avo_cli_check_output(const char *output, const char *db, const char *what)
{
    if (strcmp(output, "-") == 0)
        return 0;
    struct stat st;
    int exists = stat(output, &st) == 0;
    if (same_file_as_archive(output, exists ? &st : NULL, db)) {
        fprintf(stderr, "avo: refusing to write %s to %s: that is the archive it is read from\n",
                what, output);
        return AVO_CLI_EXIT_USAGE;
    }
    if (exists && S_ISREG(st.st_mode)) {
        char magic[16] = {0};
        FILE *f = fopen(output, "rb");
        size_t n = f ? fread(magic, 1, sizeof magic, f) : 0;
        if (f)
            fclose(f);
        if (n == sizeof magic && memcmp(magic, "SQLite format 3", 16) == 0) {
            fprintf(stderr,
                    "avo: refusing to write %s to %s: it is an SQLite database (an archive?);"
                    " choose another output path\n",
                    what, output);
            return AVO_CLI_EXIT_USAGE;
        }
    }
    return 0;
}
