/*
 * lua_pcg.c — the avo.Rng userdata: one PCG32 stream (core/pcg.h), derived
 * from the run seed and the stream's name, so every consumer draws from its
 * own stream and a run repeats with its seed.  The state lives in the
 * userdata itself: nothing to close.
 */
#include "lua/lua_pcg.h"

#include <lauxlib.h>

#include "lua/binding.h"
#include "core/pcg.h"

/* core.rng(seed, name) -> Rng */
static int rng_new(lua_State *L)
{
    lua_Integer seed = luaL_checkinteger(L, 1);
    const char *name = luaL_checkstring(L, 2);
    avo_pcg32 *rng = lua_newuserdatauv(L, sizeof *rng, 0);
    avo_pcg32_derive(rng, (uint64_t)seed, name);
    luaL_setmetatable(L, AVO_LUA_PCG_MT);
    return 1;
}

static int rng_next(lua_State *L)
{
    avo_pcg32 *rng = luaL_checkudata(L, 1, AVO_LUA_PCG_MT);
    lua_pushinteger(L, avo_pcg32_next(rng));
    return 1;
}

/* rng:below(n) -> integer in [0, n) */
static int rng_below(lua_State *L)
{
    avo_pcg32 *rng = luaL_checkudata(L, 1, AVO_LUA_PCG_MT);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_argcheck(L, n >= 1 && n <= 0xffffffffLL, 2, "bound must be in [1, 2^32)");
    lua_pushinteger(L, avo_pcg32_bounded(rng, (uint32_t)n));
    return 1;
}

static int rng_double(lua_State *L)
{
    avo_pcg32 *rng = luaL_checkudata(L, 1, AVO_LUA_PCG_MT);
    lua_pushnumber(L, avo_pcg32_double(rng));
    return 1;
}

/* rng:state() -> state, inc (to persist a stream) */
static int rng_state(lua_State *L)
{
    avo_pcg32 *rng = luaL_checkudata(L, 1, AVO_LUA_PCG_MT);
    lua_pushinteger(L, (lua_Integer)rng->state);
    lua_pushinteger(L, (lua_Integer)rng->inc);
    return 2;
}

static const luaL_Reg rng_methods[] = {
    {"next", rng_next},   {"below", rng_below}, {"double", rng_double},
    {"state", rng_state}, {NULL, NULL},
};

void avo_lua_pcg_register(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"rng", rng_new},
        {NULL, NULL},
    };
    avo_lua_new_class(L, AVO_LUA_PCG_MT, rng_methods, NULL);
    luaL_setfuncs(L, functions, 0);
}
