/*
 * lua_pool.h — the avo.Pool userdata (lua/lua_pool.c): worker processes
 * (scale/pool.h) seen from Lua.
 *
 *   core.pool(jobs, worker_exe)      -> Pool | nil, message   (0 <= jobs <= 1024)
 *   pool:submit(job_table, deadline_s) -> ticket
 *   pool:pending()                   -> queued, running
 *   pool:close()                     (also __gc, __close; idempotent)
 *
 * Results arrive through core.wait (lua/lua_loop.c), which knows the type by
 * AVO_LUA_POOL_MT; lua/lua_remote.c adds the scale-out methods.
 */
#ifndef AVO_LUA_POOL_H
#define AVO_LUA_POOL_H

#include <lua.h>

#include "core/loop.h"

#define AVO_LUA_POOL_MT "avo.Pool"

/* [-0, +0] Create avo.Pool and set core.pool into the table on top. */
void avo_lua_pool_register(lua_State *L);

/* The event-loop source of an open Pool userdata. */
avo_loop_source avo_lua_pool_source(void *ud);

#endif
