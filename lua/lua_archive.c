/*
 * lua_archive.c — the avo.Archive userdata: the run archive (store/archive.h)
 * seen from Lua.  Rows travel as the archive's JSON, converted to tables.
 *
 * An expected failure (archive refused, a write rejected) returns nil,
 * message; a row that does not exist returns nil; misuse (wrong argument
 * types, a closed archive) raises.  The userdata is created closed before
 * anything can fail; one idempotent close serves __gc and __close.
 */
#include "lua/lua_archive.h"

#include <lauxlib.h>
#include <stdlib.h>

#include "store/archive.h"
#include "core/avo.h"
#include "lua/binding.h"
#include "lua/luajson.h"

/* [-0, +1 or +2] Push the JSON value and free it; nil for a missing row;
 * nil, err when rc < 0. */
static int push_json_result(lua_State *L, int rc, json_t *value, const char *err)
{
    if (rc == AVO_ENOTFOUND) {
        lua_pushnil(L);
        return 1;
    }
    if (rc < 0)
        return avo_lua_push_fail(L, err);
    avo_lua_push_json(L, value);
    json_decref(value);
    return 1;
}

typedef struct archive_ud {
    avo_archive *ar;
} archive_ud;

static avo_archive *check_archive(lua_State *L)
{
    archive_ud *ud = luaL_checkudata(L, 1, AVO_LUA_ARCHIVE_MT);
    if (!ud->ar)
        luaL_error(L, "attempt to use a closed archive");
    return ud->ar;
}

avo_archive *avo_lua_to_archive(lua_State *L, int idx)
{
    archive_ud *ud = luaL_testudata(L, idx, AVO_LUA_ARCHIVE_MT);
    if (ud && !ud->ar)
        luaL_error(L, "attempt to use a closed archive");
    return ud ? ud->ar : NULL;
}

/* An archive call that reads what one id names (a run's rows, a candidate's
 * lineage, an experiment's cells) as JSON. */
typedef int (*id_reader)(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen);

/* archive:X(id) -> value | nil | nil, message, for the readers whose id is
 * `required`, else archive:X([id]) with 0 for none (all runs, the latest). */
static int read_by_id(lua_State *L, id_reader read, int required)
{
    avo_archive *ar = check_archive(L);
    lua_Integer id = required ? luaL_checkinteger(L, 2) : luaL_optinteger(L, 2, 0);
    json_t *value = NULL;
    char err[AVO_ERRLEN];
    int rc = read(ar, id, &value, err, sizeof err);
    return push_json_result(L, rc, value, err);
}

/* An archive call that adds one row of run `run_id` from a JSON object. */
typedef int (*row_adder)(avo_archive *ar, int64_t run_id, const json_t *row, int64_t *ret_id,
                         char *err, size_t errlen);

/* archive:X(run_id, row_table) -> id | nil, message */
static int add_row(lua_State *L, row_adder add)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_checkinteger(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    char err[AVO_ERRLEN];
    json_t *row = avo_lua_to_json(L, 3, err, sizeof err);
    if (!row)
        return luaL_argerror(L, 3, err);
    int64_t id;
    int rc = add(ar, run_id, row, &id, err, sizeof err);
    json_decref(row);
    if (rc < 0)
        return avo_lua_push_fail(L, err);
    lua_pushinteger(L, id);
    return 1;
}

/* Push a new archive userdata opened by `open`, or nil, message. */
static int push_archive(lua_State *L, int (*open)(avo_archive **, const char *, char *, size_t))
{
    const char *path = luaL_checkstring(L, 1);
    archive_ud *ud = lua_newuserdatauv(L, sizeof *ud, 0);
    ud->ar = NULL;
    luaL_setmetatable(L, AVO_LUA_ARCHIVE_MT);
    char err[AVO_ERRLEN];
    if (open(&ud->ar, path, err, sizeof err) < 0)
        return avo_lua_push_fail(L, err);
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
    char *owner = lua_isnil(L, -1) ? NULL : avo_lua_check_json_text(L, lua_gettop(L));
    char err[AVO_ERRLEN];
    int rc = avo_archive_run_restore(ar, id, status, ended_at, owner, last_event, err, sizeof err);
    free(owner);
    return avo_lua_push_done(L, rc, err);
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
    archive_ud *ud = luaL_checkudata(L, 1, AVO_LUA_ARCHIVE_MT);
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
    char *config = avo_lua_check_json_text(L, lua_gettop(L));
    info.config_json = config;
    int64_t id;
    char err[AVO_ERRLEN];
    int rc = avo_archive_run_begin(ar, &info, &id, err, sizeof err);
    free(config);
    if (rc < 0)
        return avo_lua_push_fail(L, err);
    lua_pushinteger(L, id);
    return 1;
}

static int archive_run_end(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer id = luaL_checkinteger(L, 2);
    const char *status = luaL_checkstring(L, 3);
    char err[AVO_ERRLEN];
    int rc = avo_archive_run_end(ar, id, status, err, sizeof err);
    return avo_lua_push_done(L, rc, err);
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
    char *knobs = avo_lua_check_json_text(L, lua_gettop(L));
    info.knobs_json = knobs;
    int64_t id;
    char err[AVO_ERRLEN];
    int rc = avo_archive_candidate_add(ar, &info, &id, err, sizeof err);
    free(knobs);
    if (rc < 0)
        return avo_lua_push_fail(L, err);
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
    return avo_lua_push_done(L, rc, err);
}

/* archive:event(run_id, kind, data_table_or_nil) */
static int archive_event(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_checkinteger(L, 2);
    const char *kind = luaL_checkstring(L, 3);
    char *data = lua_isnoneornil(L, 4) ? NULL : avo_lua_check_json_text(L, 4);
    char err[AVO_ERRLEN];
    int rc = avo_archive_event(ar, run_id, kind, data, err, sizeof err);
    free(data);
    return avo_lua_push_done(L, rc, err);
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

/* archive:best([run_id]) -> the best finished candidate | nil (0 or none: the latest run) */
static int archive_best(lua_State *L)
{
    return read_by_id(L, avo_archive_best, 0);
}

/* archive:lineage(id) -> array of ancestors including id, {id, parents, ...} */
static int archive_lineage(lua_State *L)
{
    return read_by_id(L, avo_archive_lineage, 1);
}

static int archive_common_ancestor(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer a = luaL_checkinteger(L, 2), b = luaL_checkinteger(L, 3);
    int64_t id;
    char err[AVO_ERRLEN];
    if (avo_archive_common_ancestor(ar, a, b, &id, err, sizeof err) < 0)
        return avo_lua_push_fail(L, err);
    if (id == 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, id);
    return 1;
}

/* archive:run_get([run_id]) -> run | nil (0 or none: the latest) */
static int archive_run_get(lua_State *L)
{
    return read_by_id(L, avo_archive_run_get, 0);
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
        return avo_lua_push_fail(L, err);
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
    int rc = avo_archive_run_reopen(ar, run_id, err, sizeof err);
    return avo_lua_push_done(L, rc, err);
}

/* archive:rebench_begin(run_id, config_table) -> set_id */
static int archive_rebench_begin(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    lua_Integer run_id = luaL_checkinteger(L, 2);
    char *config = avo_lua_check_json_text(L, 3);
    int64_t id;
    char err[AVO_ERRLEN];
    int rc = avo_archive_rebench_begin(ar, run_id, config, &id, err, sizeof err);
    free(config);
    if (rc < 0)
        return avo_lua_push_fail(L, err);
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
    char *result = avo_lua_check_json_text(L, 6);
    char err[AVO_ERRLEN];
    int rc = avo_archive_rebench_add(ar, set_id, cand, (int)round, score, result, err, sizeof err);
    free(result);
    return avo_lua_push_done(L, rc, err);
}

/* archive:llm_record(run_id, call_table) -> id  (fields: avo_archive_llm_call_add) */
static int archive_llm_record(lua_State *L)
{
    return add_row(L, avo_archive_llm_call_add);
}

/* archive:llm_calls([run_id]) -> array of rows (0 or none: all runs) */
static int archive_llm_calls(lua_State *L)
{
    return read_by_id(L, avo_archive_llm_calls, 0);
}

/* archive:attempt_add(run_id, attempt_table) -> id  (fields: avo_archive_attempt_add) */
static int archive_attempt_add(lua_State *L)
{
    return add_row(L, avo_archive_attempt_add);
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
    int rc = avo_archive_attempt_update(ar, id, outcome, reason, candidate_id, err, sizeof err);
    return avo_lua_push_done(L, rc, err);
}

/* archive:attempts([run_id]) -> array of rows (0 or none: all runs) */
static int archive_attempts(lua_State *L)
{
    return read_by_id(L, avo_archive_attempts, 0);
}

/* archive:baseline_put(run_id, baseline_table) -> id  (fields: avo_archive_baseline_put) */
static int archive_baseline_put(lua_State *L)
{
    return add_row(L, avo_archive_baseline_put);
}

/* archive:baselines([run_id]) -> array of rows (0 or none: all runs) */
static int archive_baselines(lua_State *L)
{
    return read_by_id(L, avo_archive_baselines, 0);
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
    char *machine = avo_lua_check_json_text(L, lua_gettop(L));
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
        return avo_lua_push_fail(L, err);
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
    int rc = avo_archive_experiment_cell_put(ar, experiment, cell, run_id, status, reason,
                                             (int)exit_code, err, sizeof err);
    return avo_lua_push_done(L, rc, err);
}

/* archive:quick_check() -> true | false, first problem (PRAGMA quick_check) */
static int archive_quick_check(lua_State *L)
{
    avo_archive *ar = check_archive(L);
    char problem[256];
    int whole = avo_archive_quick_check(ar, problem, sizeof problem);
    lua_pushboolean(L, whole == 1);
    if (whole == 1)
        return 1;
    lua_pushstring(L, problem);
    return 2;
}

/* archive:experiment_cells(experiment_id) -> array of cells */
static int archive_experiment_cells(lua_State *L)
{
    return read_by_id(L, avo_archive_experiment_cells, 1);
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
    {"quick_check", archive_quick_check},
    {NULL, NULL},
};

void avo_lua_archive_register(lua_State *L)
{
    static const luaL_Reg functions[] = {
        {"archive", archive_open},
        {"archive_read", archive_open_read},
        {NULL, NULL},
    };
    avo_lua_new_class(L, AVO_LUA_ARCHIVE_MT, archive_methods, archive_close);
    luaL_setfuncs(L, functions, 0);
}
