/*
 * base.c — the archive's base reads, which the other layers call and which
 * call none of them: which run a run id of 0 means, a run's row, and a run's
 * baselines.  runs.c, candidates.c and records.c sit on this file and on
 * schema.c, never on each other in a circle (tools/check-layers).
 */
#include "store/archive_impl.h"

/* run_id, or the latest run's id when run_id is 0 (archive_impl.h). */
int avo_archive_resolve_run(avo_archive *ar, int64_t run_id, int64_t *ret, char *err, size_t errlen)
{
    if (run_id) {
        *ret = run_id;
        return 0;
    }
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db, "SELECT max(id) FROM runs", &st, err, errlen, "find latest run");
    if (rc == 0)
        rc = avo_db_single_id(ar->db, st, ret, err, errlen, "find latest run");
    if (rc == 0 && !*ret)
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "the archive has no runs");
    return rc;
}

int avo_archive_run_get(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    static const avo_db_column columns[] = {
        {"id", AVO_DB_VALUE},       {"script_path", AVO_DB_VALUE}, {"script_source", AVO_DB_VALUE},
        {"config", AVO_DB_JSON},    {"seed", AVO_DB_VALUE},        {"engine_version", AVO_DB_VALUE},
        {"compiler", AVO_DB_VALUE}, {"host", AVO_DB_VALUE},        {"started_at", AVO_DB_VALUE},
        {"ended_at", AVO_DB_VALUE}, {"status", AVO_DB_VALUE},      {"owner", AVO_DB_JSON},
    };
    static const avo_db_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "run_get: missing argument");
    *ret = NULL;
    int rc = avo_archive_resolve_run(ar, run_id, &run_id, err, errlen);
    if (rc == 0)
        rc = avo_db_row_by_id(ar->db,
                              "SELECT id, script_path, script_source, config, seed, engine_version,"
                              " compiler, host, started_at, ended_at, status, owner FROM runs"
                              " WHERE id = ?",
                              run_id, &shape, ret, err, errlen, "read run");
    if (rc == 0 && !*ret)
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no run %lld", (long long)run_id);
    return rc;
}

/* Baselines of run_id (0: all runs) in (run, name, device) order; result parsed. */
int avo_archive_baselines(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    static const avo_db_column columns[] = {
        {"id", AVO_DB_VALUE},          {"run_id", AVO_DB_VALUE},    {"device", AVO_DB_VALUE},
        {"device_name", AVO_DB_VALUE}, {"name", AVO_DB_VALUE},      {"status", AVO_DB_VALUE},
        {"reason", AVO_DB_VALUE},      {"library", AVO_DB_VALUE},   {"version", AVO_DB_VALUE},
        {"path", AVO_DB_VALUE},        {"result", AVO_DB_JSON},     {"score", AVO_DB_VALUE},
        {"created_at", AVO_DB_VALUE},  {"evaluator", AVO_DB_VALUE},
    };
    static const avo_db_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "baselines: missing argument");
    *ret = NULL;
    return avo_db_rows_by_id(
        ar->db,
        "SELECT id, run_id, device, device_name, name, status, reason, library,"
        " version, path, result, score, created_at, evaluator FROM baselines"
        " WHERE ?1 = 0 OR run_id = ?1 ORDER BY run_id, name, device",
        run_id, avo_db_row_object, &shape, ret, err, errlen, "read baselines");
}
