/*
 * lua_util.h — the helpers of `avo.core` (lua/lua_util.c).
 *
 *   core.hash(text)               -> hex content hash
 *   core.merge3(base, ours, theirs) -> merged, conflicts | nil, message
 *   core.diff(a, b [, name])      -> unified diff ("" when equal) | nil, message
 *   core.isatty(fd), core.now(), core.monotonic(), core.cores(), core.hostname()
 *   core.baselines()              -> {{name, backend, library, summary}, ...}
 *   core.exe()                    -> path of the running avo binary | nil, message
 *   core.list_dir(path)           -> sorted names in a directory | nil, message
 *   core.realpath(path)           -> absolute path, symlinks resolved | nil, message
 */
#ifndef AVO_LUA_UTIL_H
#define AVO_LUA_UTIL_H

#include <lua.h>

/* [-0, +0] Set the functions above into the table on top of the stack. */
void avo_lua_util_register(lua_State *L);

#endif
