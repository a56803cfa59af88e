/*
 * lua_gp.c — the avo.Gp userdata (lua_gp.h): core/gp.h for
 * strategies/surrogate.lua.
 *
 * The userdata is created closed (NULL model) before anything can fail;
 * one idempotent close serves __gc and __close.  Arrays read from Lua go
 * into scratch userdata, so a bad argument raised halfway leaks nothing.
 */
#include "lua/lua_gp.h"

#include <lauxlib.h>
#include <math.h>

#include "core/avo.h"
#include "core/gp.h"
#include "lua/binding.h"

typedef struct gp_ud {
    avo_gp *gp;
} gp_ud;

static avo_gp *check_gp(lua_State *L)
{
    gp_ud *ud = luaL_checkudata(L, 1, AVO_LUA_GP_MT);
    if (!ud->gp)
        luaL_error(L, "attempt to use a closed Gaussian process");
    return ud->gp;
}

/* [-0, +1] A scratch array of `count` elements of `size` bytes, owned by the
 * Lua stack. */
static void *scratch(lua_State *L, size_t count, size_t size)
{
    return lua_newuserdatauv(L, (count ? count : 1) * size, 0);
}

/* core.gp(spans) -> Gp */
static int gp_new(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer knobs = (lua_Integer)lua_rawlen(L, 1);
    luaL_argcheck(L, knobs <= 4096, 1, "too many knobs");
    int *spans = scratch(L, (size_t)knobs, sizeof(int));
    for (lua_Integer d = 1; d <= knobs; d++) {
        lua_rawgeti(L, 1, d);
        int ok;
        lua_Integer span = lua_tointegerx(L, -1, &ok);
        luaL_argcheck(L, ok && span >= 2 && span <= 1 << 20, 1,
                      "spans must be integers >= 2 (values per knob)");
        spans[d - 1] = (int)span;
        lua_pop(L, 1);
    }
    gp_ud *ud = lua_newuserdatauv(L, sizeof *ud, 0);
    ud->gp = NULL;
    luaL_setmetatable(L, AVO_LUA_GP_MT);
    ud->gp = avo_gp_new((int)knobs, spans);
    if (!ud->gp)
        return luaL_error(L, "out of memory");
    return 1;
}

static int gp_close(lua_State *L)
{
    gp_ud *ud = luaL_checkudata(L, 1, AVO_LUA_GP_MT);
    avo_gp_free(ud->gp);
    ud->gp = NULL;
    return 0;
}

/* Reads the encoding at stack index `idx` into x (argument `arg` of the
 * call, for its error). */
static void read_encoding(lua_State *L, avo_gp *gp, int idx, int arg, int *x)
{
    int knobs = avo_gp_knobs(gp);
    luaL_argcheck(L, lua_type(L, idx) == LUA_TTABLE && (int)lua_rawlen(L, idx) == knobs, arg,
                  "an encoding must be an array of one value position per knob");
    for (int d = 0; d < knobs; d++) {
        lua_rawgeti(L, idx, d + 1);
        int ok;
        lua_Integer v = lua_tointegerx(L, -1, &ok);
        lua_pop(L, 1);
        luaL_argcheck(L, ok && v >= 1, arg, "a value position out of its knob's range");
        x[d] = (int)(v > 1 << 20 ? 1 << 20 : v);
    }
}

/* [-0, +1] The scores y (argument 2): one number per training position. */
static const double *read_scores(lua_State *L, avo_gp *gp)
{
    luaL_checktype(L, 2, LUA_TTABLE);
    int n = avo_gp_size(gp);
    luaL_argcheck(L, (lua_Integer)lua_rawlen(L, 2) == n, 2, "one score per training position");
    double *y = scratch(L, (size_t)n, sizeof(double));
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 2, i + 1);
        int ok;
        y[i] = lua_tonumberx(L, -1, &ok);
        lua_pop(L, 1);
        luaL_argcheck(L, ok && isfinite(y[i]), 2, "scores must be finite numbers");
    }
    return y;
}

static double hyper_field(lua_State *L, int idx, const char *name)
{
    lua_getfield(L, idx, name);
    int ok;
    double v = lua_tonumberx(L, -1, &ok);
    lua_pop(L, 1);
    if (!ok || !isfinite(v))
        luaL_argerror(L, idx, lua_pushfstring(L, "hyper.%s must be a finite number", name));
    return v;
}

/* The hyperparameters at stack index idx. */
static avo_gp_hyper read_hyper(lua_State *L, int idx)
{
    luaL_checktype(L, idx, LUA_TTABLE);
    avo_gp_hyper h = {
        .scale = hyper_field(L, idx, "scale"),
        .w = hyper_field(L, idx, "w"),
        .shape = (int)hyper_field(L, idx, "shape"),
        .noise = hyper_field(L, idx, "noise"),
    };
    luaL_argcheck(L, h.scale > 0 && h.w >= 0 && h.w <= 1 && h.noise >= 0, idx,
                  "hyper needs scale > 0, w in [0, 1], noise >= 0");
    luaL_argcheck(L, h.shape == 1 || h.shape == 2, idx, "hyper.shape must be 1 or 2");
    return h;
}

/* gp:add(x) */
static int gp_add(lua_State *L)
{
    avo_gp *gp = check_gp(L);
    int *x = scratch(L, (size_t)avo_gp_knobs(gp), sizeof(int));
    read_encoding(L, gp, 2, 2, x);
    if (avo_gp_add(gp, x) < 0)
        return luaL_error(L, "out of memory");
    return 0;
}

static int gp_pop(lua_State *L)
{
    avo_gp_pop(check_gp(L));
    return 0;
}

static int gp_clear(lua_State *L)
{
    avo_gp_clear(check_gp(L));
    return 0;
}

static int gp_size(lua_State *L)
{
    lua_pushinteger(L, avo_gp_size(check_gp(L)));
    return 1;
}

/* gp:loglik(y, hyper) -> number | nil */
static int gp_loglik(lua_State *L)
{
    avo_gp *gp = check_gp(L);
    avo_gp_hyper h = read_hyper(L, 3);
    const double *y = read_scores(L, gp);
    double loglik;
    int rc = avo_gp_loglik(gp, y, &h, &loglik);
    if (rc == AVO_ENOMEM)
        return luaL_error(L, "out of memory");
    if (rc < 0)
        lua_pushnil(L);
    else
        lua_pushnumber(L, loglik);
    return 1;
}

/* gp:fit(y, hyper) -> number | nil */
static int gp_fit(lua_State *L)
{
    avo_gp *gp = check_gp(L);
    avo_gp_hyper h = read_hyper(L, 3);
    const double *y = read_scores(L, gp);
    double loglik;
    if (avo_gp_fit(gp, y, &h, &loglik) < 0)
        lua_pushnil(L);
    else
        lua_pushnumber(L, loglik);
    return 1;
}

/* gp:has_model(hyper) -> boolean */
static int gp_has_model(lua_State *L)
{
    avo_gp *gp = check_gp(L);
    avo_gp_hyper h = read_hyper(L, 2);
    lua_pushboolean(L, avo_gp_has_model(gp, &h));
    return 1;
}

/* gp:extend(y) -> boolean */
static int gp_extend(lua_State *L)
{
    avo_gp *gp = check_gp(L);
    const double *y = read_scores(L, gp);
    lua_pushboolean(L, avo_gp_extend(gp, y) == 0);
    return 1;
}

/* gp:best(list, best, xi [, floor]) -> index, mean, ei | nil */
static int gp_best(lua_State *L)
{
    avo_gp *gp = check_gp(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    double best = luaL_checknumber(L, 3), xi = luaL_checknumber(L, 4);
    double floor = luaL_optnumber(L, 5, -HUGE_VAL);
    size_t len = lua_rawlen(L, 2), knobs = (size_t)avo_gp_knobs(gp);
    luaL_argcheck(L, len <= 1 << 24, 2, "too many candidates");
    int *xs = scratch(L, len * knobs, sizeof(int));
    int *index = scratch(L, len, sizeof(int));
    int count = 0;
    for (size_t i = 1; i <= len; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i);
        if (lua_type(L, -1) == LUA_TTABLE) {
            read_encoding(L, gp, lua_gettop(L), 2, xs + (size_t)count * knobs);
            index[count++] = (int)i;
        } else if (lua_toboolean(L, -1)) {
            return luaL_argerror(L, 2, "candidates must be encodings or false");
        }
        lua_pop(L, 1);
    }
    int top;
    double mean, ei;
    int rc = avo_gp_best(gp, xs, count, best, xi, floor, &top, &mean, &ei);
    if (rc == AVO_EINVAL)
        return luaL_error(L, "the Gaussian process has no model (fit first)");
    if (rc < 0)
        return luaL_error(L, "out of memory");
    if (top < 0) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushinteger(L, index[top]);
    lua_pushnumber(L, mean);
    lua_pushnumber(L, ei);
    return 3;
}

static const luaL_Reg gp_methods[] = {
    {"add", gp_add},
    {"pop", gp_pop},
    {"clear", gp_clear},
    {"size", gp_size},
    {"loglik", gp_loglik},
    {"fit", gp_fit},
    {"has_model", gp_has_model},
    {"extend", gp_extend},
    {"best", gp_best},
    {"close", gp_close},
    {NULL, NULL},
};

void avo_lua_gp_register(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"gp", gp_new},
        {NULL, NULL},
    };
    avo_lua_new_class(L, AVO_LUA_GP_MT, gp_methods, gp_close);
    luaL_setfuncs(L, functions, 0);
}
