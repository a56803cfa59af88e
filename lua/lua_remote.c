/*
 * lua_remote.c — Lua bindings for the pool's devices and remote workers and
 * for the Slurm launcher (lua_remote.h).  Misuse raises; expected failures
 * (a port in use, a bad secret file, no srun) return nil, message.
 */
#include "lua/lua_remote.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/avo.h"
#include "lua/binding.h"
#include "scale/pool.h"
#include "scale/slurm.h"
#include "scale/transport.h"

#define SLURM_MT "avo.Slurm"

static const char *pool_mt_name;

/* The avo_pool of argument 1 (an open avo.Pool; its userdata's first field). */
static avo_pool *check_pool(lua_State *L)
{
    avo_pool **ud = luaL_checkudata(L, 1, pool_mt_name);
    if (!*ud)
        luaL_error(L, "attempt to use a closed pool");
    return *ud;
}

/* pool:set_devices({ordinal, ...}) */
static int pool_set_devices(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int n = (int)luaL_len(L, 2);
    luaL_argcheck(L, n <= 256, 2, "at most 256 devices");
    int ordinals[256];
    for (int i = 0; i < n; i++) {
        lua_geti(L, 2, i + 1);
        int ok;
        lua_Integer v = lua_tointegerx(L, -1, &ok);
        lua_pop(L, 1);
        luaL_argcheck(L, ok && v >= 0 && v < 1024, 2, "device ordinals are integers from 0");
        ordinals[i] = (int)v;
    }
    char err[AVO_ERRLEN];
    if (avo_pool_set_devices(pool, ordinals, n, err, sizeof err) < 0)
        return luaL_error(L, "%s", err);
    return 0;
}

static int pool_devices(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    int ordinals[256];
    int n = avo_pool_devices(pool, ordinals, 256);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n && i < 256; i++) {
        lua_pushinteger(L, ordinals[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static const char *field_string(lua_State *L, int t, const char *key, int required)
{
    lua_getfield(L, t, key);
    const char *s = lua_tostring(L, -1);
    lua_pop(L, 1); /* the string stays alive in the table */
    if (!s && required)
        luaL_error(L, "pool:listen: field '%s' is required", key);
    return s;
}

/* pool:listen{address=, run=, version=, secret=} -> port | nil, message */
static int pool_listen(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    const char *address = field_string(L, 2, "address", 1);
    const char *run = field_string(L, 2, "run", 1);
    const char *version = field_string(L, 2, "version", 0);
    lua_getfield(L, 2, "secret");
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    if (!text)
        return luaL_error(L, "pool:listen: field 'secret' is required");
    avo_transport_secret secret;
    if (len < AVO_TRANSPORT_SECRET_MIN || len >= sizeof secret.bytes)
        return avo_lua_push_fail(L, "the worker secret must be 16 to 511 bytes");
    memcpy(secret.bytes, text, len);
    secret.len = len;
    lua_pop(L, 1);
    avo_transport_identity me = {run, version ? version : avo_transport_version(), ""};
    char err[AVO_ERRLEN];
    int port = avo_pool_listen(pool, address, &secret, &me, err, sizeof err);
    memset(&secret, 0, sizeof secret);
    if (port < 0)
        return avo_lua_push_fail(L, err);
    lua_pushinteger(L, port);
    return 1;
}

static int pool_allow_fingerprint(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    if (avo_pool_allow_fingerprint(pool, luaL_checkstring(L, 2)) < 0)
        return luaL_error(L, "too many evaluator fingerprints");
    return 0;
}

static int pool_workers(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    size_t handshaking;
    size_t remote = avo_pool_remote(pool, &handshaking);
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)remote);
    lua_setfield(L, -2, "remote");
    lua_pushinteger(L, (lua_Integer)handshaking);
    lua_setfield(L, -2, "handshaking");
    if (avo_pool_gone(pool)) {
        lua_pushstring(L, avo_pool_gone(pool));
        lua_setfield(L, -2, "gone");
    }
    return 1;
}

static int pool_events(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    lua_newtable(L);
    char line[1024];
    for (int i = 1; avo_pool_take_event(pool, line, sizeof line); i++) {
        lua_pushstring(L, line);
        lua_rawseti(L, -2, i);
    }
    return 1;
}

static int pool_launcher_ended(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    avo_pool_launcher_ended(pool, luaL_optstring(L, 2, NULL));
    return 0;
}

static int pool_set_grace(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    avo_pool_set_grace(pool, luaL_checknumber(L, 2));
    return 0;
}

static int pool_gone(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    const char *why = avo_pool_gone(pool);
    if (why)
        lua_pushstring(L, why);
    else
        lua_pushnil(L);
    return 1;
}

static const luaL_Reg pool_methods[] = {
    {"set_devices", pool_set_devices},
    {"devices", pool_devices},
    {"listen", pool_listen},
    {"allow_fingerprint", pool_allow_fingerprint},
    {"workers", pool_workers},
    {"events", pool_events},
    {"launcher_ended", pool_launcher_ended},
    {"set_grace", pool_set_grace},
    {"gone", pool_gone},
    {NULL, NULL},
};

/* ------------------------------------------------------------------ slurm */

typedef struct slurm_ud {
    avo_slurm *slurm;
} slurm_ud;

/* core.slurm{options=, ntasks=, name=, argv={...}, secret=, log=} -> Slurm | nil, message */
static int slurm_open(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    slurm_ud *ud = lua_newuserdatauv(L, sizeof *ud, 0); /* closed until started */
    ud->slurm = NULL;
    luaL_setmetatable(L, SLURM_MT);
    lua_getfield(L, 1, "options");
    const char *options = lua_tostring(L, -1);
    lua_getfield(L, 1, "ntasks");
    lua_Integer ntasks = luaL_checkinteger(L, -1);
    lua_getfield(L, 1, "name");
    const char *name = luaL_checkstring(L, -1);
    lua_getfield(L, 1, "secret");
    const char *secret = luaL_checkstring(L, -1);
    lua_getfield(L, 1, "log");
    const char *log = luaL_checkstring(L, -1);
    lua_getfield(L, 1, "argv");
    luaL_checktype(L, -1, LUA_TTABLE);
    int argc = (int)luaL_len(L, -1);
    luaL_argcheck(L, argc >= 1 && argc < 64, 1, "argv needs 1 to 63 strings");
    luaL_argcheck(L, ntasks >= 1 && ntasks <= 100000, 1, "ntasks must be positive");
    char *argv[64];
    for (int i = 0; i < argc; i++) {
        lua_geti(L, -1, i + 1);
        argv[i] = (char *)luaL_checkstring(L, -1);
        lua_pop(L, 1); /* stays alive in the argv table */
    }
    argv[argc] = NULL;
    char err[AVO_ERRLEN];
    if (avo_slurm_start(&ud->slurm, options ? options : "", (int)ntasks, name, argv, secret, log,
                        err, sizeof err) < 0)
        return avo_lua_push_fail(L, err);
    lua_pop(L, 6);
    return 1;
}

static avo_slurm *check_slurm(lua_State *L)
{
    slurm_ud *ud = luaL_checkudata(L, 1, SLURM_MT);
    if (!ud->slurm)
        luaL_error(L, "attempt to use a stopped Slurm launcher");
    return ud->slurm;
}

/* slurm:running() -> true | false, what */
static int slurm_running(lua_State *L)
{
    avo_slurm *s = check_slurm(L);
    char what[256];
    if (avo_slurm_running(s, what, sizeof what)) {
        lua_pushboolean(L, 1);
        return 1;
    }
    lua_pushboolean(L, 0);
    lua_pushstring(L, what);
    return 2;
}

static int slurm_pid(lua_State *L)
{
    avo_slurm *s = check_slurm(L);
    if (avo_slurm_pid(s) > 0)
        lua_pushinteger(L, avo_slurm_pid(s));
    else
        lua_pushnil(L);
    return 1;
}

/* slurm:stop([grace_s]); __gc and __close (which pass other arguments) use 5 s
 * (avo_slurm_stop: for the step to end by itself, then after SIGTERM). */
static int slurm_stop(lua_State *L)
{
    slurm_ud *ud = luaL_checkudata(L, 1, SLURM_MT);
    double grace = lua_type(L, 2) == LUA_TNUMBER ? lua_tonumber(L, 2) : 5.0;
    if (ud->slurm) {
        avo_slurm_stop(ud->slurm, grace);
        avo_slurm_free(ud->slurm);
        ud->slurm = NULL;
    }
    return 0;
}

static const luaL_Reg slurm_methods[] = {
    {"running", slurm_running},
    {"pid", slurm_pid},
    {"stop", slurm_stop},
    {NULL, NULL},
};

/* ------------------------------------------------------------- functions */

/* core.cuda_devices() -> number of visible CUDA devices (0 without a driver) */
static int core_cuda_devices(lua_State *L)
{
    lua_pushinteger(L, avo_pool_count_devices());
    return 1;
}

static int core_worker_secret(lua_State *L)
{
    avo_transport_secret secret;
    char hex[65], err[AVO_ERRLEN];
    if (avo_transport_secret_generate(&secret, hex, err, sizeof err) < 0)
        return luaL_error(L, "%s", err);
    lua_pushstring(L, hex);
    return 1;
}

static int core_secret_from_env(lua_State *L)
{
    avo_transport_secret secret;
    char err[AVO_ERRLEN];
    if (avo_transport_secret_from_env(&secret, err, sizeof err) < 0)
        return avo_lua_push_fail(L, err);
    lua_pushlstring(L, (const char *)secret.bytes, secret.len);
    memset(&secret, 0, sizeof secret);
    return 1;
}

/* core.write_private(path, text): created (or truncated) with mode 0600. */
static int core_write_private(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    size_t len;
    const char *text = luaL_checklstring(L, 2, &len);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || fchmod(fd, 0600) < 0 || write(fd, text, len) != (ssize_t)len) {
        char msg[AVO_ERRLEN];
        snprintf(msg, sizeof msg, "cannot write %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return avo_lua_push_fail(L, msg);
    }
    close(fd);
    lua_pushboolean(L, 1);
    return 1;
}

void avo_lua_remote_register(lua_State *L, const char *pool_mt)
{
    pool_mt_name = pool_mt;
    luaL_getmetatable(L, pool_mt);
    lua_getfield(L, -1, "__index");
    luaL_setfuncs(L, pool_methods, 0);
    lua_pop(L, 2);
    avo_lua_new_class(L, SLURM_MT, slurm_methods, slurm_stop);

    static const luaL_Reg functions[] = {
        {"worker_secret", core_worker_secret},
        {"cuda_devices", core_cuda_devices},
        {"secret_from_env", core_secret_from_env},
        {"write_private", core_write_private},
        {"slurm", slurm_open},
        {NULL, NULL},
    };
    luaL_setfuncs(L, functions, 0);
}
