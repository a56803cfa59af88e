/*
 * lua_util.c — the small helpers of `avo.core`: content hashes (core/hash.h),
 * three-way merge and diffs of sources (core/merge.h, core/diff.h), clocks,
 * the machine (cores, host name, the avo binary) and the vendor baselines
 * evaluators may name (eval/baseline.h).
 */
#include "lua/lua_util.h"

#include <dirent.h>
#include <errno.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/avo.h"
#include "eval/baseline.h"
#include "lua/binding.h"
#include "eval/cache.h"
#include "core/diff.h"
#include "core/hash.h"
#include "core/merge.h"
#include "core/strbuf.h"

static int core_hash(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    char out[AVO_HASH_HEXLEN + 1];
    if (avo_hash_hex(s, len, out) < 0)
        return luaL_error(L, "hashing failed");
    lua_pushstring(L, out);
    return 1;
}

static int core_merge3(lua_State *L)
{
    const char *base = luaL_checkstring(L, 1);
    const char *ours = luaL_checkstring(L, 2);
    const char *theirs = luaL_checkstring(L, 3);
    char *merged = NULL;
    char err[AVO_ERRLEN];
    int n = avo_merge3(base, ours, theirs, &merged, err, sizeof err);
    if (n < 0)
        return avo_lua_push_fail(L, err);
    lua_pushstring(L, merged);
    free(merged);
    lua_pushinteger(L, n);
    return 2;
}

/* core.diff(a, b [, name]) -> unified diff text ("" when equal) | nil, msg */
static int core_diff(lua_State *L)
{
    const char *a = luaL_checkstring(L, 1);
    const char *b = luaL_checkstring(L, 2);
    const char *name = luaL_optstring(L, 3, "kernel");
    char *patch = NULL;
    char err[AVO_ERRLEN];
    if (avo_diff_sources(a, b, name, &patch, err, sizeof err) < 0)
        return avo_lua_push_fail(L, err);
    lua_pushstring(L, patch);
    free(patch);
    return 1;
}

static int core_isatty(lua_State *L)
{
    lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
    return 1;
}

static int core_now(lua_State *L)
{
    lua_pushnumber(L, avo_now());
    return 1;
}

static int core_monotonic(lua_State *L)
{
    lua_pushnumber(L, avo_monotonic());
    return 1;
}

static int core_cores(lua_State *L)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    lua_pushinteger(L, n > 0 ? n : 1);
    return 1;
}

/* core.baselines() -> array of {name, backend, library, summary}: the named
 * vendor baselines evaluators may list (eval/baseline.h). */
static int core_baselines(lua_State *L)
{
    const avo_baseline_info *list = avo_baseline_list();
    lua_newtable(L);
    for (int i = 0; list[i].name; i++) {
        lua_createtable(L, 0, 4);
        lua_pushstring(L, list[i].name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, list[i].backend);
        lua_setfield(L, -2, "backend");
        lua_pushstring(L, list[i].library);
        lua_setfield(L, -2, "library");
        lua_pushstring(L, list[i].summary);
        lua_setfield(L, -2, "summary");
        lua_rawseti(L, -2, i + 1); /* list[i + 1] = entry */
    }
    return 1;
}

static int core_hostname(lua_State *L)
{
    char name[256] = "unknown";
    gethostname(name, sizeof name - 1);
    lua_pushstring(L, name);
    return 1;
}

/* core.cache_dir(backend) -> the compile cache folder of `backend` by the
 * one folder rule (cache.h) */
static int core_cache_dir(lua_State *L)
{
    char *dir = avo_cache_dir(NULL, luaL_checkstring(L, 1));
    if (!dir)
        return luaL_error(L, "out of memory");
    lua_pushstring(L, dir);
    free(dir);
    return 1;
}

/*
 * core.inert(text [, oneline]) -> text made inert for a terminal
 * (avo_strbuf_inert): what a candidate or a server wrote, before it is
 * printed.  Newlines are kept unless `oneline`; a non-string is tostring'ed.
 */
static int core_inert(lua_State *L)
{
    int flags = lua_toboolean(L, 2) ? 0 : AVO_INERT_LINES;
    size_t len;
    const char *s = luaL_tolstring(L, 1, &len); /* +1 */
    avo_strbuf b = {0};
    avo_strbuf_inert(&b, s, len, flags);
    if (b.failed) {
        avo_strbuf_free(&b);
        return luaL_error(L, "out of memory");
    }
    lua_pushlstring(L, b.data ? b.data : "", b.len);
    avo_strbuf_free(&b);
    return 1;
}

/* core.exe() -> path of the running avo binary (workers are started from it) */
static int core_exe(lua_State *L)
{
    const char *path = avo_self_exe();
    if (!path)
        return avo_lua_push_fail(
            L, "cannot find the avo binary (neither /proc/self/exe nor AT_EXECFN)");
    lua_pushstring(L, path);
    return 1;
}

/* core.list_dir(path) -> {name, ...} sorted, without . and .. | nil, message */
static int core_list_dir(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    DIR *d = opendir(path);
    if (!d) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, strerror(errno));
        return 2;
    }
    lua_newtable(L);
    lua_Integer n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            lua_pushstring(L, e->d_name);
            lua_rawseti(L, -2, ++n);
        }
    closedir(d);
    /* sorted with table.sort: the listing's order is the filesystem's */
    lua_getglobal(L, "table");
    lua_getfield(L, -1, "sort");
    lua_remove(L, -2);
    lua_pushvalue(L, -2);
    lua_call(L, 1, 0);
    return 1;
}

/* core.realpath(path) -> the absolute path with no symlink, . or .. | nil, message */
static int core_realpath(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    char *abs = realpath(path, NULL);
    if (!abs) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, strerror(errno));
        return 2;
    }
    lua_pushstring(L, abs);
    free(abs);
    return 1;
}

void avo_lua_util_register(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"hash", core_hash},
        {"merge3", core_merge3},
        {"diff", core_diff},
        {"isatty", core_isatty},
        {"now", core_now},
        {"monotonic", core_monotonic},
        {"cores", core_cores},
        {"baselines", core_baselines},
        {"hostname", core_hostname},
        {"cache_dir", core_cache_dir},
        {"exe", core_exe},
        {"list_dir", core_list_dir},
        {"realpath", core_realpath},
        {"inert", core_inert},
        {NULL, NULL},
    };
    luaL_setfuncs(L, functions, 0);
}
