/*
 * watchdog.h — the run's last line of defence: a thread that ends the
 * process when script code cannot be stopped any other way, after
 * recording the run's final status in the archive.
 *
 * The count hook in lua/lua_watch.c stops script code that keeps executing Lua
 * past --max-time or a signal to stop.  It never fires inside one long call
 * of a C function (a string.find that backtracks for minutes), and a second
 * SIGINT/SIGTERM/SIGHUP must end the process at once.  In both cases this
 * thread, which opens its own connection to the archive, records the run
 * (`interrupted` after a signal, `failed` after --max-time, only while it is
 * still `running`), prints one line and _exit()s with the status the
 * README's exit-status table gives.  SQLite is crash safe, so ending the
 * process while the main thread is inside a C function loses nothing.
 *
 * Invariants: the thread never forks and never touches the Lua state; the
 * main thread tells it when script code runs (task_enter/task_leave); the
 * signal handler only stores atomics and writes one byte to a pipe.
 */
#ifndef AVO_LUA_WATCHDOG_H
#define AVO_LUA_WATCHDOG_H

#include <stddef.h>
#include <stdint.h>

/* Seconds a task may stay in one call past the end of the grace before the
 * thread ends the process (the count hook stops Lua loops well before). */
#define AVO_WATCHDOG_MARGIN_S 1.0

/*
 * Watch run `run_id` of archive `db`: script code still running `grace`
 * seconds after `deadline` (monotonic seconds; 0: none) or after the first
 * signal to stop is ended with the process.  Starts the thread on the first
 * call; the thread opens the archive only when it ends the process (with a
 * second connection held all along, another process closing the archive
 * during a resume deleted the WAL the run was writing to: faults_concurrent).  Returns 0, or a
 * negative AVO_E* code with `err` filled (the run then goes on with the count hook alone).
 */
int avo_watchdog_arm(const char *db, int64_t run_id, double deadline, double grace, char *err,
                     size_t errlen);

/* Script code no longer runs: stop watching it.  A second signal is still
 * handled (recorded only while the run is `running`) until the process ends. */
void avo_watchdog_disarm(void);

/* The scheduler resumes a task / the task gave control back. */
void avo_watchdog_task_enter(void);
void avo_watchdog_task_leave(void);

/*
 * From a signal handler (async-signal-safe): signal `sig` asked the run to
 * stop; `again` when one already had.  Returns 1 when the thread will end
 * the process for a repeated signal, 0 when no thread runs (the caller then
 * falls back to the default action).
 */
int avo_watchdog_signal(int sig, int again);

#endif
