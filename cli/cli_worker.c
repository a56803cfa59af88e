/*
 * cli_worker.c — `avo worker`: a local worker on stdin/stdout (started by
 * the engine's pool), or with --connect a remote one that dials the engine
 * over TCP (started by hand or by Slurm; docs/protocol.md).
 *
 * A remote worker is a small supervisor: it connects, runs the handshake,
 * then forks a child that serves jobs with the ordinary worker loop
 * (eval/worker.c) on a pair of pipes, and relays between those pipes and
 * the socket through the connection's encrypted channel (scale/transport.h):
 * the session keys stay in the supervisor, never in the process that runs
 * judges, and the relay says "alive" to the engine every
 * AVO_TRANSPORT_HEARTBEAT_S with the count of messages it opened, so a
 * message lost on the way shows.  When the child ends the supervisor decides:
 * the engine said bye -> exit 0; the child retired (sticky GPU error) ->
 * reconnect at once with a fresh process; the connection was lost ->
 * reconnect for up to --retry seconds, then exit 1; refused -> exit 3.
 * The supervisor never touches CUDA, so forking it is safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/avo.h"
#include "eval/cache.h"
#include "cli/cli.h"
#include "core/proto.h"
#include "eval/sandbox.h"
#include "eval/supervise.h"
#include "scale/transport.h"
#include "eval/worker.h"

#define EXIT_REFUSED 3

/* This node's compile cache, which every job's "cache_dir" is replaced
 * with: the path the engine sends is a directory of the engine's machine. */
static char own_cache[4096];

/* own_cache from this worker's environment, by the engine's rule (cache.h). */
static void find_own_cache(void)
{
    char *dir = avo_cache_dir(NULL, "cpu");
    snprintf(own_cache, sizeof own_cache, "%s", dir ? dir : "/tmp/avo-cache/cpu");
    free(dir);
}

static const avo_cli_option worker_options[] = {
    {"connect", AVO_OPT_STRING, "connect", 0, 0, 0, NULL},
    {"run", AVO_OPT_STRING, "run", 0, 0, 0, NULL},
    {"fingerprint", AVO_OPT_STRING, "fingerprint", 0, 0, 0, NULL},
    {"retry", AVO_OPT_NUMBER, "retry", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

/* Under Slurm, one worker per GPU: task SLURM_LOCALID takes the device of
 * that rank among the visible ones (device 0 when Slurm gave each task its
 * own GPU).  Slurm sets CUDA_VISIBLE_DEVICES only when it allocated GPUs;
 * without it the worker names no device (CPU work). */
static void pick_slurm_device(void)
{
    const char *local = getenv("SLURM_LOCALID");
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    if (getenv("AVO_CUDA_DEVICE") || !local || !cvd || !*cvd)
        return;
    int visible = 1;
    for (const char *p = cvd; *p; p++)
        visible += *p == ',';
    char device[16];
    snprintf(device, sizeof device, "%d", atoi(local) % visible);
    setenv("AVO_CUDA_DEVICE", device, 1);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* End the worker child (its judges die with it: PR_SET_PDEATHSIG) and reap it. */
static void child_kill(pid_t pid)
{
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* Whether process pid is stopped (SIGSTOP, a tracer): /proc/PID/stat's
 * state T or t.  0 when it cannot be told (no /proc). */
static int child_stopped(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *end = strrchr(buf, ')'); /* the name may hold anything */
    return end && end[1] == ' ' && (end[2] == 'T' || end[2] == 't');
}

/* The relay's own clean end: the last message of our stream (TAG_FINAL),
 * which tells the engine we left on purpose and why. */
static void leave(avo_transport_channel *ch, int fd, const char *reason)
{
    json_t *bye = json_pack("{s:s, s:s}", "type", "bye", "reason", reason);
    if (bye)
        avo_transport_channel_send(ch, fd, bye, 1, 2.0, NULL, 0);
    json_decref(bye);
}

/* The relay's status when the serving process died (not an exit of
 * avo_worker_main's): a fresh one reconnects at once. */
#define SERVER_DIED (-1)

/*
 * The serving process died (signal, or an exit without its answer) while
 * job `id` was in flight: say so on the authenticated channel, the only
 * way the engine may hold a worker's loss against a job (a cut
 * connection never is: docs/protocol.md), then leave.
 */
static void report_death(avo_transport_channel *ch, int fd, json_int_t id, int ws)
{
    char why[160];
    if (WIFSIGNALED(ws))
        snprintf(why, sizeof why, "worker died with signal %d (%s)", WTERMSIG(ws),
                 strsignal(WTERMSIG(ws)));
    else
        snprintf(why, sizeof why, "worker exited with status %d",
                 WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
    if (id >= 0) {
        json_t *died = json_pack("{s:s, s:I, s:s}", "type", "died", "id", id, "reason", why);
        if (died)
            avo_transport_channel_send(ch, fd, died, 0, 2.0, NULL, 0);
        json_decref(died);
    }
    char reason[256];
    snprintf(reason, sizeof reason, "its serving process died (%s); a fresh one reconnects", why);
    leave(ch, fd, reason);
}

/*
 * Relay between the socket fd (through ch) and the worker child pid (jobs
 * to to_child, results from from_child) until one side ends.  Returns the
 * child's avo_worker_main status when it ended on its own (AVO_WORKER_BYE
 * only after the engine's final "bye"), SERVER_DIED when it died otherwise
 * (reported to the engine, with the job it was running), or 1 when the
 * connection was lost or failed authentication (the child is killed).
 */
static int relay(int fd, avo_transport_channel *ch, pid_t pid, int to_child, int from_child)
{
    char err[AVO_ERRLEN];
    avo_proto_buf net = {0}, kid = {0};
    uint64_t opened = 0;
    int bye = 0, status = 1;
    /* The engine's message the child has not answered yet (a job or a
     * ping: each gets exactly one answer), -1 for none or one without id. */
    json_int_t in_flight = -1;
    int awaiting = 0;
    double next_beat = 0;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    fcntl(from_child, F_SETFL, fcntl(from_child, F_GETFL) | O_NONBLOCK);
    for (;;) {
        double now = avo_monotonic();
        /* After bye the engine may be gone.  No heartbeat while the process
         * that serves jobs is stopped: the engine must see that this worker
         * stopped answering, and give its job to another. */
        if (!bye && now >= next_beat && child_stopped(pid)) {
            next_beat = now + AVO_TRANSPORT_HEARTBEAT_S;
        } else if (!bye && now >= next_beat) {
            json_t *beat = json_pack("{s:s, s:I}", "type", "alive", "got", (json_int_t)opened);
            int rc = beat ? avo_transport_channel_send(ch, fd, beat, 0, 30.0, err, sizeof err)
                          : AVO_ENOMEM;
            json_decref(beat);
            if (rc < 0)
                goto lost;
            next_beat = now + AVO_TRANSPORT_HEARTBEAT_S;
        }
        struct pollfd p[2] = {{.fd = from_child, .events = POLLIN},
                              {.fd = bye ? -1 : fd, .events = POLLIN}};
        int n = poll(p, 2, bye ? -1 : (int)((next_beat - now) * 1000) + 1);
        if (n < 0 && errno != EINTR)
            goto lost;
        if (n <= 0)
            continue;
        if (p[1].revents) {
            int ended = avo_proto_drain(fd, &net);
            size_t at = 0;
            for (;;) {
                json_t *msg;
                int final;
                int rc = avo_transport_channel_open(ch, (const unsigned char *)net.data, net.len,
                                                    &at, &msg, &final, err, sizeof err);
                if (rc < 0) {
                    fprintf(stderr, "avo worker: the engine's %s; dropping the connection\n", err);
                    char reason[AVO_ERRLEN + 32];
                    snprintf(reason, sizeof reason, "the engine's %s", err);
                    leave(ch, fd, reason);
                    goto lost;
                }
                if (rc == 0)
                    break;
                opened++;
                const char *type = json_string_value(json_object_get(msg, "type"));
                if (final && !(type && !strcmp(type, "bye"))) {
                    json_decref(msg);
                    fprintf(stderr, "avo worker: the engine ended its stream without bye\n");
                    goto lost;
                }
                bye |= final;
                const char *mtype = json_string_value(json_object_get(msg, "type"));
                if (own_cache[0] && json_is_object(msg) && (!mtype || !strcmp(mtype, "job")))
                    json_object_set_new(msg, "cache_dir", json_string(own_cache));
                if (!bye && (!mtype || !strcmp(mtype, "job") || !strcmp(mtype, "ping"))) {
                    const json_t *id = json_object_get(msg, "id");
                    in_flight = json_is_integer(id) ? json_integer_value(id) : -1;
                    awaiting = 1;
                }
                /* The child reads one job at a time while idle: a blocking write. */
                rc = avo_proto_send(to_child, msg, err, sizeof err);
                json_decref(msg);
                if (rc < 0)
                    goto lost;
                if (bye)
                    break;
            }
            if (at > 0) {
                memmove(net.data, net.data + at, net.len - at);
                net.len -= at;
            }
            if (ended && !bye)
                goto lost;
        }
        if (p[0].revents) {
            int ended = avo_proto_drain(from_child, &kid);
            size_t at = 0;
            json_t *msg;
            while ((msg = avo_proto_decode(&kid, &at)) != NULL) {
                awaiting = 0; /* its answer */
                int rc = avo_transport_channel_send(ch, fd, msg, 0, 30.0, err, sizeof err);
                json_decref(msg);
                if (rc < 0)
                    goto lost;
            }
            if (at > 0) {
                memmove(kid.data, kid.data + at, kid.len - at);
                kid.len -= at;
            }
            if (ended) {
                /* Its results end only when it exits; give it 5 s to, in
                 * case the end was a read error instead. */
                int ws = 0;
                pid_t r = 0;
                for (int tries = 0; tries < 500 && r == 0; tries++) {
                    r = waitpid(pid, &ws, WNOHANG);
                    if (r < 0 && errno == EINTR)
                        r = 0;
                    if (r == 0)
                        sleep_s(0.01);
                }
                if (r != pid)
                    goto lost;
                status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 1;
                if (awaiting || !WIFEXITED(ws) ||
                    (status != AVO_WORKER_RETIRED && status != AVO_WORKER_BYE)) {
                    if (!bye)
                        report_death(ch, fd, awaiting ? in_flight : -1, ws);
                    status = bye ? 1 : SERVER_DIED;
                } else if (status == AVO_WORKER_RETIRED)
                    leave(ch, fd, "retired (a fresh process reconnects)");
                else if (status == AVO_WORKER_BYE && !bye)
                    status = 1; /* it cannot have seen a bye we did not pass */
                goto out;
            }
        }
    }
lost:
    child_kill(pid);
    status = 1;
out:
    free(net.data);
    free(kid.data);
    return status;
}

/*
 * Serve one authenticated connection: the worker loop in a child on pipes,
 * the relay here.  The child execs a fresh `avo worker` on those pipes with
 * the allowed environment only, so no copy of the run's secret (the
 * supervisor's, or any its parsing left on the stack) and no session key
 * exists in the process that forks judges and kernels.  Takes fd and ch;
 * returns the child's avo_worker_main status, or 1 when the connection was
 * lost.
 */
static int serve(int fd, avo_transport_channel *ch, avo_transport_secret *secret)
{
    char **env = avo_sandbox_env_allowlist();
    /* Named as the binary's path, as the supervisor is (ps, pgrep). */
    const char *self = avo_self_exe() ? avo_self_exe() : "avo";
    int to[2], from[2];
    if (!env || pipe2(to, O_CLOEXEC) < 0) {
        free(env);
        close(fd);
        avo_transport_channel_free(ch);
        return 1;
    }
    if (pipe2(from, O_CLOEXEC) < 0) {
        free(env);
        close(to[0]), close(to[1]);
        close(fd);
        avo_transport_channel_free(ch);
        return 1;
    }
    pid_t pid = avo_supervise_fork(0);
    if (pid == 0) {
        /* Nothing that runs judges keeps the keys, the secret or the socket. */
        avo_transport_channel_free(ch);
        memset(secret, 0, sizeof *secret);
        close(fd);
        if (dup2(to[0], 0) < 0 || dup2(from[1], 1) < 0)
            _exit(1);
        char *const argv[] = {(char *)self, "worker", NULL};
        execve("/proc/self/exe", argv, env);
        execve(self, argv, env); /* no /proc (a plain chroot) */
        avo_sandbox_scrub_secrets(); /* no /proc: serve from here, without the key */
        _exit(avo_worker_main(0, 1));
    }
    free(env);
    close(to[0]);
    close(from[1]);
    int status = 1;
    if (pid > 0)
        status = relay(fd, ch, pid, to[1], from[0]);
    close(to[1]);
    close(from[0]);
    close(fd);
    avo_transport_channel_free(ch);
    return status;
}

static int remote_main(const char *address, const char *run, const char *fingerprint,
                       double retry_s)
{
    char err[AVO_ERRLEN];
    avo_transport_secret secret;
    if (avo_transport_secret_from_env(&secret, err, sizeof err) < 0) {
        fprintf(stderr, "avo worker: %s\n", err);
        return 2;
    }
    find_own_cache(); /* before the environment is scrubbed */
    /* Read; now gone from the environment, and from every judge's memory. */
    avo_sandbox_scrub_environment();
    avo_sandbox_register_secret(&secret, sizeof secret);
    /* The supervisor holds the secret and the session keys: not dumpable. */
    avo_sandbox_harden();
    pick_slurm_device();
    avo_transport_identity me = {run, avo_transport_version(), fingerprint};
    signal(SIGPIPE, SIG_IGN);
    double lost_at = avo_monotonic();
    int served = 0;
    for (;;) {
        int fd;
        avo_transport_channel *ch = NULL;
        int rc = avo_transport_connect(address, 10.0, &fd, err, sizeof err);
        if (rc == 0) {
            rc = avo_transport_worker_handshake(fd, &secret, &me, 30.0, &ch, err, sizeof err);
            if (rc == AVO_EINVAL) {
                close(fd);
                fprintf(stderr, "avo worker: %s\n", err);
                return EXIT_REFUSED;
            }
            if (rc < 0)
                close(fd);
        }
        if (rc < 0) {
            if (avo_monotonic() - lost_at >= retry_s) {
                fprintf(stderr, "avo worker: %s (gave up after %.0f s)\n", err, retry_s);
                return 1;
            }
            sleep_s(1.0);
            continue;
        }
        served++;
        int status = serve(fd, ch, &secret);
        if (status == AVO_WORKER_BYE)
            return 0;
        if (status == SERVER_DIED)
            fprintf(stderr,
                    "avo worker: the serving process died; reconnecting with a fresh one\n");
        else if (status != AVO_WORKER_RETIRED)
            fprintf(stderr, "avo worker: lost the connection to %s; reconnecting\n", address);
        lost_at = avo_monotonic();
    }
}

int avo_cli_worker(const avo_cli_command *cmd, int argc, char **argv)
{
    if (argc <= 1) {
        avo_sandbox_scrub_environment();
        return avo_worker_main(0, 1);
    }
    json_t *opts = json_object();
    int rc = avo_cli_parse_options_only(argc, argv, worker_options, cmd->usage, opts);
    if (rc >= 0) {
        json_decref(opts);
        return rc;
    }
    const char *address = avo_cli_opt_string(opts, "connect", NULL);
    if (!address) {
        json_decref(opts);
        return avo_cli_usage_error(cmd->usage, "%s needs --connect HOST:PORT", "avo worker");
    }
    char host[256], port[16], err[AVO_ERRLEN];
    if (avo_transport_split(address, host, sizeof host, port, sizeof port, err, sizeof err) < 0) {
        json_decref(opts);
        return avo_cli_usage_error(cmd->usage, "%s", err);
    }
    json_t *retry = json_object_get(opts, "retry");
    rc = remote_main(address, avo_cli_opt_string(opts, "run", ""),
                     avo_cli_opt_string(opts, "fingerprint", ""),
                     retry ? json_number_value(retry) : 30.0);
    json_decref(opts);
    return rc;
}
