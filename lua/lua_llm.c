/*
 * lua_llm.c — the avo.Llm userdata: the HTTP side of the LLM client (core/llm.h)
 * for lua/avo/llm.lua (its parts in lua/avo/llm/), which builds provider requests
 * and parses answers.
 *
 * The userdata is created closed (NULL client) before anything can fail;
 * one idempotent close serves __gc and __close.  A malformed request is a
 * Lua error (the Lua module builds requests, so it is a bug, not a user's
 * mistake).
 */
#include "lua/lua_llm.h"

#include <lauxlib.h>

#include "core/avo.h"
#include "core/llm.h"
#include "core/sse.h"
#include "lua/binding.h"
#include "lua/luajson.h"

typedef struct llm_ud {
    avo_llm *llm; /* first field: core_wait tests it for NULL */
} llm_ud;

static avo_llm *check_llm(lua_State *L)
{
    llm_ud *ud = luaL_checkudata(L, 1, AVO_LUA_LLM_MT);
    if (!ud->llm)
        luaL_error(L, "attempt to use a closed LLM client");
    return ud->llm;
}

/* core.llm(seed) -> Llm | nil, message */
static int llm_new(lua_State *L)
{
    lua_Integer seed = luaL_checkinteger(L, 1);
    llm_ud *ud = lua_newuserdatauv(L, sizeof *ud, 0);
    ud->llm = NULL;
    luaL_setmetatable(L, AVO_LUA_LLM_MT);
    char err[AVO_ERRLEN];
    if (avo_llm_new(&ud->llm, (uint64_t)seed, err, sizeof err) < 0)
        return avo_lua_push_fail(L, err);
    return 1;
}

static int llm_close(lua_State *L)
{
    llm_ud *ud = luaL_checkudata(L, 1, AVO_LUA_LLM_MT);
    avo_llm_free(ud->llm);
    ud->llm = NULL;
    return 0;
}

/* llm:submit(request) -> ticket */
static int llm_submit(lua_State *L)
{
    avo_llm *llm = check_llm(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    char err[AVO_ERRLEN];
    json_t *request = avo_lua_to_json(L, 2, err, sizeof err);
    if (!request)
        return luaL_argerror(L, 2, err);
    uint64_t ticket;
    int rc = avo_llm_submit(llm, request, &ticket, err, sizeof err);
    json_decref(request);
    if (rc < 0)
        return luaL_argerror(L, 2, err);
    lua_pushinteger(L, (lua_Integer)ticket);
    return 1;
}

static int llm_pending(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)avo_llm_pending(check_llm(L)));
    return 1;
}

/* llm:streamed() -> events read so far by streamed answers in transfer */
static int llm_streamed(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)avo_llm_streamed(check_llm(L)));
    return 1;
}

/* core.sse_join(body [, cap]) -> document, deltas | nil: a streamed Chat
 * Completions answer joined into one completion (core/sse.h); nil when the
 * body is no event stream.  Past `cap` deltas the rest is dropped. */
static int core_sse_join(lua_State *L)
{
    size_t len;
    const char *body = luaL_checklstring(L, 1, &len);
    lua_Integer cap = luaL_optinteger(L, 2, -1);
    long deltas;
    json_t *doc = avo_sse_chat_join(body, len, cap < 0 ? -1 : (long)cap, &deltas);
    if (!doc) {
        if (deltas < 0)
            return luaL_error(L, "out of memory");
        lua_pushnil(L);
        return 1;
    }
    avo_lua_push_json(L, doc);
    json_decref(doc);
    lua_pushinteger(L, deltas);
    return 2;
}

static const luaL_Reg llm_methods[] = {
    {"submit", llm_submit},
    {"pending", llm_pending},
    {"streamed", llm_streamed},
    {"close", llm_close},
    {NULL, NULL},
};

void avo_lua_llm_register(lua_State *L)
{
    avo_lua_new_class(L, AVO_LUA_LLM_MT, llm_methods, llm_close);
    lua_pushcfunction(L, llm_new);
    lua_setfield(L, -2, "llm");
    lua_pushcfunction(L, core_sse_join);
    lua_setfield(L, -2, "sse_join");
}

avo_loop_source avo_lua_llm_source(void *ud)
{
    return avo_llm_source(((llm_ud *)ud)->llm);
}
