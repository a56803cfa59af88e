/*
 * lua_loop.c — core.wait: the event loop (core/loop.h) over the sources
 * Lua holds open, the worker pool and the LLM client.  The scheduler
 * (lua/avo/sched.lua) calls it when every task waits; a new kind of source
 * is one line in loop_sources.
 */
#include "lua/lua_loop.h"

#include <lauxlib.h>

#include "core/avo.h"
#include "core/loop.h"
#include "lua/lua_llm.h"
#include "lua/lua_pool.h"
#include "lua/luajson.h"

/* Userdata types that are sources of the event loop. */
static const struct {
    const char *metatable;
    avo_loop_source (*source)(void *ud);
} loop_sources[] = {
    {AVO_LUA_POOL_MT, avo_lua_pool_source},
    {AVO_LUA_LLM_MT, avo_lua_llm_source},
};

#define MAX_SOURCES 8

/*
 * core.wait(timeout_ms, source...) -> index, ticket, result
 *                                   | false (nothing pending anywhere)
 *                                   | nil (timeout or interrupted)
 * Waits on all sources at once; `index` is the position of the source that
 * answered among the arguments (1-based).
 */
static int core_wait(lua_State *L)
{
    int timeout = (int)luaL_checkinteger(L, 1);
    int n = lua_gettop(L) - 1;
    luaL_argcheck(L, n >= 1 && n <= MAX_SOURCES, 2, "expected 1 to 8 event sources");
    avo_loop_source sources[MAX_SOURCES];
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (size_t k = 0; k < sizeof loop_sources / sizeof loop_sources[0] && !found; k++) {
            void *ud = luaL_testudata(L, i + 2, loop_sources[k].metatable);
            if (ud && *(void **)ud) {
                sources[i] = loop_sources[k].source(ud);
                found = 1;
            }
        }
        if (!found)
            return luaL_argerror(L, i + 2, "not an open event source");
    }
    size_t which;
    uint64_t ticket;
    json_t *result;
    char err[AVO_ERRLEN];
    int rc = avo_loop_wait(sources, (size_t)n, timeout, &which, &ticket, &result, err, sizeof err);
    if (rc == AVO_ENOTFOUND) {
        lua_pushboolean(L, 0);
        return 1;
    }
    if (rc < 0)
        return luaL_error(L, "event loop: %s", err);
    if (rc == 0) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushinteger(L, (lua_Integer)which + 1);
    lua_pushinteger(L, (lua_Integer)ticket);
    avo_lua_push_json(L, result);
    json_decref(result);
    return 3;
}

void avo_lua_loop_register(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"wait", core_wait},
        {NULL, NULL},
    };
    luaL_setfuncs(L, functions, 0);
}
