/*
 * lua_watch.c — stopping a run from Lua: the signals that ask it to stop
 * (core.catch_interrupts, core.interrupted) and the watchdog over script
 * code that no longer yields (core.watch, core.unwatch, with the watchdog
 * thread of watchdog.h for code stuck inside one C call).
 */
#include "lua/lua_watch.h"

#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>

#include "core/avo.h"
#include "lua/binding.h"
#include "lua/watchdog.h"

/* The signal that asked the run to stop, 0 before one; set by on_interrupt. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    if (!interrupted) {
        interrupted = sig;
        avo_watchdog_signal(sig, 0);
        return;
    }
    /* A second signal stops at once: the watchdog thread records the run
     * and ends the process; without it, the signal's default action. */
    if (avo_watchdog_signal(sig, 1))
        return;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* core.catch_interrupts(): the first SIGINT, SIGTERM or SIGHUP only sets a
 * flag, so the run can stop starting work and end cleanly. */
static int core_catch_interrupts(lua_State *L)
{
    (void)L;
    struct sigaction sa = {0};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    return 0;
}

/* core.interrupted() -> the number of the signal that asked to stop, or false */
static int core_interrupted(lua_State *L)
{
    if (interrupted)
        lua_pushinteger(L, interrupted);
    else
        lua_pushboolean(L, 0);
    return 1;
}

/*
 * The watchdog: a count hook that stops script code which no longer yields
 * to the engine (a busy loop in a strategy) once the run is past its
 * deadline, or was asked to stop by a signal, by `grace` seconds.  Tasks
 * are coroutines, which inherit the hook of the thread that creates them;
 * only they are stopped, never the engine's own code on the main thread.
 * Once fired, the hook re-arms itself to run on every instruction of the
 * thread it stopped, so a pcall in the script cannot swallow the error
 * (as Redis stops runaway scripts, script_lua.c).
 */
#define WATCH_COUNT 100000

static struct {
    double deadline;       /* monotonic seconds; 0: none */
    double grace;          /* seconds past deadline or signal before stopping */
    double interrupted_at; /* when the hook first saw the signal flag */
    int fired;
    char why[256];
} watch;

static void watch_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (lua_pushthread(L)) { /* the main thread: engine code */
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    if (!watch.fired) {
        double now = avo_monotonic();
        if (interrupted && watch.interrupted_at == 0)
            watch.interrupted_at = now;
        if (interrupted && now - watch.interrupted_at >= watch.grace) {
            watch.fired = 1;
            snprintf(watch.why, sizeof watch.why,
                     "the script still ran %g s after the signal to stop (a loop that never"
                     " calls avo.evaluate or checks avo.exhausted()?); stopped it",
                     watch.grace);
        } else if (watch.deadline > 0 && now >= watch.deadline + watch.grace) {
            watch.fired = 1;
            snprintf(watch.why, sizeof watch.why,
                     "the script still ran %g s after --max-time (a loop that never calls"
                     " avo.evaluate or checks avo.exhausted()?); stopped it",
                     watch.grace);
        }
    }
    if (watch.fired) {
        lua_sethook(L, watch_hook, LUA_MASKCOUNT, 1);
        luaL_error(L, "avo: %s", watch.why);
    }
}

/* core.watch(deadline_or_nil, grace_s [, db, run_id]): arm the watchdog
 * on the calling (main) thread, so every task created from now on inherits
 * it; with the run's archive and id, also the watchdog thread (watchdog.h),
 * which ends the process when a task stays inside one C call past the
 * grace, or on a second signal.  Returns true, or false and why the thread
 * could not be armed (the count hook still runs). */
static int core_watch(lua_State *L)
{
    watch.deadline = luaL_optnumber(L, 1, 0);
    watch.grace = luaL_checknumber(L, 2);
    const char *db = luaL_optstring(L, 3, NULL);
    lua_Integer run_id = luaL_optinteger(L, 4, 0);
    watch.interrupted_at = 0;
    watch.fired = 0;
    watch.why[0] = '\0';
    lua_sethook(L, watch_hook, LUA_MASKCOUNT, WATCH_COUNT);
    if (!db)
        return 0;
    char err[AVO_ERRLEN];
    if (avo_watchdog_arm(db, run_id, watch.deadline, watch.grace, err, sizeof err) < 0)
        return avo_lua_push_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}

/* core.unwatch() -> why the watchdog stopped the script, or nil */
static int core_unwatch(lua_State *L)
{
    lua_sethook(L, NULL, 0, 0);
    avo_watchdog_disarm();
    if (!watch.fired)
        return 0;
    lua_pushstring(L, watch.why);
    return 1;
}

/* core.task_enter() / core.task_leave(): the scheduler resumes a task /
 * the task gave control back (the watchdog thread times single calls). */
static int core_task_enter(lua_State *L)
{
    (void)L;
    avo_watchdog_task_enter();
    return 0;
}

static int core_task_leave(lua_State *L)
{
    (void)L;
    avo_watchdog_task_leave();
    return 0;
}

void avo_lua_watch_register(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"catch_interrupts", core_catch_interrupts},
        {"interrupted", core_interrupted},
        {"watch", core_watch},
        {"unwatch", core_unwatch},
        {"task_enter", core_task_enter},
        {"task_leave", core_task_leave},
        {NULL, NULL},
    };
    luaL_setfuncs(L, functions, 0);
}
