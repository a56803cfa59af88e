/*
 * cli_worker.c — `avo worker`: a local worker on stdin/stdout (started by
 * the engine's pool), or with --connect a remote one that dials the engine
 * over TCP (started by hand or by Slurm; docs/protocol.md).
 *
 * A remote worker is a small supervisor: it connects, runs the handshake,
 * then forks a child that serves jobs on the socket with the ordinary
 * worker loop (core/worker.c).  When the child ends the supervisor decides:
 * the engine said bye -> exit 0; the child retired (sticky GPU error) ->
 * reconnect at once with a fresh process; the connection was lost ->
 * reconnect for up to --retry seconds, then exit 1; refused -> exit 3.
 * The supervisor never touches CUDA, so forking it is safe.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "avo.h"
#include "cli.h"
#include "sandbox.h"
#include "transport.h"
#include "worker.h"

#define EXIT_REFUSED 3

static const char usage_worker[] =
    "usage: avo worker [--connect HOST:PORT [--run ID] [--fingerprint FP] [--retry S]]\n"
    "\n"
    "Serve evaluation jobs.  Without --connect, on stdin/stdout (the engine starts\n"
    "workers this way itself).  With --connect, dial an engine started with\n"
    "`avo run --listen` (or --slurm) and serve its jobs over TCP.\n"
    "\n"
    "  --connect H:P      the engine's address\n"
    "  --run ID           serve only this run (the engine prints its id); default any\n"
    "  --fingerprint FP   serve only jobs of this evaluator fingerprint; default any\n"
    "  --retry S          keep trying to reach the engine for S seconds (default 30)\n"
    "\n"
    "The run's secret comes from AVO_WORKER_SECRET or AVO_WORKER_SECRET_FILE (a\n"
    "file of mode 0600).  Under Slurm with GPUs, without AVO_CUDA_DEVICE, the worker\n"
    "uses GPU number SLURM_LOCALID among CUDA_VISIBLE_DEVICES.  Exit status: 0 when\n"
    "the engine ended the run, 1 when it cannot be reached, 2 without a usable\n"
    "secret, 3 when it refused us.\n";

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

/* Serve one authenticated connection in a child; returns the child's
 * avo_worker_main status (or 1 if it died).  The child execs a fresh
 * `avo worker` on the socket with the allowed environment only: the
 * channel needs no key once authenticated, and no copy of the run's secret
 * (the supervisor's, or any its parsing left on the stack) exists in the
 * process that forks judges and kernels. */
static int serve(int fd)
{
    char **env = avo_sandbox_env_allowlist();
    if (!env) {
        close(fd);
        return 1;
    }
    /* Named as the binary's path, as the supervisor is (ps, pgrep). */
    char self[4096] = "avo";
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 3] = '\0';
    pid_t pid = fork();
    if (pid < 0) {
        free(env);
        close(fd);
        return 1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (dup2(fd, 0) < 0 || dup2(fd, 1) < 0)
            _exit(1);
        char *const argv[] = {self, "worker", NULL};
        execve("/proc/self/exe", argv, env);
        avo_sandbox_scrub_secrets(); /* no /proc: serve from here, without the key */
        _exit(avo_worker_main(0, 1));
    }
    free(env);
    close(fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
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
    /* Read; now gone from the environment, and from every judge's memory. */
    avo_sandbox_scrub_environment();
    avo_sandbox_register_secret(&secret, sizeof secret);
    pick_slurm_device();
    avo_transport_identity me = {run, avo_transport_version(), fingerprint};
    signal(SIGPIPE, SIG_IGN);
    double lost_at = avo_monotonic();
    int served = 0;
    for (;;) {
        int fd;
        int rc = avo_transport_connect(address, 10.0, &fd, err, sizeof err);
        if (rc == 0) {
            rc = avo_transport_worker_handshake(fd, &secret, &me, 30.0, err, sizeof err);
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
        int status = serve(fd);
        if (status == AVO_WORKER_BYE)
            return 0;
        if (status != AVO_WORKER_RETIRED)
            fprintf(stderr, "avo worker: lost the connection to %s; reconnecting\n", address);
        lost_at = avo_monotonic();
    }
}

int avo_cli_worker(int argc, char **argv)
{
    if (argc <= 1) {
        avo_sandbox_scrub_environment();
        return avo_worker_main(0, 1);
    }
    json_t *opts = json_object();
    int optind_ = 0;
    int rc = avo_cli_parse_options(argc, argv, worker_options, usage_worker, opts, &optind_);
    if (rc >= 0) {
        json_decref(opts);
        return rc;
    }
    if (optind_ < argc) {
        json_decref(opts);
        return avo_cli_usage_error(usage_worker, "unexpected argument '%s'", argv[optind_]);
    }
    const char *address = avo_cli_opt_string(opts, "connect", NULL);
    if (!address) {
        json_decref(opts);
        return avo_cli_usage_error(usage_worker, "%s needs --connect HOST:PORT", "avo worker");
    }
    char host[256], port[16], err[AVO_ERRLEN];
    if (avo_transport_split(address, host, sizeof host, port, sizeof port, err, sizeof err) < 0) {
        json_decref(opts);
        return avo_cli_usage_error(usage_worker, "%s", err);
    }
    json_t *retry = json_object_get(opts, "retry");
    rc = remote_main(address, avo_cli_opt_string(opts, "run", ""),
                     avo_cli_opt_string(opts, "fingerprint", ""),
                     retry ? json_number_value(retry) : 30.0);
    json_decref(opts);
    return rc;
}
