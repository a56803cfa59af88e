/*
 * archive.c — the run archive on SQLite.
 *
 * Invariants:
 *   - The connection is in WAL mode with foreign keys on and synchronous =
 *     NORMAL: a killed process never loses a committed transaction (a power
 *     cut may lose the last few, never consistency).
 *   - Every public write is one transaction that has committed, or been
 *     rolled back, before the call returns; no transaction stays open between
 *     calls.
 *   - Prepared statements are cached in ar->stmts (prepared on first use) and
 *     are reset with their bindings cleared after every use, so no statement
 *     holds a read snapshot or borrowed text between calls.
 *   - Values always travel as bound parameters.  The one exception is the
 *     user_version a migration writes, which PRAGMA cannot bind; it is an
 *     integer constant of this file.
 */
#include "archive.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

/*
 * Schema migrations.  migrations[v] brings an archive from version v - 1 to
 * version v; index 0 is unused.  Each step runs in its own transaction
 * together with the user_version bump, so a file is always at exactly one
 * version.  Steps are append-only: once released a step is never edited —
 * a change to the schema is a new step at the end, and
 * AVO_ARCHIVE_SCHEMA_VERSION moves with it.
 */
static const char *const migrations[] = {
    [1] = "CREATE TABLE runs ("
          "  id INTEGER PRIMARY KEY,"
          "  script_path TEXT,"
          "  script_source TEXT,"
          "  config TEXT,"
          "  seed INTEGER NOT NULL,"
          "  engine_version TEXT,"
          "  compiler TEXT,"
          "  host TEXT,"
          "  started_at REAL NOT NULL,"
          "  ended_at REAL,"
          "  status TEXT NOT NULL DEFAULT 'running'"
          ") STRICT;"
          "CREATE TABLE sources ("
          "  hash TEXT PRIMARY KEY,"
          "  text TEXT NOT NULL"
          ") STRICT;"
          "CREATE TABLE candidates ("
          "  id INTEGER PRIMARY KEY,"
          "  run_id INTEGER NOT NULL REFERENCES runs(id),"
          "  generation INTEGER NOT NULL,"
          "  operator TEXT NOT NULL,"
          "  status TEXT NOT NULL DEFAULT 'pending',"
          "  reason TEXT,"
          "  log TEXT,"
          "  score REAL,"
          "  source_hash TEXT NOT NULL REFERENCES sources(hash),"
          "  knobs TEXT NOT NULL DEFAULT '{}',"
          "  note TEXT,"
          "  \"key\" TEXT,"
          "  result TEXT,"
          "  created_at REAL NOT NULL,"
          "  evaluated_at REAL"
          ") STRICT;"
          "CREATE INDEX candidates_key ON candidates(\"key\");"
          "CREATE INDEX candidates_run_score ON candidates(run_id, score);"
          "CREATE TABLE edges ("
          "  child INTEGER NOT NULL REFERENCES candidates(id),"
          "  parent INTEGER NOT NULL REFERENCES candidates(id),"
          "  role TEXT NOT NULL,"
          "  PRIMARY KEY (child, parent, role)"
          ") STRICT;"
          "CREATE INDEX edges_parent ON edges(parent);"
          "CREATE TABLE evaluations ("
          "  candidate_id INTEGER NOT NULL REFERENCES candidates(id),"
          "  config TEXT NOT NULL,"
          "  correct INTEGER NOT NULL,"
          "  max_error REAL,"
          "  median_s REAL,"
          "  spread REAL,"
          "  samples INTEGER,"
          "  gflops REAL,"
          "  gbs REAL,"
          "  reason TEXT,"
          "  PRIMARY KEY (candidate_id, config)"
          ") STRICT;"
          "CREATE TABLE events ("
          "  id INTEGER PRIMARY KEY,"
          "  run_id INTEGER REFERENCES runs(id),"
          "  t REAL NOT NULL,"
          "  kind TEXT NOT NULL,"
          "  data TEXT"
          ") STRICT;",
    /* 2: rebench evaluation sets (avo rebench). */
    [2] = "CREATE TABLE rebench_sets ("
          "  id INTEGER PRIMARY KEY,"
          "  run_id INTEGER NOT NULL REFERENCES runs(id),"
          "  t REAL NOT NULL,"
          "  config TEXT"
          ") STRICT;"
          "CREATE TABLE rebench_results ("
          "  set_id INTEGER NOT NULL REFERENCES rebench_sets(id),"
          "  candidate_id INTEGER NOT NULL REFERENCES candidates(id),"
          "  round INTEGER NOT NULL,"
          "  score REAL NOT NULL,"
          "  result TEXT,"
          "  PRIMARY KEY (set_id, candidate_id, round)"
          ") STRICT;",
    /* 3: every LLM request and answer (core/llm.c, lua/avo/llm.lua); the
     * request is stored without credentials, request_hash keys replay. */
    [3] = "CREATE TABLE llm_calls ("
          "  id INTEGER PRIMARY KEY,"
          "  run_id INTEGER REFERENCES runs(id),"
          "  t REAL NOT NULL,"
          "  provider TEXT NOT NULL,"
          "  model TEXT,"
          "  request_hash TEXT NOT NULL,"
          "  request TEXT NOT NULL,"
          "  response TEXT,"
          "  status TEXT NOT NULL,"
          "  error TEXT,"
          "  input_tokens INTEGER NOT NULL DEFAULT 0,"
          "  output_tokens INTEGER NOT NULL DEFAULT 0,"
          "  cost_usd REAL NOT NULL DEFAULT 0,"
          "  latency_s REAL,"
          "  attempts INTEGER NOT NULL DEFAULT 1"
          ") STRICT;"
          "CREATE INDEX llm_calls_hash ON llm_calls(request_hash);"
          "CREATE INDEX llm_calls_run ON llm_calls(run_id);",
    /* 4: every evaluation an agent makes (operators/agent.lua), committed or
     * not, so directions explored can be set against versions committed. */
    [4] = "CREATE TABLE attempts ("
          "  id INTEGER PRIMARY KEY,"
          "  run_id INTEGER NOT NULL REFERENCES runs(id),"
          "  step INTEGER NOT NULL,"
          "  lineage TEXT NOT NULL,"
          "  t REAL NOT NULL,"
          "  source_hash TEXT NOT NULL REFERENCES sources(hash),"
          "  knobs TEXT NOT NULL DEFAULT '{}',"
          "  status TEXT NOT NULL,"
          "  score REAL,"
          "  outcome TEXT NOT NULL,"
          "  reason TEXT,"
          "  candidate_id INTEGER REFERENCES candidates(id),"
          "  configs TEXT"
          ") STRICT;"
          "CREATE INDEX attempts_run ON attempts(run_id, lineage, step);",
};

#define MIGRATION_COUNT ((int)(sizeof(migrations) / sizeof(migrations[0])) - 1)
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) - 1 == AVO_ARCHIVE_SCHEMA_VERSION,
               "one migration step per schema version");

/* Cached statements, prepared on first use. */
enum stmt_id {
    ST_BEGIN,
    ST_COMMIT,
    ST_ROLLBACK,
    ST_RUN_INSERT,
    ST_RUN_END,
    ST_RUN_GET,
    ST_RUN_LATEST,
    ST_SOURCE_PUT,
    ST_SOURCE_GET,
    ST_CAND_INSERT,
    ST_EDGE_INSERT,
    ST_CAND_FINISH,
    ST_EVAL_DELETE,
    ST_EVAL_INSERT,
    ST_EVENT_INSERT,
    ST_CAND_GET,
    ST_CAND_PARENTS,
    ST_CAND_CHILDREN,
    ST_CAND_CONFIGS,
    ST_CAND_BY_KEY,
    ST_BEST,
    ST_RUN_IDS,
    ST_RUN_COUNTS,
    ST_CAND_IDS,
    ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_RUN_INSERT] = "INSERT INTO runs (script_path, script_source, config, seed, engine_version,"
                      " compiler, host, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    [ST_RUN_END] = "UPDATE runs SET status = ?, ended_at = ? WHERE id = ?",
    [ST_RUN_GET] = "SELECT id, script_path, script_source, config, seed, engine_version, compiler,"
                   " host, started_at, ended_at, status FROM runs WHERE id = ?",
    [ST_RUN_LATEST] = "SELECT max(id) FROM runs",
    [ST_SOURCE_PUT] = "INSERT OR IGNORE INTO sources (hash, text) VALUES (?, ?)",
    [ST_SOURCE_GET] = "SELECT text FROM sources WHERE hash = ?",
    [ST_CAND_INSERT] = "INSERT INTO candidates (run_id, generation, operator, source_hash, knobs,"
                       " note, \"key\", created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    [ST_EDGE_INSERT] = "INSERT INTO edges (child, parent, role) VALUES (?, ?, ?)",
    [ST_CAND_FINISH] = "UPDATE candidates SET status = ?, reason = ?, log = ?, score = ?,"
                       " result = ?, evaluated_at = ? WHERE id = ?",
    [ST_EVAL_DELETE] = "DELETE FROM evaluations WHERE candidate_id = ?",
    [ST_EVAL_INSERT] = "INSERT INTO evaluations (candidate_id, config, correct, max_error,"
                       " median_s, spread, samples, gflops, gbs, reason)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    [ST_EVENT_INSERT] = "INSERT INTO events (run_id, t, kind, data) VALUES (?, ?, ?, ?)",
    [ST_CAND_GET] = "SELECT id, run_id, generation, operator, status, reason, log, score,"
                    " source_hash, knobs, note, \"key\", created_at, evaluated_at, result"
                    " FROM candidates WHERE id = ?",
    [ST_CAND_PARENTS] = "SELECT parent, role FROM edges WHERE child = ? ORDER BY role, parent",
    [ST_CAND_CHILDREN] = "SELECT DISTINCT child FROM edges WHERE parent = ? ORDER BY child",
    [ST_CAND_CONFIGS] = "SELECT config, correct, max_error, median_s, spread, samples, gflops,"
                        " gbs, reason FROM evaluations WHERE candidate_id = ? ORDER BY rowid",
    [ST_CAND_BY_KEY] = "SELECT id FROM candidates WHERE \"key\" = ? AND status <> 'pending'"
                       " ORDER BY id LIMIT 1",
    [ST_BEST] = "SELECT id FROM candidates WHERE run_id = ? AND status = 'ok'"
                " ORDER BY score DESC, id ASC LIMIT 1",
    [ST_RUN_IDS] = "SELECT id FROM runs ORDER BY id",
    [ST_RUN_COUNTS] = "SELECT count(*), count(*) FILTER (WHERE status = 'ok'),"
                      " count(*) FILTER (WHERE status NOT IN ('ok', 'pending'))"
                      " FROM candidates WHERE run_id = ?",
    [ST_CAND_IDS] = "SELECT id FROM candidates WHERE ?1 = 0 OR run_id = ?1 ORDER BY id",
};

/* Column order of ST_CAND_GET. */
enum {
    CAND_ID,
    CAND_RUN_ID,
    CAND_GENERATION,
    CAND_OPERATOR,
    CAND_STATUS,
    CAND_REASON,
    CAND_LOG,
    CAND_SCORE,
    CAND_SOURCE_HASH,
    CAND_KNOBS,
    CAND_NOTE,
    CAND_KEY,
    CAND_CREATED_AT,
    CAND_EVALUATED_AT,
    CAND_RESULT
};

/* How long a write waits for another process's lock before failing. */
#define BUSY_TIMEOUT_MS 5000

struct avo_archive {
    sqlite3 *db;
    char *path;
    int opened_version;
    sqlite3_stmt *stmts[ST_COUNT];
};

/*
 * The one translation of SQLite failures: writes "what: <sqlite message>"
 * into the caller's buffer and returns AVO_ENOMEM for SQLITE_NOMEM, AVO_ESQL
 * otherwise.  Call it before any rollback, which would replace the message.
 */
static int sql_error(sqlite3 *db, int rc, char *err, size_t errlen, const char *what)
{
    const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    int code = (rc & 0xff) == SQLITE_NOMEM ? AVO_ENOMEM : AVO_ESQL;
    return avo_error(err, errlen, code, "%s: %s", what, msg);
}

/*
 * The cached statement `id`, prepared on first use, in *ret.  The statement
 * stays owned by ar; callers finish with release().
 */
static int stmt_get(avo_archive *ar, enum stmt_id id, sqlite3_stmt **ret, char *err, size_t errlen)
{
    if (!ar->stmts[id]) {
        int rc = sqlite3_prepare_v3(ar->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
                                    &ar->stmts[id], NULL);
        if (rc != SQLITE_OK)
            return sql_error(ar->db, rc, err, errlen, "prepare statement");
    }
    *ret = ar->stmts[id];
    return 0;
}

/* Reset a statement and drop its bindings; tolerates NULL. */
static void release(sqlite3_stmt *st)
{
    if (st) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
}

/* Step a statement that returns no rows, then release it.  `what` names the
 * operation in the error message. */
static int step_done(avo_archive *ar, sqlite3_stmt *st, char *err, size_t errlen, const char *what)
{
    int rc = sqlite3_step(st);
    int ret = 0;
    if (rc != SQLITE_DONE)
        ret = sql_error(ar->db, rc, err, errlen, what);
    release(st);
    return ret;
}

/* Run one cached no-row statement by id. */
static int exec_cached(avo_archive *ar, enum stmt_id id, char *err, size_t errlen, const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(ar, id, &st, err, errlen);
    if (rc < 0)
        return rc;
    return step_done(ar, st, err, errlen, what);
}

static int tx_begin(avo_archive *ar, char *err, size_t errlen)
{
    return exec_cached(ar, ST_BEGIN, err, errlen, "begin transaction");
}

/* Commit; on failure the transaction is rolled back and the error returned. */
static int tx_commit(avo_archive *ar, char *err, size_t errlen)
{
    int rc = exec_cached(ar, ST_COMMIT, err, errlen, "commit");
    if (rc < 0 && !sqlite3_get_autocommit(ar->db))
        sqlite3_exec(ar->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Roll back the open transaction, if any; keeps the caller's error text. */
static void tx_rollback(avo_archive *ar)
{
    if (sqlite3_get_autocommit(ar->db))
        return;
    sqlite3_stmt *st = NULL;
    if (stmt_get(ar, ST_ROLLBACK, &st, NULL, 0) == 0 && sqlite3_step(st) == SQLITE_DONE) {
        release(st);
        return;
    }
    release(st);
    sqlite3_exec(ar->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Bind text or NULL. The text must outlive the statement's next release(). */
static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

/* ---------------------------------------------------------------- opening */

/*
 * Read the schema version and the number of schema objects in one statement,
 * hence one snapshot: read separately, another process's migration could
 * commit in between and make a fresh file look like a foreign database.
 * ret_objects may be NULL.
 */
static int read_version(sqlite3 *db, int *ret_version, int *ret_objects, char *err, size_t errlen,
                        const char *path)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT (SELECT user_version FROM pragma_user_version),"
                                " (SELECT count(*) FROM sqlite_schema)",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *ret_version = sqlite3_column_int(st, 0);
            if (ret_objects)
                *ret_objects = sqlite3_column_int(st, 1);
            rc = SQLITE_OK;
        }
    }
    int out = 0;
    if (rc != SQLITE_OK) {
        char what[512];
        snprintf(what, sizeof what, "cannot read archive '%s'", path);
        out = sql_error(db, rc, err, errlen, what);
    }
    sqlite3_finalize(st);
    return out;
}

/*
 * Switch to WAL and set the per-connection pragmas.  Done only after the
 * version check, because switching to WAL rewrites the file header.  The
 * switch needs an exclusive lock and SQLite answers SQLITE_BUSY at once,
 * without the busy handler, when other openers of a fresh file hold shared
 * locks (waiting could deadlock), so it is retried here for up to
 * BUSY_TIMEOUT_MS.
 */
static int configure_connection(avo_archive *ar, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
    for (int waited = 0; rc == SQLITE_OK || rc == SQLITE_BUSY; waited += 10) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_BUSY || waited >= BUSY_TIMEOUT_MS)
            break;
        sqlite3_reset(st);
        sqlite3_sleep(10);
    }
    if (rc != SQLITE_ROW) {
        int out = sql_error(ar->db, rc, err, errlen, "enable WAL");
        sqlite3_finalize(st);
        return out;
    }
    const char *mode = (const char *)sqlite3_column_text(st, 0);
    int ok = mode && (strcmp(mode, "wal") == 0 || strcmp(mode, "memory") == 0);
    if (!ok)
        avo_error(err, errlen, AVO_ESQL, "archive '%s' cannot use WAL (journal mode is %s)",
                  ar->path, mode ? mode : "unknown");
    sqlite3_finalize(st);
    if (!ok)
        return AVO_ESQL;

    rc = sqlite3_exec(ar->db, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;", NULL, NULL,
                      NULL);
    if (rc != SQLITE_OK)
        return sql_error(ar->db, rc, err, errlen, "set pragmas");
    return 0;
}

/*
 * One migration step in its own BEGIN IMMEDIATE transaction: re-read the
 * version inside the transaction (another process may have migrated since
 * we looked), apply the next step and bump user_version with it.  *ret_done
 * is set once the file is current.
 */
static int migrate_step(avo_archive *ar, int *ret_done, char *err, size_t errlen)
{
    int rc = tx_begin(ar, err, errlen);
    if (rc < 0)
        return rc;
    int version = 0;
    rc = read_version(ar->db, &version, NULL, err, errlen, ar->path);
    if (rc < 0)
        goto fail;
    if (version >= MIGRATION_COUNT) {
        *ret_done = 1;
        return tx_commit(ar, err, errlen);
    }

    int next = version + 1;
    rc = sqlite3_exec(ar->db, migrations[next], NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        char what[128];
        snprintf(what, sizeof what, "migrate archive to schema version %d", next);
        rc = sql_error(ar->db, rc, err, errlen, what);
        goto fail;
    }
    /* PRAGMA takes no parameters; `next` is our own integer. */
    char bump[64];
    snprintf(bump, sizeof bump, "PRAGMA user_version = %d", next);
    rc = sqlite3_exec(ar->db, bump, NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        rc = sql_error(ar->db, rc, err, errlen, "set schema version");
        goto fail;
    }
    return tx_commit(ar, err, errlen);

fail:
    tx_rollback(ar);
    return rc;
}

/* Apply migration steps until the file is at AVO_ARCHIVE_SCHEMA_VERSION. */
static int migrate(avo_archive *ar, char *err, size_t errlen)
{
    int done = 0;
    while (!done) {
        int rc = migrate_step(ar, &done, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/*
 * Open or create the archive at path.  The version is checked before
 * anything writes, so a file from a newer avo (or a foreign database) is
 * closed exactly as found.  On failure *ret is NULL and err says why.
 */
int avo_archive_open(avo_archive **ret, const char *path, char *err, size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "no place to return the archive");
    *ret = NULL;
    if (!path || !*path)
        return avo_error(err, errlen, AVO_EINVAL, "no archive path");

    avo_archive *ar = calloc(1, sizeof *ar);
    if (!ar)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    ar->path = strdup(path);
    if (!ar->path) {
        avo_archive_free(ar);
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }

    int rc = sqlite3_open_v2(path, &ar->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        char what[512];
        snprintf(what, sizeof what, "cannot open archive '%s'", path);
        rc = sql_error(ar->db, rc, err, errlen, what);
        goto fail;
    }
    sqlite3_busy_timeout(ar->db, BUSY_TIMEOUT_MS);

    int version = 0, objects = 0;
    rc = read_version(ar->db, &version, &objects, err, errlen, path);
    if (rc < 0)
        goto fail;
    if (version > AVO_ARCHIVE_SCHEMA_VERSION) {
        rc = avo_error(err, errlen, AVO_ESCHEMA,
                       "archive '%s' has schema version %d but this avo knows up to %d;"
                       " upgrade avo",
                       path, version, AVO_ARCHIVE_SCHEMA_VERSION);
        goto fail;
    }
    if (version == 0 && objects > 0) {
        rc = avo_error(err, errlen, AVO_EINVAL,
                       "'%s' is not an avo archive (it has tables but no schema version)", path);
        goto fail;
    }
    ar->opened_version = version;

    rc = configure_connection(ar, err, errlen);
    if (rc < 0)
        goto fail;
    rc = migrate(ar, err, errlen);
    if (rc < 0)
        goto fail;

    *ret = ar;
    return 0;

fail:
    avo_archive_free(ar);
    return rc;
}

/* Finalize every cached statement and close; accepts NULL and an archive
 * whose open failed half way. */
void avo_archive_free(avo_archive *ar)
{
    if (!ar)
        return;
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(ar->stmts[i]);
    sqlite3_close(ar->db);
    free(ar->path);
    free(ar);
}

int avo_archive_opened_version(const avo_archive *ar)
{
    return ar ? ar->opened_version : 0;
}

/* ------------------------------------------------------------------- runs */

int avo_archive_run_begin(avo_archive *ar, const avo_run_info *info, int64_t *ret_run_id, char *err,
                          size_t errlen)
{
    if (!ar || !info || !ret_run_id)
        return avo_error(err, errlen, AVO_EINVAL, "run_begin: missing argument");
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(ar, ST_RUN_INSERT, &st, err, errlen);
    if (rc < 0)
        return rc;
    bind_text(st, 1, info->script_path);
    bind_text(st, 2, info->script_source);
    bind_text(st, 3, info->config_json);
    /* INTEGER is signed 64-bit: seeds >= 2^63 are stored two's-complement. */
    sqlite3_bind_int64(st, 4, (sqlite3_int64)info->seed);
    bind_text(st, 5, info->engine_version);
    bind_text(st, 6, info->compiler);
    bind_text(st, 7, info->host);
    sqlite3_bind_double(st, 8, avo_now());
    rc = step_done(ar, st, err, errlen, "insert run");
    if (rc < 0)
        return rc;
    *ret_run_id = sqlite3_last_insert_rowid(ar->db);
    return 0;
}

int avo_archive_run_end(avo_archive *ar, int64_t run_id, const char *status, char *err,
                        size_t errlen)
{
    if (!ar || !status)
        return avo_error(err, errlen, AVO_EINVAL, "run_end: missing argument");
    if (strcmp(status, "done") != 0 && strcmp(status, "stopped") != 0 &&
        strcmp(status, "failed") != 0)
        return avo_error(err, errlen, AVO_EINVAL,
                         "run status '%s' is not one of done, stopped, failed", status);
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(ar, ST_RUN_END, &st, err, errlen);
    if (rc < 0)
        return rc;
    bind_text(st, 1, status);
    sqlite3_bind_double(st, 2, avo_now());
    sqlite3_bind_int64(st, 3, run_id);
    rc = step_done(ar, st, err, errlen, "end run");
    if (rc < 0)
        return rc;
    if (sqlite3_changes(ar->db) == 0)
        return avo_error(err, errlen, AVO_ENOTFOUND, "no run %lld", (long long)run_id);
    return 0;
}

/* ---------------------------------------------------------------- sources */

/* Hash text and insert it unless present; the caller owns any transaction. */
static int put_source(avo_archive *ar, const char *text, char hash[AVO_HASH_HEXLEN + 1], char *err,
                      size_t errlen)
{
    int rc = avo_hash_hex(text, strlen(text), hash);
    if (rc < 0)
        return avo_error(err, errlen, rc, "hash source: %s", avo_strerror(rc));
    sqlite3_stmt *st = NULL;
    rc = stmt_get(ar, ST_SOURCE_PUT, &st, err, errlen);
    if (rc < 0)
        return rc;
    bind_text(st, 1, hash);
    bind_text(st, 2, text);
    return step_done(ar, st, err, errlen, "insert source");
}

int avo_archive_put_source(avo_archive *ar, const char *text, char ret_hash[41], char *err,
                           size_t errlen)
{
    if (!ar || !text || !ret_hash)
        return avo_error(err, errlen, AVO_EINVAL, "put_source: missing argument");
    return put_source(ar, text, ret_hash, err, errlen);
}

/* Source text by hash; *ret_text is malloc'ed and owned by the caller. */
int avo_archive_source_get(avo_archive *ar, const char *hash, char **ret_text, char *err,
                           size_t errlen)
{
    if (!ar || !hash || !ret_text)
        return avo_error(err, errlen, AVO_EINVAL, "source_get: missing argument");
    *ret_text = NULL;
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(ar, ST_SOURCE_GET, &st, err, errlen);
    if (rc < 0)
        return rc;
    bind_text(st, 1, hash);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(st, 0);
        *ret_text = strdup(text ? text : "");
        rc = *ret_text ? 0 : avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    } else if (step == SQLITE_DONE) {
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no source %s", hash);
    } else {
        rc = sql_error(ar->db, step, err, errlen, "read source");
    }
    release(st);
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
    const char *knobs = info->knobs_json ? info->knobs_json : "{}";
    int rc = check_json_object(knobs, "knobs", err, errlen);
    if (rc < 0)
        return rc;

    rc = tx_begin(ar, err, errlen);
    if (rc < 0)
        return rc;

    char hash[AVO_HASH_HEXLEN + 1];
    rc = put_source(ar, info->source, hash, err, errlen);
    if (rc < 0)
        goto fail;

    sqlite3_stmt *st = NULL;
    rc = stmt_get(ar, ST_CAND_INSERT, &st, err, errlen);
    if (rc < 0)
        goto fail;
    sqlite3_bind_int64(st, 1, info->run_id);
    sqlite3_bind_int(st, 2, info->generation);
    bind_text(st, 3, info->operator_name);
    bind_text(st, 4, hash);
    bind_text(st, 5, knobs);
    bind_text(st, 6, info->note);
    bind_text(st, 7, info->key);
    sqlite3_bind_double(st, 8, avo_now());
    rc = step_done(ar, st, err, errlen, "insert candidate");
    if (rc < 0)
        goto fail;
    int64_t id = sqlite3_last_insert_rowid(ar->db);

    rc = stmt_get(ar, ST_EDGE_INSERT, &st, err, errlen);
    if (rc < 0)
        goto fail;
    for (size_t i = 0; i < info->n_parents; i++) {
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, info->parents[i].parent_id);
        bind_text(st, 3, info->parents[i].role);
        rc = step_done(ar, st, err, errlen, "insert parent edge");
        if (rc < 0)
            goto fail;
    }

    rc = tx_commit(ar, err, errlen);
    if (rc < 0)
        return rc;
    *ret_id = id;
    return 0;

fail:
    tx_rollback(ar);
    return rc;
}

/* Bind a JSON number as REAL, anything else (null, absent) as NULL. */
static void bind_json_real(sqlite3_stmt *st, int i, const json_t *v)
{
    if (json_is_number(v))
        sqlite3_bind_double(st, i, json_number_value(v));
    else
        sqlite3_bind_null(st, i);
}

/* Bind a JSON integer (or integral real) as INTEGER, anything else as NULL. */
static void bind_json_int(sqlite3_stmt *st, int i, const json_t *v)
{
    if (json_is_integer(v))
        sqlite3_bind_int64(st, i, json_integer_value(v));
    else if (json_is_real(v))
        sqlite3_bind_int64(st, i, (sqlite3_int64)json_real_value(v));
    else
        sqlite3_bind_null(st, i);
}

/* Insert one evaluations row from a protocol config object. */
static int insert_evaluation(avo_archive *ar, sqlite3_stmt *st, int64_t id, size_t index,
                             const json_t *config, char *err, size_t errlen)
{
    if (!json_is_object(config))
        return avo_error(err, errlen, AVO_EINVAL, "configs[%zu] is not an object", index);
    const char *name = json_string_value(json_object_get(config, "name"));
    if (!name)
        return avo_error(err, errlen, AVO_EINVAL, "configs[%zu] has no name", index);
    const json_t *correct = json_object_get(config, "correct");
    sqlite3_bind_int64(st, 1, id);
    bind_text(st, 2, name);
    /* booleans -> 0/1; a missing or null verdict counts as not correct */
    sqlite3_bind_int(st, 3,
                     json_is_true(correct) ||
                         (json_is_integer(correct) && json_integer_value(correct) != 0));
    bind_json_real(st, 4, json_object_get(config, "max_error"));
    bind_json_real(st, 5, json_object_get(config, "median_s"));
    bind_json_real(st, 6, json_object_get(config, "spread"));
    bind_json_int(st, 7, json_object_get(config, "samples"));
    bind_json_real(st, 8, json_object_get(config, "gflops"));
    bind_json_real(st, 9, json_object_get(config, "gbs"));
    bind_text(st, 10, json_string_value(json_object_get(config, "reason")));
    return step_done(ar, st, err, errlen, "insert evaluation");
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
    const char *status = json_string_value(json_object_get(result, "status"));
    if (!status)
        return avo_error(err, errlen, AVO_EINVAL, "result of candidate %lld has no status",
                         (long long)id);
    const json_t *configs = json_object_get(result, "configs");
    if (configs && !json_is_array(configs) && !json_is_null(configs))
        return avo_error(err, errlen, AVO_EINVAL, "result configs is not an array");

    /* The metadata column: everything except what has columns of its own. */
    json_t *meta = json_deep_copy(result);
    if (!meta)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    static const char *const own_columns[] = {"id", "status", "reason", "log", "configs"};
    for (size_t i = 0; i < sizeof own_columns / sizeof own_columns[0]; i++)
        json_object_del(meta, own_columns[i]);
    char *meta_text = json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(meta);
    if (!meta_text)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");

    int rc = tx_begin(ar, err, errlen);
    if (rc < 0)
        goto out;

    sqlite3_stmt *st = NULL;
    rc = stmt_get(ar, ST_CAND_FINISH, &st, err, errlen);
    if (rc < 0)
        goto fail;
    bind_text(st, 1, status);
    bind_text(st, 2, json_string_value(json_object_get(result, "reason")));
    bind_text(st, 3, json_string_value(json_object_get(result, "log")));
    sqlite3_bind_double(st, 4, score);
    bind_text(st, 5, meta_text);
    sqlite3_bind_double(st, 6, avo_now());
    sqlite3_bind_int64(st, 7, id);
    rc = step_done(ar, st, err, errlen, "update candidate");
    if (rc < 0)
        goto fail;
    if (sqlite3_changes(ar->db) == 0) {
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no candidate %lld", (long long)id);
        goto fail;
    }

    rc = stmt_get(ar, ST_EVAL_DELETE, &st, err, errlen);
    if (rc < 0)
        goto fail;
    sqlite3_bind_int64(st, 1, id);
    rc = step_done(ar, st, err, errlen, "clear evaluations");
    if (rc < 0)
        goto fail;

    rc = stmt_get(ar, ST_EVAL_INSERT, &st, err, errlen);
    if (rc < 0)
        goto fail;
    size_t i;
    const json_t *config;
    json_array_foreach(configs, i, config)
    {
        rc = insert_evaluation(ar, st, id, i, config, err, errlen);
        if (rc < 0) {
            release(st);
            goto fail;
        }
    }

    rc = tx_commit(ar, err, errlen);
    goto out;

fail:
    tx_rollback(ar);
out:
    free(meta_text);
    return rc;
}

/* ----------------------------------------------------------------- events */

int avo_archive_event(avo_archive *ar, int64_t run_id, const char *kind, const char *data_json,
                      char *err, size_t errlen)
{
    if (!ar || !kind)
        return avo_error(err, errlen, AVO_EINVAL, "event: missing argument");
    if (data_json) {
        json_error_t jerr;
        json_t *v = json_loads(data_json, JSON_DECODE_ANY, &jerr);
        if (!v)
            return avo_error(err, errlen, AVO_EINVAL, "event '%s' data is not JSON: %s", kind,
                             jerr.text);
        json_decref(v);
    }
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(ar, ST_EVENT_INSERT, &st, err, errlen);
    if (rc < 0)
        return rc;
    /* run_id 0: an event of the engine, not of a run */
    if (run_id > 0)
        sqlite3_bind_int64(st, 1, run_id);
    else
        sqlite3_bind_null(st, 1);
    sqlite3_bind_double(st, 2, avo_now());
    bind_text(st, 3, kind);
    bind_text(st, 4, data_json);
    return step_done(ar, st, err, errlen, "insert event");
}

/* ---------------------------------------------------------------- queries */

/*
 * A JSON string from column text.  Text that is not valid UTF-8 (a kernel
 * with a Latin-1 comment) comes back with every non-ASCII byte as '?' rather
 * than failing the whole query.  NULL only when out of memory.
 */
static json_t *text_json(const unsigned char *s, int n)
{
    json_t *v = json_stringn((const char *)s, (size_t)n);
    if (v)
        return v;
    char *copy = malloc((size_t)n + 1);
    if (!copy)
        return NULL;
    for (int i = 0; i < n; i++)
        copy[i] = s[i] < 0x80 ? (char)s[i] : '?';
    v = json_stringn(copy, (size_t)n);
    free(copy);
    return v;
}

/* Column i as JSON: null, integer, real or string.  NULL when out of memory. */
static json_t *column_json(sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
        return json_integer(sqlite3_column_int64(st, i));
    case SQLITE_FLOAT:
        return json_real(sqlite3_column_double(st, i));
    case SQLITE_NULL:
        return json_null();
    default: {
        const unsigned char *s = sqlite3_column_text(st, i);
        return s ? text_json(s, sqlite3_column_bytes(st, i)) : NULL;
    }
    }
}

/* Column i holding JSON text, parsed; NULL column -> null; text that does not
 * parse comes back as a plain string. */
static json_t *column_parsed(sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return json_null();
    const char *s = (const char *)sqlite3_column_text(st, i);
    json_t *v = s ? json_loads(s, JSON_DECODE_ANY, NULL) : NULL;
    return v ? v : column_json(st, i);
}

/* Set obj[key] = v (stolen); returns 1 on failure so callers can OR up. */
static int put(json_t *obj, const char *key, json_t *v)
{
    return !v || json_object_set_new(obj, key, v) != 0;
}

/* [{id, role}] of the parents of id, ordered by role then parent id. */
static int parents_json(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(ar, ST_CAND_PARENTS, &st, err, errlen);
    if (rc < 0)
        return rc;
    json_t *arr = json_array();
    int bad = !arr, step;
    sqlite3_bind_int64(st, 1, id);
    while (!bad && (step = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *edge = json_object();
        bad |=
            !edge || put(edge, "id", column_json(st, 0)) || put(edge, "role", column_json(st, 1));
        bad |= json_array_append_new(arr, edge) != 0;
    }
    if (!bad && step != SQLITE_DONE)
        rc = sql_error(ar->db, step, err, errlen, "read parents");
    else if (bad)
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    release(st);
    if (rc < 0) {
        json_decref(arr);
        return rc;
    }
    *ret = arr;
    return 0;
}

/* [ids] of the children of id, ascending. */
static int children_json(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(ar, ST_CAND_CHILDREN, &st, err, errlen);
    if (rc < 0)
        return rc;
    json_t *arr = json_array();
    int bad = !arr, step;
    sqlite3_bind_int64(st, 1, id);
    while (!bad && (step = sqlite3_step(st)) == SQLITE_ROW)
        bad |= json_array_append_new(arr, column_json(st, 0)) != 0;
    if (!bad && step != SQLITE_DONE)
        rc = sql_error(ar->db, step, err, errlen, "read children");
    else if (bad)
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    release(st);
    if (rc < 0) {
        json_decref(arr);
        return rc;
    }
    *ret = arr;
    return 0;
}

/* The protocol's config objects for id, in the order they were recorded. */
static int configs_json(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    static const char *const keys[] = {"name",    "correct", "max_error", "median_s", "spread",
                                       "samples", "gflops",  "gbs",       "reason"};
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(ar, ST_CAND_CONFIGS, &st, err, errlen);
    if (rc < 0)
        return rc;
    json_t *arr = json_array();
    int bad = !arr, step;
    sqlite3_bind_int64(st, 1, id);
    while (!bad && (step = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *c = json_object();
        bad |= !c;
        for (int k = 0; !bad && k < (int)(sizeof keys / sizeof keys[0]); k++) {
            json_t *v = k == 1 ? json_boolean(sqlite3_column_int(st, k)) : column_json(st, k);
            bad |= put(c, keys[k], v);
        }
        bad |= json_array_append_new(arr, c) != 0;
    }
    if (!bad && step != SQLITE_DONE)
        rc = sql_error(ar->db, step, err, errlen, "read evaluations");
    else if (bad)
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    release(st);
    if (rc < 0) {
        json_decref(arr);
        return rc;
    }
    *ret = arr;
    return 0;
}

/*
 * The row of candidate id as an object of its columns (knobs and result
 * parsed), without parents, children or configs.  AVO_ENOTFOUND if absent.
 */
static int candidate_row(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    static const char *const keys[] = {
        [CAND_ID] = "id",
        [CAND_RUN_ID] = "run_id",
        [CAND_GENERATION] = "generation",
        [CAND_OPERATOR] = "operator",
        [CAND_STATUS] = "status",
        [CAND_REASON] = "reason",
        [CAND_LOG] = "log",
        [CAND_SCORE] = "score",
        [CAND_SOURCE_HASH] = "source_hash",
        [CAND_KNOBS] = "knobs",
        [CAND_NOTE] = "note",
        [CAND_KEY] = "key",
        [CAND_CREATED_AT] = "created_at",
        [CAND_EVALUATED_AT] = "evaluated_at",
        [CAND_RESULT] = "result",
    };
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(ar, ST_CAND_GET, &st, err, errlen);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    int step = sqlite3_step(st);
    json_t *obj = NULL;
    if (step == SQLITE_ROW) {
        obj = json_object();
        int bad = !obj;
        for (int k = 0; !bad && k < (int)(sizeof keys / sizeof keys[0]); k++) {
            int parsed = k == CAND_KNOBS || k == CAND_RESULT;
            bad |= put(obj, keys[k], parsed ? column_parsed(st, k) : column_json(st, k));
        }
        if (bad)
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    } else if (step == SQLITE_DONE) {
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no candidate %lld", (long long)id);
    } else {
        rc = sql_error(ar->db, step, err, errlen, "read candidate");
    }
    release(st);
    if (rc < 0) {
        json_decref(obj);
        return rc;
    }
    *ret = obj;
    return 0;
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

    if ((rc = parents_json(ar, id, &v, err, errlen)) < 0 || put(obj, "parents", v))
        goto fail;
    if ((rc = children_json(ar, id, &v, err, errlen)) < 0 || put(obj, "children", v))
        goto fail;
    if ((rc = configs_json(ar, id, &v, err, errlen)) < 0 || put(obj, "configs", v))
        goto fail;
    if (with_source) {
        char *text = NULL;
        const char *hash = json_string_value(json_object_get(obj, "source_hash"));
        rc = avo_archive_source_get(ar, hash ? hash : "", &text, err, errlen);
        if (rc < 0)
            goto fail;
        v = text_json((const unsigned char *)text, (int)strlen(text));
        free(text);
        if (put(obj, "source", v))
            goto fail;
    }
    *ret = obj;
    return 0;

fail:
    json_decref(obj);
    return rc < 0 ? rc : avo_error(err, errlen, AVO_ENOMEM, "out of memory");
}

/* Step a statement that yields at most one id; *ret_id = 0 when none. */
static int single_id(avo_archive *ar, sqlite3_stmt *st, int64_t *ret_id, char *err, size_t errlen,
                     const char *what)
{
    int step = sqlite3_step(st);
    int rc = 0;
    *ret_id = 0;
    if (step == SQLITE_ROW)
        *ret_id = sqlite3_column_int64(st, 0);
    else if (step != SQLITE_DONE)
        rc = sql_error(ar->db, step, err, errlen, what);
    release(st);
    return rc;
}

int avo_archive_candidate_by_key(avo_archive *ar, const char *key, json_t **ret, char *err,
                                 size_t errlen)
{
    if (!ar || !key || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "candidate_by_key: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(ar, ST_CAND_BY_KEY, &st, err, errlen);
    if (rc < 0)
        return rc;
    bind_text(st, 1, key);
    int64_t id;
    rc = single_id(ar, st, &id, err, errlen, "find candidate by key");
    if (rc < 0)
        return rc;
    if (!id)
        return avo_error(err, errlen, AVO_ENOTFOUND, "no finished candidate with key %s", key);
    return avo_archive_candidate_get(ar, id, 0, ret, err, errlen);
}

/* run_id, or the latest run's id when run_id is 0; AVO_ENOTFOUND if no runs. */
static int resolve_run(avo_archive *ar, int64_t run_id, int64_t *ret, char *err, size_t errlen)
{
    if (run_id) {
        *ret = run_id;
        return 0;
    }
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(ar, ST_RUN_LATEST, &st, err, errlen);
    if (rc < 0)
        return rc;
    rc = single_id(ar, st, ret, err, errlen, "find latest run");
    if (rc < 0)
        return rc;
    if (!*ret)
        return avo_error(err, errlen, AVO_ENOTFOUND, "the archive has no runs");
    return 0;
}

int avo_archive_best(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "best: missing argument");
    *ret = NULL;
    int rc = resolve_run(ar, run_id, &run_id, err, errlen);
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = NULL;
    rc = stmt_get(ar, ST_BEST, &st, err, errlen);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int64_t id;
    rc = single_id(ar, st, &id, err, errlen, "find best candidate");
    if (rc < 0)
        return rc;
    if (!id)
        return avo_error(err, errlen, AVO_ENOTFOUND, "run %lld has no correct candidate",
                         (long long)run_id);
    return avo_archive_candidate_get(ar, id, 0, ret, err, errlen);
}

int avo_archive_run_get(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    static const char *const keys[] = {"id",         "script_path",    "script_source", "config",
                                       "seed",       "engine_version", "compiler",      "host",
                                       "started_at", "ended_at",       "status"};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "run_get: missing argument");
    *ret = NULL;
    int rc = resolve_run(ar, run_id, &run_id, err, errlen);
    if (rc < 0)
        return rc;
    sqlite3_stmt *st = NULL;
    rc = stmt_get(ar, ST_RUN_GET, &st, err, errlen);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st);
    json_t *obj = NULL;
    if (step == SQLITE_ROW) {
        obj = json_object();
        int bad = !obj;
        for (int k = 0; !bad && k < (int)(sizeof keys / sizeof keys[0]); k++)
            bad |= put(obj, keys[k], k == 3 ? column_parsed(st, k) : column_json(st, k));
        if (bad)
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    } else if (step == SQLITE_DONE) {
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no run %lld", (long long)run_id);
    } else {
        rc = sql_error(ar->db, step, err, errlen, "read run");
    }
    release(st);
    if (rc < 0) {
        json_decref(obj);
        return rc;
    }
    *ret = obj;
    return 0;
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
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
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
            int bad = !node || put(node, "id", json_integer(id)) ||
                      put(node, "parents", json_incref(parents));
            for (size_t k = 0; !bad && k < sizeof node_keys / sizeof node_keys[0]; k++)
                bad |= put(node, node_keys[k], json_incref(json_object_get(row, node_keys[k])));
            json_decref(row);
            bad |= json_array_append_new(nodes, node) != 0;
            if (bad) {
                json_decref(parents);
                rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
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
                rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
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
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
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
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
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

/* ------------------------------------------------------- listing queries */

/* Every id a one-column id statement yields, as a JSON array; releases st. */
static int id_list(avo_archive *ar, sqlite3_stmt *st, json_t **ret, char *err, size_t errlen,
                   const char *what)
{
    json_t *ids = json_array();
    int rc = ids ? 0 : avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    int step = SQLITE_DONE;
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW)
        if (json_array_append_new(ids, json_integer(sqlite3_column_int64(st, 0))) != 0)
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    if (rc == 0 && step != SQLITE_DONE)
        rc = sql_error(ar->db, step, err, errlen, what);
    release(st);
    if (rc < 0) {
        json_decref(ids);
        return rc;
    }
    *ret = ids;
    return 0;
}

/*
 * Add the candidate counts and the best candidate of run `id` to its run
 * object: candidates, ok, failed (finished but not ok), best_id and
 * best_score (null when the run has no ok candidate).
 */
static int run_add_summary(avo_archive *ar, json_t *run, int64_t id, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_get(ar, ST_RUN_COUNTS, &st, err, errlen);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    int step = sqlite3_step(st), bad = 0;
    if (step == SQLITE_ROW) {
        bad |= put(run, "candidates", column_json(st, 0));
        bad |= put(run, "ok", column_json(st, 1));
        bad |= put(run, "failed", column_json(st, 2));
    } else {
        rc = sql_error(ar->db, step, err, errlen, "count candidates");
    }
    release(st);
    if (rc < 0)
        return rc;

    int64_t best = 0;
    rc = stmt_get(ar, ST_BEST, &st, err, errlen);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    rc = single_id(ar, st, &best, err, errlen, "find best candidate");
    if (rc < 0)
        return rc;
    json_t *best_score = json_null();
    if (best) {
        json_t *row = NULL;
        rc = candidate_row(ar, best, &row, err, errlen);
        if (rc < 0)
            return rc;
        json_decref(best_score);
        best_score = json_incref(json_object_get(row, "score"));
        json_decref(row);
    }
    bad |= put(run, "best_id", best ? json_integer(best) : json_null());
    bad |= put(run, "best_score", best_score);
    return bad ? avo_error(err, errlen, AVO_ENOMEM, "out of memory") : 0;
}

/*
 * Every run, oldest first: the avo_archive_run_get() object of each plus
 * its summary (run_add_summary).  An archive without runs gives [].
 */
int avo_archive_runs(avo_archive *ar, json_t **ret, char *err, size_t errlen)
{
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "runs: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    json_t *ids = NULL, *runs = NULL;
    int rc = stmt_get(ar, ST_RUN_IDS, &st, err, errlen);
    if (rc == 0)
        rc = id_list(ar, st, &ids, err, errlen, "list runs");
    if (rc < 0)
        return rc;
    runs = json_array();
    if (!runs)
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id)
    {
        json_t *run = NULL;
        if (rc == 0)
            rc = avo_archive_run_get(ar, json_integer_value(id), &run, err, errlen);
        if (rc == 0)
            rc = run_add_summary(ar, run, json_integer_value(id), err, errlen);
        if (rc == 0 && json_array_append_new(runs, run) != 0)
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        else if (rc < 0)
            json_decref(run);
    }
    json_decref(ids);
    if (rc < 0) {
        json_decref(runs);
        return rc;
    }
    *ret = runs;
    return 0;
}

/*
 * Every candidate of run_id (0: of every run) in id order, each the full
 * avo_archive_candidate_get() object.  A run_id that names no run is
 * AVO_ENOTFOUND; a run without candidates gives [].
 */
int avo_archive_candidates(avo_archive *ar, int64_t run_id, int with_source, json_t **ret,
                           char *err, size_t errlen)
{
    if (!ar || !ret || run_id < 0)
        return avo_error(err, errlen, AVO_EINVAL, "candidates: bad argument");
    *ret = NULL;
    json_t *ids = NULL, *all = NULL;
    int rc = 0;
    if (run_id) {
        json_t *run = NULL;
        rc = avo_archive_run_get(ar, run_id, &run, err, errlen);
        json_decref(run);
        if (rc < 0)
            return rc;
    }
    sqlite3_stmt *st = NULL;
    rc = stmt_get(ar, ST_CAND_IDS, &st, err, errlen);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    rc = id_list(ar, st, &ids, err, errlen, "list candidates");
    if (rc < 0)
        return rc;
    all = json_array();
    if (!all)
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id)
    {
        json_t *c = NULL;
        if (rc == 0)
            rc = avo_archive_candidate_get(ar, json_integer_value(id), with_source, &c, err,
                                           errlen);
        if (rc == 0 && json_array_append_new(all, c) != 0)
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    json_decref(ids);
    if (rc < 0) {
        json_decref(all);
        return rc;
    }
    *ret = all;
    return 0;
}

/* 1 if table `name` exists, 0 if not, or a negative code. */
static int table_exists(avo_archive *ar, const char *name, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db,
                                "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sql_error(ar->db, rc, err, errlen, "read schema");
    bind_text(st, 1, name);
    int step = sqlite3_step(st);
    rc = step == SQLITE_ROW ? 1 : step == SQLITE_DONE ? 0 : sql_error(ar->db, step, err, errlen,
                                                                       "read schema");
    sqlite3_finalize(st);
    return rc;
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
    json_t *out = json_object();
    if (!out)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    int rc = table_exists(ar, "llm_calls", err, errlen);
    if (rc <= 0) {
        if (rc == 0 && !put(out, "calls", json_integer(0))) {
            *ret = out;
            return 0;
        }
        json_decref(out);
        return rc < 0 ? rc : avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }

    /* Which of the known columns exist. */
    int have[sizeof summed / sizeof summed[0]] = {0}, have_run = 0;
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(ar->db, "SELECT name FROM pragma_table_info('llm_calls')", -1, &st,
                            NULL);
    if (rc != SQLITE_OK) {
        json_decref(out);
        return sql_error(ar->db, rc, err, errlen, "read llm_calls columns");
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *col = (const char *)sqlite3_column_text(st, 0);
        for (size_t k = 0; col && k < sizeof summed / sizeof summed[0]; k++)
            have[k] |= strcmp(col, summed[k]) == 0;
        have_run |= col && strcmp(col, "run_id") == 0;
    }
    sqlite3_finalize(st);

    /* Column names come from our own list, never from the file. */
    char sql[512] = "SELECT count(*)";
    for (size_t k = 0; k < sizeof summed / sizeof summed[0]; k++)
        if (have[k])
            snprintf(sql + strlen(sql), sizeof sql - strlen(sql), ", total(\"%s\")", summed[k]);
    snprintf(sql + strlen(sql), sizeof sql - strlen(sql), " FROM llm_calls%s",
             have_run && run_id ? " WHERE run_id = ?" : "");
    rc = sqlite3_prepare_v2(ar->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        json_decref(out);
        return sql_error(ar->db, rc, err, errlen, "read llm_calls");
    }
    if (have_run && run_id)
        sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st), bad = 0;
    if (step == SQLITE_ROW) {
        bad |= put(out, "calls", column_json(st, 0));
        int col = 1;
        for (size_t k = 0; k < sizeof summed / sizeof summed[0]; k++)
            if (have[k])
                bad |= put(out, summed[k], column_json(st, col++));
        rc = bad ? avo_error(err, errlen, AVO_ENOMEM, "out of memory") : 0;
    } else {
        rc = sql_error(ar->db, step, err, errlen, "read llm_calls");
    }
    sqlite3_finalize(st);
    if (rc < 0) {
        json_decref(out);
        return rc;
    }
    *ret = out;
    return 0;
}

/*
 * Events of run_id of the given kind (NULL: every kind), oldest first, as
 * [{id, t, kind, data}] with data parsed back from JSON.  The statement is
 * prepared per call: events are read by commands, not on the hot path.
 */
int avo_archive_events(avo_archive *ar, int64_t run_id, const char *kind, json_t **ret,
                       char *err, size_t errlen)
{
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "events: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db,
                                "SELECT id, t, kind, data FROM events WHERE run_id = ?1"
                                " AND (?2 IS NULL OR kind = ?2) ORDER BY id",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sql_error(ar->db, rc, err, errlen, "read events");
    sqlite3_bind_int64(st, 1, run_id);
    bind_text(st, 2, kind);
    json_t *all = json_array();
    int step;
    rc = all ? 0 : avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *e = json_object();
        if (!e || put(e, "id", json_integer(sqlite3_column_int64(st, 0))) ||
            put(e, "t", json_real(sqlite3_column_double(st, 1))) ||
            put(e, "kind", column_json(st, 2)) || put(e, "data", column_parsed(st, 3)) ||
            json_array_append_new(all, e) != 0) {
            json_decref(e);
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        }
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = sql_error(ar->db, step, err, errlen, "read events");
    sqlite3_finalize(st);
    if (rc < 0) {
        json_decref(all);
        return rc;
    }
    *ret = all;
    return 0;
}

/*
 * Reopen a finished or interrupted run for resumption: status back to
 * "running", ended_at cleared.
 */
int avo_archive_run_reopen(avo_archive *ar, int64_t run_id, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db,
                                "UPDATE runs SET status = 'running', ended_at = NULL WHERE id = ?",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sql_error(ar->db, rc, err, errlen, "reopen run");
    sqlite3_bind_int64(st, 1, run_id);
    rc = sqlite3_step(st);
    rc = rc == SQLITE_DONE ? 0 : sql_error(ar->db, rc, err, errlen, "reopen run");
    sqlite3_finalize(st);
    if (rc == 0 && sqlite3_changes(ar->db) == 0)
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no run %lld", (long long)run_id);
    return rc;
}

/*
 * Start a rebench evaluation set of run_id; `config_json` (may be NULL)
 * records how it was measured.  Writes the set's id into *ret_id.
 */
int avo_archive_rebench_begin(avo_archive *ar, int64_t run_id, const char *config_json,
                              int64_t *ret_id, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db,
                                "INSERT INTO rebench_sets (run_id, t, config) VALUES (?, ?, ?)", -1,
                                &st, NULL);
    if (rc != SQLITE_OK)
        return sql_error(ar->db, rc, err, errlen, "start rebench set");
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_double(st, 2, avo_now());
    bind_text(st, 3, config_json);
    rc = sqlite3_step(st);
    rc = rc == SQLITE_DONE ? 0 : sql_error(ar->db, rc, err, errlen, "start rebench set");
    sqlite3_finalize(st);
    if (rc == 0)
        *ret_id = sqlite3_last_insert_rowid(ar->db);
    return rc;
}

/* Record one timing round of one candidate in rebench set set_id. */
int avo_archive_rebench_add(avo_archive *ar, int64_t set_id, int64_t candidate_id, int round,
                            double score, const char *result_json, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db,
                                "INSERT OR REPLACE INTO rebench_results (set_id, candidate_id, round,"
                                " score, result) VALUES (?, ?, ?, ?, ?)",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sql_error(ar->db, rc, err, errlen, "record rebench result");
    sqlite3_bind_int64(st, 1, set_id);
    sqlite3_bind_int64(st, 2, candidate_id);
    sqlite3_bind_int(st, 3, round);
    sqlite3_bind_double(st, 4, score);
    bind_text(st, 5, result_json);
    rc = sqlite3_step(st);
    rc = rc == SQLITE_DONE ? 0 : sql_error(ar->db, rc, err, errlen, "record rebench result");
    sqlite3_finalize(st);
    return rc;
}

/* ------------------------------------------------------------ LLM calls */

static const char *opt_string(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static double opt_number(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : 0;
}

/*
 * Insert one row of llm_calls from `call` (see archive.h).  Request and
 * response are serialised here, compact with sorted keys, so equal requests
 * are equal text.  Single statement: implicit transaction.
 */
int avo_archive_llm_call_add(avo_archive *ar, int64_t run_id, const json_t *call,
                             int64_t *ret_id, char *err, size_t errlen)
{
    if (!ar || !json_is_object(call))
        return avo_error(err, errlen, AVO_EINVAL, "llm_call_add: missing argument");
    const char *provider = opt_string(call, "provider");
    const char *hash = opt_string(call, "request_hash");
    const char *status = opt_string(call, "status");
    if (!provider || !hash || !status)
        return avo_error(err, errlen, AVO_EINVAL,
                         "llm call needs provider, request_hash and status strings");
    const size_t flags = JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY;
    const json_t *req = json_object_get(call, "request");
    const json_t *resp = json_object_get(call, "response");
    char *request = json_dumps(req ? req : json_null(), flags);
    char *response = resp && !json_is_null(resp) ? json_dumps(resp, flags) : NULL;
    if (!request || (resp && !json_is_null(resp) && !response)) {
        free(request);
        free(response);
        return avo_error(err, errlen, AVO_EINVAL, "llm call: request or response not encodable");
    }
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db,
                                "INSERT INTO llm_calls (run_id, t, provider, model, request_hash,"
                                " request, response, status, error, input_tokens, output_tokens,"
                                " cost_usd, latency_s, attempts)"
                                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) {
        free(request);
        free(response);
        return sql_error(ar->db, rc, err, errlen, "record llm call");
    }
    if (run_id > 0)
        sqlite3_bind_int64(st, 1, run_id);
    else
        sqlite3_bind_null(st, 1);
    sqlite3_bind_double(st, 2, avo_now());
    bind_text(st, 3, provider);
    bind_text(st, 4, opt_string(call, "model"));
    bind_text(st, 5, hash);
    bind_text(st, 6, request);
    bind_text(st, 7, response);
    bind_text(st, 8, status);
    bind_text(st, 9, opt_string(call, "error"));
    sqlite3_bind_int64(st, 10, (sqlite3_int64)opt_number(call, "input_tokens"));
    sqlite3_bind_int64(st, 11, (sqlite3_int64)opt_number(call, "output_tokens"));
    sqlite3_bind_double(st, 12, opt_number(call, "cost_usd"));
    sqlite3_bind_double(st, 13, opt_number(call, "latency_s"));
    const json_t *attempts = json_object_get(call, "attempts");
    sqlite3_bind_int64(st, 14, json_is_integer(attempts) ? json_integer_value(attempts) : 1);
    rc = sqlite3_step(st);
    rc = rc == SQLITE_DONE ? 0 : sql_error(ar->db, rc, err, errlen, "record llm call");
    sqlite3_finalize(st);
    free(request);
    free(response);
    if (rc == 0 && ret_id)
        *ret_id = sqlite3_last_insert_rowid(ar->db);
    return rc;
}

int avo_archive_llm_calls(avo_archive *ar, int64_t run_id, json_t **ret, char *err,
                          size_t errlen)
{
    static const char *const keys[] = {"id",           "run_id",       "t",           "provider",
                                       "model",        "request_hash", "request",     "response",
                                       "status",       "error",        "input_tokens",
                                       "output_tokens", "cost_usd",    "latency_s",   "attempts"};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "llm_calls: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db,
                                "SELECT id, run_id, t, provider, model, request_hash, request,"
                                " response, status, error, input_tokens, output_tokens, cost_usd,"
                                " latency_s, attempts FROM llm_calls"
                                " WHERE ?1 = 0 OR run_id = ?1 ORDER BY id",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sql_error(ar->db, rc, err, errlen, "read llm calls");
    sqlite3_bind_int64(st, 1, run_id);
    json_t *all = json_array();
    int step = SQLITE_DONE;
    rc = all ? 0 : avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *row = json_object();
        int bad = !row;
        for (int k = 0; !bad && k < (int)(sizeof keys / sizeof keys[0]); k++)
            bad |= put(row, keys[k], k == 6 || k == 7 ? column_parsed(st, k) : column_json(st, k));
        if (bad || json_array_append_new(all, row) != 0) {
            if (!bad)
                row = NULL; /* append_new consumed it */
            json_decref(row);
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        }
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = sql_error(ar->db, step, err, errlen, "read llm calls");
    sqlite3_finalize(st);
    if (rc < 0) {
        json_decref(all);
        return rc;
    }
    *ret = all;
    return 0;
}

/* --------------------------------------------------------------- attempts */

/*
 * Insert one attempt (see archive.h) and its source in one transaction.
 * Knobs and configs are stored as compact JSON text with sorted keys.
 */
int avo_archive_attempt_add(avo_archive *ar, int64_t run_id, const json_t *attempt,
                            int64_t *ret_id, char *err, size_t errlen)
{
    if (!ar || !json_is_object(attempt))
        return avo_error(err, errlen, AVO_EINVAL, "attempt_add: missing argument");
    const char *source = opt_string(attempt, "source");
    const char *lineage = opt_string(attempt, "lineage");
    const char *status = opt_string(attempt, "status");
    const char *outcome = opt_string(attempt, "outcome");
    const json_t *step = json_object_get(attempt, "step");
    if (!source || !lineage || !status || !outcome || !json_is_integer(step))
        return avo_error(err, errlen, AVO_EINVAL,
                         "attempt needs source, lineage, status and outcome strings and an"
                         " integer step");
    const json_t *knobs = json_object_get(attempt, "knobs");
    if (knobs && !json_is_null(knobs) && !json_is_object(knobs))
        return avo_error(err, errlen, AVO_EINVAL, "attempt knobs must be an object");
    const json_t *configs = json_object_get(attempt, "configs");
    const size_t flags = JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY;
    char *knobs_text = knobs && json_is_object(knobs) ? json_dumps(knobs, flags) : strdup("{}");
    char *configs_text = configs && !json_is_null(configs) ? json_dumps(configs, flags) : NULL;
    int rc = 0;
    if (!knobs_text || (configs && !json_is_null(configs) && !configs_text)) {
        rc = avo_error(err, errlen, AVO_ENOMEM, "attempt: cannot encode knobs or configs");
        goto out;
    }
    rc = tx_begin(ar, err, errlen);
    if (rc < 0)
        goto out;
    char hash[AVO_HASH_HEXLEN + 1];
    rc = put_source(ar, source, hash, err, errlen);
    if (rc < 0)
        goto fail;
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(ar->db,
                            "INSERT INTO attempts (run_id, step, lineage, t, source_hash, knobs,"
                            " status, score, outcome, reason, candidate_id, configs)"
                            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            -1, &st, NULL);
    if (rc != SQLITE_OK) {
        rc = sql_error(ar->db, rc, err, errlen, "record attempt");
        goto fail;
    }
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int64(st, 2, json_integer_value(step));
    bind_text(st, 3, lineage);
    sqlite3_bind_double(st, 4, avo_now());
    bind_text(st, 5, hash);
    bind_text(st, 6, knobs_text);
    bind_text(st, 7, status);
    bind_json_real(st, 8, json_object_get(attempt, "score"));
    bind_text(st, 9, outcome);
    bind_text(st, 10, opt_string(attempt, "reason"));
    bind_json_int(st, 11, json_object_get(attempt, "candidate_id"));
    bind_text(st, 12, configs_text);
    rc = sqlite3_step(st);
    rc = rc == SQLITE_DONE ? 0 : sql_error(ar->db, rc, err, errlen, "record attempt");
    sqlite3_finalize(st);
    if (rc < 0)
        goto fail;
    int64_t id = sqlite3_last_insert_rowid(ar->db);
    rc = tx_commit(ar, err, errlen);
    if (rc == 0 && ret_id)
        *ret_id = id;
    goto out;
fail:
    tx_rollback(ar);
out:
    free(knobs_text);
    free(configs_text);
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
    int rc = sqlite3_prepare_v2(ar->db,
                                "UPDATE attempts SET outcome = ?1, reason = coalesce(?2, reason),"
                                " candidate_id = coalesce(?3, candidate_id) WHERE id = ?4",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sql_error(ar->db, rc, err, errlen, "update attempt");
    bind_text(st, 1, outcome);
    bind_text(st, 2, reason);
    if (candidate_id > 0)
        sqlite3_bind_int64(st, 3, candidate_id);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_int64(st, 4, id);
    rc = sqlite3_step(st);
    rc = rc == SQLITE_DONE ? 0 : sql_error(ar->db, rc, err, errlen, "update attempt");
    sqlite3_finalize(st);
    if (rc == 0 && sqlite3_changes(ar->db) == 0)
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no attempt %lld", (long long)id);
    return rc;
}

int avo_archive_attempts(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    static const char *const keys[] = {
        "id",    "run_id",  "step",   "lineage",      "t",      "source_hash", "knobs", "status",
        "score", "outcome", "reason", "candidate_id", "configs"};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "attempts: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db,
                                "SELECT id, run_id, step, lineage, t, source_hash, knobs, status,"
                                " score, outcome, reason, candidate_id, configs FROM attempts"
                                " WHERE ?1 = 0 OR run_id = ?1 ORDER BY id",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sql_error(ar->db, rc, err, errlen, "read attempts");
    sqlite3_bind_int64(st, 1, run_id);
    json_t *all = json_array();
    int step = SQLITE_DONE;
    rc = all ? 0 : avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    while (rc == 0 && (step = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *row = json_object();
        int bad = !row;
        for (int k = 0; !bad && k < (int)(sizeof keys / sizeof keys[0]); k++)
            bad |= put(row, keys[k], k == 6 || k == 12 ? column_parsed(st, k) : column_json(st, k));
        if (bad || json_array_append_new(all, row) != 0) {
            if (!bad)
                row = NULL; /* append_new consumed it */
            json_decref(row);
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        }
    }
    if (rc == 0 && step != SQLITE_DONE)
        rc = sql_error(ar->db, step, err, errlen, "read attempts");
    sqlite3_finalize(st);
    if (rc < 0) {
        json_decref(all);
        return rc;
    }
    *ret = all;
    return 0;
}
