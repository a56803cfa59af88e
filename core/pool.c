#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "avo.h"
#include "proto.h"

typedef struct pool_job {
    uint64_t ticket;
    json_t *job;
    double deadline_s;
    struct pool_job *next;
} pool_job;

typedef struct pool_result {
    uint64_t ticket;
    json_t *result;
    struct pool_result *next;
} pool_result;

typedef struct worker {
    pid_t pid;      /* 0: slot empty */
    int to_fd;      /* jobs go here */
    int from_fd;    /* results come from here */
    pool_job *job;  /* the job it is running, or NULL when idle */
    double deadline; /* monotonic time at which it is killed */
} worker;

struct avo_pool {
    int jobs;
    char **argv;
    worker *workers;
    pool_job *queue_head, *queue_tail;
    pool_result *done_head, *done_tail;
    uint64_t next_ticket;
    size_t pending;
};

static void job_free(pool_job *j)
{
    if (!j)
        return;
    json_decref(j->job);
    free(j);
}

static void worker_close(worker *w)
{
    if (w->to_fd >= 0)
        close(w->to_fd);
    if (w->from_fd >= 0)
        close(w->from_fd);
    w->to_fd = w->from_fd = -1;
    w->pid = 0;
}

/* Kill the worker's process group and reap it; returns its wait status. */
static int worker_kill(worker *w)
{
    int status = 0;
    if (w->pid > 0) {
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
        while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    worker_close(w);
    return status;
}

/*
 * Start a worker in slot w: two close-on-exec pipes mapped to the child's
 * stdin (jobs) and stdout (results), its own process group so one kill takes
 * the worker and everything it started.
 */
static int worker_start(avo_pool *pool, worker *w, char *err, size_t errlen)
{
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) < 0)
        return avo_error(err, errlen, AVO_EIO, "pipe: %s", strerror(errno));
    if (pipe2(from, O_CLOEXEC) < 0) {
        close(to[0]);
        close(to[1]);
        return avo_error(err, errlen, AVO_EIO, "pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        return avo_error(err, errlen, AVO_ECHILD, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        setpgid(0, 0);
        if (dup2(to[0], 0) < 0 || dup2(from[1], 1) < 0)
            _exit(127);
        execv(pool->argv[0], pool->argv);
        _exit(127);
    }
    setpgid(pid, pid); /* also in the parent: no race with an early kill */
    close(to[0]);
    close(from[1]);
    w->pid = pid;
    w->to_fd = to[1];
    w->from_fd = from[0];
    w->job = NULL;
    return 0;
}

int avo_pool_new(avo_pool **ret, int jobs, char *const *worker_argv, char *err, size_t errlen)
{
    *ret = NULL;
    if (jobs < 1 || !worker_argv || !worker_argv[0])
        return avo_error(err, errlen, AVO_EINVAL, "a pool needs at least one job slot and a worker");
    avo_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    size_t argc = 0;
    while (worker_argv[argc])
        argc++;
    pool->argv = calloc(argc + 1, sizeof *pool->argv);
    pool->workers = calloc((size_t)jobs, sizeof *pool->workers);
    if (!pool->argv || !pool->workers) {
        avo_pool_free(pool);
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < argc; i++) {
        pool->argv[i] = strdup(worker_argv[i]);
        if (!pool->argv[i]) {
            avo_pool_free(pool);
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        }
    }
    pool->jobs = jobs;
    for (int i = 0; i < jobs; i++)
        pool->workers[i].to_fd = pool->workers[i].from_fd = -1;
    /* A worker that dies while we write its job must not kill the engine. */
    signal(SIGPIPE, SIG_IGN);
    *ret = pool;
    return 0;
}

void avo_pool_free(avo_pool *pool)
{
    if (!pool)
        return;
    if (pool->workers) {
        for (int i = 0; i < pool->jobs; i++) {
            worker *w = &pool->workers[i];
            job_free(w->job);
            worker_kill(w);
        }
        free(pool->workers);
    }
    for (pool_job *j = pool->queue_head, *next; j; j = next) {
        next = j->next;
        job_free(j);
    }
    for (pool_result *r = pool->done_head, *next; r; r = next) {
        next = r->next;
        json_decref(r->result);
        free(r);
    }
    if (pool->argv) {
        for (char **a = pool->argv; *a; a++)
            free(*a);
        free(pool->argv);
    }
    free(pool);
}

int avo_pool_submit(avo_pool *pool, json_t *job, double deadline_s, uint64_t *ret_ticket)
{
    pool_job *j = calloc(1, sizeof *j);
    if (!j) {
        json_decref(job);
        return AVO_ENOMEM;
    }
    j->ticket = ++pool->next_ticket;
    j->job = job;
    j->deadline_s = deadline_s > 0 ? deadline_s : 3600;
    json_object_set_new(job, "id", json_integer((json_int_t)j->ticket));
    if (pool->queue_tail)
        pool->queue_tail->next = j;
    else
        pool->queue_head = j;
    pool->queue_tail = j;
    pool->pending++;
    *ret_ticket = j->ticket;
    return 0;
}

size_t avo_pool_pending(const avo_pool *pool)
{
    return pool->pending;
}

size_t avo_pool_running(const avo_pool *pool)
{
    size_t n = 0;
    for (int i = 0; i < pool->jobs; i++)
        n += pool->workers[i].job != NULL;
    return n;
}

/* Answer job j (which the pool owns and frees here) with a synthetic result. */
static int finish_synthetic(avo_pool *pool, pool_job *j, const char *status, const char *reason)
{
    json_t *res = json_pack("{s:I, s:s, s:s, s:[]}", "id", (json_int_t)j->ticket, "status", status,
                            "reason", reason, "configs");
    pool_result *r = calloc(1, sizeof *r);
    if (!res || !r) {
        json_decref(res);
        free(r);
        job_free(j);
        return AVO_ENOMEM;
    }
    r->ticket = j->ticket;
    r->result = res;
    if (pool->done_tail)
        pool->done_tail->next = r;
    else
        pool->done_head = r;
    pool->done_tail = r;
    job_free(j);
    return 0;
}

static int finish_with(avo_pool *pool, uint64_t ticket, json_t *res)
{
    pool_result *r = calloc(1, sizeof *r);
    if (!r) {
        json_decref(res);
        return AVO_ENOMEM;
    }
    r->ticket = ticket;
    r->result = res;
    if (pool->done_tail)
        pool->done_tail->next = r;
    else
        pool->done_head = r;
    pool->done_tail = r;
    return 0;
}

static void describe_exit(int status, char *buf, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(buf, len, "worker died with signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
        snprintf(buf, len, "worker exited with status %d", WEXITSTATUS(status));
    else
        snprintf(buf, len, "worker vanished");
}

/*
 * Hand queued jobs to idle workers, starting workers as needed.  A worker
 * that cannot take a job (died before reading it) is replaced once; a job
 * that cannot be delivered at all is answered with status "error".
 */
static int dispatch(avo_pool *pool, char *err, size_t errlen)
{
    for (int i = 0; i < pool->jobs && pool->queue_head; i++) {
        worker *w = &pool->workers[i];
        if (w->job)
            continue;
        pool_job *j = pool->queue_head;
        int sent = -1;
        for (int attempt = 0; attempt < 2 && sent < 0; attempt++) {
            if (w->pid == 0) {
                int rc = worker_start(pool, w, err, errlen);
                if (rc < 0)
                    return rc;
            }
            sent = avo_proto_send(w->to_fd, j->job, err, errlen);
            if (sent < 0)
                worker_kill(w);
        }
        pool->queue_head = j->next;
        if (!pool->queue_head)
            pool->queue_tail = NULL;
        j->next = NULL;
        if (sent < 0) {
            int rc = finish_synthetic(pool, j, "error", err);
            if (rc < 0)
                return rc;
            continue;
        }
        w->job = j;
        w->deadline = avo_monotonic() + j->deadline_s;
    }
    return 0;
}

/* Read the result of worker w, or answer its job if the worker died. */
static int collect(avo_pool *pool, worker *w)
{
    char err[AVO_ERRLEN];
    json_t *res = NULL;
    pool_job *j = w->job;
    int rc = avo_proto_recv(w->from_fd, &res, err, sizeof err);
    w->job = NULL;
    if (rc < 0) {
        /* The worker itself died (the candidate runs in a child of it, whose
         * crash the worker reports): killed from outside, out of memory.  The
         * engine treats worker_lost as an infrastructure fault. */
        int status = worker_kill(w);
        char why[256];
        describe_exit(status, why, sizeof why);
        rc = finish_synthetic(pool, j, "crashed", why);
        if (rc == 0)
            json_object_set_new(pool->done_tail->result, "worker_lost", json_true());
        return rc;
    }
    json_object_set_new(res, "id", json_integer((json_int_t)j->ticket));
    if (json_is_true(json_object_get(res, "retire"))) {
        /* The worker exits after this result (docs/protocol.md): replace it
         * now, before a job could be written to a process that is leaving. */
        json_object_del(res, "retire");
        worker_kill(w);
    }
    uint64_t ticket = j->ticket;
    job_free(j);
    return finish_with(pool, ticket, res);
}

/* Pop one finished result. */
static int pool_take(void *ctx, uint64_t *ret_ticket, json_t **ret_result)
{
    avo_pool *pool = ctx;
    pool_result *r = pool->done_head;
    if (!r)
        return 0;
    pool->done_head = r->next;
    if (!pool->done_head)
        pool->done_tail = NULL;
    *ret_ticket = r->ticket;
    *ret_result = r->result;
    free(r);
    pool->pending--;
    return 1;
}

static size_t pool_pending_ctx(void *ctx)
{
    return ((avo_pool *)ctx)->pending;
}

/*
 * Start queued jobs, answer jobs past their deadline, and list the result
 * pipes of busy workers.  fds[k] belongs to the k-th busy worker in slot
 * order, which pool_process relies on.
 */
static int pool_prepare(void *ctx, struct pollfd *fds, size_t max, int *timeout_ms, char *err,
                        size_t errlen)
{
    avo_pool *pool = ctx;
    int rc = dispatch(pool, err, errlen);
    if (rc < 0)
        return rc;
    double now = avo_monotonic();
    size_t n = 0;
    for (int i = 0; i < pool->jobs && n < max; i++) {
        worker *w = &pool->workers[i];
        if (!w->job)
            continue;
        if (w->deadline <= now) {
            char why[128];
            snprintf(why, sizeof why, "killed by the engine after %.0f s (deadline)",
                     w->job->deadline_s);
            pool_job *j = w->job;
            w->job = NULL;
            worker_kill(w);
            rc = finish_synthetic(pool, j, "timeout", why);
            if (rc < 0)
                return rc;
            continue;
        }
        int ms = (int)((w->deadline - now) * 1000.0) + 1;
        if (*timeout_ms < 0 || ms < *timeout_ms)
            *timeout_ms = ms;
        fds[n++] = (struct pollfd){.fd = w->from_fd, .events = POLLIN};
    }
    return (int)n;
}

static int pool_process(void *ctx, const struct pollfd *fds, size_t n, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    avo_pool *pool = ctx;
    for (size_t k = 0; k < n; k++) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        for (int i = 0; i < pool->jobs; i++) {
            worker *w = &pool->workers[i];
            if (w->job && w->from_fd == fds[k].fd) {
                int rc = collect(pool, w);
                if (rc < 0)
                    return rc;
                break;
            }
        }
    }
    return 0;
}

avo_loop_source avo_pool_source(avo_pool *pool)
{
    return (avo_loop_source){
        .ctx = pool,
        .pending = pool_pending_ctx,
        .prepare = pool_prepare,
        .process = pool_process,
        .take = pool_take,
        .max_fds = (size_t)pool->jobs,
    };
}

int avo_pool_wait(avo_pool *pool, int timeout_ms, uint64_t *ret_ticket, json_t **ret_result,
                  char *err, size_t errlen)
{
    avo_loop_source source = avo_pool_source(pool);
    size_t which;
    return avo_loop_wait(&source, 1, timeout_ms, &which, ret_ticket, ret_result, err, errlen);
}
