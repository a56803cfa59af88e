/*
 * test_pool — the engine's worker pool against real `avo worker` processes:
 * every job gets exactly one result, jobs queue beyond the pool size, a job
 * past its deadline is killed and answered "timeout", and a worker killed
 * mid-job is answered "crashed" and replaced.  Then remote workers: a pool
 * without local slots serves `avo worker --connect` processes; a worker that
 * declared an evaluator fingerprint gets only that evaluator's jobs; results
 * name the worker; freeing the pool says goodbye and the workers exit 0.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <sys/wait.h>

#include "core/avo.h"
#include "check.h"
#include "scale/pool.h"
#include "scale/transport.h"

static json_t *ping(void)
{
    return json_pack("{s:s}", "type", "ping");
}

/* A CPU job whose kernel spins forever; the worker's own limit is long, so
 * only the pool's deadline can end it. */
static json_t *spin_job(const char *cache)
{
    const char *src =
        "#include <stdint.h>\n"
        "void k(int32_t n, float *out) { volatile int s = 1; while (s) ; (void)n; (void)out; }\n";
    return json_pack("{s:s, s:s, s:s, s:{}, s:{s:s, s:s},"
                     " s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}],"
                     " s:[{s:s, s:{s:i}, s:{s:i}, s:f, s:f}], s:{s:f, s:f}, s:i, s:i,"
                     " s:{s:b}, s:{s:i, s:i, s:i, s:i}, s:s}",
                     "backend", "cpu", "source", src, "entry", "k", "knobs", "reference", "source",
                     "#include <stdint.h>\nvoid r(int32_t n, float *o) { for (int i = 0; i < n; "
                     "i++) o[i] = 0; }\n",
                     "entry", "r", "args", "name", "n", "kind", "scalar", "type", "i32", "name",
                     "out", "kind", "out", "type", "f32", "configs", "name", "c", "scalars", "n", 4,
                     "lengths", "out", 4, "flops", 4.0, "bytes", 0.0, "tolerance", "atol", 0.0,
                     "rtol", 0.0, "seed", 1, "trials", 2, "timing", "enabled", 0, "limits",
                     "timeout_s", 600, "compile_timeout_s", 60, "memory_mb", 1024, "cpu_s", 600,
                     "cache_dir", cache);
}

static int wait_one(avo_pool *pool, uint64_t *ticket, json_t **result)
{
    char err[AVO_ERRLEN];
    int rc = avo_pool_wait(pool, 60000, ticket, result, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "wait: %s\n", err);
    return rc;
}

static json_t *ping_for(const char *fingerprint)
{
    return json_pack("{s:s, s:s}", "type", "ping", "fingerprint", fingerprint);
}

/* Start `avo worker --connect address [--fingerprint fp]`; returns its pid. */
static pid_t start_remote(const char *avo, const char *address, const char *fp)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (fp)
            execl(avo, avo, "worker", "--connect", address, "--fingerprint", fp, (char *)NULL);
        else
            execl(avo, avo, "worker", "--connect", address, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void remote_workers(const char *avo)
{
    char *argv[] = {(char *)avo, "worker", NULL};
    char err[AVO_ERRLEN], address[64];
    avo_pool *pool;
    CHECK_INT(avo_pool_new(&pool, 0, argv, err, sizeof err), 0);
    setenv("AVO_WORKER_SECRET", "unit-test-secret-0123456789", 1);
    avo_transport_secret secret;
    CHECK_INT(avo_transport_secret_from_env(&secret, err, sizeof err), 0);
    avo_transport_identity me = {"run-x", avo_transport_version(), ""};
    int port = avo_pool_listen(pool, "127.0.0.1:0", &secret, &me, err, sizeof err);
    CHECK(port > 0);
    snprintf(address, sizeof address, "127.0.0.1:%d", port);
    CHECK_INT(avo_pool_allow_fingerprint(pool, "fp-a"), 0);

    /* Only a worker for fp-a: a job of fp-b waits, one of fp-a is answered. */
    pid_t a = start_remote(avo, address, "fp-a");
    uint64_t tb, ta, t;
    json_t *res;
    CHECK_INT(avo_pool_submit(pool, ping_for("fp-b"), 60, &tb), 0);
    CHECK_INT(avo_pool_submit(pool, ping_for("fp-a"), 60, &ta), 0);
    CHECK_INT(wait_one(pool, &t, &res), 1);
    CHECK_INT(t, ta);
    CHECK_STR(json_string_value(json_object_get(res, "type")), "pong");
    const json_t *who = json_object_get(res, "worker");
    CHECK_STR(json_string_value(json_object_get(who, "transport")), "tcp");
    CHECK(json_string_value(json_object_get(who, "name")) != NULL);
    json_decref(res);
    CHECK_INT(avo_pool_wait(pool, 1500, &t, &res, err, sizeof err), 0); /* fp-b still waits */
    size_t handshaking;
    CHECK_INT(avo_pool_remote(pool, &handshaking), 1);

    /* A worker for any evaluator takes it. */
    pid_t any = start_remote(avo, address, NULL);
    CHECK_INT(wait_one(pool, &t, &res), 1);
    CHECK_INT(t, tb);
    json_decref(res);
    CHECK_INT(avo_pool_remote(pool, NULL), 2);
    char line[1024];
    CHECK_INT(avo_pool_take_event(pool, line, sizeof line), 1);
    CHECK(strstr(line, "connected") != NULL);

    /* Goodbye: both workers exit 0. */
    avo_pool_free(pool);
    int status;
    CHECK_INT(waitpid(a, &status, 0), a);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_INT(waitpid(any, &status, 0), any);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
    const char *avo = getenv("AVO");
    if (!avo) {
        fprintf(stderr, "skip: AVO (path of the avo binary) is not set\n");
        return 77;
    }
    char *argv[] = {(char *)avo, "worker", NULL};
    char err[AVO_ERRLEN];
    avo_pool *pool;
    CHECK_INT(avo_pool_new(&pool, 2, argv, err, sizeof err), 0);

    /* Five jobs through two workers: each answered once, by its ticket. */
    uint64_t tickets[5], seen = 0;
    for (int i = 0; i < 5; i++)
        CHECK_INT(avo_pool_submit(pool, ping(), 30, &tickets[i]), 0);
    CHECK_INT(avo_pool_pending(pool), 5);
    for (int i = 0; i < 5; i++) {
        uint64_t t;
        json_t *res;
        CHECK_INT(wait_one(pool, &t, &res), 1);
        CHECK_STR(json_string_value(json_object_get(res, "type")), "pong");
        CHECK(t >= tickets[0] && t <= tickets[4]);
        seen |= 1u << (t - tickets[0]);
        json_decref(res);
    }
    CHECK_INT(seen, 0x1f);
    CHECK_INT(avo_pool_pending(pool), 0);
    uint64_t t;
    json_t *res;
    CHECK_INT(avo_pool_wait(pool, 10, &t, &res, err, sizeof err), AVO_ENOTFOUND);

    /* The deadline kills a hung job's worker; the pool keeps serving. */
    char cache[] = "/tmp/avo-test-pool-XXXXXX";
    CHECK(mkdtemp(cache) != NULL);
    uint64_t hung;
    CHECK_INT(avo_pool_submit(pool, spin_job(cache), 2.0, &hung), 0);
    double start = avo_monotonic();
    CHECK_INT(wait_one(pool, &t, &res), 1);
    CHECK_INT(t, hung);
    CHECK_STR(json_string_value(json_object_get(res, "status")), "timeout");
    CHECK(avo_monotonic() - start < 30);
    json_decref(res);

    /* A worker killed from outside mid-job: answered "crashed", replaced. */
    uint64_t victim;
    CHECK_INT(avo_pool_submit(pool, spin_job(cache), 600, &victim), 0);
    CHECK_INT(avo_pool_wait(pool, 1500, &t, &res, err, sizeof err), 0); /* still running */
    CHECK_INT(avo_pool_running(pool), 1);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "pkill -KILL -n -P %d -x avo", (int)getpid());
    CHECK_INT(system(cmd), 0);
    CHECK_INT(wait_one(pool, &t, &res), 1);
    CHECK_INT(t, victim);
    CHECK_STR(json_string_value(json_object_get(res, "status")), "crashed");
    CHECK_CONTAINS(json_string_value(json_object_get(res, "reason")), "worker died");
    CHECK(json_is_true(json_object_get(res, "worker_lost")));
    json_decref(res);
    CHECK_INT(avo_pool_submit(pool, ping(), 30, &t), 0);
    CHECK_INT(wait_one(pool, &t, &res), 1);
    CHECK_STR(json_string_value(json_object_get(res, "type")), "pong");
    json_decref(res);

    avo_pool_free(pool);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    CHECK_INT(system(cmd), 0);

    remote_workers(avo);
    return check_finish();
}
