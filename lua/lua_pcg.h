/*
 * lua_pcg.h — the avo.Rng userdata (lua/lua_pcg.c): a PCG32 stream.
 *
 *   core.rng(seed, name) -> Rng   (the stream `name` derived from `seed`)
 *   rng:next()           -> integer in [0, 2^32)
 *   rng:below(n)         -> integer in [0, n), 1 <= n < 2^32
 *   rng:double()         -> number in [0, 1)
 *   rng:state()          -> state, inc (to persist a stream)
 */
#ifndef AVO_LUA_PCG_H
#define AVO_LUA_PCG_H

#include <lua.h>

#define AVO_LUA_PCG_MT "avo.Rng"

/* [-0, +0] Create avo.Rng and set core.rng into the table on top. */
void avo_lua_pcg_register(lua_State *L);

#endif
