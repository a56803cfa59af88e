/*
 * cli_common.c — helpers shared by the cli_*.c commands.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avo.h"
#include "cli.h"

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
    return ar;
}

int avo_cli_fail(int rc, const char *err, const char *db)
{
    if (rc == AVO_ENOTFOUND && db)
        fprintf(stderr, "avo: %s in %s\n", err, db);
    else
        fprintf(stderr, "avo: %s\n", err);
    return 1;
}

const char *avo_cli_opt_string(const json_t *opts, const char *key, const char *fallback)
{
    const char *s = json_string_value(json_object_get(opts, key));
    return s ? s : fallback;
}
