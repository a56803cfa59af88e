#include "lua/host.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/avo.h"
#include "lua/embedded.h"
#include "lua/luajson.h"

int luaopen_avo_core(lua_State *L);

/* package.searchers entry: find `name` among the embedded modules. */
static int search_embedded(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    for (const avo_lua_module *m = avo_lua_modules; m->name; m++) {
        if (strcmp(m->name, name) != 0)
            continue;
        if (luaL_loadbufferx(L, m->code, m->len, m->chunk, "t") != LUA_OK)
            return lua_error(L);
        lua_pushstring(L, m->chunk + 1);
        return 2;
    }
    lua_pushfstring(L, "no embedded module '%s'", name);
    return 1;
}

/* Print a Lua error as "avo: message", once: many messages already start
 * with "avo: ". */
static void print_error(const char *msg)
{
    if (!msg)
        msg = "(error object is not a string)";
    fprintf(stderr, "%s%s\n", strncmp(msg, "avo: ", 5) == 0 ? "" : "avo: ", msg);
}

/* Message handler: append a traceback unless the message already has one. */
static int traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg)
        msg = luaL_tolstring(L, 1, NULL);
    if (strstr(msg, "stack traceback:"))
        lua_pushstring(L, msg);
    else
        luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Insert the function on top of the stack into package.searchers at
 * `index`, moving later searchers up.  [-1, +0] */
static void insert_searcher(lua_State *L, lua_Integer index)
{
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "searchers");
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    for (lua_Integer i = n; i >= index; i--) {
        lua_rawgeti(L, -1, i);
        lua_rawseti(L, -2, i + 1);
    }
    lua_pushvalue(L, -3);
    lua_rawseti(L, -2, index);
    lua_pop(L, 3);
}

/* Install the embedded searcher right after the preload searcher, so the
 * engine's modules win over files of the same name on LUA_PATH. */
static void install_searcher(lua_State *L)
{
    lua_pushcfunction(L, search_embedded);
    insert_searcher(L, 2);
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "preload");
    lua_pushcfunction(L, luaopen_avo_core);
    lua_setfield(L, -2, "avo.core");
    lua_pop(L, 2);
}

/* Then avo.paths.searcher: modules under the avo roots ($AVO_PATH, ".", the
 * source tree), ahead of LUA_PATH as strategies and operators are.  Runs
 * under the traceback handler at `handler`; returns false after printing
 * the error. */
static bool install_root_searcher(lua_State *L, int handler)
{
    lua_getglobal(L, "require");
    lua_pushstring(L, "avo.paths");
    if (lua_pcall(L, 1, 1, handler) != LUA_OK) {
        print_error(lua_tostring(L, -1));
        lua_pop(L, 1);
        return false;
    }
    lua_getfield(L, -1, "searcher"); /* paths, searcher */
    insert_searcher(L, 3);
    lua_pop(L, 1);
    return true;
}

int avo_host_command(const char *command, const json_t *options)
{
    return avo_host_call(command, options, NULL);
}

int avo_host_call(const char *command, const json_t *options, json_t **ret_result)
{
    if (ret_result)
        *ret_result = NULL;
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "avo: cannot create a Lua state (out of memory)\n");
        return 1;
    }
    luaL_openlibs(L);
    install_searcher(L);

    int status = 1;
    lua_pushcfunction(L, traceback);
    int handler = lua_gettop(L);
    if (!install_root_searcher(L, handler))
        goto out;
    lua_getglobal(L, "require");
    lua_pushstring(L, "avo.cli");
    if (lua_pcall(L, 1, 1, handler) != LUA_OK) {
        print_error(lua_tostring(L, -1));
        goto out;
    }
    lua_getfield(L, -1, command);
    if (!lua_isfunction(L, -1)) {
        fprintf(stderr, "avo: no command '%s'\n", command);
        goto out;
    }
    avo_lua_push_json(L, options);
    if (lua_pcall(L, 1, 2, handler) != LUA_OK) {
        print_error(lua_tostring(L, -1));
        goto out;
    }
    status = lua_isinteger(L, -2) ? (int)lua_tointeger(L, -2) : 0;
    if (ret_result && !lua_isnil(L, -1)) {
        char err[AVO_ERRLEN];
        *ret_result = avo_lua_to_json(L, -1, err, sizeof err);
        if (!*ret_result) {
            fprintf(stderr, "avo: the result of '%s': %s\n", command, err);
            status = 1;
        }
    }
out:
    lua_close(L);
    return status;
}
