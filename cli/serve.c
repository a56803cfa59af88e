/*
 * serve.c — the live view (see serve.h).
 *
 * Each request is handled in its own thread (libmicrohttpd's thread per
 * connection): it opens the archive it needs read-only, renders a page
 * into an avo_strbuf and closes the archive, so no state is shared
 * between requests beyond the server's immutable settings and its
 * `stopping` flag.  Event streams poll the archive files' size and time
 * (stat, no SQLite) and send a "change" event naming the new state.
 */
#include "cli/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/archive.h"
#include "core/avo.h"
#include "avo_config.h"
#include "cli/paired.h"
#include "cli/report.h"
#include "core/strbuf.h"
#include "cli/view/live.h"
#include "cli/view/view.h"

#define TOKEN_BYTES 24
#define CACHE_N 16 /* pages kept, keyed by URL and the archive's state */

/* A rendered page kept while its archive has not changed: tabs that follow
 * the same run share one rendering per change. */
typedef struct cached_page {
    char *key; /* "URL|part|stamp"; NULL: a free slot */
    char *body;
    size_t len;
    double used;
} cached_page;

struct avo_serve {
    struct MHD_Daemon *daemon;
    int fd;
    const char *const *dbs;
    size_t n_dbs;
    int loopback, need_token;
    char token[2 * TOKEN_BYTES + 1];
    char url[600];
    double refresh_s, poll_s;
    atomic_int stopping;
    pthread_mutex_t cache_lock;
    cached_page cache[CACHE_N];
};

/* ---------------------------------------------------------------- helpers */

/* The archive's state as its files show it: size and time of the file and
 * its WAL.  A commit changes the WAL (or, after a checkpoint, the file). */
static void archive_stamp(const char *path, char *buf, size_t len)
{
    struct stat a, w;
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", path);
    int ha = stat(path, &a) == 0, hw = stat(wal, &w) == 0;
    snprintf(buf, len, "%lld.%lld.%lld-%lld.%lld.%lld", ha ? (long long)a.st_size : -1LL,
             ha ? (long long)a.st_mtim.tv_sec : 0LL, ha ? (long long)a.st_mtim.tv_nsec : 0LL,
             hw ? (long long)w.st_size : -1LL, hw ? (long long)w.st_mtim.tv_sec : 0LL,
             hw ? (long long)w.st_mtim.tv_nsec : 0LL);
}

/* The stamp of archive k, or of every archive when k < 0. */
static void stamp_of(const avo_serve *s, long k, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < s->n_dbs; i++) {
        if (k >= 0 && (size_t)k != i)
            continue;
        char one[128];
        archive_stamp(s->dbs[i], one, sizeof one);
        int n = snprintf(buf + used, len - used, "%s%s", used ? "_" : "", one);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
}

/* Constant-time comparison of a presented token with the server's. */
static int token_ok(const avo_serve *s, const char *given)
{
    if (!given)
        return 0;
    size_t n = strlen(s->token);
    if (strlen(given) != n)
        return 0;
    unsigned char diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(given[i] ^ s->token[i]);
    return diff == 0;
}

/* ------------------------------------------------------------- the pages */

/* What a handler hands back: status, body and whether the page refreshes. */
typedef struct page {
    unsigned status;
    avo_strbuf body;
} page;

/*
 * The top of every page: title (plain text, escaped here), the report's
 * style and the live view's, the no-script refresh when `refresh_s` > 0,
 * the script, the breadcrumb `crumbs` (HTML made here) and the heading;
 * main opens with the event stream `events` and the main part's URL
 * `part` (both made here from numbers, HTML-safe) and the state `stamp`.
 */
static void page_begin(avo_strbuf *out, const char *title, const char *crumbs, double refresh_s,
                       const char *events, const char *part, const char *stamp)
{
    avo_strbuf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                         "<meta name=\"viewport\" content=\"width=device-width\"/>\n<title>");
    avo_strbuf_html(out, title);
    avo_strbuf_printf(out, " — avo serve</title>\n<style>%s</style>\n", avo_report_css());
    avo_strbuf_puts(out, "<link rel=\"stylesheet\" href=\"/assets/live.css\"/>\n");
    if (refresh_s > 0)
        avo_strbuf_printf(out,
                          "<noscript><meta http-equiv=\"refresh\" content=\"%.0f\"/></noscript>\n",
                          ceil(refresh_s));
    avo_strbuf_puts(out, "<script src=\"/assets/live.js\" defer=\"defer\"></script>\n</head>\n"
                         "<body>\n<nav class=\"crumbs\"><a href=\"/\">archives</a>");
    avo_strbuf_puts(out, crumbs);
    avo_strbuf_puts(out, "</nav>\n<header class=\"live\"><h1>");
    avo_strbuf_html(out, title);
    avo_strbuf_puts(out, "</h1><span id=\"live-state\" class=\"state\">");
    if (refresh_s > 0)
        avo_strbuf_printf(out, "refreshes every %.0f s", ceil(refresh_s));
    avo_strbuf_puts(out, "</span></header>\n");
    avo_strbuf_puts(out, "<main id=\"live\"");
    if (events && part)
        avo_strbuf_printf(out, " data-events=\"%s\" data-part=\"%s\" data-stamp=\"%s\"", events,
                          part, stamp ? stamp : "");
    avo_strbuf_puts(out, ">\n");
}

static void page_end(avo_strbuf *out)
{
    avo_strbuf_puts(out, "</main>\n<p class=\"muted\">avo serve " AVO_VERSION ", page made ");
    avo_view_time(out, avo_now());
    avo_strbuf_puts(out, "</p>\n</body>\n</html>\n");
}

/* An error page: status and an escaped message. */
static void page_error(page *p, unsigned status, const char *what, const char *message)
{
    avo_strbuf_free(&p->body);
    p->status = status;
    avo_strbuf *out = &p->body;
    avo_strbuf_printf(out,
                      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                      "<title>%u %s</title>\n<style>%s</style>\n</head>\n<body>\n"
                      "<nav class=\"crumbs\"><a href=\"/\">archives</a></nav>\n<h1>%u %s</h1>\n<p>",
                      status, what, avo_report_css(), status, what);
    avo_strbuf_html(out, message);
    avo_strbuf_puts(out, "</p>\n</body>\n</html>\n");
}

/* Open archive k for this request; on failure an error page. */
static avo_archive *open_archive(const avo_serve *s, size_t k, page *p)
{
    avo_archive *ar = NULL;
    char err[AVO_ERRLEN];
    if (avo_archive_open_watch(&ar, s->dbs[k], err, sizeof err) < 0) {
        page_error(p, MHD_HTTP_SERVICE_UNAVAILABLE, "Service Unavailable", err);
        return NULL;
    }
    return ar;
}

/* One archive's runs and experiments on the index. */
static void index_archive(avo_strbuf *out, const avo_serve *s, size_t k)
{
    avo_strbuf_printf(out, "<h2 id=\"a%zu\">", k);
    avo_strbuf_html(out, s->dbs[k]);
    avo_strbuf_puts(out, "</h2>\n");
    avo_archive *ar = NULL;
    json_t *runs = NULL, *exps = NULL;
    char err[AVO_ERRLEN];
    if (avo_archive_open_watch(&ar, s->dbs[k], err, sizeof err) < 0 ||
        avo_archive_runs(ar, &runs, err, sizeof err) < 0 ||
        avo_archive_experiments(ar, &exps, err, sizeof err) < 0) {
        avo_strbuf_puts(out, "<p class=\"status-failed\">cannot read it: ");
        avo_strbuf_html(out, err);
        avo_strbuf_puts(out, "</p>\n");
        goto out;
    }
    avo_view_live_runs(out, ar, k, runs);
    avo_view_live_experiments(out, k, exps);
out:
    json_decref(runs);
    json_decref(exps);
    avo_archive_free(ar);
}

/* The index: every archive's runs and experiments; it always refreshes
 * itself without script (a new run may start in any archive). */
static void page_index(page *p, const avo_serve *s, int part)
{
    char stamp[2048];
    stamp_of(s, -1, stamp, sizeof stamp); /* before reading: never newer than the page */
    avo_strbuf body = {0};
    for (size_t k = 0; k < s->n_dbs; k++)
        index_archive(&body, s, k);
    if (part) {
        p->body = body;
        return;
    }
    page_begin(&p->body, "avo: runs", "", s->refresh_s, "/events", "/?part=main", stamp);
    p->body.failed |= body.failed;
    avo_strbuf_puts(&p->body, avo_strbuf_text(&body));
    avo_strbuf_free(&body);
    page_end(&p->body);
}

/*
 * A run's page: what is happening now (in flight, budgets, agent, recent
 * failures), then the report's sections and every candidate.  `part`: the
 * main part only (what the script swaps in).
 */
static void page_run(page *p, const avo_serve *s, size_t k, long long run_id, int part)
{
    char err[AVO_ERRLEN];
    avo_archive *ar = open_archive(s, k, p);
    if (!ar)
        return;
    char stamp[128];
    archive_stamp(s->dbs[k], stamp, sizeof stamp); /* before reading: never newer than the page */
    avo_report_run r;
    json_t *attempts = NULL, *steps = NULL, *logs = NULL;
    /* The run page shows no source: candidates are read without. */
    int rc = avo_report_load(ar, run_id, 0, &r, err, sizeof err);
    if (rc < 0) {
        page_error(p, rc == AVO_ENOTFOUND ? MHD_HTTP_NOT_FOUND : MHD_HTTP_INTERNAL_SERVER_ERROR,
                   rc == AVO_ENOTFOUND ? "Not Found" : "Internal Server Error", err);
        avo_archive_free(ar);
        return;
    }
    char href[64];
    snprintf(href, sizeof href, "/a/%zu/c/", k);
    r.cand_href = href;
    r.link_all = 1;
    if ((rc = avo_archive_attempts(ar, run_id, &attempts, err, sizeof err)) < 0 ||
        (rc = avo_archive_events(ar, run_id, "agent_step", &steps, err, sizeof err)) < 0 ||
        (rc = avo_archive_events(ar, run_id, "log", &logs, err, sizeof err)) < 0) {
        page_error(p, MHD_HTTP_INTERNAL_SERVER_ERROR, "Internal Server Error", err);
        goto out;
    }

    avo_strbuf body = {0};
    avo_view_live_run(&body, &r, attempts, steps, logs);
    const char *status = avo_view_str(r.run, "status");

    if (part) {
        p->body = body;
    } else {
        char title[4200], crumbs[4300], events[64], partu[80];
        snprintf(title, sizeof title, "run %lld: %s", run_id, avo_view_str(r.run, "script_path"));
        avo_strbuf c = {0};
        avo_strbuf_printf(&c, " › <a href=\"/#a%zu\">", k);
        avo_strbuf_html(&c, s->dbs[k]);
        avo_strbuf_printf(&c, "</a> › run %lld", run_id);
        snprintf(crumbs, sizeof crumbs, "%s", avo_strbuf_text(&c));
        avo_strbuf_free(&c);
        snprintf(events, sizeof events, "/a/%zu/events", k);
        snprintf(partu, sizeof partu, "/a/%zu/run/%lld?part=main", k, run_id);
        page_begin(&p->body, title, crumbs, !strcmp(status, "running") ? s->refresh_s : 0, events,
                   partu, stamp);
        p->body.failed |= body.failed;
        avo_strbuf_puts(&p->body, avo_strbuf_text(&body));
        avo_strbuf_free(&body);
        page_end(&p->body);
    }
out:
    json_decref(attempts);
    json_decref(steps);
    json_decref(logs);
    avo_report_run_free(&r);
    avo_archive_free(ar);
}

/* A candidate's page: the report's candidate section in full (source,
 * diffs to every parent, per-config results, log) and the worker's result. */
static void page_candidate(page *p, const avo_serve *s, size_t k, long long id)
{
    char err[AVO_ERRLEN];
    avo_archive *ar = open_archive(s, k, p);
    if (!ar)
        return;
    json_t *c = NULL, *best = NULL;
    int rc = avo_archive_candidate_get(ar, id, 1, &c, err, sizeof err);
    if (rc < 0) {
        if (rc == AVO_ENOTFOUND)
            snprintf(err, sizeof err, "no candidate %lld in %s", id, s->dbs[k]);
        page_error(p, rc == AVO_ENOTFOUND ? MHD_HTTP_NOT_FOUND : MHD_HTTP_INTERNAL_SERVER_ERROR,
                   rc == AVO_ENOTFOUND ? "Not Found" : "Internal Server Error", err);
        avo_archive_free(ar);
        return;
    }
    long long run_id = avo_view_int(c, "run_id");
    if (avo_archive_best(ar, run_id, &best, err, sizeof err) < 0)
        best = NULL;
    char href[64];
    snprintf(href, sizeof href, "/a/%zu/c/", k);
    avo_report_run r = {.ar = ar, .cand_href = href, .link_all = 1, .best = best};
    avo_strbuf body = {0};
    avo_view_live_candidate(&body, &r, c);
    char title[64], crumbs[4400];
    snprintf(title, sizeof title, "candidate #%lld", id);
    avo_strbuf cr = {0};
    avo_strbuf_printf(&cr, " › <a href=\"/#a%zu\">", k);
    avo_strbuf_html(&cr, s->dbs[k]);
    avo_strbuf_printf(&cr, "</a> › <a href=\"/a/%zu/run/%lld\">run %lld</a> › #%lld", k, run_id,
                      run_id, id);
    snprintf(crumbs, sizeof crumbs, "%s", avo_strbuf_text(&cr));
    avo_strbuf_free(&cr);
    int pending = !strcmp(avo_view_str(c, "status"), "pending");
    page_begin(&p->body, title, crumbs, pending ? s->refresh_s : 0, NULL, NULL, NULL);
    p->body.failed |= body.failed;
    avo_strbuf_puts(&p->body, avo_strbuf_text(&body));
    avo_strbuf_free(&body);
    page_end(&p->body);
    json_decref(c);
    json_decref(best);
    avo_archive_free(ar);
}

/* An experiment's page: its cells, each with its run and how it ended. */
static void page_experiment(page *p, const avo_serve *s, size_t k, long long id, int part)
{
    char err[AVO_ERRLEN];
    avo_archive *ar = open_archive(s, k, p);
    if (!ar)
        return;
    char stamp[128];
    archive_stamp(s->dbs[k], stamp, sizeof stamp); /* before reading: never newer than the page */
    json_t *exps = NULL, *cells = NULL;
    const json_t *e = NULL;
    if (avo_archive_experiments(ar, &exps, err, sizeof err) < 0 ||
        avo_archive_experiment_cells(ar, id, &cells, err, sizeof err) < 0) {
        page_error(p, MHD_HTTP_INTERNAL_SERVER_ERROR, "Internal Server Error", err);
        goto out;
    }
    size_t i;
    const json_t *x;
    json_array_foreach(exps, i, x) if (avo_view_int(x, "id") == id) e = x;
    if (!e) {
        snprintf(err, sizeof err, "no experiment %lld in %s", id, s->dbs[k]);
        page_error(p, MHD_HTTP_NOT_FOUND, "Not Found", err);
        goto out;
    }
    char title[4200], crumbs[4300];
    snprintf(title, sizeof title, "experiment %lld: %s", id, avo_view_str(e, "name"));
    avo_strbuf cr = {0};
    avo_strbuf_printf(&cr, " › <a href=\"/#a%zu\">", k);
    avo_strbuf_html(&cr, s->dbs[k]);
    avo_strbuf_printf(&cr, "</a> › experiment %lld", id);
    snprintf(crumbs, sizeof crumbs, "%s", avo_strbuf_text(&cr));
    avo_strbuf_free(&cr);
    avo_strbuf body = {0};
    int open = avo_view_live_experiment(&body, k, e, cells);
    if (part) {
        p->body = body;
    } else {
        char events[64], partu[80];
        snprintf(events, sizeof events, "/a/%zu/events", k);
        snprintf(partu, sizeof partu, "/a/%zu/experiment/%lld?part=main", k, id);
        page_begin(&p->body, title, crumbs, open ? s->refresh_s : 0, events, partu, stamp);
        p->body.failed |= body.failed;
        avo_strbuf_puts(&p->body, avo_strbuf_text(&body));
        avo_strbuf_free(&body);
        page_end(&p->body);
    }
out:
    json_decref(exps);
    json_decref(cells);
    avo_archive_free(ar);
}

/* ------------------------------------------------------------------ HTTP */

/* An event stream's state (one per connection). */
typedef struct stream {
    const avo_serve *s;
    long k; /* the archive, or -1: all */
    char last[2048];
    double last_sent;
    int started;
} stream;

/*
 * The event stream's content: a "change" event naming the archive's state
 * when the stream opens and whenever it changes, a comment every 15 s
 * (which also finds a client gone); the end when the server stops.
 * Blocks between events: the connection has its own thread.
 */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream *st = cls;
    for (;;) {
        if (atomic_load(&((avo_serve *)st->s)->stopping))
            return MHD_CONTENT_READER_END_OF_STREAM;
        char now[2048];
        stamp_of(st->s, st->k, now, sizeof now);
        int n = 0;
        if (!st->started || strcmp(now, st->last) != 0) {
            n = snprintf(buf, max, "%sevent: change\ndata: %s\n\n",
                         st->started ? "" : "retry: 2000\n", now);
            snprintf(st->last, sizeof st->last, "%s", now);
            st->started = 1;
        } else if (avo_now() - st->last_sent > 15) {
            n = snprintf(buf, max, ": still here\n\n");
        }
        if (n > 0 && (size_t)n < max) {
            st->last_sent = avo_now();
            return n;
        }
        struct timespec ts = {0, (long)(st->s->poll_s * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static void stream_free(void *cls)
{
    free(cls);
}

/* Add the headers every answer carries. */
static void common_headers(struct MHD_Response *resp, const char *type)
{
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "Content-Security-Policy",
                            "default-src 'none'; script-src 'self'; style-src 'self' "
                            "'unsafe-inline'; img-src 'self' data:; connect-src 'self'; "
                            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
}

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned status, const char *type,
                                 const char *body, size_t len, const char *cookie)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    common_headers(resp, type);
    if (cookie)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, cookie);
    enum MHD_Result ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result send_page(struct MHD_Connection *conn, page *p, const char *cookie)
{
    if (p->body.failed) {
        avo_strbuf_free(&p->body);
        page_error(p, MHD_HTTP_INTERNAL_SERVER_ERROR, "Internal Server Error", "out of memory");
    }
    enum MHD_Result ret =
        send_text(conn, p->status ? p->status : MHD_HTTP_OK, "text/html; charset=utf-8",
                  avo_strbuf_text(&p->body), p->body.len, cookie);
    avo_strbuf_free(&p->body);
    return ret;
}

/* Whether a Host header names this machine's loopback ("localhost",
 * "127.x.y.z" or "[::1]", with or without a port). */
static int loopback_host(const char *host)
{
    if (!host)
        return 0;
    char name[256];
    snprintf(name, sizeof name, "%s", host);
    char *colon = name[0] == '[' ? strchr(name, ']') : strchr(name, ':');
    if (name[0] == '[') {
        if (!colon)
            return 0;
        colon[1] = 0;
        return !strcmp(name, "[::1]");
    }
    if (colon)
        *colon = 0;
    struct in_addr a;
    if (!strcasecmp(name, "localhost"))
        return 1;
    return inet_pton(AF_INET, name, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/* Parse "/a/K/..." into k and the rest; 0 when url does not start so or K
 * is not an archive. */
static int archive_path(const avo_serve *s, const char *url, size_t *ret_k, const char **ret_rest)
{
    if (strncmp(url, "/a/", 3) != 0)
        return 0;
    char *end;
    errno = 0;
    unsigned long k = strtoul(url + 3, &end, 10);
    if (end == url + 3 || errno || k >= s->n_dbs || *end != '/')
        return 0;
    *ret_k = k;
    *ret_rest = end;
    return 1;
}

/* A decimal id after `prefix` ending the string; 0 when it does not match. */
static int id_after(const char *rest, const char *prefix, long long *ret_id)
{
    size_t n = strlen(prefix);
    if (strncmp(rest, prefix, n) != 0)
        return 0;
    const char *digits = rest + n;
    if (!*digits || strspn(digits, "0123456789") != strlen(digits) || strlen(digits) > 18)
        return 0;
    *ret_id = strtoll(digits, NULL, 10);
    return 1;
}

/* Copy the cached page under key into p; 0 when there is none. */
static int cache_get(avo_serve *s, const char *key, page *p)
{
    int hit = 0;
    pthread_mutex_lock(&s->cache_lock);
    for (size_t i = 0; i < CACHE_N && !hit; i++) {
        cached_page *c = &s->cache[i];
        if (c->key && !strcmp(c->key, key)) {
            avo_strbuf_append(&p->body, c->body, c->len);
            p->status = MHD_HTTP_OK;
            c->used = avo_now();
            hit = 1;
        }
    }
    pthread_mutex_unlock(&s->cache_lock);
    return hit;
}

/* Keep a copy of a rendered page under key, replacing the least recently
 * used one.  Out of memory: not kept. */
static void cache_put(avo_serve *s, const char *key, const page *p)
{
    char *k = strdup(key), *body = malloc(p->body.len + 1);
    if (!k || !body) {
        free(k);
        free(body);
        return;
    }
    memcpy(body, avo_strbuf_text(&p->body), p->body.len);
    pthread_mutex_lock(&s->cache_lock);
    cached_page *victim = &s->cache[0];
    for (size_t i = 0; i < CACHE_N; i++) {
        if (!s->cache[i].key) {
            victim = &s->cache[i];
            break;
        }
        if (s->cache[i].used < victim->used)
            victim = &s->cache[i];
    }
    free(victim->key);
    free(victim->body);
    *victim = (cached_page){.key = k, .body = body, .len = p->body.len, .used = avo_now()};
    pthread_mutex_unlock(&s->cache_lock);
}

/* What a percent-encoding that must not be decoded becomes: one byte no
 * decoded URL holds (unescape below turns every control byte into it), so
 * handle() answers 400 however the rest of the URL reads. */
#define BAD_ESCAPE '\x7f'

static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Whether s[0..n) is well-formed UTF-8 (no overlong forms, surrogates or
 * code points past U+10FFFF). */
static int valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len = c < 0x80             ? 1
                     : (c & 0xe0) == 0xc0 ? 2
                     : (c & 0xf0) == 0xe0 ? 3
                     : (c & 0xf8) == 0xf0 ? 4
                                          : 0;
        if (!len || i + len > n || (len == 2 && c < 0xc2) || (len == 4 && c > 0xf4))
            return 0;
        for (size_t j = 1; j < len; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return 0;
        if ((len == 3 && c == 0xe0 && s[i + 1] < 0xa0) ||
            (len == 3 && c == 0xed && s[i + 1] >= 0xa0) ||
            (len == 4 && c == 0xf0 && s[i + 1] < 0x90) ||
            (len == 4 && c == 0xf4 && s[i + 1] >= 0x90))
            return 0;
        i += len;
    }
    return 1;
}

/*
 * libmicrohttpd's unescape callback, for the path and every argument:
 * decode %XX in place.  MHD's own decoder hands "/a/0/c/1%00" on as
 * "/a/0/c/1" (the NUL ends the C string), so a page would be served for a
 * URL that names something else.  A malformed escape, a decoded control
 * byte (NUL included) or a result that is not UTF-8 leaves the one byte
 * BAD_ESCAPE instead.  Returns the new length.
 */
static size_t unescape(void *cls, struct MHD_Connection *conn, char *text)
{
    (void)cls;
    (void)conn;
    char *out = text;
    int bad = 0;
    for (const char *in = text; *in; out++) {
        if (*in == '%') {
            int hi = hex_digit(in[1]), lo = hi < 0 ? -1 : hex_digit(in[2]);
            if (lo < 0) {
                bad = 1;
                break;
            }
            *out = (char)(hi * 16 + lo);
            in += 3;
        } else {
            *out = *in++;
        }
        if ((unsigned char)*out < 0x20 || *out == BAD_ESCAPE)
            bad = 1;
    }
    if (bad || !valid_utf8((const unsigned char *)text, (size_t)(out - text))) {
        text[0] = BAD_ESCAPE;
        text[1] = 0;
        return 1;
    }
    *out = 0;
    return (size_t)(out - text);
}

/*
 * One request: check the method, the Host (loopback) or the token
 * (elsewhere), then route.  Event streams answer with a callback response
 * that blocks in this connection's thread.
 */
/* Why a request is refused, before any page: a method other than GET and
 * HEAD, a body, a malformed URL, a foreign Host on a loopback address, a
 * missing token.  Sends the refusal and returns 1 with its result in *ret;
 * else 0, with the token's cookie to set (NULL: none) in *ret_cookie. */
static int refused(const avo_serve *s, struct MHD_Connection *conn, const char *url,
                   const char *method, size_t upload_size, char *cookie, size_t cookie_len,
                   const char **ret_cookie, enum MHD_Result *ret)
{
    static const char plain[] = "text/plain; charset=utf-8";
    unsigned status = 0;
    const char *msg = NULL;
    *ret_cookie = NULL;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        status = MHD_HTTP_METHOD_NOT_ALLOWED;
        msg = "avo serve answers GET and HEAD only\n";
    } else if (upload_size) {
        *ret = MHD_NO;
        return 1;
    } else if (strchr(url, BAD_ESCAPE)) {
        status = MHD_HTTP_BAD_REQUEST;
        msg = "avo serve: the URL's percent-encoding is malformed or"
              " decodes to a control byte or to text that is not UTF-8\n";
    } else if (!strncmp(url, "/assets/", 8)) {
        return 0; /* static assets carry nothing from an archive: no token needed */
    } else if (s->loopback && !loopback_host(MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                                         MHD_HTTP_HEADER_HOST))) {
        status = MHD_HTTP_FORBIDDEN;
        msg = "avo serve on a loopback address answers requests for"
              " localhost, 127.0.0.1 or [::1] only\n";
    } else if (s->need_token) {
        const char *given = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "token");
        if (token_ok(s, given)) {
            snprintf(cookie, cookie_len, "avo_token=%s; Path=/; HttpOnly; SameSite=Strict",
                     s->token);
            *ret_cookie = cookie;
        } else if (!token_ok(s, MHD_lookup_connection_value(conn, MHD_COOKIE_KIND, "avo_token"))) {
            status = MHD_HTTP_FORBIDDEN;
            msg = "avo serve: this address needs the access token: open the"
                  " URL avo serve printed (it ends in ?token=...)\n";
        }
    }
    if (!msg)
        return 0;
    *ret = send_text(conn, status, plain, msg, strlen(msg), NULL);
    return 1;
}

/* An embedded asset (/assets/NAME), or 404. */
static enum MHD_Result send_asset(struct MHD_Connection *conn, const char *name)
{
    for (const avo_serve_asset *a = avo_serve_assets; a->name; a++)
        if (!strcmp(name, a->name))
            return send_text(conn, MHD_HTTP_OK, a->type, a->data, a->len, NULL);
    static const char msg[] = "no such asset\n";
    return send_text(conn, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", msg, sizeof msg - 1,
                     NULL);
}

/* The event stream of archive k (-1: of them all). */
static enum MHD_Result send_stream(avo_serve *s, struct MHD_Connection *conn, long k,
                                   const char *set_cookie)
{
    stream *st = calloc(1, sizeof *st);
    if (!st)
        return MHD_NO;
    st->s = s;
    st->k = k;
    st->last_sent = avo_now();
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, st, stream_free);
    if (!resp) {
        free(st);
        return MHD_NO;
    }
    common_headers(resp, "text/event-stream; charset=utf-8");
    if (set_cookie)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, set_cookie);
    enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* Render the page at url into p.  Returns 1 instead for an event stream,
 * with its archive (-1: all) in *ret_stream_k. */
static int route(page *p, const avo_serve *s, const char *url, int part, long *ret_stream_k)
{
    size_t k;
    const char *rest;
    long long id;
    if (!strcmp(url, "/") || !strcmp(url, "/index.html")) {
        page_index(p, s, part);
    } else if (!strcmp(url, "/events")) {
        *ret_stream_k = -1;
        return 1;
    } else if (archive_path(s, url, &k, &rest)) {
        if (!strcmp(rest, "/events")) {
            *ret_stream_k = (long)k;
            return 1;
        } else if (id_after(rest, "/run/", &id)) {
            page_run(p, s, k, id, part);
        } else if (id_after(rest, "/c/", &id)) {
            page_candidate(p, s, k, id);
        } else if (id_after(rest, "/experiment/", &id)) {
            page_experiment(p, s, k, id, part);
        } else {
            page_error(p, MHD_HTTP_NOT_FOUND, "Not Found", "no such page");
        }
    } else {
        page_error(p, MHD_HTTP_NOT_FOUND, "Not Found", "no such page");
    }
    return 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls)
{
    (void)version;
    (void)upload_data;
    (void)con_cls;
    avo_serve *s = cls;
    char cookie[200];
    const char *set_cookie;
    enum MHD_Result ret;
    if (refused(s, conn, url, method, *upload_data_size, cookie, sizeof cookie, &set_cookie, &ret))
        return ret;
    if (!strncmp(url, "/assets/", 8))
        return send_asset(conn, url + 8);

    const char *part_arg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "part");
    int part = part_arg && !strcmp(part_arg, "main");
    page p = {0};
    size_t k;
    const char *rest;
    /* A page already made from the archive's current state is sent again. */
    char key[4096 + 2048 + 16];
    int cacheable = !strcmp(url, "/") || archive_path(s, url, &k, &rest);
    if (cacheable) {
        char stamp[2048];
        stamp_of(s, strcmp(url, "/") ? (long)k : -1, stamp, sizeof stamp);
        snprintf(key, sizeof key, "%.4000s|%d|%s", url, part, stamp);
        if (cache_get(s, key, &p)) {
            if (!p.body.failed)
                return send_page(conn, &p, set_cookie);
            avo_strbuf_free(&p.body);
        }
    }
    long stream_k;
    if (route(&p, s, url, part, &stream_k))
        return send_stream(s, conn, stream_k, set_cookie);
    if (cacheable && (!p.status || p.status == MHD_HTTP_OK) && !p.body.failed)
        cache_put(s, key, &p);
    return send_page(conn, &p, set_cookie);
}

/* ------------------------------------------------------------ the server */

int avo_serve_parse_listen(const char *listen, char *host, size_t hostlen, unsigned *ret_port,
                           char *err, size_t errlen)
{
    static const char expected[] =
        "expected HOST:PORT, e.g. 127.0.0.1:8470, localhost:0 (any free port), 0.0.0.0:8470 or"
        " [::1]:8470";
    if (!listen || !*listen)
        return avo_error(err, errlen, AVO_EINVAL, "--listen is empty: %s", expected);
    const char *colon;
    const char *h = listen;
    size_t hl;
    if (listen[0] == '[') {
        const char *close = strchr(listen, ']');
        if (!close || close[1] != ':')
            return avo_error(err, errlen, AVO_EINVAL, "bad --listen '%s': %s", listen, expected);
        h = listen + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(listen, ':');
        if (!colon || strchr(listen, ':') != colon)
            return avo_error(err, errlen, AVO_EINVAL, "bad --listen '%s': %s", listen, expected);
        hl = (size_t)(colon - listen);
    }
    if (hl == 0 || hl >= hostlen)
        return avo_error(err, errlen, AVO_EINVAL, "bad --listen '%s': no host; %s", listen,
                         expected);
    const char *port = colon + 1;
    if (!*port || strspn(port, "0123456789") != strlen(port) || strlen(port) > 5 ||
        atol(port) > 65535)
        return avo_error(err, errlen, AVO_EINVAL,
                         "bad --listen '%s': the port must be a number from 0 to 65535; %s", listen,
                         expected);
    memcpy(host, h, hl);
    host[hl] = 0;
    *ret_port = (unsigned)atol(port);
    return 0;
}

/* Whether a bound address is loopback (127.0.0.0/8, ::1, or ::ffff:127.x). */
static int is_loopback(const struct sockaddr_storage *a)
{
    if (a->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)a;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (a->ss_family == AF_INET6) {
        const struct in6_addr *in6 = &((const struct sockaddr_in6 *)a)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(in6))
            return 1;
        return IN6_IS_ADDR_V4MAPPED(in6) && in6->s6_addr[12] == 127;
    }
    return 0;
}

/*
 * Resolve, bind and listen on host:port; on success *ret_fd and the bound
 * address.  The socket is made here rather than by libmicrohttpd so that a
 * port in use and a bad host are told apart, and port 0 can be learnt.
 */
static int bind_listen(const char *host, unsigned port, int *ret_fd,
                       struct sockaddr_storage *ret_addr, char *err, size_t errlen)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    char service[8];
    snprintf(service, sizeof service, "%u", port);
    int g = getaddrinfo(host, service, &hints, &res);
    if (g != 0)
        return avo_error(err, errlen, AVO_EINVAL, "cannot listen on '%s': %s", host,
                         gai_strerror(g));
    int rc = AVO_EIO, fd = -1, e = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0) {
            socklen_t len = sizeof *ret_addr;
            getsockname(fd, (struct sockaddr *)ret_addr, &len);
            rc = 0;
            break;
        }
        e = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (rc < 0) {
        if (e == EADDRINUSE)
            return avo_error(err, errlen, AVO_EBUSY,
                             "cannot listen on %s:%u: the address is in use (another avo serve?"
                             " choose another port with --listen HOST:PORT, or :0 for any)",
                             host, port);
        return avo_error(err, errlen, AVO_EIO, "cannot listen on %s:%u: %s", host, port,
                         strerror(e));
    }
    *ret_fd = fd;
    return 0;
}

int avo_serve_start(avo_serve **ret, const avo_serve_options *opt, char *err, size_t errlen)
{
    if (!ret || !opt || !opt->n_dbs)
        return avo_error(err, errlen, AVO_EINVAL, "serve: no archive to serve");
    *ret = NULL;
    char host[256];
    unsigned port;
    int rc = avo_serve_parse_listen(opt->listen ? opt->listen : AVO_SERVE_DEFAULT_LISTEN, host,
                                    sizeof host, &port, err, errlen);
    if (rc < 0)
        return rc;
    avo_serve *s = calloc(1, sizeof *s);
    if (!s)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    s->fd = -1;
    pthread_mutex_init(&s->cache_lock, NULL);
    s->dbs = opt->dbs;
    s->n_dbs = opt->n_dbs;
    s->refresh_s = opt->refresh_s > 0 ? opt->refresh_s : 5;
    s->poll_s = s->refresh_s / 10 < 0.5 ? s->refresh_s / 10 : 0.5;
    struct sockaddr_storage addr = {0};
    rc = bind_listen(host, port, &s->fd, &addr, err, errlen);
    if (rc < 0)
        goto fail;
    s->loopback = is_loopback(&addr);
    s->need_token = !s->loopback;
    if (s->need_token) {
        unsigned char raw[TOKEN_BYTES];
        if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
            rc =
                avo_error(err, errlen, AVO_EIO, "cannot make an access token: %s", strerror(errno));
            goto fail;
        }
        for (size_t i = 0; i < sizeof raw; i++)
            snprintf(s->token + 2 * i, 3, "%02x", raw[i]);
    }
    unsigned bound = ntohs(addr.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&addr)->sin6_port
                                                      : ((struct sockaddr_in *)&addr)->sin_port);
    int v6 = strchr(host, ':') != NULL;
    snprintf(s->url, sizeof s->url, "http://%s%s%s:%u/%s%s", v6 ? "[" : "", host, v6 ? "]" : "",
             bound, s->need_token ? "?token=" : "", s->need_token ? s->token : "");

    s->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                                     (addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
                                 0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET, s->fd,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
                                 MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_END);
    if (!s->daemon) {
        rc = avo_error(err, errlen, AVO_EIO, "cannot start the HTTP server on %s:%u", host, bound);
        goto fail;
    }
    s->fd = -1; /* the daemon's now: MHD_stop_daemon closes it */
    *ret = s;
    return 0;
fail:
    if (s->fd >= 0)
        close(s->fd);
    pthread_mutex_destroy(&s->cache_lock);
    free(s);
    return rc;
}

const char *avo_serve_url(const avo_serve *s)
{
    return s ? s->url : "";
}

int avo_serve_needs_token(const avo_serve *s)
{
    return s ? s->need_token : 0;
}

void avo_serve_stop(avo_serve *s)
{
    if (!s)
        return;
    atomic_store(&s->stopping, 1);
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    if (s->fd >= 0)
        close(s->fd);
    for (size_t i = 0; i < CACHE_N; i++) {
        free(s->cache[i].key);
        free(s->cache[i].body);
    }
    pthread_mutex_destroy(&s->cache_lock);
    free(s);
}
