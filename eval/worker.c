/*
 * worker.c — the `avo worker` loop: receive a job, hand it to its backend,
 * send the result, repeat.
 *
 * Invariants: exactly one message is written to out_fd per message read
 * (a result per job, a pong per ping); nothing else is ever written there,
 * whatever a kernel prints (move_channel).
 * The worker dies with the engine (PR_SET_PDEATHSIG) and never leaves core
 * files behind.
 */
#include "eval/worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/avo.h"
#include "core/backend.h"
#include "core/proto.h"
#include "eval/sandbox.h"

#define WORKER_NOFILE 256

/*
 * True when the engine that started us is gone already.  PR_SET_PDEATHSIG
 * only covers a parent that dies after the prctl call; one that died before
 * it left us reparented to init.  A parent pid of 1 alone proves nothing
 * (the engine may itself be pid 1 in a container), so it counts only when the
 * job pipe has also hung up with nothing left to read.
 */
static int engine_gone(int in_fd)
{
    if (getppid() != 1)
        return 0;
    struct pollfd p = {.fd = in_fd, .events = POLLIN};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP) && !(p.revents & POLLIN);
}

/* Process-wide settings of a worker; failures only weaken the sandbox. */
static void worker_setup(void)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);

    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    struct rlimit files;
    if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
        if (files.rlim_max == RLIM_INFINITY || files.rlim_max > WORKER_NOFILE)
            files.rlim_max = WORKER_NOFILE;
        if (files.rlim_cur == RLIM_INFINITY || files.rlim_cur > files.rlim_max)
            files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
    }

    /* A vanished engine must show up as a failed write, not kill us silently;
     * children must stay waitable whatever disposition we inherited. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_DFL);

    /* Holding the engine channel: no process of ours (a candidate running
     * as our uid included) may read or write our memory. */
    avo_sandbox_harden();
}

/*
 * Answer one message: a pong for a ping, otherwise the result of running it
 * as a job.  Returns a new reference (caller owns) or NULL when out of memory.
 */
static json_t *answer(const json_t *msg)
{
    const char *type = json_string_value(json_object_get(msg, "type"));
    if (type && strcmp(type, "ping") == 0)
        return json_pack("{s:s}", "type", "pong");
    if (type && strcmp(type, "job") != 0) {
        char reason[256];
        snprintf(reason, sizeof reason, "unknown message type '%.64s'", type);
        return avo_result_new(msg, "invalid", reason);
    }

    const json_t *backend_name = json_object_get(msg, "backend");
    if (!json_is_string(backend_name))
        return avo_result_new(msg, "invalid", "job has no \"backend\" string");
    const avo_backend *backend = avo_backend_find(json_string_value(backend_name));
    if (!backend) {
        char reason[256];
        snprintf(reason, sizeof reason, "unknown backend '%.64s'", json_string_value(backend_name));
        return avo_result_new(msg, "invalid", reason);
    }
    return backend->run_job(msg);
}

/*
 * Keep the channel off the standard descriptors.  Kernels run in this
 * process (CUDA) or its children and may print — a GPU's device printf
 * writes to fd 1 at the next synchronize — which must not land between two
 * messages.  A channel on fd 0 or 1 moves to a fresh close-on-exec
 * descriptor; fd 0 then reads /dev/null and fd 1 writes where fd 2 does
 * (or to /dev/null when there is no fd 2).
 * Returns 0 or -1.
 */
static int move_channel(int *in_fd, int *out_fd)
{
    int *fds[2] = {in_fd, out_fd};
    for (int i = 0; i < 2; i++) {
        if (*fds[i] > 2)
            continue;
        int fd = fcntl(*fds[i], F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
            return -1;
        *fds[i] = fd;
    }
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0)
        return -1;
    int rc = dup2(devnull, 0) < 0 || (dup2(2, 1) < 0 && dup2(devnull, 1) < 0) ? -1 : 0;
    close(devnull);
    return rc;
}

int avo_worker_main(int in_fd, int out_fd)
{
    worker_setup();
    if (engine_gone(in_fd))
        return 1;
    if (move_channel(&in_fd, &out_fd) < 0) {
        perror("avo worker: moving the engine channel");
        return 1;
    }

    char err[AVO_ERRLEN];
    if (avo_sandbox_seccomp_trusted(0, err, sizeof err) < 0) {
        fprintf(stderr, "avo worker: %s\n", err);
        return 1;
    }
    for (;;) {
        json_t *msg;
        int rc = avo_proto_recv(in_fd, &msg, err, sizeof err);
        if (rc == AVO_EIO && strcmp(err, "closed") == 0)
            return 0;
        if (rc < 0)
            return 1;
        const char *type = json_string_value(json_object_get(msg, "type"));
        if (type && strcmp(type, "bye") == 0) {
            json_decref(msg);
            return AVO_WORKER_BYE;
        }

        json_t *reply = answer(msg);
        if (!reply)
            reply = avo_result_new(msg, "error", "worker out of memory");
        json_decref(msg);
        /* A backend whose device state is lost (sticky GPU error) marks its
         * result "retire": the worker answers, then exits for a fresh one. */
        int retire = reply && json_is_true(json_object_get(reply, "retire"));
        rc = reply ? avo_proto_send(out_fd, reply, err, sizeof err) : AVO_ENOMEM;
        json_decref(reply);
        if (rc < 0)
            return 1;
        if (retire)
            return AVO_WORKER_RETIRED;
    }
}
