/*
 * serve.h — the live view of running archives in a browser (`avo serve`).
 *
 * An HTTP server (libmicrohttpd, one thread per connection) renders pages
 * from one or more archives as they are written: an index of each
 * archive's runs and experiments, a page per run (the report's sections,
 * shared with report.c, plus what only a live view has: candidates in
 * flight, workers, the agent's latest steps and tool calls, LLM spend
 * against the run's budgets, recent failures and log lines), a page per
 * candidate (source, diff to each parent, per-config results, log) and
 * one per experiment.
 *
 * Invariants:
 *   - archives are only read: each request opens its own read-only
 *     connection (avo_archive_open_watch), so the writer never waits on a
 *     reader and each page shows the latest commit;
 *   - every string from an archive reaches the page through
 *     avo_strbuf_html(); pages carry a Content-Security-Policy that allows
 *     only the embedded script, so markup that slipped through could not
 *     run anyway;
 *   - bound to a non-loopback address, every request but the static
 *     assets needs the access token (in the URL once, then a cookie);
 *     bound to loopback, requests must name a loopback Host (a page of
 *     another site cannot reach the server through DNS rebinding);
 *   - updates are pushed by server-sent events; without JavaScript pages of
 *     running runs refresh themselves (<meta http-equiv="refresh">).
 *
 * Library code: it never prints; the CLI (cli_serve.c) prints the URL.
 */
#ifndef AVO_SERVE_H
#define AVO_SERVE_H

#include <stddef.h>

/* One embedded static file (tools/embed_files.py). */
typedef struct avo_serve_asset {
    const char *name, *type, *data;
    size_t len;
} avo_serve_asset;

/* The embedded files, ended by an entry with name NULL. */
extern const avo_serve_asset avo_serve_assets[];

#define AVO_SERVE_DEFAULT_LISTEN "127.0.0.1:8470"

typedef struct avo_serve avo_serve;

typedef struct avo_serve_options {
    const char *const *dbs; /* archive paths, borrowed for the server's life */
    size_t n_dbs;
    const char *listen; /* "HOST:PORT" (port 0: any free one); NULL: the default */
    double refresh_s;   /* the no-script refresh and the event poll period; <= 0: 5 s / 0.5 s */
} avo_serve_options;

/*
 * Split "HOST:PORT" ("[v6]:PORT" for an IPv6 address) into host and port.
 * AVO_EINVAL with a message saying what was wrong and what is expected.
 */
int avo_serve_parse_listen(const char *listen, char *host, size_t hostlen, unsigned *ret_port,
                           char *err, size_t errlen);

/*
 * Bind, listen and start serving in background threads.  AVO_EINVAL for a
 * bad listen value or a host that does not resolve, AVO_EBUSY when the
 * address is in use, AVO_EIO for other socket failures.  On success *ret
 * owns the server (avo_serve_stop).
 */
int avo_serve_start(avo_serve **ret, const avo_serve_options *opt, char *err, size_t errlen);

/* The URL to open (with ?token=... when one is needed); lives as long as s. */
const char *avo_serve_url(const avo_serve *s);

/* Whether requests need the access token (bound to a non-loopback address). */
int avo_serve_needs_token(const avo_serve *s);

/* Stop serving: open event streams end, connection threads are joined,
 * the socket is closed and s freed.  Accepts NULL. */
void avo_serve_stop(avo_serve *s);

#endif
