/*
 * binding.c — helpers shared by the binding files (binding.h).
 */
#include "lua/binding.h"

int avo_lua_push_fail(lua_State *L, const char *msg)
{
    lua_pushnil(L);
    lua_pushstring(L, msg);
    return 2;
}

int avo_lua_push_done(lua_State *L, int rc, const char *err)
{
    if (rc < 0)
        return avo_lua_push_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}

void avo_lua_new_class(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction close)
{
    luaL_newmetatable(L, name);
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    if (close) {
        lua_pushcfunction(L, close);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, close);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
}
