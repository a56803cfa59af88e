/*
 * lua_archive.h — the avo.Archive userdata (lua/lua_archive.c): the run
 * archive (store/archive.h) seen from Lua.
 *
 *   core.archive(path)       -> Archive | nil, message   (created when missing)
 *   core.archive_read(path)  -> Archive | nil, message   (must exist; read-only
 *                                                          when it cannot be written)
 *   archive:run_begin{...}, run_end, run_claim, run_restore, run_live, run_reopen,
 *   runs, run_get, add, finish, event, events, get, by_key, best, lineage,
 *   common_ancestor, source, candidates, rebench_begin, rebench_add, llm_record,
 *   llm_calls, attempt_add, attempt_update, attempts, baseline_put, baselines,
 *   experiment_add, experiments, experiment_cell_put, experiment_cells
 *   archive:close()          (also __gc, __close; idempotent)
 *
 * The argument and result shapes are written above each function in the .c
 * file and in store/archive.h.
 */
#ifndef AVO_LUA_ARCHIVE_H
#define AVO_LUA_ARCHIVE_H

#include <lua.h>

#define AVO_LUA_ARCHIVE_MT "avo.Archive"

/* [-0, +0] Create avo.Archive and set core.archive and core.archive_read
 * into the table on top of the stack. */
void avo_lua_archive_register(lua_State *L);

/* The open archive at idx, NULL when idx is no avo.Archive; a closed one
 * raises.  For lua_kb.c (core.kb(archive)). */
struct avo_archive *avo_lua_to_archive(lua_State *L, int idx);

#endif
