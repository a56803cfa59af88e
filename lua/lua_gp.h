/*
 * lua_gp.h — the avo.Gp userdata (lua/lua_gp.c): the Gaussian process of
 * strategies/surrogate.lua (core/gp.h).  Encodings are arrays of 1-based
 * value positions, one per knob; hyper is { scale, w, shape, noise }.
 *
 *   core.gp(spans)               -> Gp   (spans: values per knob, each >= 2)
 *   gp:add(x)                    appends a training position
 *   gp:pop()                     drops the last one (the model keeps its leading rows)
 *   gp:clear()                   drops them all and the model
 *   gp:size()                    -> training positions held
 *   gp:loglik(y, hyper)          -> log marginal likelihood | nil (not positive definite)
 *   gp:fit(y, hyper)             -> log marginal likelihood | nil; the model is now this one
 *   gp:has_model(hyper)          -> true when the model was made under hyper
 *   gp:extend(y)                 -> true, or false (no model, or not positive definite)
 *   gp:best(list, best, xi [, floor]) -> index, mean, ei | nil
 *                                the encoding of list (false entries skipped) of highest
 *                                expected improvement above floor
 *   gp:close()
 */
#ifndef AVO_LUA_GP_H
#define AVO_LUA_GP_H

#include <lua.h>

#define AVO_LUA_GP_MT "avo.Gp"

/* [-0, +0] Create avo.Gp and set core.gp into the table on top. */
void avo_lua_gp_register(lua_State *L);

#endif
