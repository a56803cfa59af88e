/*
 * test_worker.c — avo_worker_main in a forked child, driven over two pipes
 * as the engine's pool drives it: a job gets its result, a ping its pong, an
 * unknown backend an "invalid" result; closing the job pipe ends the worker
 * with status 0, and a malformed frame ends it with status 1.
 */
#include "eval/worker.h"

#include "core/avo.h"
#include "core/proto.h"

#include "check.h"

#include <ftw.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char cache_dir[] = "/tmp/avo-test-worker-XXXXXX";

typedef struct worker_proc {
    pid_t pid;
    int to;   /* jobs to the worker */
    int from; /* results from the worker */
} worker_proc;

static int worker_start(worker_proc *w)
{
    int to[2], from[2];
    if (pipe(to) < 0 || pipe(from) < 0)
        return -1;
    w->pid = fork();
    if (w->pid < 0)
        return -1;
    if (w->pid == 0) {
        close(to[1]);
        close(from[0]);
        _exit(avo_worker_main(to[0], from[1]));
    }
    close(to[0]);
    close(from[1]);
    w->to = to[1];
    w->from = from[0];
    return 0;
}

/* Close the job pipe and return the worker's wait status. */
static int worker_stop(worker_proc *w)
{
    int status = -1;
    close(w->to);
    waitpid(w->pid, &status, 0);
    close(w->from);
    return status;
}

/* Send msg (taking it) and receive the answer (caller owns; NULL on failure). */
static json_t *roundtrip(worker_proc *w, json_t *msg)
{
    char err[AVO_ERRLEN];
    int rc = avo_proto_send(w->to, msg, err, sizeof err);
    json_decref(msg);
    CHECK_INT(rc, 0);
    json_t *reply = NULL;
    rc = avo_proto_recv(w->from, &reply, err, sizeof err);
    CHECK_INT(rc, 0);
    if (rc < 0)
        fprintf(stderr, "recv: %s\n", err);
    return reply;
}

static json_t *vadd_job(int id)
{
    return json_pack("{s:i, s:s, s:s, s:s, s:{s:s, s:s},"
                     " s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}],"
                     " s:[{s:s, s:{s:i}, s:{s:i, s:i, s:i}, s:i}], s:{s:f}, s:s}",
                     "id", id, "backend", "cpu", "entry", "vadd", "source",
                     "void vadd(int n, const float *a, const float *b, float *c)\n"
                     "{ for (int i = 0; i < n; i++) c[i] = b[i] + a[i]; }\n",
                     "reference", "entry", "vadd_ref", "source",
                     "void vadd_ref(int n, const float *a, const float *b, float *c)\n"
                     "{ for (int i = 0; i < n; i++) c[i] = a[i] + b[i]; }\n",
                     "args", "name", "n", "kind", "scalar", "type", "i32", "name", "a", "kind",
                     "in", "type", "f32", "name", "b", "kind", "in", "type", "f32", "name", "c",
                     "kind", "out", "type", "f32", "configs", "name", "n256", "scalars", "n", 256,
                     "lengths", "a", 256, "b", 256, "c", 256, "flops", 256, "timing", "max_seconds",
                     0.1, "cache_dir", cache_dir);
}

static void test_session(void)
{
    worker_proc w;
    CHECK_INT(worker_start(&w), 0);

    json_t *r = roundtrip(&w, vadd_job(41));
    CHECK_STR(json_string_value(json_object_get(r, "status")), "ok");
    CHECK_INT(json_integer_value(json_object_get(r, "id")), 41);
    CHECK_INT(json_array_size(json_object_get(r, "configs")), 1);
    json_decref(r);

    r = roundtrip(&w, json_pack("{s:s}", "type", "ping"));
    CHECK_STR(json_string_value(json_object_get(r, "type")), "pong");
    json_decref(r);

    json_t *job = vadd_job(42);
    json_object_set_new(job, "backend", json_string("tpu"));
    r = roundtrip(&w, job);
    CHECK_STR(json_string_value(json_object_get(r, "status")), "invalid");
    CHECK_STR(json_string_value(json_object_get(r, "reason")), "unknown backend 'tpu'");
    CHECK_INT(json_integer_value(json_object_get(r, "id")), 42);
    json_decref(r);

    /* The worker survives all of that and still answers. */
    r = roundtrip(&w, vadd_job(43));
    CHECK_STR(json_string_value(json_object_get(r, "status")), "ok");
    CHECK(json_is_true(json_object_get(r, "cache_hit")));
    json_decref(r);

    int status = worker_stop(&w);
    CHECK(WIFEXITED(status));
    CHECK_INT(WEXITSTATUS(status), 0);
}

static void test_malformed_frame(void)
{
    worker_proc w;
    CHECK_INT(worker_start(&w), 0);
    static const char frame[] = {5, 0, 0, 0, '{', 'n', 'o', 'p', 'e'};
    CHECK_INT(write(w.to, frame, sizeof frame), (long long)sizeof frame);
    int status = worker_stop(&w);
    CHECK(WIFEXITED(status));
    CHECK_INT(WEXITSTATUS(status), 1);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (!mkdtemp(cache_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_session();
    test_malformed_frame();
    nftw(cache_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return check_finish();
}
