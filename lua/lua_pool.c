/*
 * lua_pool.c — the avo.Pool userdata: the worker processes (scale/pool.h)
 * seen from Lua.  Jobs go in as tables; results come back through core.wait
 * (lua/lua_loop.c).  The device and network methods of the pool (set_devices,
 * listen, ...) are lua/lua_remote.c's.
 *
 * The userdata is created closed before anything can fail; one idempotent
 * close serves __gc and __close.
 */
#include "lua/lua_pool.h"

#include <lauxlib.h>

#include "core/avo.h"
#include "lua/binding.h"
#include "lua/luajson.h"
#include "scale/pool.h"

typedef struct pool_ud {
    avo_pool *pool;
} pool_ud;

static avo_pool *check_pool(lua_State *L)
{
    pool_ud *ud = luaL_checkudata(L, 1, AVO_LUA_POOL_MT);
    if (!ud->pool)
        luaL_error(L, "attempt to use a closed pool");
    return ud->pool;
}

/* core.pool(jobs, worker_exe) -> pool | nil, msg */
static int pool_open(lua_State *L)
{
    lua_Integer jobs = luaL_checkinteger(L, 1);
    const char *exe = luaL_checkstring(L, 2);
    luaL_argcheck(L, jobs >= 0 && jobs <= 1024, 1, "jobs must be between 0 and 1024");
    pool_ud *ud = lua_newuserdatauv(L, sizeof *ud, 0);
    ud->pool = NULL;
    luaL_setmetatable(L, AVO_LUA_POOL_MT);
    char *argv[] = {(char *)exe, "worker", NULL};
    char err[AVO_ERRLEN];
    if (avo_pool_new(&ud->pool, (int)jobs, argv, err, sizeof err) < 0)
        return avo_lua_push_fail(L, err);
    return 1;
}

static int pool_close(lua_State *L)
{
    pool_ud *ud = luaL_checkudata(L, 1, AVO_LUA_POOL_MT);
    avo_pool_free(ud->pool);
    ud->pool = NULL;
    return 0;
}

/* pool:submit(job_table, deadline_s) -> ticket */
static int pool_submit(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    double deadline = luaL_checknumber(L, 3);
    char err[AVO_ERRLEN];
    json_t *job = avo_lua_to_json(L, 2, err, sizeof err);
    if (!job)
        return luaL_argerror(L, 2, err);
    uint64_t ticket;
    if (avo_pool_submit(pool, job, deadline, &ticket) < 0)
        return luaL_error(L, "out of memory");
    lua_pushinteger(L, (lua_Integer)ticket);
    return 1;
}

static int pool_pending(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    lua_pushinteger(L, (lua_Integer)avo_pool_pending(pool));
    lua_pushinteger(L, (lua_Integer)avo_pool_running(pool));
    return 2;
}

static const luaL_Reg pool_methods[] = {
    {"submit", pool_submit},
    {"pending", pool_pending},
    {"close", pool_close},
    {NULL, NULL},
};

avo_loop_source avo_lua_pool_source(void *ud)
{
    return avo_pool_source(((pool_ud *)ud)->pool);
}

void avo_lua_pool_register(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"pool", pool_open},
        {NULL, NULL},
    };
    avo_lua_new_class(L, AVO_LUA_POOL_MT, pool_methods, pool_close);
    luaL_setfuncs(L, functions, 0);
}
