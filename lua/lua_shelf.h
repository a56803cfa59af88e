/*
 * lua_shelf.h — the avo.Shelf userdata (lua/lua_shelf.c): a run's finished
 * records, kept frozen in C memory under their dedupe keys, and the keys
 * of the verified ones in order of arrival (lua/avo/pipeline.lua).
 *
 *   core.shelf()           -> Shelf
 *   shelf:put(key, rec)    -> true, or false when rec cannot freeze (core.freeze);
 *                             rec.source is kept once per distinct source
 *   shelf:get(key)         -> rec in fresh tables (its source set) | nil
 *   shelf:has(key)         -> boolean
 *   shelf:add_ok(key)      appends key to the verified ones
 *   shelf:ok_keys()        -> the keys add_ok appended, in order
 *   shelf:close()
 */
#ifndef AVO_LUA_SHELF_H
#define AVO_LUA_SHELF_H

#include <lua.h>

#define AVO_LUA_SHELF_MT "avo.Shelf"

/* [-0, +0] Create avo.Shelf and set core.shelf into the table on top. */
void avo_lua_shelf_register(lua_State *L);

#endif
