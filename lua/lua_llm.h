/*
 * lua_llm.h — the avo.Llm userdata (lua/lua_llm.c): core/llm.h seen from Lua.
 *
 *   core.llm(seed)              -> Llm
 *   llm:submit(request_table)   -> ticket   (request as in avo_llm_submit)
 *   llm:pending()               -> n
 *   llm:close()                 (also __gc, __close; idempotent)
 *
 * Answers arrive through core.wait, which knows the type by AVO_LUA_LLM_MT.
 */
#ifndef AVO_LUA_LLM_H
#define AVO_LUA_LLM_H

#include <lua.h>

#include "core/loop.h"

#define AVO_LUA_LLM_MT "avo.Llm"

/* [-0, +0] Create avo.Llm and set core.llm into the table on top of the stack. */
void avo_lua_llm_register(lua_State *L);

/* The event-loop source of an open Llm userdata (its block pointer). */
avo_loop_source avo_lua_llm_source(void *ud);

#endif
