/*
 * core.c — the `avo.core` Lua module: the C engine seen from Lua, assembled
 * from one binding file per library.  Everything with policy (scheduling,
 * scoring, budgets, strategies) is Lua on top.
 *
 *   avo.Archive  core.archive(path)    the run archive        lua_archive.c
 *   avo.Pool     core.pool(jobs, exe)  worker processes       lua_pool.c, lua_remote.c
 *                core.wait(...)        the event loop         lua_loop.c
 *   avo.Rng      core.rng(seed, name)  a PCG32 stream         lua_pcg.c
 *   avo.Gp       core.gp(spans)        a Gaussian process     lua_gp.c
 *   avo.Llm      core.llm(seed)        LLM HTTP client        lua_llm.c
 *   avo.Kb       core.kb(path)         knowledge base         lua_kb.c
 *   avo.Slurm    core.slurm{...}       Slurm launcher         lua_remote.c
 *                core.json_*           JSON text              luajson.c
 *                core.spawn, reap ...  child processes        lua_process.c
 *                core.watch, interrupted ...  stopping a run  lua_watch.c
 *                core.hash, diff, now ...     helpers         lua_util.c
 *
 * Misuse raises "bad argument"; an expected failure (archive refused, row
 * missing) returns nil, message.  Each userdata is created closed before
 * anything can fail, and one idempotent close serves __gc and __close
 * (binding.h).
 */
#include <lauxlib.h>
#include <lua.h>

#include "avo_config.h"
#include "avo_git.h"
#include "lua/lua_archive.h"
#include "lua/lua_freeze.h"
#include "lua/lua_gp.h"
#include "lua/lua_kb.h"
#include "lua/lua_llm.h"
#include "lua/lua_loop.h"
#include "lua/lua_pcg.h"
#include "lua/lua_pool.h"
#include "lua/lua_process.h"
#include "lua/lua_remote.h"
#include "lua/lua_shelf.h"
#include "lua/lua_util.h"
#include "lua/lua_watch.h"
#include "lua/luajson.h"

int luaopen_avo_core(lua_State *L)
{
    lua_newtable(L); /* core; each register sets its functions into it */
    avo_lua_archive_register(L);
    avo_lua_pool_register(L);
    avo_lua_remote_register(L, AVO_LUA_POOL_MT); /* after the pool: adds its methods */
    avo_lua_loop_register(L);
    avo_lua_pcg_register(L);
    avo_lua_gp_register(L);
    avo_lua_llm_register(L);
    avo_lua_kb_register(L);
    avo_lua_json_register(L);
    avo_lua_process_register(L);
    avo_lua_watch_register(L);
    avo_lua_util_register(L);
    avo_lua_freeze_register(L);
    avo_lua_shelf_register(L);
    lua_pushstring(L, AVO_VERSION);
    lua_setfield(L, -2, "version");
    lua_pushstring(L, AVO_GIT_COMMIT);
    lua_setfield(L, -2, "git_commit");
    lua_pushstring(L, AVO_SOURCE_ROOT);
    lua_setfield(L, -2, "source_root");
    return 1;
}
