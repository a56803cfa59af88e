/*
 * core.c — the `avo.core` Lua module: the C engine seen from Lua.
 *
 * It exposes three userdata types and a handful of functions; everything
 * with policy (scheduling, scoring, budgets, strategies) is Lua on top.
 *
 *   avo.Archive   core.archive(path)     the run archive (store/archive.h)
 *   avo.Pool      core.pool(jobs)        worker processes (scale/pool.h)
 *   avo.Rng       core.rng(seed, name)   a PCG32 stream (core/pcg.h)
 *   avo.Llm       core.llm(seed)         LLM HTTP client (lua/lua_llm.c)
 *   avo.Kb        core.kb(path)          knowledge base (lua/lua_kb.c, store/kb.h)
 *
 * Misuse raises "bad argument"; an expected failure (archive refused, row
 * missing) returns nil, message.  Each userdata is created closed before
 * anything can fail, and one idempotent close serves __gc and __close.
 */
#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "avo.h"
#include "avo_config.h"
#include "avo_git.h"
#include "baseline.h"
#include "cache.h"
#include "diff.h"
#include "hash.h"
#include "loop.h"
#include "lua_kb.h"
#include "lua_llm.h"
#include "lua_process.h"
#include "lua_remote.h"
#include "luajson.h"
#include "merge.h"
#include "pcg.h"
#include "pool.h"
#include "watchdog.h"

#define ARCHIVE_MT "avo.Archive"
#define POOL_MT "avo.Pool"
#define RNG_MT "avo.Rng"

static volatile sig_atomic_t interrupted;

/* [-0, +2] Push nil and a message; returns 2 for `return push_fail(...)`. */
static int push_fail(lua_State *L, const char *msg)
{
    lua_pushnil(L);
    lua_pushstring(L, msg);
    return 2;
}

/* [-0, +1 or +2] Push the JSON value and free it, or fail with err. */
static int push_json_result(lua_State *L, int rc, json_t *value, const char *err)
{
    if (rc == AVO_ENOTFOUND) {
        lua_pushnil(L);
        return 1;
    }
    if (rc < 0)
        return push_fail(L, err);
    avo_lua_push_json(L, value);
    json_decref(value);
    return 1;
}

/* Convert argument idx to JSON text (caller frees), raising on failure. */
static char *check_json_text(lua_State *L, int idx)
{
    char err[AVO_ERRLEN];
    json_t *value = avo_lua_to_json(L, idx, err, sizeof err);
    if (!value)
        luaL_argerror(L, idx, err);
    char *text = json_dumps(value, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    json_decref(value);
    if (!text)
        luaL_error(L, "out of memory");
    return text;
}

/* ---------------------------------------------------------------- archive */

typedef struct archive_ud {
    avo_archive *ar;
} archive_ud;

static avo_archive *check_archive(lua_State *L)
{
    archive_ud *ud = luaL_checkudata(L, 1, ARCHIVE_MT);
    if (!ud->ar)
        luaL_error(L, "attempt to use a closed archive");
    return ud->ar;
}

/* The open archive at idx, NULL when idx is no avo.Archive; a closed one
 * raises.  For lua_kb.c (core.kb(archive)). */
avo_archive *avo_lua_to_archive(lua_State *L, int idx)
{
    archive_ud *ud = luaL_testudata(L, idx, ARCHIVE_MT);
    if (ud && !ud->ar)
        luaL_error(L, "attempt to use a closed archive");
    return ud ? ud->ar : NULL;
}

/* Push a new archive userdata opened by `open`, or nil, message. */
static int push_archive(lua_State *L, int (*open)(avo_archive **, const char *, char *, size_t))
{
    const char *path = luaL_checkstring(L, 1);
    archive_ud *ud = lua_newuserdatauv(L, sizeof *ud, 0);
    ud->ar = NULL;
    luaL_setmetatable(L, ARCHIVE_MT);
    char err[AVO_ERRLEN];
    if (open(&ud->ar, path, err, sizeof err) < 0)
        return push_fail(L, err);
    return 1;
}

/* core.archive(path) -> Archive | nil, message */
static int archive_open(lua_State *L)
{
    return push_archive(L, avo_archive_open);
}

/* core.archive_read(path) -> Archive | nil, message: an existing archive
 * for reading, read-only when the file cannot be written (store/archive.h). */
static int archive_open_read(lua_State *L)
{
    return push_archive(L, avo_archive_open_read);
}

/* archive:run_claim(run_id [, takeover]) -> true, previous_owner_or_nil
 *                                        | nil, message, "busy"|nil */
static int archive_run_claim(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer id = luaL_checkinteger(L, 2);
    int takeover = lua_toboolean(L, 3);
    char err[AVO_ERRLEN];
    json_t *previous = NULL;
    int rc = avo_archive_run_claim(ar, id, takeover, &previous, err, sizeof err);
    if (rc < 0) {
        lua_pushnil(L);
        lua_pushstring(L, err);
        if (rc == AVO_EBUSY)
            lua_pushliteral(L, "busy");
        else
            lua_pushnil(L);
        return 3;
    }
    lua_pushboolean(L, 1);
    if (previous) {
        avo_lua_push_json(L, previous);
        json_decref(previous);
    } else {
        lua_pushnil(L);
    }
    return 2;
}

/* archive:run_restore(run_id, {status=, ended_at=, owner=table|nil}, last_event_id) -> true */
static int archive_run_restore(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer id = luaL_checkinteger(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    lua_Integer last_event = luaL_checkinteger(L, 4);
    lua_getfield(L, 3, "status");
    const char *status = luaL_checkstring(L, -1);
    lua_getfield(L, 3, "ended_at");
    double ended_at = luaL_optnumber(L, -1, 0);
    lua_getfield(L, 3, "owner");
    char *owner = lua_isnil(L, -1) ? NULL : check_json_text(L, lua_gettop(L));
    char err[AVO_ERRLEN];
    int rc = avo_archive_run_restore(ar, id, status, ended_at, owner, last_event, err, sizeof err);
    free(owner);
    if (rc < 0)
        return push_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}

/* archive:run_live(run_id) -> boolean: claimed by a live process here */
static int archive_run_live(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_pushboolean(L, avo_archive_run_live(ar, luaL_checkinteger(L, 2)));
    return 1;
}

/* archive:runs() -> array of run summaries, oldest first */
static int archive_runs(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_runs(ar, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

static int archive_close(lua_State *L)
{
    archive_ud *ud = luaL_checkudata(L, 1, ARCHIVE_MT);
    avo_archive_free(ud->ar);
    ud->ar = NULL;
    return 0;
}

static const char *opt_field_string(lua_State *L, int t, const char *key)
{
    lua_getfield(L, t, key);
    const char *s = lua_isnil(L, -1) ? NULL : luaL_tolstring(L, -1, NULL);
    if (s)
        lua_replace(L, -2); /* keep the string anchored on the stack */
    return s;
}

/* archive:run_begin{script_path=, script_source=, config=table, seed=, engine_version=,
 *                   compiler=, host=} -> run_id */
static int archive_run_begin(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    avo_run_info info = {0};
    info.script_path = opt_field_string(L, 2, "script_path");
    info.script_source = opt_field_string(L, 2, "script_source");
    info.engine_version = opt_field_string(L, 2, "engine_version");
    info.compiler = opt_field_string(L, 2, "compiler");
    info.host = opt_field_string(L, 2, "host");
    lua_getfield(L, 2, "seed");
    info.seed = (uint64_t)luaL_checkinteger(L, -1);
    lua_getfield(L, 2, "config");
    char *config = check_json_text(L, lua_gettop(L));
    info.config_json = config;
    int64_t id;
    char err[AVO_ERRLEN];
    int rc = avo_archive_run_begin(ar, &info, &id, err, sizeof err);
    free(config);
    if (rc < 0)
        return push_fail(L, err);
    lua_pushinteger(L, id);
    return 1;
}

static int archive_run_end(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer id = luaL_checkinteger(L, 2);
    const char *status = luaL_checkstring(L, 3);
    char err[AVO_ERRLEN];
    if (avo_archive_run_end(ar, id, status, err, sizeof err) < 0)
        return push_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}

/* archive:add{run_id=, generation=, operator=, source=, knobs=table, note=, key=, evaluator=,
 *             parents={{id=, role=}, ...}} -> id */
static int archive_add(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    avo_candidate_info info = {0};
    lua_getfield(L, 2, "run_id");
    info.run_id = luaL_checkinteger(L, -1);
    lua_getfield(L, 2, "generation");
    info.generation = (int)luaL_optinteger(L, -1, 0);
    info.operator_name = opt_field_string(L, 2, "operator");
    info.source = opt_field_string(L, 2, "source");
    info.note = opt_field_string(L, 2, "note");
    info.key = opt_field_string(L, 2, "key");
    info.evaluator = opt_field_string(L, 2, "evaluator");
    if (!info.operator_name || !info.source)
        return luaL_argerror(L, 2, "candidate needs 'operator' and 'source'");

    lua_getfield(L, 2, "parents");
    int parents_idx = lua_gettop(L);
    size_t n = lua_istable(L, parents_idx) ? lua_rawlen(L, parents_idx) : 0;
    avo_parent_edge *edges = lua_newuserdatauv(L, (n ? n : 1) * sizeof *edges, 0);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, parents_idx, (lua_Integer)i + 1);
        luaL_argcheck(L, lua_istable(L, -1), 2, "each parent must be a table {id=, role=}");
        lua_getfield(L, -1, "id");
        edges[i].parent_id = luaL_checkinteger(L, -1);
        lua_pop(L, 1);
        edges[i].role = opt_field_string(L, lua_gettop(L), "role");
        if (!edges[i].role)
            edges[i].role = "parent";
        /* the role string stays referenced by the parent table */
        lua_pop(L, 2);
    }
    info.parents = edges;
    info.n_parents = n;

    lua_getfield(L, 2, "knobs");
    char *knobs = check_json_text(L, lua_gettop(L));
    info.knobs_json = knobs;
    int64_t id;
    char err[AVO_ERRLEN];
    int rc = avo_archive_candidate_add(ar, &info, &id, err, sizeof err);
    free(knobs);
    if (rc < 0)
        return push_fail(L, err);
    lua_pushinteger(L, id);
    return 1;
}

/* archive:finish(id, result_table, score) */
static int archive_finish(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer id = luaL_checkinteger(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    double score = luaL_checknumber(L, 4);
    char err[AVO_ERRLEN];
    json_t *result = avo_lua_to_json(L, 3, err, sizeof err);
    if (!result)
        return luaL_argerror(L, 3, err);
    int rc = avo_archive_candidate_finish(ar, id, result, score, err, sizeof err);
    json_decref(result);
    if (rc < 0)
        return push_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}

/* archive:event(run_id, kind, data_table_or_nil) */
static int archive_event(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_checkinteger(L, 2);
    const char *kind = luaL_checkstring(L, 3);
    char *data = lua_isnoneornil(L, 4) ? NULL : check_json_text(L, 4);
    char err[AVO_ERRLEN];
    int rc = avo_archive_event(ar, run_id, kind, data, err, sizeof err);
    free(data);
    if (rc < 0)
        return push_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}

static int archive_get(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer id = luaL_checkinteger(L, 2);
    int with_source = lua_toboolean(L, 3);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_candidate_get(ar, id, with_source, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

static int archive_by_key(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    const char *key = luaL_checkstring(L, 2);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_candidate_by_key(ar, key, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

static int archive_best(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_optinteger(L, 2, 0);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_best(ar, run_id, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

static int archive_lineage(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer id = luaL_checkinteger(L, 2);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_lineage(ar, id, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

static int archive_common_ancestor(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer a = luaL_checkinteger(L, 2), b = luaL_checkinteger(L, 3);
    int64_t id;
    char err[AVO_ERRLEN];
    if (avo_archive_common_ancestor(ar, a, b, &id, err, sizeof err) < 0)
        return push_fail(L, err);
    if (id == 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, id);
    return 1;
}

static int archive_run_get(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer id = luaL_optinteger(L, 2, 0);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_run_get(ar, id, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

static int archive_source(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    const char *hash = luaL_checkstring(L, 2);
    char *text = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_source_get(ar, hash, &text, err, sizeof err);
    if (rc == AVO_ENOTFOUND) {
        lua_pushnil(L);
        return 1;
    }
    if (rc < 0)
        return push_fail(L, err);
    lua_pushstring(L, text);
    free(text);
    return 1;
}

/* archive:candidates(run_id, with_source) -> array of candidate objects */
static int archive_candidates(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_checkinteger(L, 2);
    int with_source = lua_toboolean(L, 3);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_candidates(ar, run_id, with_source, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

/* archive:events(run_id, kind_or_nil) -> array of {id, t, kind, data} */
static int archive_events(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_checkinteger(L, 2);
    const char *kind = luaL_optstring(L, 3, NULL);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_events(ar, run_id, kind, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

static int archive_run_reopen(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_checkinteger(L, 2);
    char err[AVO_ERRLEN];
    if (avo_archive_run_reopen(ar, run_id, err, sizeof err) < 0)
        return push_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}

/* archive:rebench_begin(run_id, config_table) -> set_id */
static int archive_rebench_begin(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_checkinteger(L, 2);
    char *config = check_json_text(L, 3);
    int64_t id;
    char err[AVO_ERRLEN];
    int rc = avo_archive_rebench_begin(ar, run_id, config, &id, err, sizeof err);
    free(config);
    if (rc < 0)
        return push_fail(L, err);
    lua_pushinteger(L, id);
    return 1;
}

/* archive:rebench_add(set_id, candidate_id, round, score, result_table) */
static int archive_rebench_add(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer set_id = luaL_checkinteger(L, 2);
    lua_Integer cand = luaL_checkinteger(L, 3);
    lua_Integer round = luaL_checkinteger(L, 4);
    double score = luaL_checknumber(L, 5);
    char *result = check_json_text(L, 6);
    char err[AVO_ERRLEN];
    int rc = avo_archive_rebench_add(ar, set_id, cand, (int)round, score, result, err, sizeof err);
    free(result);
    if (rc < 0)
        return push_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}

/* archive:llm_record(run_id, call_table) -> id  (fields: avo_archive_llm_call_add) */
static int archive_llm_record(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_checkinteger(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    char err[AVO_ERRLEN];
    json_t *call = avo_lua_to_json(L, 3, err, sizeof err);
    if (!call)
        return luaL_argerror(L, 3, err);
    int64_t id;
    int rc = avo_archive_llm_call_add(ar, run_id, call, &id, err, sizeof err);
    json_decref(call);
    if (rc < 0)
        return push_fail(L, err);
    lua_pushinteger(L, id);
    return 1;
}

/* archive:llm_calls([run_id]) -> array of rows (0 or none: all runs) */
static int archive_llm_calls(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_optinteger(L, 2, 0);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_llm_calls(ar, run_id, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

/* archive:attempt_add(run_id, attempt_table) -> id  (fields: avo_archive_attempt_add) */
static int archive_attempt_add(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_checkinteger(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    char err[AVO_ERRLEN];
    json_t *attempt = avo_lua_to_json(L, 3, err, sizeof err);
    if (!attempt)
        return luaL_argerror(L, 3, err);
    int64_t id;
    int rc = avo_archive_attempt_add(ar, run_id, attempt, &id, err, sizeof err);
    json_decref(attempt);
    if (rc < 0)
        return push_fail(L, err);
    lua_pushinteger(L, id);
    return 1;
}

/* archive:attempt_update(id, outcome [, reason [, candidate_id]]) -> true */
static int archive_attempt_update(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer id = luaL_checkinteger(L, 2);
    const char *outcome = luaL_checkstring(L, 3);
    const char *reason = luaL_optstring(L, 4, NULL);
    lua_Integer candidate_id = luaL_optinteger(L, 5, 0);
    char err[AVO_ERRLEN];
    if (avo_archive_attempt_update(ar, id, outcome, reason, candidate_id, err, sizeof err) < 0)
        return push_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}

/* archive:attempts([run_id]) -> array of rows (0 or none: all runs) */
static int archive_attempts(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_optinteger(L, 2, 0);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_attempts(ar, run_id, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

/* archive:baseline_put(run_id, baseline_table) -> id  (fields: avo_archive_baseline_put) */
static int archive_baseline_put(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_checkinteger(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    char err[AVO_ERRLEN];
    json_t *baseline = avo_lua_to_json(L, 3, err, sizeof err);
    if (!baseline)
        return luaL_argerror(L, 3, err);
    int64_t id;
    int rc = avo_archive_baseline_put(ar, run_id, baseline, &id, err, sizeof err);
    json_decref(baseline);
    if (rc < 0)
        return push_fail(L, err);
    lua_pushinteger(L, id);
    return 1;
}

/* archive:baselines([run_id]) -> array of rows (0 or none: all runs) */
static int archive_baselines(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_optinteger(L, 2, 0);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_baselines(ar, run_id, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

/* archive:experiment_add{name=, path=, source=, hash=, plan=table, machine=table,
 *                        engine_version=} -> id (lua/avo/experiment.lua) */
static int archive_experiment_add(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    avo_experiment_info info = {0};
    info.name = opt_field_string(L, 2, "name");
    info.path = opt_field_string(L, 2, "path");
    info.source = opt_field_string(L, 2, "source");
    info.hash = opt_field_string(L, 2, "hash");
    info.engine_version = opt_field_string(L, 2, "engine_version");
    lua_getfield(L, 2, "machine");
    char *machine = check_json_text(L, lua_gettop(L));
    lua_getfield(L, 2, "plan");
    char err[AVO_ERRLEN];
    json_t *plan_value = avo_lua_to_json(L, lua_gettop(L), err, sizeof err);
    char *plan = plan_value ? json_dumps(plan_value, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(plan_value);
    if (!plan) {
        free(machine); /* before raising: nothing of ours leaks */
        return luaL_error(L, "experiment_add: bad plan: %s", plan_value ? "out of memory" : err);
    }
    info.plan_json = plan;
    info.machine_json = machine;
    int64_t id;
    int rc = avo_archive_experiment_add(ar, &info, &id, err, sizeof err);
    free(plan);
    free(machine);
    if (rc < 0)
        return push_fail(L, err);
    lua_pushinteger(L, id);
    return 1;
}

/* archive:experiments() -> array of experiments */
static int archive_experiments(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_experiments(ar, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

/* archive:experiment_cell_put(experiment_id, {cell=, run_id=, status=, reason=,
 *                             exit_code=}) -> true */
static int archive_experiment_cell_put(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer experiment = luaL_checkinteger(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    const char *cell = opt_field_string(L, 3, "cell");
    const char *status = opt_field_string(L, 3, "status");
    const char *reason = opt_field_string(L, 3, "reason");
    lua_getfield(L, 3, "run_id");
    lua_Integer run_id = luaL_optinteger(L, -1, 0);
    lua_getfield(L, 3, "exit_code");
    lua_Integer exit_code = luaL_optinteger(L, -1, -1);
    luaL_argcheck(L, cell && status, 3, "cell and status are required");
    char err[AVO_ERRLEN];
    if (avo_archive_experiment_cell_put(ar, experiment, cell, run_id, status, reason,
                                        (int)exit_code, err, sizeof err) < 0)
        return push_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}

/* archive:experiment_cells(experiment_id) -> array of cells */
static int archive_experiment_cells(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer experiment = luaL_checkinteger(L, 2);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = avo_archive_experiment_cells(ar, experiment, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

static const luaL_Reg archive_methods[] = {
    {"experiment_add", archive_experiment_add},
    {"experiments", archive_experiments},
    {"experiment_cell_put", archive_experiment_cell_put},
    {"experiment_cells", archive_experiment_cells},
    {"baseline_put", archive_baseline_put},
    {"baselines", archive_baselines},
    {"attempt_add", archive_attempt_add},
    {"attempt_update", archive_attempt_update},
    {"attempts", archive_attempts},
    {"llm_record", archive_llm_record},
    {"llm_calls", archive_llm_calls},
    {"rebench_begin", archive_rebench_begin},
    {"rebench_add", archive_rebench_add},
    {"candidates", archive_candidates},
    {"events", archive_events},
    {"run_reopen", archive_run_reopen},
    {"run_claim", archive_run_claim},
    {"run_live", archive_run_live},
    {"run_restore", archive_run_restore},
    {"runs", archive_runs},
    {"run_begin", archive_run_begin},
    {"run_end", archive_run_end},
    {"add", archive_add},
    {"finish", archive_finish},
    {"event", archive_event},
    {"get", archive_get},
    {"by_key", archive_by_key},
    {"best", archive_best},
    {"lineage", archive_lineage},
    {"common_ancestor", archive_common_ancestor},
    {"run_get", archive_run_get},
    {"source", archive_source},
    {"close", archive_close},
    {NULL, NULL},
};

/* ------------------------------------------------------------------- pool */

typedef struct pool_ud {
    avo_pool *pool;
} pool_ud;

static avo_pool *check_pool(lua_State *L)
{
    pool_ud *ud = luaL_checkudata(L, 1, POOL_MT);
    if (!ud->pool)
        luaL_error(L, "attempt to use a closed pool");
    return ud->pool;
}

/* core.pool(jobs, worker_exe) -> pool | nil, msg */
static int pool_open(lua_State *L)
{
    lua_Integer jobs = luaL_checkinteger(L, 1);
    const char *exe = luaL_checkstring(L, 2);
    luaL_argcheck(L, jobs >= 0 && jobs <= 1024, 1, "jobs must be between 0 and 1024");
    pool_ud *ud = lua_newuserdatauv(L, sizeof *ud, 0);
    ud->pool = NULL;
    luaL_setmetatable(L, POOL_MT);
    char *argv[] = {(char *)exe, "worker", NULL};
    char err[AVO_ERRLEN];
    if (avo_pool_new(&ud->pool, (int)jobs, argv, err, sizeof err) < 0)
        return push_fail(L, err);
    return 1;
}

static int pool_close(lua_State *L)
{
    pool_ud *ud = luaL_checkudata(L, 1, POOL_MT);
    avo_pool_free(ud->pool);
    ud->pool = NULL;
    return 0;
}

/* pool:submit(job_table, deadline_s) -> ticket */
static int pool_submit(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    double deadline = luaL_checknumber(L, 3);
    char err[AVO_ERRLEN];
    json_t *job = avo_lua_to_json(L, 2, err, sizeof err);
    if (!job)
        return luaL_argerror(L, 2, err);
    uint64_t ticket;
    if (avo_pool_submit(pool, job, deadline, &ticket) < 0)
        return luaL_error(L, "out of memory");
    lua_pushinteger(L, (lua_Integer)ticket);
    return 1;
}

static int pool_pending(lua_State *L)
{
    avo_pool *pool = check_pool(L);
    lua_pushinteger(L, (lua_Integer)avo_pool_pending(pool));
    lua_pushinteger(L, (lua_Integer)avo_pool_running(pool));
    return 2;
}

static const luaL_Reg pool_methods[] = {
    {"submit", pool_submit},
    {"pending", pool_pending},
    {"close", pool_close},
    {NULL, NULL},
};

/* ------------------------------------------------------------ event loop */

static avo_loop_source pool_as_source(void *ud)
{
    return avo_pool_source(((pool_ud *)ud)->pool);
}

/* Userdata types that are sources of the event loop. */
static const struct {
    const char *metatable;
    avo_loop_source (*source)(void *ud);
} loop_sources[] = {
    {POOL_MT, pool_as_source},
    {AVO_LUA_LLM_MT, avo_lua_llm_source},
};

#define MAX_SOURCES 8

/*
 * core.wait(timeout_ms, source...) -> index, ticket, result
 *                                   | false (nothing pending anywhere)
 *                                   | nil (timeout or interrupted)
 * Waits on all sources at once; `index` is the position of the source that
 * answered among the arguments (1-based).
 */
static int core_wait(lua_State *L)
{
    int timeout = (int)luaL_checkinteger(L, 1);
    int n = lua_gettop(L) - 1;
    luaL_argcheck(L, n >= 1 && n <= MAX_SOURCES, 2, "expected 1 to 8 event sources");
    avo_loop_source sources[MAX_SOURCES];
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (size_t k = 0; k < sizeof loop_sources / sizeof loop_sources[0] && !found; k++) {
            void *ud = luaL_testudata(L, i + 2, loop_sources[k].metatable);
            if (ud && *(void **)ud) {
                sources[i] = loop_sources[k].source(ud);
                found = 1;
            }
        }
        if (!found)
            return luaL_argerror(L, i + 2, "not an open event source");
    }
    size_t which;
    uint64_t ticket;
    json_t *result;
    char err[AVO_ERRLEN];
    int rc = avo_loop_wait(sources, (size_t)n, timeout, &which, &ticket, &result, err, sizeof err);
    if (rc == AVO_ENOTFOUND) {
        lua_pushboolean(L, 0);
        return 1;
    }
    if (rc < 0)
        return luaL_error(L, "event loop: %s", err);
    if (rc == 0) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushinteger(L, (lua_Integer)which + 1);
    lua_pushinteger(L, (lua_Integer)ticket);
    avo_lua_push_json(L, result);
    json_decref(result);
    return 3;
}

/* -------------------------------------------------------------------- rng */

/* core.rng(seed, name) -> Rng */
static int rng_new(lua_State *L)
{
    lua_Integer seed = luaL_checkinteger(L, 1);
    const char *name = luaL_checkstring(L, 2);
    avo_pcg32 *rng = lua_newuserdatauv(L, sizeof *rng, 0);
    avo_pcg32_derive(rng, (uint64_t)seed, name);
    luaL_setmetatable(L, RNG_MT);
    return 1;
}

static int rng_next(lua_State *L)
{
    avo_pcg32 *rng = luaL_checkudata(L, 1, RNG_MT);
    lua_pushinteger(L, avo_pcg32_next(rng));
    return 1;
}

/* rng:below(n) -> integer in [0, n) */
static int rng_below(lua_State *L)
{
    avo_pcg32 *rng = luaL_checkudata(L, 1, RNG_MT);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_argcheck(L, n >= 1 && n <= 0xffffffffLL, 2, "bound must be in [1, 2^32)");
    lua_pushinteger(L, avo_pcg32_bounded(rng, (uint32_t)n));
    return 1;
}

static int rng_double(lua_State *L)
{
    avo_pcg32 *rng = luaL_checkudata(L, 1, RNG_MT);
    lua_pushnumber(L, avo_pcg32_double(rng));
    return 1;
}

/* rng:state() -> state, inc (to persist a stream) */
static int rng_state(lua_State *L)
{
    avo_pcg32 *rng = luaL_checkudata(L, 1, RNG_MT);
    lua_pushinteger(L, (lua_Integer)rng->state);
    lua_pushinteger(L, (lua_Integer)rng->inc);
    return 2;
}

static const luaL_Reg rng_methods[] = {
    {"next", rng_next},
    {"below", rng_below},
    {"double", rng_double},
    {"state", rng_state},
    {NULL, NULL},
};

/* -------------------------------------------------------------- functions */

static int core_hash(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    char out[AVO_HASH_HEXLEN + 1];
    if (avo_hash_hex(s, len, out) < 0)
        return luaL_error(L, "hashing failed");
    lua_pushstring(L, out);
    return 1;
}

static int core_merge3(lua_State *L)
{
    const char *base = luaL_checkstring(L, 1);
    const char *ours = luaL_checkstring(L, 2);
    const char *theirs = luaL_checkstring(L, 3);
    char *merged = NULL;
    char err[AVO_ERRLEN];
    int n = avo_merge3(base, ours, theirs, &merged, err, sizeof err);
    if (n < 0)
        return push_fail(L, err);
    lua_pushstring(L, merged);
    free(merged);
    lua_pushinteger(L, n);
    return 2;
}

/* core.diff(a, b [, name]) -> unified diff text ("" when equal) | nil, msg */
static int core_diff(lua_State *L)
{
    const char *a = luaL_checkstring(L, 1);
    const char *b = luaL_checkstring(L, 2);
    const char *name = luaL_optstring(L, 3, "kernel");
    char *patch = NULL;
    char err[AVO_ERRLEN];
    if (avo_diff_sources(a, b, name, &patch, err, sizeof err) < 0)
        return push_fail(L, err);
    lua_pushstring(L, patch);
    free(patch);
    return 1;
}

static int core_isatty(lua_State *L)
{
    lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
    return 1;
}

static int core_now(lua_State *L)
{
    lua_pushnumber(L, avo_now());
    return 1;
}

static int core_monotonic(lua_State *L)
{
    lua_pushnumber(L, avo_monotonic());
    return 1;
}

static int core_cores(lua_State *L)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    lua_pushinteger(L, n > 0 ? n : 1);
    return 1;
}

/* core.baselines() -> array of {name, backend, library, summary}: the named
 * vendor baselines evaluators may list (eval/baseline.h). */
static int core_baselines(lua_State *L)
{
    const avo_baseline_info *list = avo_baseline_list();
    lua_newtable(L);
    for (int i = 0; list[i].name; i++) {
        lua_createtable(L, 0, 4);
        lua_pushstring(L, list[i].name);
        lua_setfield(L, -2, "name");
        lua_pushstring(L, list[i].backend);
        lua_setfield(L, -2, "backend");
        lua_pushstring(L, list[i].library);
        lua_setfield(L, -2, "library");
        lua_pushstring(L, list[i].summary);
        lua_setfield(L, -2, "summary");
        lua_rawseti(L, -2, i + 1); /* list[i + 1] = entry */
    }
    return 1;
}

static int core_hostname(lua_State *L)
{
    char name[256] = "unknown";
    gethostname(name, sizeof name - 1);
    lua_pushstring(L, name);
    return 1;
}

/* core.cache_dir(backend) -> the compile cache folder of `backend` by the
 * one folder rule (cache.h) */
static int core_cache_dir(lua_State *L)
{
    char *dir = avo_cache_dir(NULL, luaL_checkstring(L, 1));
    if (!dir)
        return luaL_error(L, "out of memory");
    lua_pushstring(L, dir);
    free(dir);
    return 1;
}

/* core.exe() -> path of the running avo binary (workers are started from it) */
static int core_exe(lua_State *L)
{
    const char *path = avo_self_exe();
    if (!path)
        return push_fail(L, "cannot find the avo binary (neither /proc/self/exe nor AT_EXECFN)");
    lua_pushstring(L, path);
    return 1;
}

static void on_interrupt(int sig)
{
    if (!interrupted) {
        interrupted = sig;
        avo_watchdog_signal(sig, 0);
        return;
    }
    /* A second signal stops at once: the watchdog thread records the run
     * and ends the process; without it, the signal's default action. */
    if (avo_watchdog_signal(sig, 1))
        return;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* core.catch_interrupts(): the first SIGINT, SIGTERM or SIGHUP only sets a
 * flag, so the run can stop starting work and end cleanly. */
static int core_catch_interrupts(lua_State *L)
{
    (void)L;
    struct sigaction sa = {0};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    return 0;
}

/* core.interrupted() -> the number of the signal that asked to stop, or false */
static int core_interrupted(lua_State *L)
{
    if (interrupted)
        lua_pushinteger(L, interrupted);
    else
        lua_pushboolean(L, 0);
    return 1;
}

/*
 * The watchdog: a count hook that stops script code which no longer yields
 * to the engine (a busy loop in a strategy) once the run is past its
 * deadline, or was asked to stop by a signal, by `grace` seconds.  Tasks
 * are coroutines, which inherit the hook of the thread that creates them;
 * only they are stopped, never the engine's own code on the main thread.
 * Once fired, the hook re-arms itself to run on every instruction of the
 * thread it stopped, so a pcall in the script cannot swallow the error
 * (as Redis stops runaway scripts, script_lua.c).
 */
#define WATCH_COUNT 100000

static struct {
    double deadline;       /* monotonic seconds; 0: none */
    double grace;          /* seconds past deadline or signal before stopping */
    double interrupted_at; /* when the hook first saw the signal flag */
    int fired;
    char why[256];
} watch;

static void watch_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (lua_pushthread(L)) { /* the main thread: engine code */
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    if (!watch.fired) {
        double now = avo_monotonic();
        if (interrupted && watch.interrupted_at == 0)
            watch.interrupted_at = now;
        if (interrupted && now - watch.interrupted_at >= watch.grace) {
            watch.fired = 1;
            snprintf(watch.why, sizeof watch.why,
                     "the script still ran %g s after the signal to stop (a loop that never"
                     " calls avo.evaluate or checks avo.exhausted()?); stopped it",
                     watch.grace);
        } else if (watch.deadline > 0 && now >= watch.deadline + watch.grace) {
            watch.fired = 1;
            snprintf(watch.why, sizeof watch.why,
                     "the script still ran %g s after --max-time (a loop that never calls"
                     " avo.evaluate or checks avo.exhausted()?); stopped it",
                     watch.grace);
        }
    }
    if (watch.fired) {
        lua_sethook(L, watch_hook, LUA_MASKCOUNT, 1);
        luaL_error(L, "avo: %s", watch.why);
    }
}

/* core.watch(deadline_or_nil, grace_s [, db, run_id]): arm the watchdog
 * on the calling (main) thread, so every task created from now on inherits
 * it; with the run's archive and id, also the watchdog thread (watchdog.h),
 * which ends the process when a task stays inside one C call past the
 * grace, or on a second signal.  Returns true, or false and why the thread
 * could not be armed (the count hook still runs). */
static int core_watch(lua_State *L)
{
    watch.deadline = luaL_optnumber(L, 1, 0);
    watch.grace = luaL_checknumber(L, 2);
    const char *db = luaL_optstring(L, 3, NULL);
    lua_Integer run_id = luaL_optinteger(L, 4, 0);
    watch.interrupted_at = 0;
    watch.fired = 0;
    watch.why[0] = '\0';
    lua_sethook(L, watch_hook, LUA_MASKCOUNT, WATCH_COUNT);
    if (!db)
        return 0;
    char err[AVO_ERRLEN];
    if (avo_watchdog_arm(db, run_id, watch.deadline, watch.grace, err, sizeof err) < 0)
        return push_fail(L, err);
    lua_pushboolean(L, 1);
    return 1;
}

/* core.unwatch() -> why the watchdog stopped the script, or nil */
static int core_unwatch(lua_State *L)
{
    lua_sethook(L, NULL, 0, 0);
    avo_watchdog_disarm();
    if (!watch.fired)
        return 0;
    lua_pushstring(L, watch.why);
    return 1;
}

/* core.task_enter() / core.task_leave(): the scheduler resumes a task /
 * the task gave control back (the watchdog thread times single calls). */
static int core_task_enter(lua_State *L)
{
    (void)L;
    avo_watchdog_task_enter();
    return 0;
}

static int core_task_leave(lua_State *L)
{
    (void)L;
    avo_watchdog_task_leave();
    return 0;
}

/* core.json_encode(value) -> compact JSON text with sorted keys */
static int core_json_encode(lua_State *L)
{
    luaL_checkany(L, 1);
    char *text = check_json_text(L, 1);
    lua_pushstring(L, text);
    free(text);
    return 1;
}

static int core_json_decode(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    json_error_t jerr;
    json_t *value = json_loadb(s, len, JSON_DECODE_ANY, &jerr);
    if (!value)
        return push_fail(L, jerr.text);
    avo_lua_push_json(L, value);
    json_decref(value);
    return 1;
}

static const luaL_Reg core_functions[] = {
    {"archive", archive_open},
    {"archive_read", archive_open_read},
    {"pool", pool_open},
    {"llm", avo_lua_llm_new},
    {"kb", avo_lua_kb_open},
    {"wait", core_wait},
    {"rng", rng_new},
    {"hash", core_hash},
    {"merge3", core_merge3},
    {"diff", core_diff},
    {"isatty", core_isatty},
    {"now", core_now},
    {"monotonic", core_monotonic},
    {"cores", core_cores},
    {"baselines", core_baselines},
    {"hostname", core_hostname},
    {"cache_dir", core_cache_dir},
    {"exe", core_exe},
    {"catch_interrupts", core_catch_interrupts},
    {"interrupted", core_interrupted},
    {"watch", core_watch},
    {"unwatch", core_unwatch},
    {"task_enter", core_task_enter},
    {"task_leave", core_task_leave},
    {"json_encode", core_json_encode},
    {"json_decode", core_json_decode},
    {NULL, NULL},
};

static void new_class(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction close)
{
    luaL_newmetatable(L, name);
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    if (close) {
        lua_pushcfunction(L, close);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, close);
        lua_setfield(L, -2, "__close");
    }
    lua_pop(L, 1);
}

int luaopen_avo_core(lua_State *L)
{
    new_class(L, ARCHIVE_MT, archive_methods, archive_close);
    new_class(L, POOL_MT, pool_methods, pool_close);
    avo_lua_remote_register(L, POOL_MT);
    new_class(L, RNG_MT, rng_methods, NULL);
    avo_lua_llm_register(L);
    avo_lua_kb_register(L);
    luaL_newmetatable(L, "avo.json.array");
    lua_pop(L, 1);

    luaL_newlib(L, core_functions);
    avo_lua_remote_functions(L);
    avo_lua_process_functions(L);
    lua_pushstring(L, AVO_VERSION);
    lua_setfield(L, -2, "version");
    lua_pushstring(L, AVO_GIT_COMMIT);
    lua_setfield(L, -2, "git_commit");
    lua_pushstring(L, AVO_SOURCE_ROOT);
    lua_setfield(L, -2, "source_root");
    luaL_getmetatable(L, "avo.json.array");
    lua_setfield(L, -2, "json_array_mt");
    return 1;
}
