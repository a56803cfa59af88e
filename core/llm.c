/*
 * llm.c — HTTP requests for the LLM client on libcurl's multi interface.
 *
 * libcurl tells us which sockets to watch (CURLMOPT_SOCKETFUNCTION) and when
 * to call it back without activity (CURLMOPT_TIMERFUNCTION); we keep both in
 * the avo_llm and hand them to the event loop through prepare(), so the one
 * poll() of avo_loop_wait serves evaluations and LLM transfers alike.
 *
 * A request is either waiting (queued, or backing off before a retry, with a
 * wake-up time) or running (its easy handle is in the multi handle).  All
 * requests live on one list; finished ones move to a FIFO that take() pops.
 *
 * A streamed request (server-sent events, "stream_limit" in the request)
 * is read only up to its limit of events: a server that ignores max_tokens
 * cannot make one call run past what the call reserved.  The transfer is
 * then aborted and answered as a success with "stopped": true and what was
 * read.
 */
#include "core/llm.h"

#include <curl/curl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"
#include "core/pcg.h"

/* Bodies beyond this are refused: no provider answers with more. */
#define MAX_RESPONSE_BYTES (32u << 20)

typedef struct llm_request {
    uint64_t ticket;
    CURL *easy;
    struct curl_slist *headers;
    char *body;
    char *response;
    size_t response_len, response_cap;
    int too_large;
    int running; /* easy handle is in the multi handle */
    int attempts;
    int max_attempts;
    double backoff, max_backoff;
    double submitted; /* monotonic */
    double wake;      /* monotonic time to (re)start when waiting */
    double timeout;   /* seconds for one attempt */
    double deadline;  /* monotonic end of every attempt; 0 when none */
    int cancelled;    /* ended by the deadline */
    long stream_limit; /* events to read at most; 0: not streamed */
    long events;       /* "data:" lines read so far */
    size_t scan;       /* where the next unread line of the response starts */
    int stopped;       /* aborted at stream_limit */
    char errbuf[CURL_ERROR_SIZE];
    struct llm_request *next;
} llm_request;

typedef struct llm_done {
    uint64_t ticket;
    json_t *result;
    struct llm_done *next;
} llm_done;

typedef struct llm_socket {
    curl_socket_t fd;
    int what; /* CURL_POLL_IN / OUT / INOUT */
} llm_socket;

struct avo_llm {
    CURLM *multi;
    avo_pcg32 jitter;
    llm_request *requests; /* waiting and running */
    size_t n_requests;
    llm_done *done_head, *done_tail;
    llm_socket *sockets;
    size_t n_sockets, cap_sockets;
    double timer_deadline; /* monotonic; < 0 when libcurl wants no timeout */
    uint64_t next_ticket;
    size_t pending;
};

/* ---------------------------------------------------------- libcurl hooks */

static size_t on_body(char *data, size_t size, size_t n, void *userp)
{
    llm_request *req = userp;
    size_t len = size * n;
    if (req->response_len + len > MAX_RESPONSE_BYTES) {
        req->too_large = 1;
        return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
    }
    if (req->response_len + len + 1 > req->response_cap) {
        size_t cap = req->response_cap ? req->response_cap : 4096;
        while (cap < req->response_len + len + 1)
            cap *= 2;
        char *grown = realloc(req->response, cap);
        if (!grown)
            return 0;
        req->response = grown;
        req->response_cap = cap;
    }
    memcpy(req->response + req->response_len, data, len);
    req->response_len += len;
    req->response[req->response_len] = '\0';
    if (req->stream_limit > 0) {
        /* Count the complete event lines; stop past the limit. */
        char *nl;
        while ((nl = memchr(req->response + req->scan, '\n', req->response_len - req->scan))) {
            const char *line = req->response + req->scan;
            if (strncmp(line, "data:", 5) == 0 && strncmp(line + 5 + (line[5] == ' '), "[DONE]", 6))
                req->events++;
            req->scan = (size_t)(nl - req->response) + 1;
        }
        if (req->events > req->stream_limit) {
            req->stopped = 1;
            return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
        }
    }
    return len;
}

static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
    (void)multi;
    avo_llm *llm = userp;
    llm->timer_deadline = timeout_ms < 0 ? -1 : avo_monotonic() + timeout_ms / 1000.0;
    return 0;
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void)easy, (void)socketp;
    avo_llm *llm = userp;
    size_t i = 0;
    while (i < llm->n_sockets && llm->sockets[i].fd != fd)
        i++;
    if (what == CURL_POLL_REMOVE) {
        if (i < llm->n_sockets)
            llm->sockets[i] = llm->sockets[--llm->n_sockets];
        return 0;
    }
    if (i == llm->n_sockets) {
        if (llm->n_sockets == llm->cap_sockets) {
            size_t cap = llm->cap_sockets ? 2 * llm->cap_sockets : 8;
            llm_socket *grown = realloc(llm->sockets, cap * sizeof *grown);
            if (!grown)
                return -1;
            llm->sockets = grown;
            llm->cap_sockets = cap;
        }
        llm->n_sockets++;
    }
    llm->sockets[i] = (llm_socket){.fd = fd, .what = what};
    return 0;
}

/* ------------------------------------------------------------- lifecycle */

int avo_llm_new(avo_llm **ret, uint64_t seed, char *err, size_t errlen)
{
    static int curl_ready;
    *ret = NULL;
    if (!curl_ready) {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            return avo_error(err, errlen, AVO_EIO, "libcurl failed to initialise");
        curl_ready = 1;
    }
    avo_llm *llm = calloc(1, sizeof *llm);
    if (!llm)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    llm->multi = curl_multi_init();
    if (!llm->multi) {
        free(llm);
        return avo_error(err, errlen, AVO_ENOMEM, "libcurl: cannot create a multi handle");
    }
    llm->timer_deadline = -1;
    avo_pcg32_derive(&llm->jitter, seed, "llm.jitter");
    curl_multi_setopt(llm->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(llm->multi, CURLMOPT_SOCKETDATA, llm);
    curl_multi_setopt(llm->multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(llm->multi, CURLMOPT_TIMERDATA, llm);
    *ret = llm;
    return 0;
}

static void request_free(avo_llm *llm, llm_request *req)
{
    if (!req)
        return;
    if (req->easy) {
        if (req->running)
            curl_multi_remove_handle(llm->multi, req->easy);
        curl_easy_cleanup(req->easy);
    }
    curl_slist_free_all(req->headers);
    free(req->body);
    free(req->response);
    free(req);
}

void avo_llm_free(avo_llm *llm)
{
    if (!llm)
        return;
    for (llm_request *r = llm->requests, *next; r; r = next) {
        next = r->next;
        request_free(llm, r);
    }
    for (llm_done *d = llm->done_head, *next; d; d = next) {
        next = d->next;
        json_decref(d->result);
        free(d);
    }
    curl_multi_cleanup(llm->multi);
    free(llm->sockets);
    free(llm);
}

/* ---------------------------------------------------------------- submit */

static double number_field(const json_t *obj, const char *key, double def)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

int avo_llm_submit(avo_llm *llm, const json_t *request, uint64_t *ret_ticket, char *err,
                   size_t errlen)
{
    const char *url = json_string_value(json_object_get(request, "url"));
    const char *body = json_string_value(json_object_get(request, "body"));
    const char *method = json_string_value(json_object_get(request, "method"));
    const json_t *headers = json_object_get(request, "headers");
    if (!url || (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0))
        return avo_error(err, errlen, AVO_EINVAL, "request needs an http:// or https:// url");
    int get = method && strcmp(method, "GET") == 0;
    if (method && !get && strcmp(method, "POST") != 0)
        return avo_error(err, errlen, AVO_EINVAL, "request method must be GET or POST");
    if (!body && !get)
        return avo_error(err, errlen, AVO_EINVAL, "request needs a body string");
    if (headers && !json_is_array(headers))
        return avo_error(err, errlen, AVO_EINVAL, "request headers must be an array of strings");
    double connect_timeout = number_field(request, "connect_timeout", 10);
    double timeout = number_field(request, "timeout", 300);
    double attempts = number_field(request, "max_attempts", 4);
    double deadline = number_field(request, "deadline", -1);
    double stream_limit = number_field(request, "stream_limit", 0);
    if (!(connect_timeout > 0) || !(timeout > 0) || !(attempts >= 1 && attempts <= 100))
        return avo_error(err, errlen, AVO_EINVAL,
                         "request limits: timeouts must be > 0 and max_attempts in 1..100");
    if (json_object_get(request, "deadline") && !(deadline >= 0))
        return avo_error(err, errlen, AVO_EINVAL, "request deadline must be a number >= 0");
    if (!(stream_limit >= 0 && stream_limit <= 1e9))
        return avo_error(err, errlen, AVO_EINVAL, "request stream_limit must be in 0..1e9");

    llm_request *req = calloc(1, sizeof *req);
    if (!req)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    req->easy = curl_easy_init();
    req->body = strdup(body ? body : "");
    if (!req->easy || !req->body) {
        request_free(llm, req);
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    size_t i;
    const json_t *h;
    json_array_foreach(headers, i, h)
    {
        const char *line = json_string_value(h);
        struct curl_slist *grown = line ? curl_slist_append(req->headers, line) : NULL;
        if (!grown) {
            request_free(llm, req);
            return avo_error(err, errlen, line ? AVO_ENOMEM : AVO_EINVAL,
                             line ? "out of memory" : "request headers must be strings");
        }
        req->headers = grown;
    }
    /* No "Expect: 100-continue" round trip for large prompts. */
    struct curl_slist *grown = curl_slist_append(req->headers, "Expect:");
    if (!grown) {
        request_free(llm, req);
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    req->headers = grown;

    CURL *e = req->easy;
    curl_easy_setopt(e, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, req->headers);
    if (get) {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, req->body);
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(req->body));
    }
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, req);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, req->errbuf);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(connect_timeout * 1000));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_PRIVATE, req);

    req->ticket = ++llm->next_ticket;
    req->max_attempts = (int)attempts;
    req->backoff = number_field(request, "backoff", 1);
    req->max_backoff = number_field(request, "max_backoff", 60);
    req->submitted = avo_monotonic();
    req->timeout = timeout;
    req->deadline = deadline >= 0 ? req->submitted + deadline : 0;
    req->stream_limit = (long)stream_limit;
    req->wake = 0; /* start on the next turn of the loop */
    req->next = llm->requests;
    llm->requests = req;
    llm->n_requests++;
    llm->pending++;
    *ret_ticket = req->ticket;
    return 0;
}

size_t avo_llm_pending(const avo_llm *llm)
{
    return llm->pending;
}

long avo_llm_streamed(const avo_llm *llm)
{
    long events = 0;
    for (const llm_request *req = llm->requests; req; req = req->next)
        if (req->running && req->stream_limit > 0)
            events += req->events;
    return events;
}

/* ------------------------------------------------------------- finishing */

static void unlink_request(avo_llm *llm, llm_request *req)
{
    for (llm_request **p = &llm->requests; *p; p = &(*p)->next) {
        if (*p == req) {
            *p = req->next;
            llm->n_requests--;
            return;
        }
    }
}

/*
 * Answer `req` and free it.  `error` is NULL for success.  On allocation
 * failure the answer is a bare error object, so the ticket is still answered
 * unless even that fails (then AVO_ENOMEM).
 */
static int finish(avo_llm *llm, llm_request *req, long http_status, const char *error,
                  int retryable)
{
    unlink_request(llm, req);
    json_t *res = json_object();
    llm_done *d = calloc(1, sizeof *d);
    if (res && d) {
        json_object_set_new(res, "status", json_string(error ? "error" : "ok"));
        json_object_set_new(res, "http_status", json_integer(http_status));
        json_object_set_new(res, "body",
                            req->response ? json_stringn_nocheck(req->response, req->response_len)
                                          : json_null());
        json_object_set_new(res, "error", error ? json_string(error) : json_null());
        json_object_set_new(res, "attempts", json_integer(req->attempts));
        json_object_set_new(res, "latency_s", json_real(avo_monotonic() - req->submitted));
        json_object_set_new(res, "retryable", json_boolean(retryable));
        json_object_set_new(res, "cancelled", json_boolean(req->cancelled));
        /* What the body is (a streamed request may be answered with one
         * whole JSON completion instead of events). */
        const char *type = NULL;
        if (req->easy && curl_easy_getinfo(req->easy, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK &&
            type)
            json_object_set_new(res, "content_type", json_string(type));
        if (req->stream_limit > 0) {
            json_object_set_new(res, "stopped", json_boolean(req->stopped));
            json_object_set_new(res, "events", json_integer(req->events));
        }
    }
    uint64_t ticket = req->ticket;
    request_free(llm, req);
    if (!res || !d) {
        json_decref(res);
        free(d);
        return AVO_ENOMEM;
    }
    d->ticket = ticket;
    d->result = res;
    if (llm->done_tail)
        llm->done_tail->next = d;
    else
        llm->done_head = d;
    llm->done_tail = d;
    return 0;
}

/* Failures that a second attempt may not repeat. */
static int curl_retryable(CURLcode code)
{
    switch (code) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_WRITE_ERROR:
    case CURLE_OUT_OF_MEMORY:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_BAD_FUNCTION_ARGUMENT:
        return 0;
    default:
        return 1;
    }
}

/* Seconds to wait before the next attempt of `req`. */
static double backoff_delay(avo_llm *llm, llm_request *req)
{
    curl_off_t retry_after = 0;
    if (curl_easy_getinfo(req->easy, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK &&
        retry_after > 0)
        return fmin((double)retry_after, req->max_backoff);
    double base = fmin(req->backoff * pow(2.0, req->attempts - 1), req->max_backoff);
    /* "Equal jitter": half fixed, half random, so retries spread but never
     * come back at once. */
    return base * (0.5 + 0.5 * avo_pcg32_double(&llm->jitter));
}

/* One attempt of `req` ended with `code`; retry it or answer it. */
static int attempt_done(avo_llm *llm, llm_request *req, CURLcode code)
{
    long status = 0;
    curl_easy_getinfo(req->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_multi_remove_handle(llm->multi, req->easy);
    req->running = 0;
    if (code == CURLE_OK && status >= 200 && status < 300)
        return finish(llm, req, status, NULL, 0);
    if (req->stopped && status >= 200 && status < 300)
        return finish(llm, req, status, NULL, 0); /* read up to its limit */

    /* 501 (not implemented) and 505 say what every attempt will hear. */
    int retryable = code != CURLE_OK ? curl_retryable(code)
                                     : status == 429 || status == 408 ||
                                           (status >= 500 && status != 501 && status != 505);
    double now = avo_monotonic();
    if (req->deadline > 0 && code == CURLE_OPERATION_TIMEDOUT && now >= req->deadline - 0.01)
        req->cancelled = 1;
    double wake = retryable && !req->cancelled ? now + backoff_delay(llm, req) : 0;
    if (req->deadline > 0 && wake >= req->deadline)
        req->cancelled = 1; /* no time left for another attempt */
    if (retryable && !req->cancelled && req->attempts < req->max_attempts) {
        req->wake = wake;
        req->response_len = 0;
        req->scan = 0;
        req->events = 0;
        if (req->response)
            req->response[0] = '\0';
        return 0;
    }
    char msg[CURL_ERROR_SIZE + 128];
    if (req->cancelled && code == CURLE_OPERATION_TIMEDOUT)
        snprintf(msg, sizeof msg, "cancelled at its deadline");
    else if (req->too_large)
        snprintf(msg, sizeof msg, "response larger than %u MiB", MAX_RESPONSE_BYTES >> 20);
    else if (code == CURLE_OPERATION_TIMEDOUT)
        snprintf(msg, sizeof msg, "timed out (%s)",
                 req->errbuf[0] ? req->errbuf : curl_easy_strerror(code));
    else if (code != CURLE_OK)
        snprintf(msg, sizeof msg, "network error: %s",
                 req->errbuf[0] ? req->errbuf : curl_easy_strerror(code));
    else
        snprintf(msg, sizeof msg, "HTTP %ld", status);
    if (req->attempts > 1) {
        size_t len = strlen(msg);
        snprintf(msg + len, sizeof msg - len, " (after %d attempts)", req->attempts);
    }
    if (req->cancelled && code != CURLE_OPERATION_TIMEDOUT) {
        size_t len = strlen(msg);
        snprintf(msg + len, sizeof msg - len, "; no retry: its deadline comes first");
    }
    return finish(llm, req, status, msg, retryable);
}

/* Hand every transfer libcurl reports finished to attempt_done. */
static int collect(avo_llm *llm)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(llm->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        llm_request *req = NULL;
        CURLcode code = m->data.result;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&req);
        if (!req)
            continue;
        int rc = attempt_done(llm, req, code);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Start every waiting request whose time has come. */
static int start_due(avo_llm *llm, double now)
{
    for (llm_request *req = llm->requests, *next; req; req = next) {
        next = req->next;
        if (req->running || req->wake > now)
            continue;
        if (req->deadline > 0) {
            double left = req->deadline - now;
            if (left <= 0) {
                req->cancelled = 1;
                int rc = finish(llm, req, 0, "cancelled at its deadline", 0);
                if (rc < 0)
                    return rc;
                continue;
            }
            /* The attempt ends at the deadline at the latest. */
            curl_easy_setopt(req->easy, CURLOPT_TIMEOUT_MS,
                             (long)ceil(fmin(req->timeout, left) * 1000));
        }
        req->attempts++;
        req->errbuf[0] = '\0';
        req->too_large = 0;
        CURLMcode mc = curl_multi_add_handle(llm->multi, req->easy);
        if (mc != CURLM_OK) {
            char msg[256];
            snprintf(msg, sizeof msg, "libcurl: %s", curl_multi_strerror(mc));
            int rc = finish(llm, req, 0, msg, 0);
            if (rc < 0)
                return rc;
            continue;
        }
        req->running = 1;
    }
    return 0;
}

/* Run libcurl's timeout work if its timer has expired. */
static int run_timer(avo_llm *llm, char *err, size_t errlen)
{
    if (llm->timer_deadline < 0 || llm->timer_deadline > avo_monotonic())
        return 0;
    llm->timer_deadline = -1;
    int running;
    CURLMcode mc = curl_multi_socket_action(llm->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    if (mc != CURLM_OK)
        return avo_error(err, errlen, AVO_EIO, "libcurl: %s", curl_multi_strerror(mc));
    return collect(llm);
}

static void lower_timeout(int *timeout_ms, double deadline, double now)
{
    double left = deadline - now;
    int ms = left <= 0 ? 0 : (int)ceil(left * 1000.0);
    if (*timeout_ms < 0 || ms < *timeout_ms)
        *timeout_ms = ms;
}

/* ------------------------------------------------------------ loop source */

static size_t llm_pending_ctx(void *ctx)
{
    return ((avo_llm *)ctx)->pending;
}

/*
 * Start due requests, run expired libcurl timers, then list libcurl's
 * sockets (fds[k] is sockets[k]) and lower the timeout to the next libcurl
 * timer or retry wake-up.
 */
static int llm_prepare(void *ctx, struct pollfd *fds, size_t max, int *timeout_ms, char *err,
                       size_t errlen)
{
    avo_llm *llm = ctx;
    int rc = start_due(llm, avo_monotonic());
    if (rc == 0)
        rc = run_timer(llm, err, errlen);
    if (rc < 0)
        return rc == AVO_ENOMEM ? avo_error(err, errlen, rc, "out of memory") : rc;
    double now = avo_monotonic();
    size_t n = 0;
    for (size_t i = 0; i < llm->n_sockets && n < max; i++) {
        short events = 0;
        if (llm->sockets[i].what & CURL_POLL_IN)
            events |= POLLIN;
        if (llm->sockets[i].what & CURL_POLL_OUT)
            events |= POLLOUT;
        fds[n++] = (struct pollfd){.fd = llm->sockets[i].fd, .events = events};
    }
    if (llm->timer_deadline >= 0)
        lower_timeout(timeout_ms, llm->timer_deadline, now);
    for (llm_request *req = llm->requests; req; req = req->next)
        if (!req->running)
            lower_timeout(timeout_ms, req->wake, now);
    return (int)n;
}

static int llm_process(void *ctx, const struct pollfd *fds, size_t n, char *err, size_t errlen)
{
    avo_llm *llm = ctx;
    int running;
    for (size_t k = 0; k < n; k++) {
        if (!fds[k].revents)
            continue;
        int mask = 0;
        if (fds[k].revents & (POLLIN | POLLHUP))
            mask |= CURL_CSELECT_IN;
        if (fds[k].revents & POLLOUT)
            mask |= CURL_CSELECT_OUT;
        if (fds[k].revents & (POLLERR | POLLNVAL))
            mask |= CURL_CSELECT_ERR;
        CURLMcode mc = curl_multi_socket_action(llm->multi, fds[k].fd, mask, &running);
        if (mc != CURLM_OK)
            return avo_error(err, errlen, AVO_EIO, "libcurl: %s", curl_multi_strerror(mc));
    }
    int rc = collect(llm);
    if (rc == 0)
        rc = run_timer(llm, err, errlen);
    if (rc == AVO_ENOMEM)
        return avo_error(err, errlen, rc, "out of memory");
    return rc;
}

static int llm_take(void *ctx, uint64_t *ret_ticket, json_t **ret_result)
{
    avo_llm *llm = ctx;
    llm_done *d = llm->done_head;
    if (!d)
        return 0;
    llm->done_head = d->next;
    if (!llm->done_head)
        llm->done_tail = NULL;
    *ret_ticket = d->ticket;
    *ret_result = d->result;
    free(d);
    llm->pending--;
    return 1;
}

avo_loop_source avo_llm_source(avo_llm *llm)
{
    /* A transfer may hold two sockets while connecting (happy eyeballs);
     * more than that waits for the next turn. */
    return (avo_loop_source){
        .ctx = llm,
        .pending = llm_pending_ctx,
        .prepare = llm_prepare,
        .process = llm_process,
        .take = llm_take,
        .max_fds = llm->n_sockets + 2 * llm->n_requests + 4,
    };
}
