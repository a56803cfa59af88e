/*
 * binding.h — what every binding file of `avo.core` (lua/lua_*.c) shares:
 * the "nil, message" return of an expected failure and the making of a
 * userdata type's metatable.
 *
 * Each binding file binds one library and exposes one
 * avo_lua_<library>_register(L): [-0, +0] it creates the metatables of its
 * types and sets its functions into the table on top of the stack (the
 * `avo.core` module under construction; lua/core.c calls them all).
 */
#ifndef AVO_LUA_BINDING_H
#define AVO_LUA_BINDING_H

#include <lauxlib.h>
#include <lua.h>

/* [-0, +2] Push nil and `msg`; returns 2, for `return avo_lua_push_fail(L, msg)`. */
int avo_lua_push_fail(lua_State *L, const char *msg);

/* [-0, +1 or +2] true, or nil and `err` when rc < 0: what a method that
 * only acts returns. */
int avo_lua_push_done(lua_State *L, int rc, const char *err);

/*
 * [-0, +0] Create metatable `name` whose __index holds `methods`; with
 * `close`, that function is also __gc and __close (it must be idempotent:
 * a userdata is created closed, closed by hand and collected later).
 */
void avo_lua_new_class(lua_State *L, const char *name, const luaL_Reg *methods,
                       lua_CFunction close);

#endif
