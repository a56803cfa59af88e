/*
 * device.c — the judge's CPU device (judge.h): the judge process, trusted,
 * forks the candidate (candidate.c) first, then loads the reference, and
 * config by config fills inputs, runs reference and candidate, checks and
 * times (eval/judge.c), and with a yardstick (the evaluator's seed, trusted
 * like the reference) runs it in its own memory beside every timed sample of
 * the candidate.  It holds the reference outputs and the report pipe
 * to the worker (REPORT_FD), framed JSON messages (core/proto.h):
 *   {"progress": name}              entering a config
 *   {"config": {...}}               that config's result entry
 *   {"check": {...}}                a check config's entry
 *   {"done": {"status", "reason"}}  the verdict, always last
 * The candidate is stopped between commands, timed by its own CPU-time
 * clock where it runs one thread, and every way it can end is named here.
 */
#include "avo_config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/avo.h"
#include "core/backend.h"
#include "eval/cpu/cpu_job.h"
#include "eval/cpu/cpulib.h"
#include "eval/judge.h"
#include "eval/libraries.h"
#include "eval/measure.h"
#include "core/proto.h"
#include "eval/sandbox.h"
#include "eval/supervise.h"

static double timeval_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* The judge's device (judge.h): the candidate process and the region. */
typedef struct cpu_device {
    const cpu_job *job;
    pid_t cand;
    int cmd_fd, ack_fd, region_fd;
    unsigned char *region;
    size_t region_bytes, slots;
    slot_layout l;
    const avo_config_spec *cfg;
    kernel_fn ref_fn;
    kernel_fn ys_fn;           /* the yardstick (the evaluator's seed), or NULL: loaded here to
                                * check it can be called; its runner calls it */
    unsigned char *ys_region;  /* its slots, laid out as the region, shared with its runner */
    size_t ys_bytes;
    int ys_fd;                 /* the runner's socket (ys_runner), -1 without a yardstick */
    pid_t ys_pid;              /* the runner */
    clockid_t ys_clock;        /* the runner's CPU-time clock */
    int ys_have_clock, ys_stopped;
    call_sig sig;
    const char *status;  /* verdict when the device fails: crashed, timeout, wrong, error */
    clockid_t cpu_clock; /* the candidate process's CPU-time clock */
    int have_cpu_clock, use_cpu_clock; /* it exists; samples are read from it */
    int stopped;                       /* SIGSTOPped after its last command, until the next one */
    double stopped_cpu;                /* its CPU time when it stopped */
    avo_libraries_baseline harness;    /* files the judge maps at the fork: the harness's */
    int own_fd;                        /* the candidate's object, for libraries.h */
    int maps_fd;                       /* its /proc/PID/maps, opened by itself; -1 */
    int judge_killed;                  /* the judge sent it SIGKILL */
    avo_sandbox_lease lease;           /* the candidate's uid, held while the judge lives */
} cpu_device;

/* Set in the judge when its candidate was killed from outside: the verdict
 * says so ("outside"), and the worker runs the job once more. */
static int killed_outside;

/*
 * Whether a candidate that ended with wait status `status` was killed from
 * outside: by SIGKILL or SIGTERM that the judge did not send.  Only facts
 * the kernel cannot fake count: its seccomp filter refuses it SIGKILL and
 * SIGTERM to itself, signalling timers, mq_notify, SIGIO ownership, a
 * parent-death signal and CPU-time limits of its own (eval/sandbox.c), so
 * such a death came from another process (a user's kill, the OOM killer).
 * Without seccomp nothing proves it: never.
 */
static int death_from_outside(int status, int judge_killed)
{
#if AVO_HAVE_SECCOMP
    return WIFSIGNALED(status) && !judge_killed &&
           (WTERMSIG(status) == SIGKILL || WTERMSIG(status) == SIGTERM);
#else
    (void)status, (void)judge_killed;
    return 0;
#endif
}

/* Name how the candidate ended (wait status and usage of its reap). */
static int candidate_ended(cpu_device *d, int status, const struct rusage *usage, char *why,
                           size_t len)
{
    double cpu = timeval_s(usage->ru_utime) + timeval_s(usage->ru_stime);
    d->cand = -1;
    d->status = "crashed";
    char name[128];
    int sig = avo_supervise_death(status, name, sizeof name);
    if (sig == SIGXCPU || (sig == SIGKILL && d->job->spec.cpu_s > 0 && cpu >= d->job->spec.cpu_s)) {
        d->status = "timeout";
        snprintf(why, len, "exceeded the CPU time limit of %gs", d->job->spec.cpu_s);
    } else if (sig && death_from_outside(status, d->judge_killed)) {
        killed_outside = 1;
        snprintf(why, len,
                 "killed by %s from outside (not by its judge; a kernel cannot send it itself)",
                 name);
    } else {
        snprintf(why, len, "%s %s", sig ? "crashed with" : "kernel process exited with", name);
    }
    return -1;
}

/* The candidate died or hung up: kill and reap it, name how.  A process
 * that is dying closes its pipes before it can be reaped: it gets 200 ms
 * to end by itself, so how it died is not hidden by the judge's SIGKILL. */
static int candidate_gone(cpu_device *d, char *why, size_t len)
{
    int status = 0;
    struct rusage usage = {0};
    pid_t r = 0;
    for (int i = 0; i < 200 && r == 0; i++) {
        r = wait4(d->cand, &status, WNOHANG, &usage);
        if (r < 0 && errno == EINTR)
            r = 0;
        if (r == 0) {
            struct timespec ms = {0, 1000000L};
            nanosleep(&ms, NULL);
        }
    }
    if (r != d->cand) {
        d->judge_killed = 1;
        kill(d->cand, SIGKILL);
        while (wait4(d->cand, &status, 0, &usage) < 0 && errno == EINTR)
            ;
    }
    return candidate_ended(d, status, &usage, why, len);
}

/*
 * Stop the candidate once it has answered a command, so nothing it does
 * after its acknowledgement (finishing outputs while the judge checks them,
 * reading the next call's inputs while the judge fills them, all off the
 * clock) can happen: it stays stopped until the next command.
 */
static int candidate_stop(cpu_device *d, char *why, size_t len)
{
    int status = 0;
    struct rusage usage = {0};
    kill(d->cand, SIGSTOP);
    while (wait4(d->cand, &status, WUNTRACED, &usage) < 0 && errno == EINTR)
        ;
    if (WIFSTOPPED(status)) {
        d->stopped = 1;
        return 0;
    }
    return candidate_ended(d, status, &usage, why, len);
}

/*
 * The clock a sample is read from.  A single-threaded kernel is timed by
 * its process's CPU time, which the kernel accounts and the candidate
 * cannot touch: it counts the work however the candidate spreads it over
 * the call, and not the wait for a CPU after the judge's command (or a
 * preemption) on a busy machine.  A kernel allowed threads is timed by the
 * wall clock, which its threads' work cannot run ahead of.
 */
static double candidate_clock(const cpu_device *d)
{
    struct timespec t;
    if (!d->use_cpu_clock || clock_gettime(d->cpu_clock, &t) < 0)
        return avo_monotonic();
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The candidate process's CPU time (all its threads), -1 if unknown. */
static double candidate_cpu(const cpu_device *d)
{
    struct timespec t;
    if (!d->have_cpu_clock || clock_gettime(d->cpu_clock, &t) < 0)
        return -1;
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU time a stopped candidate may seem to gain: the end of the stop itself
 * (after the judge's wait returned, it may still be preempted on its way
 * off the CPU: 606 us seen on a loaded 2-core machine).  Whatever it gains
 * is charged to its next call on the CPU-time clock; past this much it
 * woke itself, which no honest kernel does. */
#define STOPPED_CPU_LIMIT_S 20e-3

/*
 * Send a command and wait for its acknowledgement; the candidate is
 * stopped again afterwards (all but CMD_EXIT).
 *
 * A stopped candidate must still be stopped when the next command comes:
 * CPU time it gained meanwhile is charged to this call (CPU-time clock),
 * and more than STOPPED_CPU_LIMIT_S means it woke itself (a timer's signal,
 * SIGCONT from a handler) and broke the protocol.  The sample's clock starts before the
 * SIGCONT, so a SIGCONT handler's work counts, and on the CPU-time clock it
 * ends once the candidate is stopped, so work after the acknowledgement
 * counts too.
 */
static int command(cpu_device *d, uint32_t op, const avo_config_spec *cfg, size_t nslots,
                   double *ret_s, char *why, size_t len)
{
    harness_cmd cmd = {
        .op = op, .config = cfg ? avo_cpu_config_index(&d->job->spec, cfg) : 0, .nslots = nslots};
    if (getrandom(&cmd.nonce, sizeof cmd.nonce, 0) != sizeof cmd.nonce) {
        d->status = "error";
        snprintf(why, len, "no randomness from getrandom");
        return -1;
    }
    double t0 = candidate_clock(d);
    if (d->stopped) {
        double cpu = candidate_cpu(d);
        double gained = cpu >= 0 && d->stopped_cpu >= 0 ? cpu - d->stopped_cpu : 0;
        if (gained > STOPPED_CPU_LIMIT_S) {
            d->status = "wrong";
            snprintf(why, len,
                     "ran while stopped after answering (%.0f us of CPU time off the clock: "
                     "it woke itself)",
                     gained * 1e6);
            return -1;
        }
        if (d->use_cpu_clock && gained > 0)
            t0 -= gained; /* work done while stopped counts as this call's */
        kill(d->cand, SIGCONT);
        d->stopped = 0;
    }
    if (avo_write_all(d->cmd_fd, &cmd, sizeof cmd) < 0)
        return candidate_gone(d, why, len);
    uint64_t ack;
    if (avo_read_all(d->ack_fd, &ack, sizeof ack) != (ssize_t)sizeof ack)
        return candidate_gone(d, why, len);
    double t1 = candidate_clock(d);
    if (ack != cmd.nonce + 1) {
        d->status = "wrong";
        snprintf(why, len, "broke the harness protocol (a forged or early acknowledgement)");
        return -1;
    }
    if (op != CMD_EXIT) {
        int rc = candidate_stop(d, why, len);
        if (rc < 0)
            return rc;
        if (d->use_cpu_clock)
            t1 = candidate_clock(d);
        d->stopped_cpu = candidate_cpu(d);
    }
    if (ret_s)
        *ret_s = t1 - t0;
    return 0;
}

/*
 * The yardstick runs in a process of its own, as the candidate does, woken
 * and stopped for each command as the candidate is (ys_command), and timed
 * by that process's CPU time, as the candidate is.  Run in the judge, it
 * paid neither the candidate's page tables (its own, cold, on every page a
 * call touches, where the judge's had just been walked by its copy of the
 * inputs) nor its command's round trip: the seed scored 0.94-0.99 x itself
 * on cpu/sgemm_fast (0.83-0.91 at 64^3) and 0.72-0.82 on a 1 us axpy, a
 * bias against every candidate, largest on short calls (docs/
 * benchmarks.md).  The runner is trusted (the evaluator's seed), forked
 * before the judge's seccomp filter (no fork after it), and takes commands
 * on a socket: a layout (the slots' memfd passed along) or a call on n
 * slots, each answered with one byte.
 */
typedef struct ys_msg {
    uint32_t op; /* CMD_LAYOUT or CMD_CALL */
    int32_t config;
    uint64_t nslots;
    uint64_t bytes; /* CMD_LAYOUT: the region's size; its fd rides along */
} ys_msg;

static _Noreturn void ys_runner(const cpu_job *job, const char *ys_so, int sock)
{
    const avo_jobspec *spec = &job->spec;
    avo_cpulib_thread_env(1);
    void *handle = dlopen(ys_so, RTLD_NOW | RTLD_LOCAL);
    void *sym = handle ? dlsym(handle, spec->entry) : NULL;
    call_sig sig;
    if (!sym || avo_cpu_call_sig_init(spec, &sig) < 0)
        _exit(3);
    kernel_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    unsigned char *region = NULL;
    size_t region_bytes = 0;
    slot_layout l;
    for (;;) {
        ys_msg m;
        int fd;
        if (avo_supervise_recv_fd(sock, &m, sizeof m, &fd) != (ssize_t)sizeof m)
            _exit(0);
        const avo_config_spec *cfg = avo_cpu_config_at(spec, m.config);
        if (!cfg)
            _exit(5);
        if (m.op == CMD_LAYOUT) {
            if (region)
                munmap(region, region_bytes);
            region_bytes = (size_t)m.bytes;
            region = fd < 0 ? MAP_FAILED
                            : mmap(NULL, region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (fd >= 0)
                close(fd);
            if (region == MAP_FAILED)
                _exit(6);
            avo_cpu_layout_compute(spec, cfg, &l);
        } else if (m.op == CMD_CALL && region) {
            void *ptrs[AVO_JOBSPEC_MAX_ARGS] = {0};
            for (uint64_t s = 0; s < m.nslots; s++) {
                for (size_t i = 0; i < spec->nargs; i++)
                    if (spec->args[i].kind != AVO_ARG_SCALAR)
                        ptrs[i] = region + s * l.slot_bytes + l.offset[i];
                avo_cpu_call_kernel(spec, &sig, fn, cfg, ptrs);
            }
        }
        char ack = 1;
        if (send(sock, &ack, 1, MSG_NOSIGNAL) != 1)
            _exit(0);
    }
}

/* One command to the runner and its answer, woken for it and stopped
 * after it as the candidate is (command), so the two pay the same for a
 * command; -1 when it is gone. */
static int ys_command(cpu_device *d, const ys_msg *m, int fd);

/* Why the runner stopped answering, into why: how it ended (reaped), or
 * that it hung up. */
static int ys_gone(cpu_device *d, char *why, size_t len)
{
    int status = 0;
    char name[128] = "";
    kill(d->ys_pid, SIGKILL);
    while (waitpid(d->ys_pid, &status, 0) < 0 && errno == EINTR)
        ;
    avo_supervise_death(status, name, sizeof name);
    d->status = "error";
    snprintf(why, len, "the yardstick (the evaluator's seed) failed in its own process: %s %s",
             WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL ? "crashed with" : "ended,", name);
    return -1;
}

static int ys_command(cpu_device *d, const ys_msg *m, int fd)
{
    if (d->ys_stopped) {
        kill(d->ys_pid, SIGCONT);
        d->ys_stopped = 0;
    }
    if (avo_supervise_send_fd(d->ys_fd, m, sizeof *m, fd) != (ssize_t)sizeof *m)
        return -1;
    ssize_t n;
    char ack;
    while ((n = recv(d->ys_fd, &ack, 1, 0)) < 0 && errno == EINTR)
        ;
    if (n != 1)
        return -1;
    int status = 0;
    kill(d->ys_pid, SIGSTOP);
    while (waitpid(d->ys_pid, &status, WUNTRACED) < 0 && errno == EINTR)
        ;
    if (!WIFSTOPPED(status))
        return -1;
    d->ys_stopped = 1;
    return 0;
}

static int dev_layout(void *self, const avo_config_spec *cfg, size_t nslots, size_t *ret_max_slots,
                      char *why, size_t len)
{
    cpu_device *d = self;
    avo_cpu_layout_compute(&d->job->spec, cfg, &d->l);
    size_t max_slots = ((size_t)REGION_MAX_MB << 20) / d->l.slot_bytes;
    if (max_slots < 1)
        max_slots = 1;
    if (ret_max_slots)
        *ret_max_slots = max_slots;
    if (nslots > max_slots)
        nslots = max_slots;
    size_t bytes = d->l.slot_bytes * nslots;
    if (d->region)
        munmap(d->region, d->region_bytes);
    d->region = NULL;
    if (ftruncate(d->region_fd, (off_t)bytes) < 0 && errno != EPERM) {
        d->status = "error";
        snprintf(why, len, "cannot size the argument region (%zu bytes): %s", bytes,
                 strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(d->region_fd, &st) < 0 || (size_t)st.st_size < bytes) {
        d->status = "error";
        snprintf(why, len, "cannot size the argument region (%zu bytes)", bytes);
        return -1;
    }
    d->region = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, d->region_fd, 0);
    if (d->region == MAP_FAILED) {
        d->region = NULL;
        d->status = "error";
        snprintf(why, len, "cannot map the argument region: %s", strerror(errno));
        return -1;
    }
    d->region_bytes = bytes;
    d->slots = nslots;
    d->cfg = cfg;
    if (d->ys_fn) {
        if (d->ys_region)
            munmap(d->ys_region, d->ys_bytes);
        int fd = memfd_create("avo-yardstick", MFD_CLOEXEC);
        d->ys_region = fd < 0 || ftruncate(fd, (off_t)bytes) < 0
                           ? MAP_FAILED
                           : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        ys_msg m = {.op = CMD_LAYOUT,
                    .config = avo_cpu_config_index(&d->job->spec, cfg),
                    .nslots = nslots,
                    .bytes = bytes};
        if (d->ys_region != MAP_FAILED && ys_command(d, &m, fd) < 0) {
            munmap(d->ys_region, bytes);
            d->ys_region = NULL;
            if (fd >= 0)
                close(fd);
            return ys_gone(d, why, len);
        }
        if (fd >= 0)
            close(fd);
        if (d->ys_region == MAP_FAILED) {
            d->ys_region = NULL;
            d->status = "error";
            snprintf(why, len, "cannot map the yardstick's slots (%zu bytes)", bytes);
            return -1;
        }
        d->ys_bytes = bytes;
    }
    avo_measure_guard_fill_at(d->region, bytes, 0);
    return command(d, CMD_LAYOUT, cfg, nslots, NULL, why, len);
}

static unsigned char *dev_data(void *self, size_t slot, size_t arg)
{
    cpu_device *d = self;
    return d->region + slot * d->l.slot_bytes + d->l.offset[arg];
}

/* Every byte of slot s outside the argument data holds the guard pattern. */
static int dev_guards_intact(void *self, size_t slot, const char **ret_arg)
{
    cpu_device *d = self;
    const avo_jobspec *spec = &d->job->spec;
    size_t base = slot * d->l.slot_bytes, at = 0;
    *ret_arg = "";
    for (size_t i = 0; i < spec->nargs; i++) {
        if (spec->args[i].kind == AVO_ARG_SCALAR)
            continue;
        size_t start = d->l.offset[i], end = start + d->l.bytes[i];
        if (!avo_measure_guard_intact_at(d->region + base + at, start - at, base + at)) {
            *ret_arg = spec->args[i].name;
            return 0;
        }
        at = end;
        size_t next = (end + d->l.page - 1) / d->l.page * d->l.page + d->l.page;
        if (d->l.bytes[i] == 0)
            next = (start + 1 + d->l.page - 1) / d->l.page * d->l.page + d->l.page;
        if (!avo_measure_guard_intact_at(d->region + base + at, next - at, base + at)) {
            *ret_arg = spec->args[i].name;
            return 0;
        }
        at = next;
    }
    return avo_measure_guard_intact_at(d->region + base + at, d->l.slot_bytes - at, base + at);
}

static int dev_run_candidate(void *self, const avo_config_spec *cfg, size_t nslots, double *ret_s,
                             char *why, size_t len)
{
    cpu_device *d = self;
    (void)cfg;
    return command(d, CMD_CALL, d->cfg, nslots, ret_s, why, len);
}

static unsigned char *dev_ys_data(void *self, size_t slot, size_t arg)
{
    cpu_device *d = self;
    return d->ys_region + slot * d->l.slot_bytes + d->l.offset[arg];
}

static double ys_cpu(const cpu_device *d)
{
    struct timespec t;
    if (!d->ys_have_clock || clock_gettime(d->ys_clock, &t) < 0)
        return avo_monotonic();
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/*
 * The yardstick: once on each of its slots, in its runner, timed by the
 * runner's CPU time as the single-threaded candidate is timed by its
 * process's (a yardstick needs threads = 1).  The candidate is stopped
 * meanwhile, so nothing it does runs beside it.
 */
static int dev_run_yardstick(void *self, const avo_config_spec *cfg, size_t nslots, double *ret_s,
                             char *why, size_t len)
{
    cpu_device *d = self;
    ys_msg m = {.op = CMD_CALL,
                .config = avo_cpu_config_index(&d->job->spec, cfg),
                .nslots = nslots};
    double t0 = ys_cpu(d);
    if (ys_command(d, &m, -1) < 0)
        return ys_gone(d, why, len);
    *ret_s = ys_cpu(d) - t0;
    return 0;
}

static int dev_run_reference(void *self, const avo_config_spec *cfg, void **buffers, char *why,
                             size_t len)
{
    cpu_device *d = self;
    (void)why, (void)len;
    avo_cpu_call_kernel(&d->job->spec, &d->sig, d->ref_fn, cfg, buffers);
    return 0;
}

static void report(json_t *msg)
{
    if (msg)
        avo_proto_send(REPORT_FD, msg, NULL, 0);
    json_decref(msg);
}

static _Noreturn void judge_done(const char *status, const char *reason)
{
    json_t *text = reason ? avo_result_text(reason, strlen(reason)) : json_null();
    report(json_pack("{s:{s:s, s:o*, s:b}}", "done", "status", status, "reason", text, "outside",
                     killed_outside && !strcmp(status, "crashed")));
    _exit(0);
}

/* Start the yardstick's runner (before the judge's seccomp filter). */
static void spawn_ys_runner(cpu_device *d, const char *ys_so)
{
    int sv[2];
    d->ys_fd = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        judge_done("error", "cannot create the yardstick's socket");
    pid_t pid = avo_supervise_fork(AVO_CHILD_CRASH_DEFAULT);
    if (pid < 0)
        judge_done("error", "cannot fork the yardstick's process");
    if (pid == 0) {
        int sock = fcntl(sv[1], F_DUPFD, REPORT_FD + 2);
        if (sock < 0 || dup2(sock, REPORT_FD + 1) < 0)
            _exit(127);
        close_range(0, REPORT_FD, 0);
        close_range(REPORT_FD + 2, ~0u, 0);
        ys_runner(d->job, ys_so, REPORT_FD + 1);
    }
    close(sv[1]);
    d->ys_fd = sv[0];
    d->ys_pid = pid;
    d->ys_have_clock = clock_getcpuclockid(pid, &d->ys_clock) == 0;
}

/*
 * Start the candidate as a uid of its own (held, in d->lease, while the
 * judge lives) with the object `so_fd`, the command and acknowledgement
 * pipes and the argument region, before anything of the reference exists.
 * Returns the read end of its set-up pipe; ends the judge on failure.
 */
static int spawn_candidate(cpu_device *d, int so_fd)
{
    const cpu_job *job = d->job;
    char err[AVO_ERRLEN];
    if (avo_sandbox_uid_acquire(&d->lease, err, sizeof err) < 0)
        judge_done("error", err);
    if (job->scratch && geteuid() == 0 && chown(job->scratch, d->lease.uid, d->lease.uid) < 0)
        judge_done("error", "cannot give the kernel's scratch directory to its uid");
    int cmd[2], ack[2], setup[2];
    int region_fd = memfd_create("avo-arguments", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (region_fd < 0 || pipe2(cmd, O_CLOEXEC) < 0 || pipe2(ack, O_CLOEXEC) < 0 ||
        pipe2(setup, O_CLOEXEC) < 0)
        judge_done("error", "cannot create the candidate's pipes or memory");
    /* The candidate may map the region, but never shrink it under the judge. */
    fcntl(region_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL);
    d->cmd_fd = cmd[1];
    d->ack_fd = ack[0];
    d->region_fd = region_fd;
    /* What the harness maps, taken before the candidate exists (libraries.h). */
    if (avo_libraries_baseline_take(&d->harness) < 0)
        d->harness.n = 0;
    d->own_fd = fcntl(so_fd, F_DUPFD_CLOEXEC, 10);
    d->cand = avo_cpu_candidate_start(job, d->lease.uid, cmd[0], ack[1], region_fd, so_fd, setup[1],
                                      &d->maps_fd);
    if (d->cand < 0)
        judge_done("error", "cannot fork the kernel process");
    d->have_cpu_clock = clock_getcpuclockid(d->cand, &d->cpu_clock) == 0;
    d->use_cpu_clock = job->spec.threads == 1 && d->have_cpu_clock;
    close(cmd[0]);
    close(ack[1]);
    close(setup[1]);
    close(so_fd);
    return setup[0];
}

/*
 * Wait for the candidate's start answers: its sandbox set up (on `setup_fd`,
 * the pipe the kernel never holds: only a failure reported there is the
 * machine's), then its kernel loaded.  Returns when it is ready; otherwise
 * ends the judge with the verdict its start earned.
 */
static void await_candidate(cpu_device *d, int setup_fd)
{
    char setup_text[AVO_ERRLEN] = "";
    ssize_t got = read(setup_fd, setup_text, sizeof setup_text - 1);
    close(setup_fd);
    if (got <= 0 || setup_text[0] != SETUP_DONE) {
        setup_text[got > 0 ? got : 0] = '\0';
        judge_done("error", got > 1 && setup_text[0] == SETUP_FAILED
                                ? setup_text + 1
                                : "the kernel's sandbox could not be set up");
    }
    char hello = 0;
    if (avo_read_all(d->ack_fd, &hello, 1) == 1 && hello == HELLO_READY)
        return;
    char why[512];
    if (hello == HELLO_NO_SYMBOL) {
        snprintf(why, sizeof why, "symbol '%.200s' not found in candidate", d->job->spec.entry);
        judge_done("invalid", why);
    }
    if (hello != 0 && hello != HELLO_LOAD_FAILED) {
        /* Written by the kernel's own code (a constructor): no answer the
         * harness gives. */
        kill(d->cand, SIGKILL);
        snprintf(why, sizeof why,
                 "the kernel wrote a start answer of its own (byte 0x%02x) before the harness's",
                 (unsigned char)hello);
        judge_done("crashed", why);
    }
    int status = 0;
    while (waitpid(d->cand, &status, 0) < 0 && errno == EINTR)
        ;
    if (hello == HELLO_LOAD_FAILED)
        judge_done("compile_error", "link error: the kernel does not load (see log)");
    d->cand = -1;
    char name[128];
    int sig = avo_supervise_death(status, name, sizeof name);
    killed_outside = sig && death_from_outside(status, 0);
    snprintf(why, sizeof why, "%s %s while loading",
             killed_outside ? "killed from outside by"
             : sig          ? "crashed with"
                            : "kernel process exited with",
             name);
    judge_done("crashed", why);
}

/* The function `entry` of the trusted object `so` (the reference, the
 * yardstick), loaded into the judge; ends the judge ("invalid", naming
 * `what`) when it cannot be called. */
static kernel_fn load_trusted(const char *so, const char *entry, const char *what)
{
    void *handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    void *sym = handle ? dlsym(handle, entry) : NULL;
    if (!sym) {
        char err[AVO_ERRLEN];
        const char *e = dlerror();
        snprintf(err, sizeof err, "%s: %s", what, e ? e : "entry point not found");
        judge_done("invalid", err);
    }
    kernel_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    return fn;
}

/* Load the reference `ref_so` into the judge, and the yardstick `ys_so`
 * (the evaluator's seed at its knobs' first values) where the job has one;
 * ends the judge when either cannot be called. */
static void load_reference(cpu_device *d, const char *ref_so, const char *ys_so)
{
    const avo_jobspec *spec = &d->job->spec;
    d->ref_fn = load_trusted(ref_so, spec->ref_entry, "reference");
    if (ys_so)
        d->ys_fn = load_trusted(ys_so, spec->entry, "yardstick (the evaluator's seed)");
    if (avo_cpu_call_sig_init(spec, &d->sig) < 0)
        judge_done("invalid", "libffi cannot describe the argument list");
}

/*
 * After the timed calls, while the candidate is stopped: report the
 * libraries it loaded beyond its object and the harness's runtime, read
 * from its mappings by the judge (libraries.h), never asked of it.  One the
 * evaluator forbids makes it "invalid"; so does a policy that cannot be
 * checked because the mappings cannot be read.
 */
static void note_libraries(cpu_device *d)
{
    char err[AVO_ERRLEN];
    json_t *found =
        avo_libraries_observe(d->cand, d->maps_fd, &d->harness, d->own_fd, err, sizeof err);
    const json_t *policy = d->job->libraries;
    const char *rule = json_string_value(policy);
    int restricted = policy && !json_is_null(policy) && !(rule && !strcmp(rule, "allow"));
    if (!found) {
        report(json_pack("{s:s}", "libraries_unobserved", err));
        if (restricted) {
            char why[AVO_ERRLEN + 96];
            snprintf(why, sizeof why, "the evaluator restricts libraries, and %s", err);
            judge_done("error", why);
        }
        return;
    }
    report(json_pack("{s:O}", "libraries", found));
    char path[1024];
    if (!avo_libraries_allowed(found, policy, path, sizeof path)) {
        char why[1200];
        snprintf(why, sizeof why, "loads a library the evaluator %s: %s",
                 rule ? "forbids (libraries = \"forbid\")" : "does not allow (libraries = {...})",
                 path);
        json_decref(found);
        judge_done("invalid", why);
    }
    json_decref(found);
}

/* The judge's body, once its fds are in place (avo_cpu_judge_main): set up,
 * start the candidate, then judge config by config, reporting as it goes. */
static _Noreturn void judge_run(const cpu_job *job, int so_fd, const char *ref_so)
{
    const avo_jobspec *spec = &job->spec;
    /* Crash signals are back to SIG_DFL (avo_supervise_fork), so the judge
     * dies by the signal, whatever it inherited. */
    signal(SIGPIPE, SIG_IGN); /* a candidate that hangs up is an answer */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    avo_sandbox_harden();
    avo_sandbox_scrub_secrets(); /* the worker's transport key, if it has one */

    cpu_device d = {.job = job, .ys_fd = -1};
    /* One CPU for judge and candidate while it times (pin.c); a kernel
     * allowed threads keeps every CPU. */
    int pin_fd = -1;
    int cpu = spec->threads == 1 ? avo_cpu_pin(&pin_fd) : -1;
    if (cpu >= 0)
        report(json_pack("{s:i}", "pinned", cpu));
    int setup_fd = spawn_candidate(&d, so_fd);
    if (job->ys_so)
        spawn_ys_runner(&d, job->ys_so);
    char err[AVO_ERRLEN];
    if (avo_sandbox_seccomp_trusted(1, err, sizeof err) < 0)
        judge_done("error", err);
    await_candidate(&d, setup_fd);
    load_reference(&d, ref_so, job->ys_so);

    avo_judge_device dev = {.self = &d,
                            .layout = dev_layout,
                            .data = dev_data,
                            .guards_intact = dev_guards_intact,
                            .run_candidate = dev_run_candidate,
                            .run_reference = dev_run_reference,
                            .ys_data = d.ys_fn ? dev_ys_data : NULL,
                            .run_yardstick = d.ys_fn ? dev_run_yardstick : NULL};
    size_t total = spec->nconfigs + spec->ncheck_configs;
    for (size_t c = 0; c < total; c++) {
        int timed = c < spec->nconfigs;
        const avo_config_spec *cfg =
            timed ? &spec->configs[c] : &spec->check_configs[c - spec->nconfigs];
        report(json_pack("{s:s}", "progress", cfg->name));
        json_t *entry = avo_result_config_new(cfg->name);
        char reason[1024];
        d.status = NULL;
        int outcome = avo_judge_config(spec, &dev, cfg, timed, entry, reason, sizeof reason);
        report(json_pack("{s:o}", timed ? "config" : "check", entry));
        if (outcome == AVO_JUDGE_WRONG)
            judge_done("wrong", reason);
        if (outcome == AVO_JUDGE_FAILED)
            judge_done(d.status ? d.status : "error", reason);
    }
    note_libraries(&d);
    command(&d, CMD_EXIT, NULL, 0, NULL, err, sizeof err);
    judge_done("ok", NULL);
}

/* Move the judge's pipes to their fixed numbers, the candidate's object
 * above them, and close the rest.  Returns the object's new fd. */
static int judge_fds(int log_fd, int report_fd, int so_fd)
{
    int so = fcntl(so_fd, F_DUPFD_CLOEXEC, 10);
    int rep = fcntl(report_fd, F_DUPFD, 10);
    int log = fcntl(log_fd, F_DUPFD, 10);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0 && devnull != 0) {
        dup2(devnull, 0);
        close(devnull);
    }
    log_fd = log;
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    dup2(rep, REPORT_FD);
    dup2(so, REPORT_FD + 1);
    fcntl(REPORT_FD + 1, F_SETFD, FD_CLOEXEC);
    close_range(REPORT_FD + 2, ~0u, 0);
    return REPORT_FD + 1;
}

_Noreturn void avo_cpu_judge_main(const cpu_job *job, int log_fd, int report_fd, int so_fd,
                                  const char *ref_so)
{
    judge_run(job, judge_fds(log_fd, report_fd, so_fd), ref_so);
}
