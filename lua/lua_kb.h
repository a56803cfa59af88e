/*
 * lua_kb.h — the avo.Kb userdata (lua/lua_kb.c): the knowledge base
 * (store/kb.h) seen from Lua.
 *
 *   core.kb(path)               -> Kb | nil, message   (creates the kb tables)
 *   core.kb(archive)            -> the KB of an open avo.Archive, on its
 *                                  connection (store/kb.h, avo_kb_open_archive)
 *   kb:search(query[, limit])   -> {{doc, doc_id, section, title, line, snippet, score}, ...}
 *   kb:read(doc)                -> {id, path, kind, title, hash, sections, text} | nil, message
 *   kb:list()                   -> {{id, path, kind, title, hash, bytes, sections, added_at}, ...}
 *   kb:add_dir(dir)             -> {added, replaced, unchanged, removed, skipped, sections}
 *                                  | nil, message
 *   kb:add_file(path[, text])   -> changed (boolean) | nil, message
 *   kb:close()                  (also __gc, __close; idempotent)
 *
 * Expected failures (missing document or directory, database errors) return
 * nil, message; misuse (wrong argument types, a closed Kb) raises.
 */
#ifndef AVO_LUA_KB_H
#define AVO_LUA_KB_H

#include <lua.h>

#define AVO_LUA_KB_MT "avo.Kb"

/* [-0, +0] Create avo.Kb and set core.kb into the table on top of the stack. */
void avo_lua_kb_register(lua_State *L);

#endif
