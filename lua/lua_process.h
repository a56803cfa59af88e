/*
 * lua_process.h — child processes for the experiment runner
 * (lua/avo/experiment.lua), which runs each cell of a grid as its own
 * `avo run` / `avo resume` process, several at once.
 *
 *   core.spawn(argv, log_path) -> pid | nil, message
 *       argv[1] is run with argv[2..] (no shell), stdin /dev/null, stdout and
 *       stderr appended to log_path; the child gets SIGTERM when this process
 *       dies (even by SIGKILL), so no cell outlives its runner.
 *   core.reap(pid)             -> nil (still running) | status
 *       status: the exit status, or 128 + N for a child killed by signal N.
 *   core.signal(pid, "TERM"|"KILL"|"INT") -> true | nil, message
 *   core.sleep(seconds)
 *   core.lock(path)            -> true | nil, message ("held by another process")
 *       an exclusive flock held until this process ends (however it ends)
 */
#ifndef AVO_LUA_PROCESS_H
#define AVO_LUA_PROCESS_H

#include <lua.h>

/* [-0, +0] Set the core.* functions above into the table on top of the stack. */
void avo_lua_process_register(lua_State *L);

#endif
