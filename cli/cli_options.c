/*
 * cli_options.c — table-driven option parsing for the CLI commands.
 *
 * A command lists its options once (name, kind, bounds, the key it sets);
 * avo_cli_parse_options turns argv into a JSON object of those keys and
 * reports every mistake the same way: "avo: --jobs needs an integer from 1
 * to 1024, got 'x'" followed by the command's usage, exit status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define MAX_OPTIONS 32

/* Integer in [min, max] or -1 with *ok = 0. */
static long long parse_integer(const char *s, long long min, long long max, int *ok)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    *ok = !errno && end != s && !*end && v >= min && v <= max;
    return v;
}

static double parse_positive(const char *s, int *ok)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    *ok = !errno && end != s && !*end && v > 0;
    return v;
}

int avo_cli_not_utf8(const char *what, const char *arg)
{
    json_t *probe = json_string(arg); /* jansson refuses invalid UTF-8 */
    if (probe) {
        json_decref(probe);
        return 0;
    }
    fputs("avo: ", stderr);
    fputs(what, stderr);
    fputs(" is not valid UTF-8 ('", stderr);
    for (const unsigned char *c = (const unsigned char *)arg; *c; c++) {
        if (*c >= 0x20 && *c < 0x7f)
            fputc(*c, stderr);
        else
            fprintf(stderr, "\\x%02x", *c);
    }
    fputs("'); avo keeps paths and arguments as UTF-8 text: rename it\n", stderr);
    return AVO_CLI_EXIT_USAGE;
}

/* One option's value into opts; returns 0 or the usage-error exit status. */
static int take(const avo_cli_option *o, const char *arg, const char *usage, json_t *opts)
{
    int ok = 1;
    char want[96];
    if (o->kind == AVO_OPT_STRING || o->kind == AVO_OPT_LIST) {
        char what[64];
        snprintf(what, sizeof what, "the value of --%s", o->name);
        if (avo_cli_not_utf8(what, arg))
            return AVO_CLI_EXIT_USAGE;
    }
    switch (o->kind) {
    case AVO_OPT_STRING:
        json_object_set_new(opts, o->key, json_string(arg));
        return 0;
    case AVO_OPT_FLAG:
        json_object_set_new(opts, o->key, json_true());
        return 0;
    case AVO_OPT_LIST: {
        json_t *list = json_object_get(opts, o->key);
        if (!list) {
            list = json_array();
            json_object_set_new(opts, o->key, list);
        }
        json_array_append_new(list, json_string(arg));
        return 0;
    }
    case AVO_OPT_INT: {
        long long max = o->max == AVO_OPT_UNBOUNDED ? LLONG_MAX : o->max;
        long long v = parse_integer(arg, o->min, max, &ok);
        if (ok) {
            json_object_set_new(opts, o->key, json_integer(v));
            return 0;
        }
        if (o->max == AVO_OPT_UNBOUNDED)
            snprintf(want, sizeof want, "an integer from %lld to %lld", o->min, LLONG_MAX);
        else
            snprintf(want, sizeof want, "an integer from %lld to %lld", o->min, o->max);
        break;
    }
    case AVO_OPT_NUMBER: {
        double v = parse_positive(arg, &ok);
        if (ok) {
            json_object_set_new(opts, o->key, json_real(v));
            return 0;
        }
        snprintf(want, sizeof want, "a positive number");
        break;
    }
    }
    fprintf(stderr, "avo: --%s needs %s, got '%s'\n\n%s", o->name, o->what ? o->what : want, arg,
            usage);
    return AVO_CLI_EXIT_USAGE;
}

int avo_cli_parse_options(int argc, char **argv, const avo_cli_option *table, const char *usage,
                          json_t *opts, int *ret_optind)
{
    struct option longopts[MAX_OPTIONS + 2];
    char shorts[2 * MAX_OPTIONS + 3] = ":h"; /* leading ':' reports a missing value as ':' */
    size_t n = 0, ns = strlen(shorts);
    for (; table[n].name && n < MAX_OPTIONS; n++) {
        int has_arg = table[n].kind == AVO_OPT_FLAG ? no_argument : required_argument;
        longopts[n] = (struct option){table[n].name, has_arg, NULL, (int)n + 256};
        if (table[n].short_name) {
            shorts[ns++] = table[n].short_name;
            if (has_arg)
                shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    longopts[n] = (struct option){"help", no_argument, NULL, 'h'};
    longopts[n + 1] = (struct option){NULL, 0, NULL, 0};

    optind = 1;
    opterr = 0; /* our messages name the option and show the usage */
    int c;
    while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return 0;
        }
        if (c == ':')
            return avo_cli_usage_error(usage, "%s needs a value", argv[optind - 1]);
        if (c == '?')
            return avo_cli_usage_error(usage, "unrecognised option '%s'", argv[optind - 1]);
        size_t index = (size_t)c - 256;
        if (c < 256)
            for (index = 0; index < n && table[index].short_name != c; index++)
                ;
        int rc = take(&table[index], optarg, usage, opts);
        if (rc)
            return rc;
    }
    *ret_optind = optind;
    return -1;
}

int avo_cli_parse_options_only(int argc, char **argv, const avo_cli_option *table,
                               const char *usage, json_t *opts)
{
    int first;
    int rc = avo_cli_parse_options(argc, argv, table, usage, opts, &first);
    if (rc < 0 && first != argc)
        return avo_cli_usage_error(usage, "unexpected argument '%s'", argv[first]);
    return rc;
}
