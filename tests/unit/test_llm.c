/*
 * test_llm.c — the HTTP client's contract without a server: malformed
 * requests are refused, a refused connection is retried with backoff and
 * then answered as an error, every ticket is answered once through the loop.
 * (The HTTP scenarios run against tests/llm/fake_server.py: tests/llm/http.sh.)
 */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/avo.h"
#include "check.h"
#include "core/llm.h"

/* A loopback port nobody listens on: bind, read the port, close. */
static int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0)
        return 1;
    close(fd);
    return ntohs(a.sin_port);
}

static void test_bad_requests(avo_llm *llm)
{
    char err[AVO_ERRLEN] = "";
    uint64_t t;
    json_t *r = json_pack("{s:s, s:s}", "url", "ftp://x", "body", "{}");
    CHECK_INT(avo_llm_submit(llm, r, &t, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "http");
    json_decref(r);
    r = json_pack("{s:s}", "url", "http://127.0.0.1:1/");
    CHECK_INT(avo_llm_submit(llm, r, &t, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "body");
    json_decref(r);
    r = json_pack("{s:s, s:s}", "url", "http://127.0.0.1:1/", "method", "PUT");
    CHECK_INT(avo_llm_submit(llm, r, &t, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "GET or POST");
    json_decref(r);
    r = json_pack("{s:s, s:s, s:i}", "url", "http://127.0.0.1:1/", "body", "{}", "max_attempts", 0);
    CHECK_INT(avo_llm_submit(llm, r, &t, err, sizeof err), AVO_EINVAL);
    json_decref(r);
    r = json_pack("{s:s, s:s, s:i}", "url", "http://127.0.0.1:1/", "body", "{}", "stream_limit", -1);
    CHECK_INT(avo_llm_submit(llm, r, &t, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "stream_limit");
    json_decref(r);
    CHECK_INT((int)avo_llm_pending(llm), 0);
}

static void test_refused_connection_is_retried(avo_llm *llm)
{
    char url[64], err[AVO_ERRLEN] = "";
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", closed_port());
    json_t *r =
        json_pack("{s:s, s:s, s:[s], s:i, s:f}", "url", url, "body", "{}", "headers",
                  "Authorization: Bearer sk-secret-key", "max_attempts", 3, "backoff", 0.01);
    uint64_t t1, t2;
    CHECK_INT(avo_llm_submit(llm, r, &t1, err, sizeof err), 0);
    CHECK_INT(avo_llm_submit(llm, r, &t2, err, sizeof err), 0);
    json_decref(r);
    CHECK(t1 != t2);
    CHECK_INT((int)avo_llm_pending(llm), 2);

    avo_loop_source src = avo_llm_source(llm);
    int seen = 0;
    for (int i = 0; i < 2; i++) {
        size_t which;
        uint64_t ticket;
        json_t *res = NULL;
        int rc = avo_loop_wait(&src, 1, 10000, &which, &ticket, &res, err, sizeof err);
        CHECK_INT(rc, 1);
        if (rc != 1)
            break;
        seen |= ticket == t1 ? 1 : ticket == t2 ? 2 : 4;
        CHECK_STR(json_string_value(json_object_get(res, "status")), "error");
        CHECK_INT((int)json_integer_value(json_object_get(res, "attempts")), 3);
        CHECK_INT((int)json_integer_value(json_object_get(res, "http_status")), 0);
        const char *e = json_string_value(json_object_get(res, "error"));
        CHECK_CONTAINS(e, "network error");
        CHECK_CONTAINS(e, "after 3 attempts");
        CHECK(strstr(e, "sk-secret-key") == NULL);
        CHECK(json_is_true(json_object_get(res, "retryable")));
        json_decref(res);
    }
    CHECK_INT(seen, 3);
    CHECK_INT((int)avo_llm_pending(llm), 0);
    size_t which;
    uint64_t ticket;
    json_t *res = NULL;
    CHECK_INT(avo_loop_wait(&src, 1, 100, &which, &ticket, &res, err, sizeof err), AVO_ENOTFOUND);
}

/* One answer from `llm` within 10 s (the caller frees it). */
static json_t *take_one(avo_llm *llm, uint64_t want)
{
    char err[AVO_ERRLEN] = "";
    avo_loop_source src = avo_llm_source(llm);
    size_t which;
    uint64_t ticket = 0;
    json_t *res = NULL;
    CHECK_INT(avo_loop_wait(&src, 1, 10000, &which, &ticket, &res, err, sizeof err), 1);
    CHECK(ticket == want);
    return res;
}

/*
 * A deadline (the run's --max-time) ends a request: one already past it is
 * answered without an attempt; a retry whose backoff would end after it is
 * not made.  Both answers say "cancelled".
 */
static void test_deadline(avo_llm *llm)
{
    char url[64], err[AVO_ERRLEN] = "";
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", closed_port());
    uint64_t t;
    json_t *r = json_pack("{s:s, s:s, s:f}", "url", url, "body", "{}", "deadline", -1.0);
    CHECK_INT(avo_llm_submit(llm, r, &t, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "deadline");
    json_decref(r);

    r = json_pack("{s:s, s:s, s:f}", "url", url, "body", "{}", "deadline", 0.0);
    CHECK_INT(avo_llm_submit(llm, r, &t, err, sizeof err), 0);
    json_decref(r);
    json_t *res = take_one(llm, t);
    CHECK_INT((int)json_integer_value(json_object_get(res, "attempts")), 0);
    CHECK(json_is_true(json_object_get(res, "cancelled")));
    CHECK_CONTAINS(json_string_value(json_object_get(res, "error")), "cancelled at its deadline");
    json_decref(res);

    /* Backoff of at least 5 s against a deadline of 2 s: one attempt only. */
    r = json_pack("{s:s, s:s, s:i, s:f, s:f}", "url", url, "body", "{}", "max_attempts", 5,
                  "backoff", 10.0, "deadline", 2.0);
    CHECK_INT(avo_llm_submit(llm, r, &t, err, sizeof err), 0);
    json_decref(r);
    res = take_one(llm, t);
    CHECK_INT((int)json_integer_value(json_object_get(res, "attempts")), 1);
    CHECK(json_is_true(json_object_get(res, "cancelled")));
    const char *e = json_string_value(json_object_get(res, "error"));
    CHECK_CONTAINS(e, "network error");
    CHECK_CONTAINS(e, "no retry: its deadline comes first");
    json_decref(res);
    CHECK_INT((int)avo_llm_pending(llm), 0);
}

int main(void)
{
    char err[AVO_ERRLEN];
    avo_llm *llm = NULL;
    CHECK_INT(avo_llm_new(&llm, 42, err, sizeof err), 0);
    if (!llm)
        return check_finish();
    test_bad_requests(llm);
    test_refused_connection_is_retried(llm);
    test_deadline(llm);

    /* Freeing with a transfer still queued releases it. */
    json_t *r = json_pack("{s:s, s:s}", "url", "http://127.0.0.1:1/", "body", "{}");
    uint64_t t;
    CHECK_INT(avo_llm_submit(llm, r, &t, err, sizeof err), 0);
    json_decref(r);
    avo_llm_free(llm);
    avo_llm_free(NULL);
    return check_finish();
}
