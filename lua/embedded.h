/*
 * embedded.h — the engine's own Lua modules (the .lua files under lua/avo), compiled into
 * the binary by tools/embed_lua.py so `avo` runs from any directory.
 */
#ifndef AVO_EMBEDDED_H
#define AVO_EMBEDDED_H

#include <stddef.h>

typedef struct avo_lua_module {
    const char *name;  /* module name for require, e.g. "avo.sched" */
    const char *chunk; /* chunk name for messages, e.g. "@lua/avo/sched.lua" */
    const char *code;
    size_t len;
} avo_lua_module;

extern const avo_lua_module avo_lua_modules[];

#endif
