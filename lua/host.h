/*
 * host.h — the embedded Lua interpreter that runs scripts, strategies,
 * operators and evaluators.
 *
 * A host is one lua_State with the standard libraries, the C module
 * `avo.core`, and the engine's Lua modules (embedded in the binary) on the
 * require path, followed by modules under the avo roots ($AVO_PATH, ".",
 * the source tree; avo.paths.searcher).  The commands implemented in Lua
 * (run, eval, resume, replay, rebench, experiment; their options parsed by
 * cli/cli_lua.c) are called as `require("avo.cli")[command](options)` under
 * lua_pcall with a traceback handler.
 */
#ifndef AVO_HOST_H
#define AVO_HOST_H

#include <jansson.h>

/*
 * Run the Lua command `command` with `options` (a JSON object; borrowed) as
 * its argument.  Returns the process exit status the command asked for (0, 1
 * or 2).  Errors are printed by the Lua side (the CLI) with file:line and a
 * traceback.
 */
int avo_host_command(const char *command, const json_t *options);

/*
 * The same, for a command that hands the caller data to go on with (`avo
 * experiment report`: the statistics, which the view layer renders): its
 * second return value as JSON into *ret_result (a new reference the caller
 * owns; NULL when it returned none or on an error).
 */
int avo_host_call(const char *command, const json_t *options, json_t **ret_result);

#endif
