#include "scale/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/avo.h"
#include "core/backend.h"
#include "eval/cuda/cuda_api.h"
#include "core/proto.h"
#include "eval/sandbox.h"
#include "scale/transport.h"

#define MAX_HANDSHAKES 32      /* unauthenticated connections at once */
#define HANDSHAKE_SECONDS 10.0 /* to complete one */
#define SEND_SECONDS 30.0      /* for a remote worker to take a job */
#define MAX_EVENTS 256         /* queued lines for the user */
#define MAX_FINGERPRINTS 64
/* A remote worker running a job that has said nothing (no heartbeat) this
 * long has stopped answering (a stopped or hung node): its job goes to
 * another worker; at the job's deadline, one silent for 3 heartbeats is
 * not charged a timeout either. */
#define BUSY_SILENCE_S (10 * AVO_TRANSPORT_HEARTBEAT_S)
#define RESPONSIVE_S (3 * AVO_TRANSPORT_HEARTBEAT_S)

typedef struct pool_job {
    uint64_t ticket;
    json_t *job;
    double deadline_s;
    int attempts; /* remote workers that misbehaved while running it (authenticated) */
    int cuts;     /* connections lost while it was in flight: never its fault */
    int stage;    /* CUDA timing job: STAGE_* */
    struct pool_job *next;
} pool_job;

/*
 * A CUDA timing job on a pool with device and CPU slots is compiled first,
 * compile-only, on a CPU worker (the cubin lands in the shared on-disk
 * cache), so the device worker that times it finds it compiled and a GPU
 * never waits for NVRTC.  A compile that fails answers the job right there.
 */
enum { STAGE_NEW, STAGE_COMPILING, STAGE_COMPILED };

typedef struct pool_result {
    uint64_t ticket;
    json_t *result;
    struct pool_result *next;
} pool_result;

typedef enum { SLOT_CPU, SLOT_DEVICE, SLOT_REMOTE } slot_kind;

typedef struct worker {
    slot_kind kind;
    int device;      /* SLOT_DEVICE: CUDA ordinal */
    pid_t pid;       /* local: 0 when the slot is empty */
    int to_fd;       /* jobs go here (remote: the socket) */
    int from_fd;     /* results come from here (remote: the socket) */
    pool_job *job;   /* the job it is running, or NULL when idle */
    double deadline; /* monotonic time at which it is killed */
    /* remote only */
    avo_proto_buf in;
    char name[256];
    char fingerprint[129];
    avo_transport_channel *channel; /* encrypts both directions (transport.h) */
    uint64_t sent;                  /* messages sealed to the worker */
    uint64_t got;                   /* of those, opened by it (its last heartbeat) */
    double last_heard, last_sent;   /* monotonic: its last message, our last job */
} worker;

typedef struct handshake {
    int fd;
    char peer[128];
    char nonce[AVO_TRANSPORT_NONCE_HEX + 1];
    unsigned char buf[AVO_TRANSPORT_HELLO_MAX + 4];
    size_t got;
    double deadline;
} handshake;

struct avo_pool {
    int jobs;
    char **argv;
    worker *workers; /* CPU slots first, then device slots, then remote */
    int nworkers, capworkers;
    int devices_known; /* device slots decided (probed or set) */
    pool_job *queue_head, *queue_tail;
    pool_result *done_head, *done_tail;
    uint64_t next_ticket;
    size_t pending;
    /* remote workers */
    int listen_fd;
    avo_transport_secret secret;
    char run[257], version[257];
    char *fingerprints[MAX_FINGERPRINTS];
    int nfingerprints;
    handshake *handshakes[MAX_HANDSHAKES];
    int had_remote;
    double no_remote_since;
    double grace_s;
    char *launcher_ended;
    char *gone;
    char *events[MAX_EVENTS];
    int nevents;
    int max_cuts; /* AVO_POOL_MAX_CUTS, or $AVO_POOL_MAX_CUTS */
};

static void job_free(pool_job *j)
{
    if (!j)
        return;
    json_decref(j->job);
    free(j);
}

/* Queue a line for the user; drops the oldest when full. */
__attribute__((format(printf, 2, 3))) static void pool_event(avo_pool *pool, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (pool->nevents == MAX_EVENTS) {
        free(pool->events[0]);
        memmove(pool->events, pool->events + 1, (MAX_EVENTS - 1) * sizeof pool->events[0]);
        pool->nevents--;
    }
    char *copy = strdup(line);
    if (copy)
        pool->events[pool->nevents++] = copy;
}

static void worker_close(worker *w)
{
    if (w->to_fd >= 0)
        close(w->to_fd);
    if (w->from_fd >= 0 && w->from_fd != w->to_fd)
        close(w->from_fd);
    w->to_fd = w->from_fd = -1;
    w->pid = 0;
    free(w->in.data);
    w->in = (avo_proto_buf){0};
    avo_transport_channel_free(w->channel);
    w->channel = NULL;
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

/* Add an empty slot; returns its index or -1.  Invalidates worker pointers. */
static int slot_add(avo_pool *pool, slot_kind kind, int device)
{
    if (pool->nworkers == pool->capworkers) {
        int cap = pool->capworkers ? pool->capworkers * 2 : 8;
        worker *grown = realloc(pool->workers, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        pool->workers = grown;
        pool->capworkers = cap;
    }
    worker *w = &pool->workers[pool->nworkers];
    *w = (worker){.kind = kind, .device = device, .to_fd = -1, .from_fd = -1};
    return pool->nworkers++;
}

/* Remove remote slot i (already closed, idle); keeps the order of the rest. */
static void slot_remove(avo_pool *pool, int i)
{
    memmove(&pool->workers[i], &pool->workers[i + 1],
            (size_t)(pool->nworkers - i - 1) * sizeof pool->workers[0]);
    pool->nworkers--;
}

/*
 * Start a worker in slot w: two close-on-exec pipes mapped to the child's
 * stdin (jobs) and stdout (results), its own process group so one kill takes
 * the worker and everything it started.  A device slot's worker gets
 * AVO_CUDA_DEVICE.
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
    /* The worker's whole environment: the allowed part of ours (no key of
     * the engine's, so none on the stack of any judge or kernel either),
     * and a device slot's AVO_CUDA_DEVICE in front of an inherited one. */
    char device[32];
    snprintf(device, sizeof device, "AVO_CUDA_DEVICE=%d", w->device);
    char **allowed = avo_sandbox_env_allowlist();
    size_t n = 0;
    while (allowed && allowed[n])
        n++;
    char **env = allowed ? calloc(n + 2, sizeof *env) : NULL;
    if (!env) {
        free(allowed);
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    size_t k = 0;
    if (w->kind == SLOT_DEVICE)
        env[k++] = device;
    for (size_t i = 0; i < n; i++)
        env[k++] = allowed[i];
    free(allowed);
    /* outside the supervisor: the pool is its workers' supervisor (watches, requeues, kills) */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        free(env);
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        return avo_error(err, errlen, AVO_ECHILD, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        setpgid(0, 0);
        if (dup2(to[0], 0) < 0 || dup2(from[1], 1) < 0)
            _exit(127);
        execve(pool->argv[0], pool->argv, env);
        _exit(127);
    }
    free(env);
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
    if (jobs < 0 || !worker_argv || !worker_argv[0])
        return avo_error(err, errlen, AVO_EINVAL, "a pool needs a worker and jobs >= 0");
    avo_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    pool->listen_fd = -1;
    /* A proxy test that manipulates every connection in a row, or a site
     * whose network is known to be flaky, may allow more cuts per job. */
    const char *cuts = getenv("AVO_POOL_MAX_CUTS");
    pool->max_cuts =
        cuts && atoi(cuts) >= 1 && atoi(cuts) <= 10000 ? atoi(cuts) : AVO_POOL_MAX_CUTS;
    size_t argc = 0;
    while (worker_argv[argc])
        argc++;
    pool->argv = calloc(argc + 1, sizeof *pool->argv);
    if (!pool->argv) {
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
    for (int i = 0; i < jobs; i++) {
        if (slot_add(pool, SLOT_CPU, 0) < 0) {
            avo_pool_free(pool);
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        }
    }
    /* A worker that dies while we write its job must not kill the engine. */
    signal(SIGPIPE, SIG_IGN);
    *ret = pool;
    return 0;
}

/* Tell a remote worker the run is over, so it exits instead of reconnecting:
 * the last message of the engine's stream (TAG_FINAL), so that nobody on
 * the way can forge it or cut the stream short and pass for it. */
static void say_bye(worker *w)
{
    json_t *bye = json_pack("{s:s}", "type", "bye");
    if (bye && w->channel)
        avo_transport_channel_send(w->channel, w->to_fd, bye, 1, 1.0, NULL, 0);
    json_decref(bye);
}

void avo_pool_free(avo_pool *pool)
{
    if (!pool)
        return;
    for (int i = 0; i < pool->nworkers; i++) {
        worker *w = &pool->workers[i];
        job_free(w->job);
        if (w->kind == SLOT_REMOTE)
            say_bye(w);
        worker_kill(w);
    }
    free(pool->workers);
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
    if (pool->listen_fd >= 0)
        close(pool->listen_fd);
    for (int i = 0; i < MAX_HANDSHAKES; i++) {
        if (pool->handshakes[i]) {
            close(pool->handshakes[i]->fd);
            free(pool->handshakes[i]);
        }
    }
    for (int i = 0; i < pool->nfingerprints; i++)
        free(pool->fingerprints[i]);
    for (int i = 0; i < pool->nevents; i++)
        free(pool->events[i]);
    free(pool->launcher_ended);
    free(pool->gone);
    memset(&pool->secret, 0, sizeof pool->secret);
    free(pool);
}

int avo_pool_set_devices(avo_pool *pool, const int *ordinals, int n, char *err, size_t errlen)
{
    if (pool->devices_known)
        return avo_error(err, errlen, AVO_EINVAL, "the pool's devices are already set");
    for (int i = 0; i < n; i++) {
        if (ordinals[i] < 0)
            return avo_error(err, errlen, AVO_EINVAL, "device ordinal %d is negative", ordinals[i]);
        if (slot_add(pool, SLOT_DEVICE, ordinals[i]) < 0)
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    pool->devices_known = 1;
    return 0;
}

int avo_pool_devices(const avo_pool *pool, int *ordinals, int max)
{
    int n = 0;
    for (int i = 0; i < pool->nworkers; i++) {
        if (pool->workers[i].kind != SLOT_DEVICE)
            continue;
        if (n < max)
            ordinals[n] = pool->workers[i].device;
        n++;
    }
    return n;
}

/*
 * Count the visible CUDA devices in a child process: the driver is not
 * fork-safe and the engine forks workers, so it must never call cuInit
 * itself.  No driver or no device counts 0.
 */
int avo_pool_count_devices(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return 0;
    /* outside the supervisor: a probe bounded by the poll below, then killed and reaped here */
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]), close(p[1]);
        return 0;
    }
    if (pid == 0) {
        char err[AVO_ERRLEN];
        int count = 0;
        const avo_driver_api *cu = avo_cuda_driver(err, sizeof err);
        if (!cu || cu->DeviceGetCount(&count) != AVO_CUDA_SUCCESS)
            count = 0;
        ssize_t w = write(p[1], &count, sizeof count);
        _exit(w == sizeof count ? 0 : 1);
    }
    close(p[1]);
    int count = 0;
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    if (poll(&pf, 1, 30000) != 1 || read(p[0], &count, sizeof count) != sizeof count)
        count = 0;
    close(p[0]);
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return count > 0 && count <= 1024 ? count : 0;
}

static void ensure_devices(avo_pool *pool)
{
    if (pool->devices_known)
        return;
    pool->devices_known = 1;
    int count = avo_pool_count_devices();
    for (int i = 0; i < count; i++)
        slot_add(pool, SLOT_DEVICE, i);
}

int avo_pool_listen(avo_pool *pool, const char *address, const avo_transport_secret *secret,
                    const avo_transport_identity *engine, char *err, size_t errlen)
{
    if (pool->listen_fd >= 0)
        return avo_error(err, errlen, AVO_EINVAL, "the pool already listens");
    int fd, port;
    int rc = avo_transport_listen(address, &fd, &port, err, errlen);
    if (rc < 0)
        return rc;
    pool->listen_fd = fd;
    pool->secret = *secret;
    snprintf(pool->run, sizeof pool->run, "%s", engine->run);
    snprintf(pool->version, sizeof pool->version, "%s", engine->version);
    pool->no_remote_since = avo_monotonic();
    return port;
}

int avo_pool_allow_fingerprint(avo_pool *pool, const char *fingerprint)
{
    for (int i = 0; i < pool->nfingerprints; i++)
        if (!strcmp(pool->fingerprints[i], fingerprint))
            return 0;
    if (pool->nfingerprints == MAX_FINGERPRINTS)
        return AVO_EINVAL;
    char *copy = strdup(fingerprint);
    if (!copy)
        return AVO_ENOMEM;
    pool->fingerprints[pool->nfingerprints++] = copy;
    return 0;
}

static int fingerprint_allowed(const char *fingerprint, void *ctx)
{
    avo_pool *pool = ctx;
    for (int i = 0; i < pool->nfingerprints; i++)
        if (!strcmp(pool->fingerprints[i], fingerprint))
            return 1;
    return 0;
}

size_t avo_pool_remote(const avo_pool *pool, size_t *ret_handshaking)
{
    size_t n = 0, h = 0;
    for (int i = 0; i < pool->nworkers; i++)
        n += pool->workers[i].kind == SLOT_REMOTE;
    for (int i = 0; i < MAX_HANDSHAKES; i++)
        h += pool->handshakes[i] != NULL;
    if (ret_handshaking)
        *ret_handshaking = h;
    return n;
}

void avo_pool_launcher_ended(avo_pool *pool, const char *reason)
{
    free(pool->launcher_ended);
    pool->launcher_ended = reason ? strdup(reason) : NULL;
}

void avo_pool_set_grace(avo_pool *pool, double grace_s)
{
    pool->grace_s = grace_s;
}

const char *avo_pool_gone(const avo_pool *pool)
{
    return pool->gone;
}

int avo_pool_take_event(avo_pool *pool, char *buf, size_t len)
{
    if (pool->nevents == 0)
        return 0;
    snprintf(buf, len, "%s", pool->events[0]);
    free(pool->events[0]);
    memmove(pool->events, pool->events + 1, (size_t)(pool->nevents - 1) * sizeof pool->events[0]);
    pool->nevents--;
    return 1;
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
    /* A vendor-library baseline job (docs/protocol.md) has nothing to compile. */
    if (json_is_string(json_object_get(job, "baseline")))
        j->stage = STAGE_COMPILED;
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
    for (int i = 0; i < pool->nworkers; i++)
        n += pool->workers[i].job != NULL;
    return n;
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

/* Answer job j (which the pool owns and frees here) with a synthetic result. */
static int finish_synthetic(avo_pool *pool, pool_job *j, const char *status, const char *reason)
{
    json_t *res = json_pack("{s:I, s:s, s:s, s:[]}", "id", (json_int_t)j->ticket, "status", status,
                            "reason", reason, "configs");
    uint64_t ticket = j->ticket;
    job_free(j);
    if (!res)
        return AVO_ENOMEM;
    return finish_with(pool, ticket, res);
}

/*
 * A worker's death, in the words `avo run` has always printed ("worker died
 * with signal 9 (Killed)", which users and tests/faults/infra.sh match):
 * not avo_supervise_death's "SIGKILL (Killed)", which names the deaths of
 * the untrusted children a worker supervises.
 */
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

/* A CUDA job that times on a device (not compile-only). */
static int needs_device(const json_t *job)
{
    const char *backend = json_string_value(json_object_get(job, "backend"));
    return backend && !strcmp(backend, "cuda") &&
           !json_is_true(json_object_get(job, "compile_only"));
}

/* Whether slot w may run job j; has_devices: the pool has device slots,
 * has_cpu: it has CPU slots (which compile CUDA jobs first). */
static int eligible(const worker *w, const pool_job *j, int has_devices, int has_cpu)
{
    const json_t *job = j->job;
    if (needs_device(job) && has_devices && has_cpu) {
        if (w->kind == SLOT_CPU)
            return j->stage == STAGE_NEW;
        if (w->kind == SLOT_DEVICE && j->stage != STAGE_COMPILED)
            return 0;
    }
    /* "device": N pins a timing job to that device (avo rebench per device). */
    const json_t *pin = json_object_get(job, "device");
    if (json_is_integer(pin) && needs_device(job) && w->kind != SLOT_CPU &&
        json_integer_value(pin) != w->device)
        return 0;
    switch (w->kind) {
    case SLOT_CPU:
        return !needs_device(job) || !has_devices;
    case SLOT_DEVICE:
        return needs_device(job);
    case SLOT_REMOTE: {
        if (!w->fingerprint[0])
            return 1;
        const char *fp = json_string_value(json_object_get(job, "fingerprint"));
        return fp && !strcmp(fp, w->fingerprint);
    }
    }
    return 0;
}

/* Unlink job j (whose predecessor is prev, NULL at the head) from the queue. */
static void queue_unlink(avo_pool *pool, pool_job *prev, pool_job *j)
{
    if (prev)
        prev->next = j->next;
    else
        pool->queue_head = j->next;
    if (pool->queue_tail == j)
        pool->queue_tail = prev;
    j->next = NULL;
}

/* Put a job back at the head of the queue (a remote worker lost it). */
static void queue_front(avo_pool *pool, pool_job *j)
{
    j->next = pool->queue_head;
    pool->queue_head = j;
    if (!pool->queue_tail)
        pool->queue_tail = j;
}

/* Label a result with the worker that produced it. */
static void label(const worker *w, json_t *res)
{
    json_t *who = NULL;
    if (w->kind == SLOT_REMOTE && w->device >= 0)
        who =
            json_pack("{s:s, s:s, s:i}", "transport", "tcp", "name", w->name, "device", w->device);
    else if (w->kind == SLOT_REMOTE)
        who = json_pack("{s:s, s:s}", "transport", "tcp", "name", w->name);
    else if (w->kind == SLOT_DEVICE)
        who = json_pack("{s:s, s:i}", "transport", "local", "device", w->device);
    else
        who = json_pack("{s:s}", "transport", "local");
    if (who)
        json_object_set_new(res, "worker", who);
}

/* Send job j to slot w (started if local and empty); a CUDA timing job on
 * a CPU slot goes as its compile-only copy (STAGE_COMPILING).  0 or a
 * negative code with err filled; the job stays the caller's on failure. */
static int deliver(avo_pool *pool, worker *w, pool_job *j, char *err, size_t errlen)
{
    if (w->kind == SLOT_REMOTE) {
        int rc =
            avo_transport_channel_send(w->channel, w->to_fd, j->job, 0, SEND_SECONDS, err, errlen);
        if (rc == 0) {
            w->sent++;
            w->last_sent = avo_monotonic();
        }
        return rc;
    }
    const json_t *msg = j->job;
    json_t *compile = NULL;
    /* Only a pool with device slots splits the job: without one, a CPU
     * worker takes the whole job (and its backend says what is missing);
     * sending the compile-only copy there would requeue it forever. */
    if (w->kind == SLOT_CPU && needs_device(j->job) && j->stage == STAGE_NEW &&
        avo_pool_devices(pool, NULL, 0) > 0) {
        compile = json_copy(j->job);
        if (!compile)
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        json_object_set_new(compile, "compile_only", json_true());
        msg = compile;
    }
    int sent = -1;
    for (int attempt = 0; attempt < 2 && sent < 0; attempt++) {
        if (w->pid == 0) {
            int rc = worker_start(pool, w, err, errlen);
            if (rc < 0)
                return rc;
        }
        sent = avo_proto_send(w->to_fd, msg, err, errlen);
        if (sent < 0)
            worker_kill(w);
    }
    json_decref(compile);
    if (sent == 0 && compile)
        j->stage = STAGE_COMPILING;
    return sent;
}

/*
 * Drop remote slot i: its job, if any, goes back to the queue.  charge:
 * the worker said something authenticated that is wrong (a message while
 * idle, a result for another job, an invalid result): the loss counts
 * against the job, which is answered "crashed" after AVO_POOL_MAX_ATTEMPTS
 * of them.  0 for everything the network can do (the connection closed or
 * silent, a stream that failed authentication, a job that never reached
 * the worker, a worker that left): never the candidate's fault, whatever
 * job was in flight, so it is queued again without counting against it;
 * only a job whose connection was lost AVO_POOL_MAX_CUTS times is answered,
 * "error" with "connection_lost" (an infrastructure fault the engine never
 * charges: the candidate stays pending for `avo resume`).
 */
static int remote_lost(avo_pool *pool, int i, const char *why, int charge)
{
    worker *w = &pool->workers[i];
    pool_job *j = w->job;
    w->job = NULL;
    char name[256];
    snprintf(name, sizeof name, "%s", w->name);
    worker_close(w);
    slot_remove(pool, i);
    if (avo_pool_remote(pool, NULL) == 0)
        pool->no_remote_since = avo_monotonic();
    if (!j) {
        pool_event(pool, "worker %s left (%s)", name, why);
        return 0;
    }
    if (!charge) {
        j->cuts++;
        if (j->cuts >= pool->max_cuts) {
            pool_event(pool,
                       "worker %s dropped (%s) while running job %llu; its connection was lost %d "
                       "times, giving up (not counted against it)",
                       name, why, (unsigned long long)j->ticket, j->cuts);
            char reason[512];
            snprintf(reason, sizeof reason,
                     "the connection to its remote worker was lost %d times while it ran (last: "
                     "%s); the network's fault, not the candidate's",
                     j->cuts, why);
            int rc = finish_synthetic(pool, j, "error", reason);
            if (rc == 0)
                json_object_set_new(pool->done_tail->result, "connection_lost", json_true());
            return rc;
        }
        pool_event(pool, "worker %s dropped (%s); job %llu queued again, not counted against it",
                   name, why, (unsigned long long)j->ticket);
        queue_front(pool, j);
        return 0;
    }
    j->attempts++;
    if (j->attempts >= AVO_POOL_MAX_ATTEMPTS) {
        pool_event(pool,
                   "worker %s lost (%s) while running job %llu; %d workers lost it, giving up",
                   name, why, (unsigned long long)j->ticket, j->attempts);
        char reason[512];
        snprintf(reason, sizeof reason, "%d remote workers misbehaved while running it (last: %s)",
                 j->attempts, why);
        return finish_synthetic(pool, j, "crashed", reason);
    }
    pool_event(pool, "worker %s lost (%s); job %llu queued again", name, why,
               (unsigned long long)j->ticket);
    queue_front(pool, j);
    return 0;
}

/*
 * Hand queued jobs to idle eligible workers, starting local workers as
 * needed.  A job no idle worker may take waits without holding up the jobs
 * behind it.  A job that cannot be delivered to a local worker is answered
 * with status "error"; one a remote worker refuses stays queued and the
 * worker is dropped.
 */
static int dispatch(avo_pool *pool, char *err, size_t errlen)
{
    pool_job *prev = NULL;
    for (pool_job *j = pool->queue_head, *next; j; j = next) {
        next = j->next;
        if (needs_device(j->job))
            ensure_devices(pool);
        int has_devices = avo_pool_devices(pool, NULL, 0) > 0;
        int chosen = -1;
        for (int i = 0; i < pool->nworkers && chosen < 0; i++)
            if (!pool->workers[i].job &&
                eligible(&pool->workers[i], j, has_devices, pool->jobs > 0))
                chosen = i;
        if (chosen < 0) {
            prev = j;
            continue;
        }
        worker *w = &pool->workers[chosen];
        int rc = deliver(pool, w, j, err, errlen);
        if (rc < 0 && w->kind == SLOT_REMOTE) {
            /* It never had the job: nothing to count against the job. */
            rc = remote_lost(pool, chosen, err, 0);
            if (rc < 0)
                return rc;
            return dispatch(pool, err, errlen); /* the queue changed: start over */
        }
        if (rc < 0 && rc != AVO_EIO && rc != AVO_ECHILD)
            return rc;
        queue_unlink(pool, prev, j);
        if (rc < 0) {
            rc = finish_synthetic(pool, j, "error", err);
            if (rc < 0)
                return rc;
            continue;
        }
        w->job = j;
        w->deadline = avo_monotonic() + j->deadline_s;
    }
    return 0;
}

/* Read the result of local worker w, or answer its job if the worker died. */
/*
 * The result `res` (taken) if it answers job j sensibly (avo_result_validate),
 * else a "crashed" result for j saying what was malformed: a worker's bytes
 * fail its own candidate at worst, never the run.  NULL when out of memory.
 */
static json_t *validated(const pool_job *j, json_t *res)
{
    char err[AVO_ERRLEN];
    const char *type = json_string_value(json_object_get(j->job, "type"));
    if ((type && strcmp(type, "ping") == 0) ||
        avo_result_validate(j->job, res, err, sizeof err) == 0)
        return res;
    json_decref(res);
    res = avo_result_new(j->job, "crashed", NULL);
    if (!res)
        return NULL;
    char reason[AVO_ERRLEN + 64];
    snprintf(reason, sizeof reason, "malformed result from the worker: %s", err);
    json_object_set_new(res, "reason", json_string(reason));
    json_object_set_new(res, "configs", json_array());
    json_object_set_new(res, "id", json_integer((json_int_t)j->ticket));
    return res;
}

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
        if (j->stage == STAGE_COMPILING) { /* the device worker compiles it then */
            j->stage = STAGE_COMPILED;
            queue_front(pool, j);
            return 0;
        }
        char why[256];
        describe_exit(status, why, sizeof why);
        rc = finish_synthetic(pool, j, "crashed", why);
        if (rc == 0)
            json_object_set_new(pool->done_tail->result, "worker_lost", json_true());
        return rc;
    }
    json_object_set_new(res, "id", json_integer((json_int_t)j->ticket));
    if (j->stage != STAGE_COMPILING && !(res = validated(j, res)))
        return AVO_ENOMEM;
    if (j->stage == STAGE_COMPILING) {
        /* Compiled: on to a device worker.  A failed compile is the answer;
         * an infrastructure failure leaves the compile to the device worker. */
        const char *status = json_string_value(json_object_get(res, "status"));
        if (status && (!strcmp(status, "compile_error") || !strcmp(status, "invalid") ||
                       !strcmp(status, "timeout"))) {
            label(w, res);
            uint64_t ticket = j->ticket;
            job_free(j);
            return finish_with(pool, ticket, res);
        }
        json_decref(res);
        j->stage = STAGE_COMPILED;
        queue_front(pool, j);
        return 0;
    }
    if (json_is_true(json_object_get(res, "retire"))) {
        /* The worker exits after this result (docs/protocol.md): replace it
         * now, before a job could be written to a process that is leaving. */
        json_object_del(res, "retire");
        worker_kill(w);
    }
    label(w, res);
    uint64_t ticket = j->ticket;
    job_free(j);
    return finish_with(pool, ticket, res);
}

static const char *const statuses[] = {"ok",      "compile_error", "wrong", "crashed",
                                       "timeout", "invalid",       "error", NULL};

/*
 * Whether res is an acceptable answer to job: the same id, and a result
 * (a known status, configs an array) or, for a ping, a pong.  This is all a
 * remote worker's bytes can decide: its own job's result.
 */
static int answers(const json_t *job, const json_t *res, char *why, size_t len)
{
    json_int_t id = json_integer_value(json_object_get(job, "id"));
    const json_t *rid = json_object_get(res, "id");
    const char *type = json_string_value(json_object_get(job, "type"));
    if (type && !strcmp(type, "ping")) {
        /* A pong carries no id; only the ping is in flight on this connection. */
        const char *rt = json_string_value(json_object_get(res, "type"));
        if (rt && !strcmp(rt, "pong") && (!rid || json_integer_value(rid) == id))
            return 1;
        snprintf(why, len, "answered a ping with something other than a pong");
        return 0;
    }
    if (!json_is_integer(rid) || json_integer_value(rid) != id) {
        snprintf(why, len, "sent a result for job %lld while running job %lld",
                 json_is_integer(rid) ? (long long)json_integer_value(rid) : -1LL, (long long)id);
        return 0;
    }
    const char *status = json_string_value(json_object_get(res, "status"));
    int known = 0;
    for (int i = 0; status && statuses[i]; i++)
        known |= !strcmp(status, statuses[i]);
    if (!known || !json_is_array(json_object_get(res, "configs"))) {
        snprintf(why, len, "sent a malformed result (status %.40s)", status ? status : "missing");
        return 0;
    }
    return 1;
}

/*
 * The authenticated word of remote worker w that its serving process died
 * while running its job (docs/protocol.md): answered "crashed" with
 * "worker_lost", as when a local worker dies (the engine retries it as an
 * infrastructure fault).  The caller checked that it names w's job.
 */
static int remote_died(avo_pool *pool, worker *w, const json_t *msg)
{
    const char *reason = json_string_value(json_object_get(msg, "reason"));
    char why[400];
    snprintf(why, sizeof why, "%.200s (on remote worker %.100s)", reason ? reason : "worker died",
             w->name);
    pool_job *j = w->job;
    w->job = NULL;
    pool_event(pool, "worker %s: its serving process died while running job %llu", w->name,
               (unsigned long long)j->ticket);
    int rc = finish_synthetic(pool, j, "crashed", why);
    if (rc == 0) {
        json_object_set_new(pool->done_tail->result, "worker_lost", json_true());
        label(w, pool->done_tail->result);
    }
    return rc;
}

/*
 * Read what remote slot i sent, through its channel.  A heartbeat
 * ({"type":"alive", "got":N}) says how many of our messages it has opened;
 * a result that answers its job and passes avo_result_validate finishes it;
 * the stream's final message is a clean leave.  Anything else drops the
 * worker and requeues its job: a stream that fails authentication (forged,
 * replayed, reordered, dropped or injected bytes: the network, never a
 * candidate) without counting against the job; a message while idle, a
 * result for another job, an invalid result or an end without the final
 * message counting against it.  Returns 0 or a negative code; slot i may
 * be gone afterwards.
 */
static int collect_remote(avo_pool *pool, int i)
{
    worker *w = &pool->workers[i];
    int ended = avo_proto_drain(w->from_fd, &w->in);
    size_t at = 0;
    char why[AVO_ERRLEN + 64], err[AVO_ERRLEN];
    for (;;) {
        json_t *res = NULL;
        int final = 0;
        int rc = avo_transport_channel_open(w->channel, (const unsigned char *)w->in.data,
                                            w->in.len, &at, &res, &final, err, sizeof err);
        if (rc == AVO_ENOMEM)
            return rc;
        if (rc < 0) {
            snprintf(why, sizeof why, "its %s", err);
            return remote_lost(pool, i, why, 0);
        }
        if (rc == 0)
            break;
        w->last_heard = avo_monotonic();
        const char *type = json_string_value(json_object_get(res, "type"));
        if (final) {
            const char *reason = json_string_value(json_object_get(res, "reason"));
            snprintf(why, sizeof why, "it left: %.900s", reason ? reason : "done");
            json_decref(res);
            return remote_lost(pool, i, why, 0);
        }
        if (type && !strcmp(type, "alive")) {
            const json_t *got = json_object_get(res, "got");
            json_int_t n = json_is_integer(got) ? json_integer_value(got) : -1;
            json_decref(res);
            if (n < 0 || (uint64_t)n > w->sent)
                return remote_lost(pool, i, "sent a heartbeat that counts messages never sent", 1);
            w->got = (uint64_t)n;
            continue;
        }
        if (!w->job) {
            json_decref(res);
            return remote_lost(pool, i, "sent a message while idle", 1);
        }
        if (type && !strcmp(type, "died")) {
            /* Its serving process died running this job, says the worker
             * itself: what a local worker's death is (collect). */
            const json_t *rid = json_object_get(res, "id");
            if (!json_is_integer(rid) ||
                json_integer_value(rid) != json_integer_value(json_object_get(w->job->job, "id"))) {
                json_decref(res);
                return remote_lost(pool, i, "said a job died that it was not running", 1);
            }
            rc = remote_died(pool, w, res);
            json_decref(res);
            if (rc < 0)
                return rc;
            continue;
        }
        if (!answers(w->job->job, res, why, sizeof why)) {
            json_decref(res);
            return remote_lost(pool, i, why, 1);
        }
        json_object_del(res, "retire"); /* the worker restarts itself; the connection ends */
        json_object_set_new(res, "id", json_integer((json_int_t)w->job->ticket));
        const char *jtype = json_string_value(json_object_get(w->job->job, "type"));
        if (!(jtype && !strcmp(jtype, "ping")) &&
            avo_result_validate(w->job->job, res, err, sizeof err) < 0) {
            json_decref(res);
            snprintf(why, sizeof why, "sent an invalid result: %s", err);
            return remote_lost(pool, i, why, 1);
        }
        label(w, res);
        pool_job *j = w->job;
        w->job = NULL;
        uint64_t ticket = j->ticket;
        job_free(j);
        rc = finish_with(pool, ticket, res);
        if (rc < 0)
            return rc;
    }
    if (at > 0) {
        memmove(w->in.data, w->in.data + at, w->in.len - at);
        w->in.len -= at;
    }
    if (ended)
        return remote_lost(pool, i, "connection closed", 0);
    return 0;
}

/* Turn an authenticated connection into a remote slot; takes channel. */
static int remote_add(avo_pool *pool, int fd, avo_transport_channel *channel, const char *name,
                      int device, const char *fingerprint)
{
    int i = slot_add(pool, SLOT_REMOTE, device);
    if (i < 0) {
        avo_transport_channel_free(channel);
        return AVO_ENOMEM;
    }
    worker *w = &pool->workers[i];
    w->to_fd = w->from_fd = fd;
    w->channel = channel;
    w->last_heard = avo_monotonic();
    snprintf(w->name, sizeof w->name, "%s", name);
    snprintf(w->fingerprint, sizeof w->fingerprint, "%s", fingerprint);
    pool->had_remote = 1;
    pool_event(pool, "worker %s connected", name);
    return 0;
}

static void handshake_drop(avo_pool *pool, int k)
{
    close(pool->handshakes[k]->fd);
    free(pool->handshakes[k]);
    pool->handshakes[k] = NULL;
}

/* Refuse handshake k with reason (sent to the peer, and logged). */
static void handshake_refuse(avo_pool *pool, int k, const char *reason)
{
    handshake *h = pool->handshakes[k];
    json_t *msg = json_pack("{s:s, s:s}", "type", "refused", "reason", reason);
    if (msg)
        avo_transport_send(h->fd, msg, 1.0, NULL, 0);
    json_decref(msg);
    pool_event(pool, "refused a worker from %s: %s", h->peer, reason);
    handshake_drop(pool, k);
}

/* Accept every pending connection and send each its challenge. */
static void accept_all(avo_pool *pool)
{
    for (;;) {
        int fd;
        char peer[128];
        int rc = avo_transport_accept(pool->listen_fd, &fd, peer, sizeof peer);
        if (rc != 0)
            return;
        int k = 0;
        while (k < MAX_HANDSHAKES && pool->handshakes[k])
            k++;
        handshake *h = k < MAX_HANDSHAKES ? calloc(1, sizeof *h) : NULL;
        if (!h) {
            pool_event(pool, "refused a connection from %s: too many handshakes at once", peer);
            close(fd);
            continue;
        }
        h->fd = fd;
        snprintf(h->peer, sizeof h->peer, "%s", peer);
        h->deadline = avo_monotonic() + HANDSHAKE_SECONDS;
        avo_transport_identity me = {pool->run, pool->version, ""};
        json_t *challenge = avo_transport_challenge(&me, h->nonce);
        if (!challenge || avo_transport_send(fd, challenge, 1.0, NULL, 0) < 0) {
            json_decref(challenge);
            close(fd);
            free(h);
            continue;
        }
        json_decref(challenge);
        pool->handshakes[k] = h;
    }
}

/* Read from handshake k; on a complete hello, welcome or refuse it. */
static int handshake_step(avo_pool *pool, int k)
{
    handshake *h = pool->handshakes[k];
    for (;;) {
        size_t want = 4;
        if (h->got >= 4)
            want = 4 + ((size_t)h->buf[0] | (size_t)h->buf[1] << 8 | (size_t)h->buf[2] << 16 |
                        (size_t)h->buf[3] << 24);
        if (want > sizeof h->buf) {
            handshake_refuse(pool, k, "not an avo worker (oversized hello)");
            return 0;
        }
        if (h->got == want && want > 4)
            break;
        ssize_t n = read(h->fd, h->buf + h->got, want - h->got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0) {
            pool_event(pool, "a connection from %s closed during the handshake", h->peer);
            handshake_drop(pool, k);
            return 0;
        }
        h->got += (size_t)n;
    }
    json_t *hello = json_loadb((const char *)h->buf + 4, h->got - 4, 0, NULL);
    if (!json_is_object(hello)) {
        json_decref(hello);
        handshake_refuse(pool, k, "not an avo worker (hello is not JSON)");
        return 0;
    }
    avo_transport_identity me = {pool->run, pool->version, ""};
    json_t *welcome = NULL;
    avo_transport_channel *channel = NULL;
    char name[256], fingerprint[129], err[AVO_ERRLEN];
    int device;
    int rc = avo_transport_check_hello(hello, h->nonce, &pool->secret, &me, fingerprint_allowed,
                                       pool, &welcome, name, sizeof name, &device, fingerprint,
                                       sizeof fingerprint, &channel, err, sizeof err);
    json_decref(hello);
    if (rc == AVO_ENOMEM)
        return rc;
    if (rc < 0) {
        handshake_refuse(pool, k, err);
        return 0;
    }
    rc = avo_transport_send(h->fd, welcome, 1.0, err, sizeof err);
    json_decref(welcome);
    if (rc < 0) {
        avo_transport_channel_free(channel);
        handshake_drop(pool, k);
        return 0;
    }
    int fd = h->fd;
    free(h);
    pool->handshakes[k] = NULL;
    rc = remote_add(pool, fd, channel, name, device, fingerprint);
    if (rc < 0)
        close(fd);
    return rc;
}

/* Answer every queued job "error" once the pool has no workers for good. */
static int check_gone(avo_pool *pool, double now)
{
    if (!pool->gone) {
        if (pool->listen_fd < 0 || pool->jobs > 0 || avo_pool_remote(pool, NULL) > 0)
            return 0;
        size_t handshaking;
        avo_pool_remote(pool, &handshaking);
        char reason[1024];
        if (pool->launcher_ended && handshaking == 0)
            snprintf(reason, sizeof reason, "no workers left: %s", pool->launcher_ended);
        else if (pool->grace_s > 0 && pool->had_remote &&
                 now - pool->no_remote_since >= pool->grace_s)
            snprintf(reason, sizeof reason, "no workers left: none connected for %.0f s",
                     pool->grace_s);
        else
            return 0;
        pool->gone = strdup(reason);
        if (!pool->gone)
            return AVO_ENOMEM;
        pool_event(pool, "%s", reason);
    }
    while (pool->queue_head) {
        pool_job *j = pool->queue_head;
        queue_unlink(pool, NULL, j);
        int rc = finish_synthetic(pool, j, "error", pool->gone);
        if (rc < 0)
            return rc;
    }
    return 0;
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

static void lower_timeout(int *timeout_ms, double seconds)
{
    int ms = seconds <= 0 ? 0 : (int)(seconds * 1000.0) + 1;
    if (*timeout_ms < 0 || ms < *timeout_ms)
        *timeout_ms = ms;
}

/*
 * Start queued jobs, answer jobs past their deadline, and list the fds to
 * watch: result pipes of busy local workers, every remote connection, the
 * handshakes and the listening socket.  pool_process finds each fd's owner
 * again by value.
 */
static int pool_prepare(void *ctx, struct pollfd *fds, size_t max, int *timeout_ms, char *err,
                        size_t errlen)
{
    avo_pool *pool = ctx;
    double now = avo_monotonic();
    /* What remote workers sent while the engine was busy elsewhere is read
     * first, so a silence judged below is the worker's, not ours.  From the
     * end: collect_remote may remove slot i, which moves only later ones. */
    for (int i = pool->nworkers - 1; i >= 0; i--) {
        worker *w = &pool->workers[i];
        if (w->kind != SLOT_REMOTE || now - w->last_heard < AVO_TRANSPORT_HEARTBEAT_S * 2)
            continue;
        struct pollfd p = {.fd = w->from_fd, .events = POLLIN};
        if (poll(&p, 1, 0) == 1) {
            int rc = collect_remote(pool, i);
            if (rc < 0)
                return rc;
        }
    }
    int rc = check_gone(pool, now);
    if (rc < 0)
        return rc;
    rc = dispatch(pool, err, errlen);
    if (rc < 0)
        return rc;
    size_t n = 0;
    for (int i = 0; i < pool->nworkers && n < max; i++) {
        worker *w = &pool->workers[i];
        if (w->kind == SLOT_REMOTE) {
            /* A worker says "alive" every AVO_TRANSPORT_HEARTBEAT_S with the
             * count of our messages it opened: silence, or a message it
             * never saw (dropped on the way), ends the connection. */
            const char *lost = NULL;
            char silent[128];
            if (w->job && now - w->last_heard >= BUSY_SILENCE_S && w->in.len == 0) {
                /* Stopped answering while running a job: the job runs
                 * elsewhere, never charged for it (a network that holds
                 * back bytes looks the same as a hung node). */
                snprintf(silent, sizeof silent,
                         "stopped answering: no heartbeat for %.0f s while running job %llu",
                         now - w->last_heard, (unsigned long long)w->job->ticket);
                lost = silent;
            } else if (now - w->last_heard >= AVO_TRANSPORT_SILENCE_S) {
                /* Bytes that never make a message (a length forged on the
                 * way swallows what follows), or none at all (a lost node,
                 * a network holding them back). */
                snprintf(silent, sizeof silent, "%s for %.0f s",
                         w->in.len == 0 ? "silent" : "no complete message",
                         AVO_TRANSPORT_SILENCE_S);
                lost = silent;
            } else if (w->got < w->sent && now - w->last_sent >= AVO_TRANSPORT_ACK_S) {
                lost = "never received the engine's last message (lost on the way)";
            }
            if (lost) {
                rc = remote_lost(pool, i--, lost, 0);
                if (rc < 0)
                    return rc;
                continue;
            }
            lower_timeout(timeout_ms, w->last_heard +
                                          (w->job ? BUSY_SILENCE_S : AVO_TRANSPORT_SILENCE_S) -
                                          now);
            if (w->got < w->sent)
                lower_timeout(timeout_ms, w->last_sent + AVO_TRANSPORT_ACK_S - now);
            fds[n++] = (struct pollfd){.fd = w->from_fd, .events = POLLIN};
            if (!w->job)
                continue;
        } else if (!w->job) {
            continue;
        }
        if (w->deadline <= now && w->kind == SLOT_REMOTE && now - w->last_heard > RESPONSIVE_S) {
            /* Past the deadline on a worker that is not answering: the
             * worker's failure, not a timeout of the candidate. */
            char why[160];
            snprintf(why, sizeof why,
                     "stopped answering (no heartbeat for %.0f s) at job %llu's "
                     "deadline",
                     now - w->last_heard, (unsigned long long)w->job->ticket);
            n--;
            rc = remote_lost(pool, i--, why, 0);
            if (rc < 0)
                return rc;
            continue;
        }
        if (w->deadline <= now) {
            char why[128];
            snprintf(why, sizeof why, "killed by the engine after %.0f s (deadline)",
                     w->job->deadline_s);
            pool_job *j = w->job;
            w->job = NULL;
            if (w->kind == SLOT_REMOTE) {
                /* The connection goes; the worker reconnects as a fresh one. */
                n--;
                pool_event(pool, "worker %s passed job %llu's deadline; disconnected", w->name,
                           (unsigned long long)j->ticket);
                worker_close(w);
                slot_remove(pool, i--);
                if (avo_pool_remote(pool, NULL) == 0)
                    pool->no_remote_since = now;
            } else {
                worker_kill(w);
            }
            rc = finish_synthetic(pool, j, "timeout", why);
            if (rc < 0)
                return rc;
            continue;
        }
        lower_timeout(timeout_ms, w->deadline - now);
        if (w->kind != SLOT_REMOTE)
            fds[n++] = (struct pollfd){.fd = w->from_fd, .events = POLLIN};
    }
    for (int k = 0; k < MAX_HANDSHAKES && n < max; k++) {
        handshake *h = pool->handshakes[k];
        if (!h)
            continue;
        if (h->deadline <= now) {
            handshake_refuse(pool, k, "handshake not completed in time");
            continue;
        }
        lower_timeout(timeout_ms, h->deadline - now);
        fds[n++] = (struct pollfd){.fd = h->fd, .events = POLLIN};
    }
    if (pool->listen_fd >= 0 && n < max)
        fds[n++] = (struct pollfd){.fd = pool->listen_fd, .events = POLLIN};
    if (pool->listen_fd >= 0 && !pool->gone && pool->jobs == 0 && pool->queue_head)
        lower_timeout(timeout_ms, 1.0); /* re-check whether workers are gone */
    return (int)n;
}

static int pool_process(void *ctx, const struct pollfd *fds, size_t n, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    avo_pool *pool = ctx;
    for (size_t k = 0; k < n; k++) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        int fd = fds[k].fd, rc = 0;
        if (fd == pool->listen_fd) {
            accept_all(pool);
            continue;
        }
        for (int h = 0; h < MAX_HANDSHAKES; h++) {
            if (pool->handshakes[h] && pool->handshakes[h]->fd == fd) {
                rc = handshake_step(pool, h);
                fd = -1;
                break;
            }
        }
        for (int i = 0; fd >= 0 && i < pool->nworkers; i++) {
            worker *w = &pool->workers[i];
            if (w->from_fd != fd)
                continue;
            if (w->kind == SLOT_REMOTE)
                rc = collect_remote(pool, i);
            else if (w->job)
                rc = collect(pool, w);
            break;
        }
        if (rc < 0)
            return rc;
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
        /* room for device slots the first CUDA job may add */
        .max_fds = (size_t)pool->nworkers + MAX_HANDSHAKES + 1 + 64,
    };
}

int avo_pool_wait(avo_pool *pool, int timeout_ms, uint64_t *ret_ticket, json_t **ret_result,
                  char *err, size_t errlen)
{
    avo_loop_source source = avo_pool_source(pool);
    size_t which;
    return avo_loop_wait(&source, 1, timeout_ms, &which, ret_ticket, ret_result, err, errlen);
}
