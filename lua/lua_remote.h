/*
 * lua_remote.h — scale-out from Lua (lua/lua_remote.c): the device and
 * network side of avo.Pool, and the avo.Slurm launcher.
 *
 *   pool:set_devices({ordinal, ...})   timing workers on these CUDA devices
 *   pool:devices()                     -> {ordinal, ...} (after the probe)
 *   pool:listen{address=, run=, version=, secret=}  -> port | nil, message
 *   pool:allow_fingerprint(fp)
 *   pool:workers()                     -> {remote=, handshaking=, gone=reason|nil}
 *   pool:events()                      -> {line, ...} (drained)
 *   pool:launcher_ended(reason)        no remote worker will come back
 *   pool:set_grace(seconds)
 *   pool:gone()                        -> reason | nil
 *   core.cuda_devices()                -> visible CUDA devices (counted in a child)
 *   core.worker_secret()               -> a fresh random secret (hex)
 *   core.secret_from_env()             -> secret | nil, message (AVO_WORKER_SECRET[_FILE])
 *   core.write_private(path, text)     -> true | nil, message (mode 0600)
 *   core.slurm{options=, ntasks=, name=, argv={...}, secret=, log=} -> Slurm | nil, message
 *   slurm:running()                    -> true | false, "srun exited with status 1"
 *   slurm:pid()                        -> pid | nil
 *   slurm:stop([grace_s])              (also __gc, __close; idempotent)
 */
#ifndef AVO_LUA_REMOTE_H
#define AVO_LUA_REMOTE_H

#include <lua.h>

/* [-0, +0] Add the pool methods to `pool_mt`'s __index (created before),
 * create avo.Slurm and set the core.* functions above into the table on top
 * of the stack. */
void avo_lua_remote_register(lua_State *L, const char *pool_mt);

#endif
