/*
 * lua_freeze.h — `avo.core` keeping a value as one string (lua/lua_freeze.c).
 *
 *   core.freeze(value) -> string | nil (functions, userdata, shared or cyclic
 *                         tables, metatables other than core.json_array_mt)
 *   core.thaw(string)  -> the value again, in fresh tables
 */
#ifndef AVO_LUA_FREEZE_H
#define AVO_LUA_FREEZE_H

#include <lua.h>

/* [-0, +0] Set the functions above into the table on top of the stack. */
void avo_lua_freeze_register(lua_State *L);

#endif
