/*
 * lua_shelf.c — the avo.Shelf userdata (lua_shelf.h).
 *
 * A long run keeps every finished record (duplicates are answered with a
 * copy; the verified ones are re-timed and summed up at the end).  Kept in
 * Lua, even frozen into one string each (lua_freeze.c), they are objects
 * and table slots that every garbage collection cycle marks and sweeps:
 * the collector's work per candidate grew with the run, and a larger pause
 * bought it back only with memory (bench/throughput.sh; docs/benchmarks.md).
 * Here they live in C memory, which the collector never sees: jansson's
 * hash tables (keys of any bytes with the *n_nocheck calls) hold the frozen
 * records and the distinct sources, each source once, as the records of
 * one source share it in Lua.
 *
 * The userdata is created closed (NULL tables) before anything can fail;
 * one idempotent close serves __gc and __close.
 */
#include "lua/lua_shelf.h"

#include <jansson.h>
#include <lauxlib.h>
#include <stdint.h>
#include <string.h>

#include "core/strbuf.h"
#include "lua/binding.h"
#include "lua/lua_freeze.h"

typedef struct shelf_ud {
    json_t *records;    /* key -> string: uint32 source number (0: none), the frozen record */
    json_t *source_ids; /* source text -> its number (1-based) */
    json_t *sources;    /* number - 1 -> source text */
    json_t *ok;         /* keys of the verified records, in order of arrival */
} shelf_ud;

static shelf_ud *check_shelf(lua_State *L)
{
    shelf_ud *ud = luaL_checkudata(L, 1, AVO_LUA_SHELF_MT);
    if (!ud->records)
        luaL_error(L, "attempt to use a closed shelf");
    return ud;
}

static int shelf_close(lua_State *L)
{
    shelf_ud *ud = luaL_checkudata(L, 1, AVO_LUA_SHELF_MT);
    json_decref(ud->records);
    json_decref(ud->source_ids);
    json_decref(ud->sources);
    json_decref(ud->ok);
    memset(ud, 0, sizeof *ud);
    return 0;
}

/* core.shelf() -> Shelf */
static int shelf_new(lua_State *L)
{
    lua_settop(L, 0);
    shelf_ud *ud = lua_newuserdatauv(L, sizeof *ud, 0);
    memset(ud, 0, sizeof *ud);
    luaL_setmetatable(L, AVO_LUA_SHELF_MT);
    ud->records = json_object();
    ud->source_ids = json_object();
    ud->sources = json_array();
    ud->ok = json_array();
    if (!ud->records || !ud->source_ids || !ud->sources || !ud->ok) {
        shelf_close(L);
        return luaL_error(L, "out of memory");
    }
    return 1;
}

/* The number of source text s (added when new); 0 on out of memory. */
static uint32_t source_number(shelf_ud *ud, const char *s, size_t len)
{
    json_t *known = json_object_getn(ud->source_ids, s, len);
    if (known)
        return (uint32_t)json_integer_value(known);
    size_t n = json_array_size(ud->sources) + 1;
    if (n > UINT32_MAX || json_array_append_new(ud->sources, json_stringn_nocheck(s, len)) ||
        json_object_setn_new_nocheck(ud->source_ids, s, len, json_integer((json_int_t)n)))
        return 0;
    return (uint32_t)n;
}

/* shelf:put(key, rec) -> boolean (false: rec cannot freeze; nothing kept) */
static int shelf_put(lua_State *L)
{
    static avo_strbuf frozen, blob;
    shelf_ud *ud = check_shelf(L);
    size_t key_len, source_len = 0;
    const char *key = luaL_checklstring(L, 2, &key_len);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_settop(L, 3);
    lua_getfield(L, 3, "source"); /* 4: kept apart, restored below */
    const char *source = lua_type(L, 4) == LUA_TSTRING ? lua_tolstring(L, 4, &source_len) : NULL;
    if (source) {
        lua_pushnil(L);
        lua_setfield(L, 3, "source");
    }
    int ok = avo_lua_freeze_into(L, 3, &frozen);
    if (source) {
        lua_pushvalue(L, 4);
        lua_setfield(L, 3, "source");
    }
    if (!ok) {
        lua_pushboolean(L, 0);
        return 1;
    }
    uint32_t number = source ? source_number(ud, source, source_len) : 0;
    if (source && !number)
        return luaL_error(L, "out of memory");
    blob.len = 0;
    blob.failed = 0;
    avo_strbuf_append(&blob, (const char *)&number, sizeof number);
    avo_strbuf_append(&blob, frozen.data, frozen.len);
    if (blob.failed || json_object_setn_new_nocheck(ud->records, key, key_len,
                                                    json_stringn_nocheck(blob.data, blob.len)))
        return luaL_error(L, "out of memory");
    lua_pushboolean(L, 1);
    return 1;
}

/* shelf:get(key) -> rec | nil */
static int shelf_get(lua_State *L)
{
    shelf_ud *ud = check_shelf(L);
    size_t key_len;
    const char *key = luaL_checklstring(L, 2, &key_len);
    const json_t *kept = json_object_getn(ud->records, key, key_len);
    if (!kept) {
        lua_pushnil(L);
        return 1;
    }
    const char *blob = json_string_value(kept);
    uint32_t number;
    memcpy(&number, blob, sizeof number);
    avo_lua_thaw(L, blob + sizeof number, json_string_length(kept) - sizeof number);
    if (number) {
        const json_t *source = json_array_get(ud->sources, number - 1);
        lua_pushlstring(L, json_string_value(source), json_string_length(source));
        lua_setfield(L, -2, "source");
    }
    return 1;
}

/* shelf:has(key) -> boolean */
static int shelf_has(lua_State *L)
{
    shelf_ud *ud = check_shelf(L);
    size_t key_len;
    const char *key = luaL_checklstring(L, 2, &key_len);
    lua_pushboolean(L, json_object_getn(ud->records, key, key_len) != NULL);
    return 1;
}

/* shelf:add_ok(key) */
static int shelf_add_ok(lua_State *L)
{
    shelf_ud *ud = check_shelf(L);
    size_t key_len;
    const char *key = luaL_checklstring(L, 2, &key_len);
    if (json_array_append_new(ud->ok, json_stringn_nocheck(key, key_len)))
        return luaL_error(L, "out of memory");
    return 0;
}

/* shelf:ok_keys() -> { key, ... } */
static int shelf_ok_keys(lua_State *L)
{
    shelf_ud *ud = check_shelf(L);
    size_t n = json_array_size(ud->ok);
    luaL_argcheck(L, n < (size_t)INT32_MAX, 1, "too many keys");
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        const json_t *key = json_array_get(ud->ok, i);
        lua_pushlstring(L, json_string_value(key), json_string_length(key));
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static const luaL_Reg shelf_methods[] = {
    {"put", shelf_put},       {"get", shelf_get},         {"has", shelf_has},
    {"add_ok", shelf_add_ok}, {"ok_keys", shelf_ok_keys}, {"close", shelf_close},
    {NULL, NULL},
};

void avo_lua_shelf_register(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"shelf", shelf_new},
        {NULL, NULL},
    };
    avo_lua_new_class(L, AVO_LUA_SHELF_MT, shelf_methods, shelf_close);
    luaL_setfuncs(L, functions, 0);
}
