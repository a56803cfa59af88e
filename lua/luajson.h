/*
 * luajson.h — conversion between jansson values and Lua values.
 *
 * Objects become tables with string keys, arrays become sequences (1-based),
 * JSON null becomes nil inside containers and lua nil at top level, integers
 * stay integers.  In the other direction a table whose keys are exactly
 * 1..n (n >= 1) becomes an array, any other table an object (non-string keys
 * converted with tostring); an empty table becomes an empty object unless it
 * carries the metatable avo.json.array (then []).  Functions, userdata and
 * threads are errors.
 *
 * Lua sees this file as core.json_encode(value) -> compact JSON text with
 * sorted keys (raises on a value JSON cannot hold), core.json_decode(text)
 * -> value | nil, message, and core.json_array_mt.
 */
#ifndef AVO_LUAJSON_H
#define AVO_LUAJSON_H

#include <jansson.h>
#include <lua.h>

/* The metatable that marks an empty table as the JSON array [] (core.json_array_mt). */
#define AVO_LUA_JSON_ARRAY_MT "avo.json.array"

/* [-0, +1] Push `value` (borrowed; NULL pushes nil). */
void avo_lua_push_json(lua_State *L, const json_t *value);

/* [-0, +0] Convert the value at idx; NULL and a message in err on failure.
 * The caller owns the result. */
json_t *avo_lua_to_json(lua_State *L, int idx, char *err, size_t errlen);

/* Convert argument idx to compact JSON text with sorted keys; raises "bad
 * argument" when it cannot be converted.  The caller frees the text. */
char *avo_lua_check_json_text(lua_State *L, int idx);

/* [-0, +0] Set core.json_encode, core.json_decode and core.json_array_mt
 * into the table on top of the stack. */
void avo_lua_json_register(lua_State *L);

#endif
