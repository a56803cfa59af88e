/*
 * cli_serve.c — `avo serve`: the live view of archives in a browser
 * (serve.c), until SIGINT or SIGTERM.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"
#include "cli/cli.h"
#include "cli/serve.h"

static const avo_cli_option serve_options[] = {
    {"db", AVO_OPT_LIST, "db", 0, 0, 'd', NULL},
    {"listen", AVO_OPT_STRING, "listen", 0, 0, 'l', NULL},
    {"refresh", AVO_OPT_NUMBER, "refresh", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

/*
 * Check that each archive opens, start the server, print its URL, and
 * wait for SIGINT or SIGTERM (blocked in every thread, taken here).
 */
static int serve(const char *const *dbs, size_t n, const char *listen, double refresh)
{
    char err[AVO_ERRLEN];
    for (size_t i = 0; i < n; i++) {
        avo_archive *ar = NULL;
        if (avo_archive_open_watch(&ar, dbs[i], err, sizeof err) < 0) {
            fprintf(stderr, "avo: %s\n", err);
            return 1;
        }
        avo_cli_warn_damaged(ar, dbs[i]);
        avo_archive_free(ar);
    }
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    avo_serve_options opt = {.dbs = dbs, .n_dbs = n, .listen = listen, .refresh_s = refresh};
    avo_serve *s = NULL;
    if (avo_serve_start(&s, &opt, err, sizeof err) < 0) {
        fprintf(stderr, "avo: %s\n", err);
        return 1;
    }
    printf("%s\n", avo_serve_url(s));
    fflush(stdout);
    fprintf(stderr, "avo: serving %zu archive(s) at %s%s; Ctrl-C stops\n", n, avo_serve_url(s),
            avo_serve_needs_token(s) ? " (not loopback: the token in the URL is needed)" : "");
    int sig = 0;
    sigwait(&stop, &sig);
    avo_serve_stop(s);
    fprintf(stderr, "avo: serve stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    return 0;
}

int avo_cli_serve(const avo_cli_command *cmd, int argc, char **argv)
{
    json_t *opts = json_object();
    int first;
    int rc = avo_cli_parse_options(argc, argv, serve_options, cmd->usage, opts, &first);
    const json_t *list = json_object_get(opts, "db");
    size_t n = json_array_size(list);
    const char **dbs = calloc(n ? n : 1, sizeof *dbs);
    char host[256];
    unsigned port;
    char err[AVO_ERRLEN];
    const char *listen = avo_cli_opt_string(opts, "listen", NULL);
    if (rc >= 0)
        ;
    else if (!dbs)
        rc = avo_cli_usage_error(cmd->usage, "%s", "out of memory");
    else if (first != argc)
        rc = avo_cli_usage_error(cmd->usage, "unexpected argument '%s'", argv[first]);
    else if (listen &&
             avo_serve_parse_listen(listen, host, sizeof host, &port, err, sizeof err) < 0)
        rc = avo_cli_usage_error(cmd->usage, "%s", err);
    else {
        for (size_t i = 0; i < n; i++)
            dbs[i] = json_string_value(json_array_get(list, i));
        if (!n)
            dbs[0] = "avo.db";
        double refresh = json_number_value(json_object_get(opts, "refresh"));
        rc = serve(dbs, n ? n : 1, listen, refresh);
    }
    free(dbs);
    json_decref(opts);
    return rc;
}
