/*
 * lua_kb.c — the avo.Kb userdata: the knowledge base (store/kb.h) for
 * scripts and for the agent operator's kb_search / kb_read tools.
 *
 * The userdata is created closed (NULL handle) before anything can fail;
 * one idempotent close serves __gc and __close.  Results are converted from
 * the core's JSON, so their shapes are those documented in kb.h.
 */
#include "lua/lua_kb.h"

#include <lauxlib.h>

#include "store/archive.h"
#include "core/avo.h"
#include "lua/binding.h"
#include "store/kb.h"
#include "lua/lua_archive.h"
#include "lua/luajson.h"

typedef struct kb_ud {
    avo_kb *kb;
} kb_ud;

static avo_kb *check_kb(lua_State *L)
{
    kb_ud *ud = luaL_checkudata(L, 1, AVO_LUA_KB_MT);
    if (!ud->kb)
        luaL_error(L, "attempt to use a closed knowledge base");
    return ud->kb;
}

/* [-0, +1 or +2] The JSON value (freed here), or nil, err when rc < 0. */
static int push_result(lua_State *L, int rc, json_t *value, const char *err)
{
    if (rc < 0)
        return avo_lua_push_fail(L, err);
    avo_lua_push_json(L, value);
    json_decref(value);
    return 1;
}

/* core.kb(path | archive) -> Kb | nil, message */
static int kb_open(lua_State *L)
{
    avo_archive *ar = avo_lua_to_archive(L, 1);
    const char *path = ar ? NULL : luaL_checkstring(L, 1);
    kb_ud *ud = lua_newuserdatauv(L, sizeof *ud, 0);
    ud->kb = NULL;
    luaL_setmetatable(L, AVO_LUA_KB_MT);
    char err[AVO_ERRLEN];
    int rc = ar ? avo_kb_open_archive(&ud->kb, ar, err, sizeof err)
                : avo_kb_open(&ud->kb, path, err, sizeof err);
    if (rc < 0)
        return avo_lua_push_fail(L, err);
    return 1;
}

static int kb_close(lua_State *L)
{
    kb_ud *ud = luaL_checkudata(L, 1, AVO_LUA_KB_MT);
    avo_kb_free(ud->kb);
    ud->kb = NULL;
    return 0;
}

/* kb:search(query[, limit]) -> array */
static int kb_search(lua_State *L)
{
    avo_kb *kb = check_kb(L);
    const char *query = luaL_checkstring(L, 2);
    lua_Integer limit = luaL_optinteger(L, 3, 10);
    luaL_argcheck(L, limit >= 1 && limit <= 1000, 3, "limit must be between 1 and 1000");
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_kb_search(kb, query, (int)limit, &value, err, sizeof err);
    return push_result(L, rc, value, err);
}

/* kb:read(doc) -> table | nil, message */
static int kb_read(lua_State *L)
{
    avo_kb *kb = check_kb(L);
    const char *doc = luaL_checkstring(L, 2);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_kb_read(kb, doc, &value, err, sizeof err);
    return push_result(L, rc, value, err);
}

static int kb_list(lua_State *L)
{
    avo_kb *kb = check_kb(L);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_kb_list(kb, &value, err, sizeof err);
    return push_result(L, rc, value, err);
}

/* kb:add_dir(dir) -> stats table | nil, message */
static int kb_add_dir(lua_State *L)
{
    avo_kb *kb = check_kb(L);
    const char *dir = luaL_checkstring(L, 2);
    avo_kb_stats s;
    char err[AVO_ERRLEN];
    if (avo_kb_add_dir(kb, dir, &s, err, sizeof err) < 0)
        return avo_lua_push_fail(L, err);
    lua_createtable(L, 0, 6);
    const struct {
        const char *name;
        int value;
    } fields[] = {
        {"added", s.added},     {"replaced", s.replaced}, {"unchanged", s.unchanged},
        {"removed", s.removed}, {"skipped", s.skipped},   {"sections", s.sections},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        lua_pushinteger(L, fields[i].value);
        lua_setfield(L, -2, fields[i].name);
    }
    return 1;
}

/* kb:add_file(path[, text]) -> changed | nil, message */
static int kb_add_file(lua_State *L)
{
    avo_kb *kb = check_kb(L);
    const char *path = luaL_checkstring(L, 2);
    const char *text = luaL_optstring(L, 3, NULL);
    int changed = 0;
    char err[AVO_ERRLEN];
    if (avo_kb_add_file(kb, path, text, &changed, err, sizeof err) < 0)
        return avo_lua_push_fail(L, err);
    lua_pushboolean(L, changed);
    return 1;
}

static const luaL_Reg kb_methods[] = {
    {"search", kb_search},     {"read", kb_read},   {"list", kb_list}, {"add_dir", kb_add_dir},
    {"add_file", kb_add_file}, {"close", kb_close}, {NULL, NULL},
};

void avo_lua_kb_register(lua_State *L)
{
    avo_lua_new_class(L, AVO_LUA_KB_MT, kb_methods, kb_close);
    lua_pushcfunction(L, kb_open);
    lua_setfield(L, -2, "kb");
}
