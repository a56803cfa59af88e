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

#include "avo.h"
#include "check.h"
#include "llm.h"

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
    r = json_pack("{s:s, s:s, s:i}", "url", "http://127.0.0.1:1/", "body", "{}", "max_attempts", 0);
    CHECK_INT(avo_llm_submit(llm, r, &t, err, sizeof err), AVO_EINVAL);
    json_decref(r);
    CHECK_INT((int)avo_llm_pending(llm), 0);
}

static void test_refused_connection_is_retried(avo_llm *llm)
{
    char url[64], err[AVO_ERRLEN] = "";
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/chat/completions", closed_port());
    json_t *r = json_pack("{s:s, s:s, s:[s], s:i, s:f}", "url", url, "body", "{}", "headers",
                          "Authorization: Bearer sk-secret-key", "max_attempts", 3, "backoff",
                          0.01);
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

int main(void)
{
    char err[AVO_ERRLEN];
    avo_llm *llm = NULL;
    CHECK_INT(avo_llm_new(&llm, 42, err, sizeof err), 0);
    if (!llm)
        return check_finish();
    test_bad_requests(llm);
    test_refused_connection_is_retried(llm);

    /* Freeing with a transfer still queued releases it. */
    json_t *r = json_pack("{s:s, s:s}", "url", "http://127.0.0.1:1/", "body", "{}");
    uint64_t t;
    CHECK_INT(avo_llm_submit(llm, r, &t, err, sizeof err), 0);
    json_decref(r);
    avo_llm_free(llm);
    avo_llm_free(NULL);
    return check_finish();
}
