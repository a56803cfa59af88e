/*
 * candidates.c — what the archive keeps of each candidate: its source
 * (sources, by hash), its row and parent edges, the result and per-config
 * evaluations a worker reported, and the walks over its lineage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "store/archive_impl.h"

/* ---------------------------------------------------------------- sources */

/* Hash text and insert it unless present; the caller owns any transaction. */
static int put_source(avo_archive *ar, const char *text, char hash[AVO_HASH_HEXLEN + 1], char *err,
                      size_t errlen)
{
    int rc = avo_hash_hex(text, strlen(text), hash);
    if (rc < 0)
        return avo_error(err, errlen, rc, "hash source: %s", avo_strerror(rc));
    sqlite3_stmt *st = NULL;
    rc = avo_db_stmt(ar->db, "INSERT OR IGNORE INTO sources (hash, text) VALUES (?, ?)", &st, err,
                     errlen, "insert source");
    if (rc < 0)
        return rc;
    avo_db_bind_text(st, 1, hash);
    avo_db_bind_text(st, 2, text);
    return avo_db_step_done(ar->db, st, err, errlen, "insert source");
}

int avo_archive_put_source(avo_archive *ar, const char *text, char ret_hash[41], char *err,
                           size_t errlen)
{
    if (!ar || !text || !ret_hash)
        return avo_error(err, errlen, AVO_EINVAL, "put_source: missing argument");
    return put_source(ar, text, ret_hash, err, errlen);
}

/* Source text by hash, byte for byte; *ret_text is malloc'ed and owned by
 * the caller. */
int avo_archive_source_get(avo_archive *ar, const char *hash, char **ret_text, char *err,
                           size_t errlen)
{
    if (!ar || !hash || !ret_text)
        return avo_error(err, errlen, AVO_EINVAL, "source_get: missing argument");
    *ret_text = NULL;
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db, "SELECT text FROM sources WHERE hash = ?", &st, err, errlen,
                         "read source");
    if (rc < 0)
        return rc;
    avo_db_bind_text(st, 1, hash);
    rc = avo_db_step_row(ar->db, st, err, errlen, "read source");
    if (rc == 1) {
        const char *text = (const char *)sqlite3_column_text(st, 0);
        *ret_text = strdup(text ? text : "");
        rc = *ret_text ? 0 : avo_db_oom(err, errlen);
    } else if (rc == 0) {
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no source %s", hash);
    }
    avo_db_release(st);
    return rc;
}
/* ------------------------------------------------------------- candidates */

/* 0 when text parses as a JSON object, else AVO_EINVAL naming `what`. */
static int check_json_object(const char *text, const char *what, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *v = json_loads(text, 0, &jerr);
    int ok = v && json_is_object(v);
    json_decref(v);
    if (!ok)
        return avo_error(err, errlen, AVO_EINVAL, "%s is not a JSON object: %s", what,
                         v ? "wrong type" : jerr.text);
    return 0;
}

typedef struct candidate_insert {
    const avo_candidate_info *info;
    const char *knobs;
    int64_t id; /* out */
} candidate_insert;

/* The transaction of candidate_add: source, candidate row, parent edges. */
static int insert_candidate(avo_archive *ar, void *ctx, char *err, size_t errlen)
{
    candidate_insert *c = ctx;
    const avo_candidate_info *info = c->info;
    char hash[AVO_HASH_HEXLEN + 1];
    int rc = put_source(ar, info->source, hash, err, errlen);
    if (rc < 0)
        return rc;

    sqlite3_stmt *st = NULL;
    rc = avo_db_stmt(
        ar->db,
        "INSERT INTO candidates (run_id, generation, operator, source_hash, knobs, note,"
        " \"key\", created_at, evaluator) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        &st, err, errlen, "insert candidate");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, info->run_id);
    sqlite3_bind_int(st, 2, info->generation);
    avo_db_bind_text(st, 3, info->operator_name);
    avo_db_bind_text(st, 4, hash);
    avo_db_bind_text(st, 5, c->knobs);
    avo_db_bind_text(st, 6, info->note);
    avo_db_bind_text(st, 7, info->key);
    sqlite3_bind_double(st, 8, avo_now());
    avo_db_bind_text(st, 9, info->evaluator);
    rc = avo_db_step_done(ar->db, st, err, errlen, "insert candidate");
    if (rc < 0)
        return rc;
    c->id = avo_db_last_id(ar->db);

    rc = avo_db_stmt(ar->db, "INSERT INTO edges (child, parent, role) VALUES (?, ?, ?)", &st, err,
                     errlen, "insert parent edge");
    for (size_t i = 0; rc == 0 && i < info->n_parents; i++) {
        sqlite3_bind_int64(st, 1, c->id);
        sqlite3_bind_int64(st, 2, info->parents[i].parent_id);
        avo_db_bind_text(st, 3, info->parents[i].role);
        rc = avo_db_step_done(ar->db, st, err, errlen, "insert parent edge");
    }
    return rc;
}

/*
 * Insert the source (if new), the pending candidate and its parent edges in
 * one transaction; *ret_id is the new candidate's id.  Foreign keys reject
 * unknown runs and parents, and the whole insert is rolled back.
 */
int avo_archive_candidate_add(avo_archive *ar, const avo_candidate_info *info, int64_t *ret_id,
                              char *err, size_t errlen)
{
    if (!ar || !info || !ret_id)
        return avo_error(err, errlen, AVO_EINVAL, "candidate_add: missing argument");
    if (!info->source || !info->operator_name)
        return avo_error(err, errlen, AVO_EINVAL, "candidate needs a source and an operator");
    if (info->n_parents && !info->parents)
        return avo_error(err, errlen, AVO_EINVAL, "candidate has %zu parents but no array",
                         info->n_parents);
    for (size_t i = 0; i < info->n_parents; i++)
        if (!info->parents[i].role)
            return avo_error(err, errlen, AVO_EINVAL, "parent %zu has no role", i);
    candidate_insert c = {.info = info, .knobs = info->knobs_json ? info->knobs_json : "{}"};
    int rc = check_json_object(c.knobs, "knobs", err, errlen);
    if (rc == 0)
        rc = avo_archive_tx(ar, insert_candidate, &c, err, errlen);
    if (rc == 0)
        *ret_id = c.id;
    return rc;
}

/* Insert one evaluations row from a protocol config object. */
static int insert_evaluation(avo_archive *ar, sqlite3_stmt *st, int64_t id, size_t index,
                             const json_t *config, char *err, size_t errlen)
{
    if (!json_is_object(config))
        return avo_error(err, errlen, AVO_EINVAL, "configs[%zu] is not an object", index);
    const char *name = opt_string(config, "name");
    if (!name)
        return avo_error(err, errlen, AVO_EINVAL, "configs[%zu] has no name", index);
    const json_t *correct = json_object_get(config, "correct");
    sqlite3_bind_int64(st, 1, id);
    avo_db_bind_text(st, 2, name);
    /* booleans -> 0/1; a missing or null verdict counts as not correct */
    sqlite3_bind_int(st, 3,
                     json_is_true(correct) ||
                         (json_is_integer(correct) && json_integer_value(correct) != 0));
    avo_db_bind_json_real(st, 4, json_object_get(config, "max_error"));
    avo_db_bind_json_real(st, 5, json_object_get(config, "median_s"));
    avo_db_bind_json_real(st, 6, json_object_get(config, "spread"));
    avo_db_bind_json_int(st, 7, json_object_get(config, "samples"));
    avo_db_bind_json_real(st, 8, json_object_get(config, "gflops"));
    avo_db_bind_json_real(st, 9, json_object_get(config, "gbs"));
    avo_db_bind_text(st, 10, opt_string(config, "reason"));
    avo_db_bind_json_real(st, 11, json_object_get(config, "yardstick_s"));
    avo_db_bind_json_real(st, 12, json_object_get(config, "vs_yardstick"));
    return avo_db_step_done(ar->db, st, err, errlen, "insert evaluation");
}

typedef struct candidate_result {
    int64_t id;
    const json_t *result;
    const char *meta_text; /* the result minus what has columns of its own */
    double score;
} candidate_result;

/* The transaction of candidate_finish: status columns, then the config rows
 * replacing any earlier ones. */
static int record_result(avo_archive *ar, void *ctx, char *err, size_t errlen)
{
    const candidate_result *r = ctx;
    sqlite3_stmt *st = NULL;
    int rc =
        avo_db_stmt(ar->db,
                    "UPDATE candidates SET status = ?, reason = ?, log = ?, score = ?, result = ?,"
                    " evaluated_at = ? WHERE id = ?",
                    &st, err, errlen, "update candidate");
    if (rc < 0)
        return rc;
    avo_db_bind_text(st, 1, opt_string(r->result, "status"));
    avo_db_bind_text(st, 2, opt_string(r->result, "reason"));
    avo_db_bind_text(st, 3, opt_string(r->result, "log"));
    sqlite3_bind_double(st, 4, r->score);
    avo_db_bind_text(st, 5, r->meta_text);
    sqlite3_bind_double(st, 6, avo_now());
    sqlite3_bind_int64(st, 7, r->id);
    rc = avo_db_step_done(ar->db, st, err, errlen, "update candidate");
    if (rc == 0)
        rc = avo_db_require_changed(ar->db, "candidate", r->id, err, errlen);
    if (rc == 0)
        rc = avo_db_stmt(ar->db, "DELETE FROM evaluations WHERE candidate_id = ?", &st, err, errlen,
                         "clear evaluations");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, r->id);
    rc = avo_db_step_done(ar->db, st, err, errlen, "clear evaluations");
    if (rc == 0)
        rc = avo_db_stmt(
            ar->db,
            "INSERT INTO evaluations (candidate_id, config, correct, max_error, median_s,"
            " spread, samples, gflops, gbs, reason, yardstick_s, vs_yardstick)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &st, err, errlen, "insert evaluation");
    const json_t *configs = json_object_get(r->result, "configs");
    for (size_t i = 0; rc == 0 && i < json_array_size(configs); i++) {
        rc = insert_evaluation(ar, st, r->id, i, json_array_get(configs, i), err, errlen);
        if (rc < 0)
            avo_db_release(st);
    }
    return rc;
}

/*
 * Record a worker result for candidate id in one transaction: the status
 * columns, the remaining metadata as the `result` JSON, and one evaluations
 * row per config.  Earlier evaluations of the same id are replaced, so a
 * repeated finish is idempotent.
 */
int avo_archive_candidate_finish(avo_archive *ar, int64_t id, const json_t *result, double score,
                                 char *err, size_t errlen)
{
    if (!ar || !json_is_object(result))
        return avo_error(err, errlen, AVO_EINVAL, "candidate_finish: result must be an object");
    if (!opt_string(result, "status"))
        return avo_error(err, errlen, AVO_EINVAL, "result of candidate %lld has no status",
                         (long long)id);
    const json_t *configs = json_object_get(result, "configs");
    if (configs && !json_is_array(configs) && !json_is_null(configs))
        return avo_error(err, errlen, AVO_EINVAL, "result configs is not an array");

    /* The metadata column: everything except what has columns of its own. */
    json_t *meta = json_deep_copy(result);
    if (!meta)
        return avo_db_oom(err, errlen);
    static const char *const own_columns[] = {"id", "status", "reason", "log", "configs"};
    for (size_t i = 0; i < COUNT_OF(own_columns); i++)
        json_object_del(meta, own_columns[i]);
    char *meta_text = avo_db_json_text(meta);
    json_decref(meta);
    if (!meta_text)
        return avo_db_oom(err, errlen);

    candidate_result r = {.id = id, .result = result, .meta_text = meta_text, .score = score};
    int rc = avo_archive_tx(ar, record_result, &r, err, errlen);
    free(meta_text);
    return rc;
}
/* ---------------------------------------------------------------- reading */

/* [{id, role}] of the parents of id, ordered by role then parent id. */
static const avo_db_column parent_columns[] = {{"id", AVO_DB_VALUE}, {"role", AVO_DB_VALUE}};
static const avo_db_shape parent_shape = {parent_columns, COUNT_OF(parent_columns)};

static int parents_json(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    return avo_db_rows_by_id(
        ar->db, "SELECT parent, role FROM edges WHERE child = ? ORDER BY role, parent", id,
        avo_db_row_object, &parent_shape, ret, err, errlen, "read parents");
}

/* [ids] of the children of id, ascending. */
static int children_json(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    return avo_db_rows_by_id(ar->db,
                             "SELECT DISTINCT child FROM edges WHERE parent = ? ORDER BY child", id,
                             avo_db_row_first, NULL, ret, err, errlen, "read children");
}

/* The protocol's config objects for id, in the order they were recorded. */
static const avo_db_column config_columns[] = {
    {"name", AVO_DB_VALUE},     {"correct", AVO_DB_BOOL}, {"max_error", AVO_DB_VALUE},
    {"median_s", AVO_DB_VALUE}, {"spread", AVO_DB_VALUE}, {"samples", AVO_DB_VALUE},
    {"gflops", AVO_DB_VALUE},   {"gbs", AVO_DB_VALUE},    {"reason", AVO_DB_VALUE},
    {"yardstick_s", AVO_DB_OPTIONAL}, {"vs_yardstick", AVO_DB_OPTIONAL},
};
static const avo_db_shape config_shape = {config_columns, COUNT_OF(config_columns)};

static int configs_json(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    return avo_db_rows_by_id(
        ar->db,
        "SELECT config, correct, max_error, median_s, spread, samples, gflops, gbs,"
        " reason, yardstick_s, vs_yardstick FROM evaluations WHERE candidate_id = ? ORDER BY rowid",
        id, avo_db_row_object, &config_shape, ret, err, errlen, "read evaluations");
}

/*
 * The row of candidate id as an object of its columns (knobs and result
 * parsed), without parents, children or configs.  AVO_ENOTFOUND if absent.
 */
static const avo_db_column candidate_columns[] = {
    {"id", AVO_DB_VALUE},         {"run_id", AVO_DB_VALUE},       {"generation", AVO_DB_VALUE},
    {"operator", AVO_DB_VALUE},   {"status", AVO_DB_VALUE},       {"reason", AVO_DB_VALUE},
    {"log", AVO_DB_VALUE},        {"score", AVO_DB_VALUE},        {"source_hash", AVO_DB_VALUE},
    {"knobs", AVO_DB_JSON},       {"note", AVO_DB_VALUE},         {"key", AVO_DB_VALUE},
    {"created_at", AVO_DB_VALUE}, {"evaluated_at", AVO_DB_VALUE}, {"result", AVO_DB_JSON},
    {"evaluator", AVO_DB_VALUE},
};
static const avo_db_shape candidate_shape = {candidate_columns, COUNT_OF(candidate_columns)};
#define CANDIDATE_SELECT                                                                           \
    "SELECT id, run_id, generation, operator, status, reason, log, score, source_hash, knobs,"     \
    " note, \"key\", created_at, evaluated_at, result, evaluator FROM candidates"

static int candidate_row(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    int rc = avo_db_row_by_id(ar->db, CANDIDATE_SELECT " WHERE id = ?", id, &candidate_shape, ret,
                              err, errlen, "read candidate");
    if (rc == 0 && !*ret)
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no candidate %lld", (long long)id);
    return rc;
}

/* The source text of candidate obj as its "source" (as avo_archive_candidate_get). */
static int source_into(avo_archive *ar, json_t *obj, char *err, size_t errlen)
{
    char *text = NULL;
    const char *hash = opt_string(obj, "source_hash");
    int rc = avo_archive_source_get(ar, hash ? hash : "", &text, err, errlen);
    if (rc < 0)
        return rc;
    json_t *v = avo_db_text_json((const unsigned char *)text, (int)strlen(text));
    free(text);
    return avo_db_put(obj, "source", v) ? avo_db_oom(err, errlen) : 0;
}

int avo_archive_candidate_get(avo_archive *ar, int64_t id, int with_source, json_t **ret, char *err,
                              size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "candidate_get: missing argument");
    *ret = NULL;
    if (!ar)
        return avo_error(err, errlen, AVO_EINVAL, "candidate_get: missing argument");
    json_t *obj = NULL, *v = NULL;
    int rc = candidate_row(ar, id, &obj, err, errlen);
    if (rc < 0)
        return rc;

    if ((rc = parents_json(ar, id, &v, err, errlen)) < 0 || avo_db_put(obj, "parents", v))
        goto fail;
    if ((rc = children_json(ar, id, &v, err, errlen)) < 0 || avo_db_put(obj, "children", v))
        goto fail;
    if ((rc = configs_json(ar, id, &v, err, errlen)) < 0 || avo_db_put(obj, "configs", v))
        goto fail;
    if (with_source && (rc = source_into(ar, obj, err, errlen)) < 0)
        goto fail;
    *ret = obj;
    return 0;

fail:
    json_decref(obj);
    return rc < 0 ? rc : avo_db_oom(err, errlen);
}

int avo_archive_candidate_by_key(avo_archive *ar, const char *key, json_t **ret, char *err,
                                 size_t errlen)
{
    if (!ar || !key || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "candidate_by_key: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db,
                         "SELECT id FROM candidates WHERE \"key\" = ? AND status <> 'pending'"
                         " ORDER BY id LIMIT 1",
                         &st, err, errlen, "find candidate by key");
    if (rc < 0)
        return rc;
    avo_db_bind_text(st, 1, key);
    int64_t id;
    rc = avo_db_single_id(ar->db, st, &id, err, errlen, "find candidate by key");
    if (rc < 0)
        return rc;
    if (!id)
        return avo_error(err, errlen, AVO_ENOTFOUND, "no finished candidate with key %s", key);
    return avo_archive_candidate_get(ar, id, 0, ret, err, errlen);
}

int avo_archive_best(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "best: missing argument");
    *ret = NULL;
    int rc = avo_archive_resolve_run(ar, run_id, &run_id, err, errlen);
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = NULL;
    rc = avo_db_stmt(ar->db,
                     "SELECT id FROM candidates WHERE run_id = ? AND status = 'ok'"
                     " ORDER BY score DESC, id ASC LIMIT 1",
                     &st, err, errlen, "find best candidate");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int64_t id;
    rc = avo_db_single_id(ar->db, st, &id, err, errlen, "find best candidate");
    if (rc < 0)
        return rc;
    if (!id)
        return avo_error(err, errlen, AVO_ENOTFOUND, "run %lld has no correct candidate",
                         (long long)run_id);
    return avo_archive_candidate_get(ar, id, 0, ret, err, errlen);
}

/*
 * Append the rows of `sql` (bound to run_id, ordered by the candidate id in
 * column id_col) to the array `field` of the candidates in rows (ordered by
 * id): one walk over both, where a row per candidate cost a query each.
 * Rows of a candidate not in rows (inserted since) are skipped.
 */
static int attach_rows(avo_archive *ar, json_t *rows, int64_t run_id, const char *sql, int id_col,
                       const avo_db_shape *shape, const char *field, char *err, size_t errlen,
                       const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db, sql, &st, err, errlen, what);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    size_t i = 0, n = json_array_size(rows);
    while ((rc = avo_db_step_row(ar->db, st, err, errlen, what)) == 1) {
        json_int_t id = sqlite3_column_int64(st, id_col);
        while (i < n && json_integer_value(json_object_get(json_array_get(rows, i), "id")) < id)
            i++;
        json_t *c = json_array_get(rows, i);
        if (!c || json_integer_value(json_object_get(c, "id")) != id)
            continue;
        json_t *v = shape ? avo_db_row_object(st, shape) : avo_db_column_json(st, 0);
        if (!v || json_array_append_new(json_object_get(c, field), v)) {
            rc = avo_db_oom(err, errlen);
            break;
        }
    }
    avo_db_release(st);
    return rc < 0 ? rc : 0;
}

#define OF_RUN(alias) " WHERE ?1 = 0 OR " alias ".run_id = ?1"

/*
 * The brief row of a candidate (avo_archive_candidates_brief): the columns
 * a run's page reads of every candidate, under the full row's names, and
 * of each config the name and the throughput (avo_diff_config_metric).
 */
static const avo_db_column brief_columns[] = {
    {"id", AVO_DB_VALUE},         {"generation", AVO_DB_VALUE},   {"operator", AVO_DB_VALUE},
    {"status", AVO_DB_VALUE},     {"reason", AVO_DB_VALUE},       {"score", AVO_DB_VALUE},
    {"created_at", AVO_DB_VALUE}, {"evaluated_at", AVO_DB_VALUE}, {"result", AVO_DB_JSON},
};
static const avo_db_shape brief_shape = {brief_columns, COUNT_OF(brief_columns)};
static const avo_db_column brief_config_columns[] = {
    {"name", AVO_DB_VALUE}, {"gflops", AVO_DB_VALUE}, {"gbs", AVO_DB_VALUE}};
static const avo_db_shape brief_config_shape = {brief_config_columns,
                                                COUNT_OF(brief_config_columns)};

/* What a bulk read gives each candidate of a run. */
typedef struct candidate_listing {
    const char *select;               /* the row: "SELECT ... FROM candidates" */
    const avo_db_shape *shape;        /* of select */
    const char *configs;              /* "SELECT ...": the configs, candidate id last */
    const avo_db_shape *config_shape; /* of configs */
    int with_edges;                   /* parents and children */
    int with_source;
} candidate_listing;

static const candidate_listing full_listing = {
    CANDIDATE_SELECT,
    &candidate_shape,
    "SELECT v.config, v.correct, v.max_error, v.median_s, v.spread, v.samples, v.gflops, v.gbs,"
    " v.reason, v.yardstick_s, v.vs_yardstick, v.candidate_id",
    &config_shape,
    1,
    0,
};

static const candidate_listing brief_listing = {
    "SELECT id, generation, operator, status, reason, score, created_at, evaluated_at, result"
    " FROM candidates",
    &brief_shape,
    "SELECT v.config, v.gflops, v.gbs, v.candidate_id",
    &brief_config_shape,
    0,
    0,
};

/* The rows of `how` for run_id (0: all runs) in id order, each with empty
 * arrays for what attach_rows fills; *ret owned by the caller. */
static int list_rows(avo_archive *ar, int64_t run_id, const candidate_listing *how, json_t **ret,
                     char *err, size_t errlen)
{
    char sql[512];
    snprintf(sql, sizeof sql, "%s" OF_RUN("candidates") " ORDER BY id", how->select);
    sqlite3_stmt *st = NULL;
    json_t *rows = NULL;
    int rc = avo_db_stmt(ar->db, sql, &st, err, errlen, "list candidates");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    if ((rc = avo_db_collect_rows(ar->db, st, avo_db_row_object, how->shape, &rows, err, errlen,
                                  "list candidates")) < 0)
        return rc;
    size_t i;
    json_t *c;
    json_array_foreach(rows, i, c)
    {
        if (!c ||
            (how->with_edges &&
             (avo_db_put(c, "parents", json_array()) || avo_db_put(c, "children", json_array()))) ||
            avo_db_put(c, "configs", json_array())) {
            json_decref(rows);
            return avo_db_oom(err, errlen);
        }
    }
    *ret = rows;
    return 0;
}

/* Fill the rows' parents and children (with_edges) and configs, one query
 * each over the run. */
static int attach_all(avo_archive *ar, json_t *rows, int64_t run_id, const candidate_listing *how,
                      char *err, size_t errlen)
{
    int rc = 0;
    if (how->with_edges)
        rc = attach_rows(ar, rows, run_id,
                         "SELECT e.parent, e.role, e.child FROM edges e"
                         " JOIN candidates c ON c.id = e.child" OF_RUN(
                             "c") " ORDER BY e.child, e.role, e.parent",
                         2, &parent_shape, "parents", err, errlen, "read parents");
    if (rc == 0 && how->with_edges)
        rc = attach_rows(
            ar, rows, run_id,
            "SELECT DISTINCT e.child, e.parent FROM edges e"
            " JOIN candidates c ON c.id = e.parent" OF_RUN("c") " ORDER BY e.parent, e.child",
            1, NULL, "children", err, errlen, "read children");
    if (rc < 0)
        return rc;
    char sql[512];
    snprintf(sql, sizeof sql,
             "%s FROM evaluations v JOIN candidates c ON c.id = v.candidate_id" OF_RUN(
                 "c") " ORDER BY v.candidate_id, v.rowid",
             how->configs);
    return attach_rows(ar, rows, run_id, sql, (int)how->config_shape->n, how->config_shape,
                       "configs", err, errlen, "read evaluations");
}

/* Every candidate of run_id (0: all runs) as `how` says, in id order, from
 * at most four queries (a run of 100,000 made 400,000 when each was read
 * alone) and one per source. */
static int list_candidates(avo_archive *ar, int64_t run_id, const candidate_listing *how,
                           json_t **ret, char *err, size_t errlen)
{
    if (!ar || !ret || run_id < 0)
        return avo_error(err, errlen, AVO_EINVAL, "candidates: bad argument");
    *ret = NULL;
    if (run_id) {
        json_t *run = NULL;
        int rc = avo_archive_run_get(ar, run_id, &run, err, errlen);
        json_decref(run);
        if (rc < 0)
            return rc;
    }
    json_t *rows = NULL;
    int rc = list_rows(ar, run_id, how, &rows, err, errlen);
    if (rc == 0)
        rc = attach_all(ar, rows, run_id, how, err, errlen);
    size_t i;
    json_t *c;
    json_array_foreach(rows, i, c)
    {
        if (rc == 0 && how->with_source)
            rc = source_into(ar, c, err, errlen);
    }
    if (rc < 0) {
        json_decref(rows);
        return rc;
    }
    *ret = rows;
    return 0;
}

int avo_archive_candidates(avo_archive *ar, int64_t run_id, int with_source, json_t **ret,
                           char *err, size_t errlen)
{
    /* The objects of avo_archive_candidate_get, keys in its order. */
    candidate_listing how = full_listing;
    how.with_source = with_source;
    return list_candidates(ar, run_id, &how, ret, err, errlen);
}

int avo_archive_candidates_brief(avo_archive *ar, int64_t run_id, json_t **ret, char *err,
                                 size_t errlen)
{
    return list_candidates(ar, run_id, &brief_listing, ret, err, errlen);
}
/* ---------------------------------------------------------------- lineage */

/* A growable FIFO of ids for the breadth-first walks. */
typedef struct id_queue {
    int64_t *ids;
    size_t head, len, cap;
} id_queue;

static int queue_push(id_queue *q, int64_t id)
{
    if (q->len == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 64;
        int64_t *ids = realloc(q->ids, cap * sizeof *ids);
        if (!ids)
            return AVO_ENOMEM;
        q->ids = ids;
        q->cap = cap;
    }
    q->ids[q->len++] = id;
    return 0;
}

/* Visited-set key for an id. */
static const char *id_key(char buf[24], int64_t id)
{
    snprintf(buf, 24, "%lld", (long long)id);
    return buf;
}

/*
 * Breadth-first walk over parent edges from `start` (depth 0).  Fills
 * `depths` (object id -> shortest depth, owned by the caller) and, when
 * `nodes` is not NULL, appends one lineage node per ancestor in visit order.
 * Every node is visited once, so shared ancestors of a DAG appear once and
 * at their shortest depth.
 */
static int walk_ancestors(avo_archive *ar, int64_t start, json_t *depths, json_t *nodes, char *err,
                          size_t errlen)
{
    static const char *const node_keys[] = {"operator", "generation", "status", "score"};
    id_queue q = {0};
    char key[24];
    int rc = queue_push(&q, start);
    if (rc == 0 && json_object_set_new(depths, id_key(key, start), json_integer(0)) != 0)
        rc = AVO_ENOMEM;
    if (rc < 0) {
        rc = avo_db_oom(err, errlen);
        goto out;
    }

    while (q.head < q.len) {
        int64_t id = q.ids[q.head++];
        json_int_t depth = json_integer_value(json_object_get(depths, id_key(key, id)));
        json_t *parents = NULL;
        rc = parents_json(ar, id, &parents, err, errlen);
        if (rc < 0)
            goto out;

        if (nodes) {
            json_t *row = NULL;
            rc = candidate_row(ar, id, &row, err, errlen);
            if (rc < 0) {
                json_decref(parents);
                goto out;
            }
            json_t *node = json_object();
            int bad = !node || avo_db_put(node, "id", json_integer(id)) ||
                      avo_db_put(node, "parents", json_incref(parents));
            for (size_t k = 0; !bad && k < COUNT_OF(node_keys); k++)
                bad |=
                    avo_db_put(node, node_keys[k], json_incref(json_object_get(row, node_keys[k])));
            json_decref(row);
            bad |= json_array_append_new(nodes, node) != 0;
            if (bad) {
                json_decref(parents);
                rc = avo_db_oom(err, errlen);
                goto out;
            }
        }

        size_t i;
        json_t *edge;
        json_array_foreach(parents, i, edge)
        {
            int64_t parent = json_integer_value(json_object_get(edge, "id"));
            id_key(key, parent);
            if (json_object_get(depths, key))
                continue;
            if (json_object_set_new(depths, key, json_integer(depth + 1)) != 0 ||
                queue_push(&q, parent) < 0) {
                json_decref(parents);
                rc = avo_db_oom(err, errlen);
                goto out;
            }
        }
        json_decref(parents);
    }
    rc = 0;
out:
    free(q.ids);
    return rc;
}

/* AVO_ENOTFOUND unless candidate id exists. */
static int require_candidate(avo_archive *ar, int64_t id, char *err, size_t errlen)
{
    json_t *row = NULL;
    int rc = candidate_row(ar, id, &row, err, errlen);
    json_decref(row);
    return rc;
}

int avo_archive_lineage(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "lineage: missing argument");
    *ret = NULL;
    int rc = require_candidate(ar, id, err, errlen);
    if (rc < 0)
        return rc;
    json_t *depths = json_object(), *nodes = json_array();
    if (!depths || !nodes)
        rc = avo_db_oom(err, errlen);
    else
        rc = walk_ancestors(ar, id, depths, nodes, err, errlen);
    json_decref(depths);
    if (rc < 0) {
        json_decref(nodes);
        return rc;
    }
    *ret = nodes;
    return 0;
}

/*
 * Nearest common ancestor: over the ancestors of a and of b (each including
 * itself, at its shortest depth), the shared node with the smallest
 * max(depth_a, depth_b); ties go to the highest id, the most recent.
 */
int avo_archive_common_ancestor(avo_archive *ar, int64_t a, int64_t b, int64_t *ret_id, char *err,
                                size_t errlen)
{
    if (!ar || !ret_id)
        return avo_error(err, errlen, AVO_EINVAL, "common_ancestor: missing argument");
    *ret_id = 0;
    int rc = require_candidate(ar, a, err, errlen);
    if (rc == 0)
        rc = require_candidate(ar, b, err, errlen);
    if (rc < 0)
        return rc;

    json_t *da = json_object(), *db = json_object();
    if (!da || !db)
        rc = avo_db_oom(err, errlen);
    if (rc == 0)
        rc = walk_ancestors(ar, a, da, NULL, err, errlen);
    if (rc == 0)
        rc = walk_ancestors(ar, b, db, NULL, err, errlen);
    if (rc == 0) {
        int64_t best = 0;
        json_int_t best_depth = 0;
        const char *key;
        json_t *depth_a;
        json_object_foreach(da, key, depth_a)
        {
            json_t *depth_b = json_object_get(db, key);
            if (!depth_b)
                continue;
            json_int_t d = json_integer_value(depth_a);
            if (json_integer_value(depth_b) > d)
                d = json_integer_value(depth_b);
            int64_t id = strtoll(key, NULL, 10);
            if (!best || d < best_depth || (d == best_depth && id > best)) {
                best = id;
                best_depth = d;
            }
        }
        *ret_id = best;
    }
    json_decref(da);
    json_decref(db);
    return rc;
}
