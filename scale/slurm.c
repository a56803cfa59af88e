/*
 * slurm.c — start, watch and end the Slurm job step of a run's remote
 * workers (slurm.h).
 */
#include "scale/slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/avo.h"
#include "core/strbuf.h"

struct avo_slurm {
    pid_t pid;
    int status;
    int exited;
    char *job_name;
};

/* Append s to b single-quoted for /bin/sh. */
static void shell_quote(avo_strbuf *b, const char *s)
{
    avo_strbuf_puts(b, "'");
    for (; *s; s++) {
        if (*s == '\'')
            avo_strbuf_puts(b, "'\\''");
        else
            avo_strbuf_append(b, s, 1);
    }
    avo_strbuf_puts(b, "'");
}

int avo_slurm_start(avo_slurm **ret, const char *options, int ntasks, const char *job_name,
                    char *const *worker_argv, const char *secret, const char *log_path, char *err,
                    size_t errlen)
{
    *ret = NULL;
    avo_strbuf cmd = {0};
    avo_strbuf_printf(&cmd, "exec srun --job-name=");
    shell_quote(&cmd, job_name);
    /* --no-kill: a node that fails takes only its own tasks with it (the
     * engine requeues their candidates), not the whole step. */
    avo_strbuf_printf(&cmd, " --ntasks=%d --kill-on-bad-exit=0 --no-kill %s", ntasks,
                      options ? options : "");
    for (char *const *a = worker_argv; *a; a++) {
        avo_strbuf_puts(&cmd, " ");
        shell_quote(&cmd, *a);
    }
    if (cmd.failed || !cmd.data)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    avo_slurm *s = calloc(1, sizeof *s);
    if (!s || !(s->job_name = strdup(job_name))) {
        free(s);
        avo_strbuf_free(&cmd);
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log < 0) {
        int e = errno;
        avo_slurm_free(s);
        avo_strbuf_free(&cmd);
        return avo_error(err, errlen, AVO_EIO, "cannot open %s: %s", log_path, strerror(e));
    }
    pid_t parent = getpid();
    /* outside the supervisor: srun gets SIGTERM, not SIGKILL, when we die, to end its allocation */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(log);
        avo_slurm_free(s);
        avo_strbuf_free(&cmd);
        return avo_error(err, errlen, AVO_ECHILD, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(1);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0)
            _exit(127);
        setenv("AVO_WORKER_SECRET", secret, 1);
        unsetenv("AVO_WORKER_SECRET_FILE");
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execl("/bin/sh", "sh", "-c", avo_strbuf_text(&cmd), (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    close(log);
    avo_strbuf_free(&cmd);
    s->pid = pid;
    *ret = s;
    return 0;
}

/* How srun ended, in the words of pool.c's describe_exit (see there why
 * not avo_supervise_death's), with exit 127 read as "not installed". */
static void describe(int status, char *what, size_t len)
{
    if (WIFSIGNALED(status))
        snprintf(what, len, "srun died with signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (WEXITSTATUS(status) == 127)
        snprintf(what, len, "srun could not be started (is Slurm installed?)");
    else
        snprintf(what, len, "srun exited with status %d", WEXITSTATUS(status));
}

int avo_slurm_running(avo_slurm *s, char *what, size_t len)
{
    if (!s->exited && s->pid > 0) {
        int status;
        pid_t r = waitpid(s->pid, &status, WNOHANG);
        if (r == s->pid) {
            s->exited = 1;
            s->status = status;
            s->pid = 0;
        }
    }
    if (!s->exited)
        return 1;
    describe(s->status, what, len);
    return 0;
}

pid_t avo_slurm_pid(const avo_slurm *s)
{
    return s->pid;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

void avo_slurm_stop(avo_slurm *s, double grace_s)
{
    if (!s)
        return;
    char what[128];
    /* Workers told goodbye end the step by themselves; give them grace_s. */
    double end = avo_monotonic() + grace_s;
    while (avo_slurm_running(s, what, sizeof what) && avo_monotonic() < end)
        sleep_ms(50);
    if (avo_slurm_running(s, what, sizeof what)) {
        kill(s->pid, SIGTERM);
        end = avo_monotonic() + grace_s;
        while (avo_slurm_running(s, what, sizeof what) && avo_monotonic() < end)
            sleep_ms(50);
    }
    /* Whatever srun left behind (a pending allocation, a step srun could not
     * end) goes by the job's unique name. */
    /* outside the supervisor: scancel is a short command waited for at once, during shutdown */
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        char name[300];
        snprintf(name, sizeof name, "--name=%s", s->job_name);
        execlp("scancel", "scancel", name, (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    if (avo_slurm_running(s, what, sizeof what)) {
        kill(-s->pid, SIGKILL);
        kill(s->pid, SIGKILL);
        int status;
        while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
            ;
        s->exited = 1;
        s->status = status;
        s->pid = 0;
    }
}

void avo_slurm_free(avo_slurm *s)
{
    if (!s)
        return;
    avo_slurm_stop(s, 0.0);
    free(s->job_name);
    free(s);
}
