/*
 * records.c — the archive's side tables, each written and read on its own:
 * LLM calls, rebench sets, agent attempts, baselines and experiments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/archive_impl.h"
#include "core/hash.h"

/* ------------------------------------------------------------- LLM calls */

/* 1 if table `name` exists, 0 if not, or a negative code. */
static int table_exists(avo_archive *ar, const char *name, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?",
                         &st, err, errlen, "read schema");
    if (rc < 0)
        return rc;
    avo_db_bind_text(st, 1, name);
    rc = avo_db_step_row(ar->db, st, err, errlen, "read schema");
    avo_db_release(st);
    return rc;
}

/* Whether the array `names` holds the string s. */
static int has_string(const json_t *names, const char *s)
{
    for (size_t i = 0; i < json_array_size(names); i++)
        if (json_is_string(json_array_get(names, i)) &&
            strcmp(json_string_value(json_array_get(names, i)), s) == 0)
            return 1;
    return 0;
}

/*
 * LLM spend of run_id (0: all runs) as {"calls": n, "<column>": sum, ...}.
 * The llm_calls table belongs to a later schema version, so this reads it
 * defensively: a missing table is {"calls": 0}; the numeric columns summed
 * are those of a fixed list that the table actually has, and run_id filters
 * only when the table has that column.  The statement depends on the
 * table's shape, so it is prepared here rather than cached.
 */
int avo_archive_llm_spend(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    static const char *const summed[] = {"input_tokens", "output_tokens", "tokens",
                                         "cost",         "cost_usd",      "latency_s"};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "llm_spend: missing argument");
    *ret = NULL;
    int rc = table_exists(ar, "llm_calls", err, errlen);
    if (rc <= 0) {
        *ret = rc == 0 ? json_pack("{si}", "calls", 0) : NULL;
        return rc < 0 ? rc : *ret ? 0 : avo_db_oom(err, errlen);
    }

    json_t *names = NULL;
    sqlite3_stmt *st = NULL;
    rc = avo_db_stmt(ar->db, "SELECT name FROM pragma_table_info('llm_calls')", &st, err, errlen,
                     "read llm_calls columns");
    if (rc == 0)
        rc = avo_db_collect_rows(ar->db, st, avo_db_row_first, NULL, &names, err, errlen,
                                 "read llm_calls columns");
    if (rc < 0)
        return rc;

    /* Column names come from our own list, never from the file. */
    avo_db_column columns[1 + COUNT_OF(summed)] = {{"calls", AVO_DB_VALUE}};
    avo_db_shape shape = {columns, 1};
    char sql[512] = "SELECT count(*)";
    for (size_t k = 0; k < COUNT_OF(summed); k++) {
        if (!has_string(names, summed[k]))
            continue;
        columns[shape.n++] = (avo_db_column){summed[k], AVO_DB_VALUE};
        snprintf(sql + strlen(sql), sizeof sql - strlen(sql), ", total(\"%s\")", summed[k]);
    }
    int by_run = run_id && has_string(names, "run_id");
    json_decref(names);
    snprintf(sql + strlen(sql), sizeof sql - strlen(sql), " FROM llm_calls%s",
             by_run ? " WHERE run_id = ?" : "");

    rc = sqlite3_prepare_v2(ar->db->sql, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return avo_db_error(ar->db, rc, err, errlen, "read llm_calls");
    if (by_run)
        sqlite3_bind_int64(st, 1, run_id);
    rc =
        avo_db_fetch_row(ar->db, st, avo_db_row_object, &shape, ret, err, errlen, "read llm_calls");
    sqlite3_finalize(st);
    return rc;
}

/*
 * Insert one row of llm_calls from `call` (see archive.h).  Request and
 * response are stored as avo_db_json_text(), so equal requests are equal text.
 * Single statement: implicit transaction.
 */
int avo_archive_llm_call_add(avo_archive *ar, int64_t run_id, const json_t *call, int64_t *ret_id,
                             char *err, size_t errlen)
{
    if (!ar || !json_is_object(call))
        return avo_error(err, errlen, AVO_EINVAL, "llm_call_add: missing argument");
    const char *provider = opt_string(call, "provider");
    const char *hash = opt_string(call, "request_hash");
    const char *status = opt_string(call, "status");
    if (!provider || !hash || !status)
        return avo_error(err, errlen, AVO_EINVAL,
                         "llm call needs provider, request_hash and status strings");
    const json_t *req = json_object_get(call, "request");
    const json_t *resp = json_object_get(call, "response");
    char *request = avo_db_json_text(req ? req : json_null());
    char *response = has_value(resp) ? avo_db_json_text(resp) : NULL;
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (!request || (has_value(resp) && !response))
        rc = avo_error(err, errlen, AVO_EINVAL, "llm call: request or response not encodable");
    else
        rc = avo_db_stmt(
            ar->db,
            "INSERT INTO llm_calls (run_id, t, provider, model, request_hash, request,"
            " response, status, error, input_tokens, output_tokens, cost_usd, latency_s,"
            " attempts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &st, err, errlen, "record llm call");
    if (rc == 0) {
        const json_t *attempts = json_object_get(call, "attempts");
        avo_db_bind_id(st, 1, run_id);
        sqlite3_bind_double(st, 2, avo_now());
        avo_db_bind_text(st, 3, provider);
        avo_db_bind_text(st, 4, opt_string(call, "model"));
        avo_db_bind_text(st, 5, hash);
        avo_db_bind_text(st, 6, request);
        avo_db_bind_text(st, 7, response);
        avo_db_bind_text(st, 8, status);
        avo_db_bind_text(st, 9, opt_string(call, "error"));
        sqlite3_bind_int64(st, 10, (sqlite3_int64)opt_number(call, "input_tokens"));
        sqlite3_bind_int64(st, 11, (sqlite3_int64)opt_number(call, "output_tokens"));
        sqlite3_bind_double(st, 12, opt_number(call, "cost_usd"));
        sqlite3_bind_double(st, 13, opt_number(call, "latency_s"));
        sqlite3_bind_int64(st, 14, json_is_integer(attempts) ? json_integer_value(attempts) : 1);
        rc = avo_db_step_done(ar->db, st, err, errlen, "record llm call");
    }
    free(request);
    free(response);
    if (rc == 0 && ret_id)
        *ret_id = avo_db_last_id(ar->db);
    return rc;
}

/* LLM calls of run_id (0: all runs), oldest first; request and response
 * parsed. */
int avo_archive_llm_calls(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    static const avo_db_column columns[] = {
        {"id", AVO_DB_VALUE},       {"run_id", AVO_DB_VALUE},       {"t", AVO_DB_VALUE},
        {"provider", AVO_DB_VALUE}, {"model", AVO_DB_VALUE},        {"request_hash", AVO_DB_VALUE},
        {"request", AVO_DB_JSON},   {"response", AVO_DB_JSON},      {"status", AVO_DB_VALUE},
        {"error", AVO_DB_VALUE},    {"input_tokens", AVO_DB_VALUE}, {"output_tokens", AVO_DB_VALUE},
        {"cost_usd", AVO_DB_VALUE}, {"latency_s", AVO_DB_VALUE},    {"attempts", AVO_DB_VALUE},
    };
    static const avo_db_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "llm_calls: missing argument");
    *ret = NULL;
    return avo_db_rows_by_id(
        ar->db,
        "SELECT id, run_id, t, provider, model, request_hash, request, response,"
        " status, error, input_tokens, output_tokens, cost_usd, latency_s, attempts"
        " FROM llm_calls WHERE ?1 = 0 OR run_id = ?1 ORDER BY id",
        run_id, avo_db_row_object, &shape, ret, err, errlen, "read llm calls");
}

/* ----------------------------------------------------------------- rebench */

/*
 * Start a rebench evaluation set of run_id; `config_json` (may be NULL)
 * records how it was measured.  Writes the set's id into *ret_id.
 */
int avo_archive_rebench_begin(avo_archive *ar, int64_t run_id, const char *config_json,
                              int64_t *ret_id, char *err, size_t errlen)
{
    if (!ar || !ret_id)
        return avo_error(err, errlen, AVO_EINVAL, "rebench_begin: missing argument");
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db, "INSERT INTO rebench_sets (run_id, t, config) VALUES (?, ?, ?)",
                         &st, err, errlen, "start rebench set");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_double(st, 2, avo_now());
    avo_db_bind_text(st, 3, config_json);
    rc = avo_db_step_done(ar->db, st, err, errlen, "start rebench set");
    if (rc == 0)
        *ret_id = avo_db_last_id(ar->db);
    return rc;
}

/* Record one timing round of one candidate in rebench set set_id. */
int avo_archive_rebench_add(avo_archive *ar, int64_t set_id, int64_t candidate_id, int round,
                            double score, const char *result_json, char *err, size_t errlen)
{
    if (!ar)
        return avo_error(err, errlen, AVO_EINVAL, "rebench_add: missing argument");
    sqlite3_stmt *st = NULL;
    int rc =
        avo_db_stmt(ar->db,
                    "INSERT OR REPLACE INTO rebench_results (set_id, candidate_id, round, score,"
                    " result) VALUES (?, ?, ?, ?, ?)",
                    &st, err, errlen, "record rebench result");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, set_id);
    sqlite3_bind_int64(st, 2, candidate_id);
    sqlite3_bind_int(st, 3, round);
    sqlite3_bind_double(st, 4, score);
    avo_db_bind_text(st, 5, result_json);
    return avo_db_step_done(ar->db, st, err, errlen, "record rebench result");
}

/* --------------------------------------------------------------- attempts */

typedef struct attempt_insert {
    int64_t run_id;
    const json_t *attempt;
    const char *knobs_text, *configs_text;
    int64_t id; /* out */
} attempt_insert;

/* The transaction of attempt_add: the source, then the attempt row. */
static int insert_attempt(avo_archive *ar, void *ctx, char *err, size_t errlen)
{
    attempt_insert *a = ctx;
    char hash[AVO_HASH_HEXLEN + 1];
    int rc = avo_archive_put_source(ar, opt_string(a->attempt, "source"), hash, err, errlen);
    sqlite3_stmt *st = NULL;
    if (rc == 0)
        rc = avo_db_stmt(
            ar->db,
            "INSERT INTO attempts (run_id, step, lineage, t, source_hash, knobs, status,"
            " score, outcome, reason, candidate_id, configs)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &st, err, errlen, "record attempt");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, a->run_id);
    sqlite3_bind_int64(st, 2, json_integer_value(json_object_get(a->attempt, "step")));
    avo_db_bind_text(st, 3, opt_string(a->attempt, "lineage"));
    sqlite3_bind_double(st, 4, avo_now());
    avo_db_bind_text(st, 5, hash);
    avo_db_bind_text(st, 6, a->knobs_text);
    avo_db_bind_text(st, 7, opt_string(a->attempt, "status"));
    avo_db_bind_json_real(st, 8, json_object_get(a->attempt, "score"));
    avo_db_bind_text(st, 9, opt_string(a->attempt, "outcome"));
    avo_db_bind_text(st, 10, opt_string(a->attempt, "reason"));
    avo_db_bind_json_int(st, 11, json_object_get(a->attempt, "candidate_id"));
    avo_db_bind_text(st, 12, a->configs_text);
    rc = avo_db_step_done(ar->db, st, err, errlen, "record attempt");
    if (rc == 0)
        a->id = avo_db_last_id(ar->db);
    return rc;
}

/*
 * Insert one attempt (see archive.h) and its source in one transaction.
 * Knobs and configs are stored as avo_db_json_text().
 */
int avo_archive_attempt_add(avo_archive *ar, int64_t run_id, const json_t *attempt, int64_t *ret_id,
                            char *err, size_t errlen)
{
    if (!ar || !json_is_object(attempt))
        return avo_error(err, errlen, AVO_EINVAL, "attempt_add: missing argument");
    if (!opt_string(attempt, "source") || !opt_string(attempt, "lineage") ||
        !opt_string(attempt, "status") || !opt_string(attempt, "outcome") ||
        !json_is_integer(json_object_get(attempt, "step")))
        return avo_error(err, errlen, AVO_EINVAL,
                         "attempt needs source, lineage, status and outcome strings and an"
                         " integer step");
    const json_t *knobs = json_object_get(attempt, "knobs");
    if (has_value(knobs) && !json_is_object(knobs))
        return avo_error(err, errlen, AVO_EINVAL, "attempt knobs must be an object");
    const json_t *configs = json_object_get(attempt, "configs");
    attempt_insert a = {
        .run_id = run_id,
        .attempt = attempt,
        .knobs_text = has_value(knobs) ? avo_db_json_text(knobs) : strdup("{}"),
        .configs_text = has_value(configs) ? avo_db_json_text(configs) : NULL,
    };
    int rc;
    if (!a.knobs_text || (has_value(configs) && !a.configs_text))
        rc = avo_error(err, errlen, AVO_ENOMEM, "attempt: cannot encode knobs or configs");
    else
        rc = avo_archive_tx(ar, insert_attempt, &a, err, errlen);
    free((char *)a.knobs_text);
    free((char *)a.configs_text);
    if (rc == 0 && ret_id)
        *ret_id = a.id;
    return rc;
}

/*
 * Set an attempt's outcome; reason and candidate_id only when given (NULL,
 * 0 leave them).  AVO_ENOTFOUND for an unknown id.
 */
int avo_archive_attempt_update(avo_archive *ar, int64_t id, const char *outcome, const char *reason,
                               int64_t candidate_id, char *err, size_t errlen)
{
    if (!ar || !outcome)
        return avo_error(err, errlen, AVO_EINVAL, "attempt_update: missing argument");
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db,
                         "UPDATE attempts SET outcome = ?1, reason = coalesce(?2, reason),"
                         " candidate_id = coalesce(?3, candidate_id) WHERE id = ?4",
                         &st, err, errlen, "update attempt");
    if (rc < 0)
        return rc;
    avo_db_bind_text(st, 1, outcome);
    avo_db_bind_text(st, 2, reason);
    avo_db_bind_id(st, 3, candidate_id);
    sqlite3_bind_int64(st, 4, id);
    rc = avo_db_step_done(ar->db, st, err, errlen, "update attempt");
    return rc < 0 ? rc : avo_db_require_changed(ar->db, "attempt", id, err, errlen);
}

/* Attempts of run_id (0: all runs), oldest first; knobs and configs parsed. */
int avo_archive_attempts(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    static const avo_db_column columns[] = {
        {"id", AVO_DB_VALUE},      {"run_id", AVO_DB_VALUE}, {"step", AVO_DB_VALUE},
        {"lineage", AVO_DB_VALUE}, {"t", AVO_DB_VALUE},      {"source_hash", AVO_DB_VALUE},
        {"knobs", AVO_DB_JSON},    {"status", AVO_DB_VALUE}, {"score", AVO_DB_VALUE},
        {"outcome", AVO_DB_VALUE}, {"reason", AVO_DB_VALUE}, {"candidate_id", AVO_DB_VALUE},
        {"configs", AVO_DB_JSON},
    };
    static const avo_db_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "attempts: missing argument");
    *ret = NULL;
    return avo_db_rows_by_id(
        ar->db,
        "SELECT id, run_id, step, lineage, t, source_hash, knobs, status, score,"
        " outcome, reason, candidate_id, configs FROM attempts"
        " WHERE ?1 = 0 OR run_id = ?1 ORDER BY id",
        run_id, avo_db_row_object, &shape, ret, err, errlen, "read attempts");
}

/* -------------------------------------------------------------- baselines */

/*
 * Record the measurement of one baseline on one device (see archive.h):
 * one row per (run, device, name); a second put for the same key replaces
 * the first (a baseline that failed on infrastructure, measured again on
 * resume).
 */
int avo_archive_baseline_put(avo_archive *ar, int64_t run_id, const json_t *baseline,
                             int64_t *ret_id, char *err, size_t errlen)
{
    if (!ar || !json_is_object(baseline))
        return avo_error(err, errlen, AVO_EINVAL, "baseline_put: missing argument");
    if (!opt_string(baseline, "name") || !opt_string(baseline, "device") ||
        !opt_string(baseline, "status"))
        return avo_error(err, errlen, AVO_EINVAL, "baseline needs name, device and status strings");
    const json_t *score = json_object_get(baseline, "score");
    if (has_value(score) && !json_is_number(score))
        return avo_error(err, errlen, AVO_EINVAL, "baseline score must be a number or null");
    const json_t *result = json_object_get(baseline, "result");
    char *result_text = has_value(result) ? avo_db_json_text(result) : NULL;
    if (has_value(result) && !result_text)
        return avo_error(err, errlen, AVO_ENOMEM, "baseline: cannot encode the result");
    sqlite3_stmt *st = NULL;
    int rc =
        avo_db_stmt(ar->db,
                    "INSERT OR REPLACE INTO baselines (run_id, device, device_name, name, status,"
                    " reason, library, version, path, result, score, created_at, evaluator)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    &st, err, errlen, "record baseline");
    if (rc < 0) {
        free(result_text);
        return rc;
    }
    sqlite3_bind_int64(st, 1, run_id);
    avo_db_bind_text(st, 2, opt_string(baseline, "device"));
    avo_db_bind_text(st, 3, opt_string(baseline, "device_name"));
    avo_db_bind_text(st, 4, opt_string(baseline, "name"));
    avo_db_bind_text(st, 5, opt_string(baseline, "status"));
    avo_db_bind_text(st, 6, opt_string(baseline, "reason"));
    avo_db_bind_text(st, 7, opt_string(baseline, "library"));
    avo_db_bind_text(st, 8, opt_string(baseline, "version"));
    avo_db_bind_text(st, 9, opt_string(baseline, "path"));
    avo_db_bind_text(st, 10, result_text);
    avo_db_bind_json_real(st, 11, score);
    sqlite3_bind_double(st, 12, avo_now());
    avo_db_bind_text(st, 13, opt_string(baseline, "evaluator"));
    rc = avo_db_step_done(ar->db, st, err, errlen, "record baseline");
    free(result_text);
    if (rc == 0 && ret_id)
        *ret_id = avo_db_last_id(ar->db);
    return rc;
}


/* ------------------------------------------------------------ experiments */

/*
 * Record a new experiment (lua/avo/experiment.lua): its name, file path,
 * source text and hash, the planned cells (plan_json) and the machine
 * (machine_json, may be NULL).  Sets *ret_id.  JSON texts are checked here.
 */
int avo_archive_experiment_add(avo_archive *ar, const avo_experiment_info *info, int64_t *ret_id,
                               char *err, size_t errlen)
{
    if (!ar || !info || !info->name || !info->source || !info->hash || !info->plan_json || !ret_id)
        return avo_error(err, errlen, AVO_EINVAL, "experiment: missing argument");
    const char *texts[] = {info->plan_json, info->machine_json};
    for (size_t i = 0; i < COUNT_OF(texts); i++) {
        if (!texts[i])
            continue;
        json_error_t jerr;
        json_t *v = json_loads(texts[i], JSON_DECODE_ANY, &jerr);
        if (!v)
            return avo_error(err, errlen, AVO_EINVAL, "experiment: %s is not JSON: %s",
                             i == 0 ? "plan" : "machine", jerr.text);
        json_decref(v);
    }
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db,
                         "INSERT INTO experiments (name, path, source, hash, plan, machine,"
                         " engine_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         &st, err, errlen, "insert experiment");
    if (rc < 0)
        return rc;
    avo_db_bind_text(st, 1, info->name);
    avo_db_bind_text(st, 2, info->path);
    avo_db_bind_text(st, 3, info->source);
    avo_db_bind_text(st, 4, info->hash);
    avo_db_bind_text(st, 5, info->plan_json);
    avo_db_bind_text(st, 6, info->machine_json);
    avo_db_bind_text(st, 7, info->engine_version);
    sqlite3_bind_double(st, 8, avo_now());
    rc = avo_db_step_done(ar->db, st, err, errlen, "insert experiment");
    if (rc == 0)
        *ret_id = avo_db_last_id(ar->db);
    return rc;
}

/* Every experiment of the archive, oldest first, as [{id, name, path,
 * source, hash, plan, machine, engine_version, created_at}] (plan and
 * machine parsed). */
int avo_archive_experiments(avo_archive *ar, json_t **ret, char *err, size_t errlen)
{
    static const avo_db_column columns[] = {
        {"id", AVO_DB_VALUE},     {"name", AVO_DB_VALUE},           {"path", AVO_DB_VALUE},
        {"source", AVO_DB_VALUE}, {"hash", AVO_DB_VALUE},           {"plan", AVO_DB_JSON},
        {"machine", AVO_DB_JSON}, {"engine_version", AVO_DB_VALUE}, {"created_at", AVO_DB_VALUE}};
    static const avo_db_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "experiments: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc =
        avo_db_stmt(ar->db,
                    "SELECT id, name, path, source, hash, plan, machine, engine_version, created_at"
                    " FROM experiments ORDER BY id",
                    &st, err, errlen, "read experiments");
    if (rc < 0)
        return rc;
    return avo_db_collect_rows(ar->db, st, avo_db_row_object, &shape, ret, err, errlen,
                               "read experiments");
}

/*
 * Set how cell `cell` of experiment `experiment_id` stands: its run (0:
 * none yet), status, reason (NULL: none) and the exit status of the process
 * that ran it (exit_code < 0: none).  Replaces what was recorded before.
 */
int avo_archive_experiment_cell_put(avo_archive *ar, int64_t experiment_id, const char *cell,
                                    int64_t run_id, const char *status, const char *reason,
                                    int exit_code, char *err, size_t errlen)
{
    if (!ar || !cell || !status)
        return avo_error(err, errlen, AVO_EINVAL, "experiment cell: missing argument");
    sqlite3_stmt *st = NULL;
    int rc =
        avo_db_stmt(ar->db,
                    "INSERT INTO experiment_cells (experiment_id, cell, run_id, status, reason,"
                    " exit_code, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                    " ON CONFLICT (experiment_id, cell) DO UPDATE SET run_id = ?3, status = ?4,"
                    " reason = ?5, exit_code = ?6, updated_at = ?7",
                    &st, err, errlen, "record experiment cell");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, experiment_id);
    avo_db_bind_text(st, 2, cell);
    avo_db_bind_id(st, 3, run_id);
    avo_db_bind_text(st, 4, status);
    avo_db_bind_text(st, 5, reason);
    if (exit_code >= 0)
        sqlite3_bind_int(st, 6, exit_code);
    else
        sqlite3_bind_null(st, 6);
    sqlite3_bind_double(st, 7, avo_now());
    return avo_db_step_done(ar->db, st, err, errlen, "record experiment cell");
}

/* The recorded cells of experiment_id as [{cell, run_id, status, reason,
 * exit_code, updated_at}], by cell name. */
int avo_archive_experiment_cells(avo_archive *ar, int64_t experiment_id, json_t **ret, char *err,
                                 size_t errlen)
{
    static const avo_db_column columns[] = {
        {"cell", AVO_DB_VALUE},   {"run_id", AVO_DB_VALUE},    {"status", AVO_DB_VALUE},
        {"reason", AVO_DB_VALUE}, {"exit_code", AVO_DB_VALUE}, {"updated_at", AVO_DB_VALUE}};
    static const avo_db_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "experiment cells: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db,
                         "SELECT cell, run_id, status, reason, exit_code, updated_at FROM"
                         " experiment_cells WHERE experiment_id = ? ORDER BY cell",
                         &st, err, errlen, "read experiment cells");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, experiment_id);
    return avo_db_collect_rows(ar->db, st, avo_db_row_object, &shape, ret, err, errlen,
                               "read experiment cells");
}
