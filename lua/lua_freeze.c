/*
 * lua_freeze.c — a Lua value kept as one string (core.freeze, core.thaw).
 *
 * A long run keeps a record per candidate for its dedupe index and its
 * verified list (lua/avo/pipeline.lua).  As tables, each record is some ten
 * objects that every garbage collection cycle marks and sweeps, and the
 * cost of a cycle grows with the run (bench/throughput.sh).  Frozen, it is
 * one string, which the collector neither traverses nor splits.
 *
 * What freezes: nil, booleans, integers and floats (each keeps its subtype),
 * strings, light userdata (the JSON null of avo.core), and tables of those
 * that form a tree, with no metatable or core.json_array_mt.  Thawing makes
 * fresh tables with the same contents, sized as the originals and filled in
 * the originals' traversal order.  Anything else (a function, a table met
 * twice, another metatable) does not freeze: core.freeze returns nil and the
 * caller keeps the value as it is.
 *
 * The format is private to this process (native byte order, pointers of
 * light userdata): it is never written anywhere.
 */
#include "lua/lua_freeze.h"

#include <lauxlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "lua/luajson.h"

enum {
    TAG_NIL = 'n',
    TAG_FALSE = 'f',
    TAG_TRUE = 't',
    TAG_INT = 'i',
    TAG_FLOAT = 'd',
    TAG_STRING = 's',
    TAG_LIGHT = 'p',
    TAG_TABLE = 'T',       /* sizes, then key/value pairs, then TAG_END */
    TAG_ARRAY_MT = 'A',    /* a TAG_TABLE marked with core.json_array_mt */
    TAG_END = 'E',
    FREEZE_MAX_DEPTH = 32, /* records nest three or four deep */
};

/* The tables being frozen (a table met again is shared or cyclic: refused),
 * as a Lua table at stack index `seen`. */
typedef struct {
    avo_strbuf *b;
    int seen;
    int array_mt; /* stack index of core.json_array_mt */
} freezer;

/* (An append that runs out of memory marks the buffer failed: checked once
 * at the end.) */
static void put(freezer *f, const void *p, size_t n)
{
    avo_strbuf_append(f->b, (const char *)p, n);
}

static void put_tag(freezer *f, char tag)
{
    avo_strbuf_append(f->b, &tag, 1);
}

/* Append the value at idx; 0 when it cannot be frozen.  The stack is left
 * as found. */
static int freeze_value(lua_State *L, freezer *f, int idx, int depth);

static int freeze_table(lua_State *L, freezer *f, int idx, int depth)
{
    if (depth > FREEZE_MAX_DEPTH)
        return 0;
    luaL_checkstack(L, 4, "core.freeze: nested too deeply");
    char tag = TAG_TABLE;
    if (lua_getmetatable(L, idx)) {
        int marked = lua_rawequal(L, -1, f->array_mt);
        lua_pop(L, 1);
        if (!marked)
            return 0;
        tag = TAG_ARRAY_MT;
    }
    if (lua_rawgetp(L, f->seen, lua_topointer(L, idx)) != LUA_TNIL) {
        lua_pop(L, 1);
        return 0; /* shared or cyclic */
    }
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
    lua_rawsetp(L, f->seen, lua_topointer(L, idx));
    /* Sizes for thawing: the array length and the number of other keys. */
    lua_Unsigned narr = lua_rawlen(L, idx);
    lua_Unsigned nall = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        nall++;
        lua_pop(L, 1);
    }
    unsigned sizes[2] = {(unsigned)narr, (unsigned)(nall > narr ? nall - narr : 0)};
    put_tag(f, tag);
    put(f, sizes, sizeof sizes);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int top = lua_gettop(L);
        if (!freeze_value(L, f, top - 1, depth + 1) || !freeze_value(L, f, top, depth + 1)) {
            lua_pop(L, 2);
            return 0;
        }
        lua_pop(L, 1);
    }
    put_tag(f, TAG_END);
    return 1;
}

static int freeze_value(lua_State *L, freezer *f, int idx, int depth)
{
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
        put_tag(f, TAG_NIL);
        return 1;
    case LUA_TBOOLEAN:
        put_tag(f, lua_toboolean(L, idx) ? TAG_TRUE : TAG_FALSE);
        return 1;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
            lua_Integer v = lua_tointeger(L, idx);
            put_tag(f, TAG_INT);
            put(f, &v, sizeof v);
        } else {
            lua_Number v = lua_tonumber(L, idx);
            put_tag(f, TAG_FLOAT);
            put(f, &v, sizeof v);
        }
        return 1;
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        put_tag(f, TAG_STRING);
        put(f, &len, sizeof len);
        put(f, s, len);
        return 1;
    }
    case LUA_TLIGHTUSERDATA: {
        void *p = lua_touserdata(L, idx);
        put_tag(f, TAG_LIGHT);
        put(f, &p, sizeof p);
        return 1;
    }
    case LUA_TTABLE:
        return freeze_table(L, f, idx, depth);
    default:
        return 0;
    }
}

int avo_lua_freeze_into(lua_State *L, int idx, avo_strbuf *b)
{
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 4, "core.freeze");
    lua_newtable(L);                             /* seen */
    luaL_getmetatable(L, AVO_LUA_JSON_ARRAY_MT); /* the array mark */
    b->len = 0;
    b->failed = 0;
    freezer f = {b, lua_gettop(L) - 1, lua_gettop(L)};
    int ok = freeze_value(L, &f, idx, 0);
    lua_pop(L, 2);
    if (b->failed)
        return luaL_error(L, "core.freeze: out of memory");
    return ok;
}

/* core.freeze(value) -> string | nil (the value cannot be frozen).  The
 * buffer is one for the process, emptied at each call (Lua runs on one
 * thread), so an error raised midway (out of memory) leaks nothing. */
static int core_freeze(lua_State *L)
{
    static avo_strbuf buffer;
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    if (avo_lua_freeze_into(L, 1, &buffer))
        lua_pushlstring(L, buffer.data, buffer.len);
    else
        lua_pushnil(L);
    return 1;
}

/* Reading a frozen string: p walks from the start to end. */
typedef struct {
    const char *p, *end;
} thawer;

static void take(lua_State *L, thawer *t, void *out, size_t n)
{
    if ((size_t)(t->end - t->p) < n)
        luaL_error(L, "core.thaw: not a frozen value (cut short)");
    memcpy(out, t->p, n);
    t->p += n;
}

/* Push the next value; returns its tag (TAG_END pushes nothing). */
static char thaw_value(lua_State *L, thawer *t)
{
    char tag;
    take(L, t, &tag, 1);
    switch (tag) {
    case TAG_NIL:
        lua_pushnil(L);
        break;
    case TAG_FALSE:
    case TAG_TRUE:
        lua_pushboolean(L, tag == TAG_TRUE);
        break;
    case TAG_INT: {
        lua_Integer v;
        take(L, t, &v, sizeof v);
        lua_pushinteger(L, v);
        break;
    }
    case TAG_FLOAT: {
        lua_Number v;
        take(L, t, &v, sizeof v);
        lua_pushnumber(L, v);
        break;
    }
    case TAG_STRING: {
        size_t len;
        take(L, t, &len, sizeof len);
        if ((size_t)(t->end - t->p) < len)
            luaL_error(L, "core.thaw: not a frozen value (cut short)");
        lua_pushlstring(L, t->p, len);
        t->p += len;
        break;
    }
    case TAG_LIGHT: {
        void *p;
        take(L, t, &p, sizeof p);
        lua_pushlightuserdata(L, p);
        break;
    }
    case TAG_TABLE:
    case TAG_ARRAY_MT: {
        unsigned sizes[2];
        take(L, t, sizes, sizeof sizes);
        luaL_checkstack(L, 4, "core.thaw: nested too deeply");
        lua_createtable(L, (int)sizes[0], (int)sizes[1]);
        while (thaw_value(L, t) != TAG_END) {
            thaw_value(L, t);
            lua_rawset(L, -3);
        }
        if (tag == TAG_ARRAY_MT) {
            luaL_getmetatable(L, AVO_LUA_JSON_ARRAY_MT);
            lua_setmetatable(L, -2);
        }
        break;
    }
    case TAG_END:
        break;
    default:
        luaL_error(L, "core.thaw: not a frozen value (tag %d)", (int)tag);
    }
    return tag;
}

void avo_lua_thaw(lua_State *L, const char *s, size_t len)
{
    thawer t = {s, s + len};
    if (thaw_value(L, &t) == TAG_END || t.p != t.end)
        luaL_error(L, "core.thaw: not a frozen value");
}

/* core.thaw(string) -> the value core.freeze made it from, in fresh tables */
static int core_thaw(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    avo_lua_thaw(L, s, len);
    return 1;
}

void avo_lua_freeze_register(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"freeze", core_freeze},
        {"thaw", core_thaw},
        {NULL, NULL},
    };
    luaL_setfuncs(L, functions, 0);
}
