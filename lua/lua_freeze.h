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

#include "core/strbuf.h"

/* [-0, +0] Freeze the value at idx into b (emptied first): 1, or 0 when it
 * cannot freeze (b then holds a part).  Raises on out of memory. */
int avo_lua_freeze_into(lua_State *L, int idx, avo_strbuf *b);

/* [-0, +1] Push the value frozen in s[0, len); raises when it is not one. */
void avo_lua_thaw(lua_State *L, const char *s, size_t len);

/* [-0, +0] Set the functions above into the table on top of the stack. */
void avo_lua_freeze_register(lua_State *L);

#endif
