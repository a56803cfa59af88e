/*
 * watchdog.c — the thread that ends a run script code will not let go of
 * (see watchdog.h for what it guarantees and why it is a thread).
 */
#include "lua/watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/archive.h"
#include "core/avo.h"

/* What the main thread and the signal handler tell the thread.  The
 * configuration (under `lock`) changes once per run; the rest are atomics
 * the signal handler and the scheduler store without locking. */
static struct {
    pthread_mutex_t lock;
    int started;   /* the thread runs (never stops before the process) */
    int armed;     /* script code is watched (between arm and disarm) */
    char db[4096]; /* the run's archive; "": none to record into */
    int64_t run_id;
    double deadline; /* monotonic seconds; 0: none */
    double grace;
    double signal_seen; /* monotonic seconds the thread first saw the signal */
} wd = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int wake_pipe[2] = {-1, -1}; /* the signal handler -> the thread */
static atomic_int first_signal;     /* the signal that asked to stop, or 0 */
static atomic_int second_signal;    /* a signal after it, or 0 */
static atomic_int thread_ready;     /* the thread polls wake_pipe */
static atomic_llong task_since_us;  /* when the running task was resumed; 0: none */

static long long now_us(void)
{
    return (long long)(avo_monotonic() * 1e6);
}

void avo_watchdog_task_enter(void)
{
    atomic_store(&task_since_us, now_us());
}

void avo_watchdog_task_leave(void)
{
    atomic_store(&task_since_us, 0);
}

int avo_watchdog_signal(int sig, int again)
{
    if (!again) {
        atomic_store(&first_signal, sig);
        return 0;
    }
    if (!atomic_load(&thread_ready))
        return 0;
    atomic_store(&second_signal, sig);
    int saved = errno;
    ssize_t n = write(wake_pipe[1], "!", 1);
    (void)n; /* a full pipe already holds a wake-up */
    errno = saved;
    return 1;
}

/* "SIGINT" for 2, ... (the three signals that ask a run to stop). */
static const char *signal_name(int sig)
{
    return sig == SIGINT    ? "SIGINT"
           : sig == SIGTERM ? "SIGTERM"
           : sig == SIGHUP  ? "SIGHUP"
                            : "a signal";
}

/*
 * Record `status` for the watched run (only while it is `running`), print
 * `why` and what was recorded as one stderr line, and end the process with
 * `code`.  Runs on the watchdog thread; never returns.
 */
static void end_process(const char *status, int code, const char *why)
{
    char err[AVO_ERRLEN] = "";
    char line[8192];
    pthread_mutex_lock(&wd.lock);
    /* The connection is opened only now: a second connection held by this
     * process all along made SQLite lose the main one's WAL when another
     * process closed the archive (tests/faults/concurrent.sh). */
    avo_archive *archive = NULL;
    int rc = 0;
    if (wd.db[0] && strcmp(wd.db, ":memory:") != 0) {
        rc = avo_archive_open(&archive, wd.db, err, sizeof err);
        if (rc == 0)
            rc = avo_archive_run_end_running(archive, wd.run_id, status, err, sizeof err);
    }
    if (rc > 0)
        snprintf(line, sizeof line,
                 "avo: %s; run %lld recorded as %s (`avo resume --db %s` continues it)\n", why,
                 (long long)wd.run_id, status, wd.db);
    else if (rc < 0)
        snprintf(line, sizeof line, "avo: %s; cannot record the end of run %lld: %s\n", why,
                 (long long)wd.run_id, err);
    else
        snprintf(line, sizeof line, "avo: %s\n", why);
    ssize_t n = write(2, line, strlen(line));
    (void)n;
    _exit(code);
}

/* What the thread does on each wake-up: a second signal ends the process
 * at once; a task still inside one call past the grace ends it too. */
static void check(void)
{
    char why[512];
    int again = atomic_load(&second_signal);
    if (again) {
        snprintf(why, sizeof why, "a second %s: stopped at once", signal_name(again));
        end_process("interrupted", 128 + again, why);
    }
    double now = avo_monotonic();
    int sig = atomic_load(&first_signal);
    pthread_mutex_lock(&wd.lock);
    if (sig && wd.signal_seen == 0)
        wd.signal_seen = now;
    int armed = wd.armed;
    double stop_at = sig ? wd.signal_seen : wd.deadline;
    double grace = wd.grace;
    pthread_mutex_unlock(&wd.lock);
    long long since = atomic_load(&task_since_us);
    if (!armed || stop_at <= 0 || since == 0)
        return;
    /* The task was resumed before the grace ended, or after it without
     * giving control back for the margin: one call the hook cannot reach. */
    double from = stop_at + grace;
    if ((double)since / 1e6 > from)
        from = (double)since / 1e6;
    if (now < from + AVO_WATCHDOG_MARGIN_S)
        return;
    snprintf(why, sizeof why,
             "the script still ran %g s after %s, inside one call the count hook cannot"
             " interrupt (C code such as a string.find that backtracks); ended the process",
             grace, sig ? "the signal to stop" : "--max-time");
    if (sig)
        end_process("interrupted", 128 + sig, why);
    end_process("failed", 1, why);
}

static void *watchdog_main(void *arg)
{
    (void)arg;
    /* Signals go to the main thread (its handler sets the flags). */
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    atomic_store(&thread_ready, 1);
    for (;;) {
        struct pollfd p = {.fd = wake_pipe[0], .events = POLLIN};
        if (poll(&p, 1, 100) > 0) {
            char buf[64];
            while (read(wake_pipe[0], buf, sizeof buf) > 0)
                ;
        }
        check();
    }
    return NULL;
}

int avo_watchdog_arm(const char *db, int64_t run_id, double deadline, double grace, char *err,
                     size_t errlen)
{
    pthread_mutex_lock(&wd.lock);
    snprintf(wd.db, sizeof wd.db, "%s", db ? db : "");
    wd.run_id = run_id;
    wd.deadline = deadline;
    wd.grace = grace;
    wd.signal_seen = 0;
    wd.armed = 1;
    int started = wd.started;
    pthread_mutex_unlock(&wd.lock);
    if (started)
        return 0;
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return avo_error(err, errlen, AVO_EIO, "watchdog: pipe: %s", strerror(errno));
    pthread_t thread;
    int e = pthread_create(&thread, NULL, watchdog_main, NULL);
    if (e != 0)
        return avo_error(err, errlen, AVO_ENOMEM, "watchdog: cannot start its thread: %s",
                         strerror(e));
    pthread_detach(thread);
    pthread_mutex_lock(&wd.lock);
    wd.started = 1;
    pthread_mutex_unlock(&wd.lock);
    return 0;
}

void avo_watchdog_disarm(void)
{
    pthread_mutex_lock(&wd.lock);
    wd.armed = 0;
    pthread_mutex_unlock(&wd.lock);
}
