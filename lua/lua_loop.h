/*
 * lua_loop.h — core.wait (lua/lua_loop.c): wait on the event sources Lua
 * holds (pools, LLM clients) at once.
 *
 *   core.wait(timeout_ms, source...) -> index, ticket, result
 *                                     | false (nothing pending anywhere)
 *                                     | nil (timeout or interrupted)
 */
#ifndef AVO_LUA_LOOP_H
#define AVO_LUA_LOOP_H

#include <lua.h>

/* [-0, +0] Set core.wait into the table on top of the stack. */
void avo_lua_loop_register(lua_State *L);

#endif
