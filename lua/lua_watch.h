/*
 * lua_watch.h — stopping a run from Lua (lua/lua_watch.c).
 *
 *   core.catch_interrupts()   the first SIGINT, SIGTERM or SIGHUP only sets a flag
 *   core.interrupted()        -> the signal number that asked to stop, or false
 *   core.watch(deadline_or_nil, grace_s [, db, run_id]) -> true | nil, why (with db)
 *                             arm the count hook (and the watchdog thread)
 *   core.unwatch()            -> why the watchdog stopped the script, or nil
 *   core.task_enter(), core.task_leave()   the scheduler resumes / regains a task
 */
#ifndef AVO_LUA_WATCH_H
#define AVO_LUA_WATCH_H

#include <lua.h>

/* [-0, +0] Set the functions above into the table on top of the stack. */
void avo_lua_watch_register(lua_State *L);

#endif
