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
 */
#ifndef AVO_LUAJSON_H
#define AVO_LUAJSON_H

#include <jansson.h>
#include <lua.h>

/* [-0, +1] Push `value` (borrowed; NULL pushes nil). */
void avo_lua_push_json(lua_State *L, const json_t *value);

/* [-0, +0] Convert the value at idx; NULL and a message in err on failure.
 * The caller owns the result. */
json_t *avo_lua_to_json(lua_State *L, int idx, char *err, size_t errlen);

#endif
