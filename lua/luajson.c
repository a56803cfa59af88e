#include "lua/luajson.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/avo.h"
#include "lua/binding.h"

void avo_lua_push_json(lua_State *L, const json_t *value)
{
    luaL_checkstack(L, 4, "JSON value too deeply nested");
    if (!value) {
        lua_pushnil(L);
        return;
    }
    switch (json_typeof(value)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *item;
        lua_createtable(L, 0, (int)json_object_size(value));
        json_object_foreach((json_t *)value, key, item)
        {
            avo_lua_push_json(L, item);
            lua_setfield(L, -2, key); /* null items vanish, as nil fields do */
        }
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *item;
        lua_createtable(L, (int)json_array_size(value), 0);
        if (json_array_size(value) == 0) {
            /* keep [] an array on the way back to JSON */
            luaL_getmetatable(L, AVO_LUA_JSON_ARRAY_MT);
            lua_setmetatable(L, -2);
        }
        json_array_foreach(value, i, item)
        {
            avo_lua_push_json(L, item);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    }
    case JSON_STRING:
        lua_pushlstring(L, json_string_value(value), json_string_length(value));
        break;
    case JSON_INTEGER:
        lua_pushinteger(L, (lua_Integer)json_integer_value(value));
        break;
    case JSON_REAL:
        lua_pushnumber(L, json_real_value(value));
        break;
    case JSON_TRUE:
        lua_pushboolean(L, 1);
        break;
    case JSON_FALSE:
        lua_pushboolean(L, 0);
        break;
    case JSON_NULL:
        lua_pushnil(L);
        break;
    }
}

/* Length n if the table at idx is a sequence 1..n with no other keys, else -1. */
static lua_Integer sequence_length(lua_State *L, int idx)
{
    lua_Integer count = 0, max = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1)) {
            lua_pop(L, 1);
            return -1;
        }
        lua_Integer k = lua_tointeger(L, -1);
        if (k < 1) {
            lua_pop(L, 1);
            return -1;
        }
        if (k > max)
            max = k;
        count++;
    }
    return count == max ? count : -1;
}

static json_t *to_json(lua_State *L, int idx, int depth, char *err, size_t errlen)
{
    if (depth > 64) {
        avo_error(err, errlen, AVO_EINVAL, "table nested too deeply (or cyclic) for JSON");
        return NULL;
    }
    idx = lua_absindex(L, idx);
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
        return json_null();
    case LUA_TBOOLEAN:
        return json_boolean(lua_toboolean(L, idx));
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx))
            return json_integer((json_int_t)lua_tointeger(L, idx));
        if (!isfinite(lua_tonumber(L, idx)))
            return json_null(); /* JSON has no NaN/Inf */
        return json_real(lua_tonumber(L, idx));
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        json_t *str = json_stringn_nocheck(s, len);
        return str;
    }
    case LUA_TTABLE: {
        luaL_checkstack(L, 4, "table nested too deeply for JSON");
        lua_Integer n = sequence_length(L, idx);
        int want_array = 0;
        if (n == 0 && lua_getmetatable(L, idx)) {
            luaL_getmetatable(L, AVO_LUA_JSON_ARRAY_MT);
            want_array = lua_rawequal(L, -1, -2);
            lua_pop(L, 2);
        }
        if (n > 0 || want_array) {
            json_t *arr = json_array();
            for (lua_Integer i = 1; i <= n; i++) {
                lua_rawgeti(L, idx, i);
                json_t *item = to_json(L, -1, depth + 1, err, errlen);
                lua_pop(L, 1);
                if (!item || json_array_append_new(arr, item) < 0) {
                    json_decref(arr);
                    return NULL;
                }
            }
            return arr;
        }
        json_t *obj = json_object();
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            char keybuf[64];
            const char *key;
            if (lua_type(L, -2) == LUA_TSTRING) {
                key = lua_tostring(L, -2);
            } else if (lua_type(L, -2) == LUA_TNUMBER) {
                if (lua_isinteger(L, -2))
                    snprintf(keybuf, sizeof keybuf, "%lld", (long long)lua_tointeger(L, -2));
                else
                    snprintf(keybuf, sizeof keybuf, "%.17g", lua_tonumber(L, -2));
                key = keybuf;
            } else {
                lua_pop(L, 2);
                json_decref(obj);
                avo_error(err, errlen, AVO_EINVAL, "cannot convert a %s key to JSON",
                          luaL_typename(L, -2));
                return NULL;
            }
            json_t *item = to_json(L, -1, depth + 1, err, errlen);
            lua_pop(L, 1);
            if (!item || json_object_set_new(obj, key, item) < 0) {
                lua_pop(L, 1);
                json_decref(obj);
                return NULL;
            }
        }
        return obj;
    }
    default:
        avo_error(err, errlen, AVO_EINVAL, "cannot convert a %s to JSON", luaL_typename(L, idx));
        return NULL;
    }
}

json_t *avo_lua_to_json(lua_State *L, int idx, char *err, size_t errlen)
{
    return to_json(L, idx, 0, err, errlen);
}

char *avo_lua_check_json_text(lua_State *L, int idx)
{
    char err[AVO_ERRLEN];
    json_t *value = avo_lua_to_json(L, idx, err, sizeof err);
    if (!value)
        luaL_argerror(L, idx, err);
    char *text = json_dumps(value, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref(value);
    if (!text)
        luaL_error(L, "out of memory");
    return text;
}

/* core.json_encode(value) -> compact JSON text with sorted keys */
static int core_json_encode(lua_State *L)
{
    luaL_checkany(L, 1);
    char *text = avo_lua_check_json_text(L, 1);
    lua_pushstring(L, text);
    free(text);
    return 1;
}

static int core_json_decode(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    json_error_t jerr;
    json_t *value = json_loadb(s, len, JSON_DECODE_ANY, &jerr);
    if (!value)
        return avo_lua_push_fail(L, jerr.text);
    avo_lua_push_json(L, value);
    json_decref(value);
    return 1;
}

void avo_lua_json_register(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"json_encode", core_json_encode},
        {"json_decode", core_json_decode},
        {NULL, NULL},
    };
    luaL_setfuncs(L, functions, 0);
    luaL_newmetatable(L, AVO_LUA_JSON_ARRAY_MT); /* the mark of an empty array */
    lua_setfield(L, -2, "json_array_mt");
}
