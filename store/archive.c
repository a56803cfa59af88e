/*
 * archive.c — the run archive on SQLite.
 *
 * Invariants:
 *   - The connection is in WAL mode with foreign keys on and synchronous =
 *     NORMAL: a killed process never loses a committed transaction (a power
 *     cut may lose the last few, never consistency).
 *   - Every public write is one transaction that has committed, or been
 *     rolled back, before the call returns; no transaction stays open between
 *     calls.  Multi-statement writes go through in_transaction().
 *   - Every statement of fixed text is prepared once, on first use, and
 *     cached in ar->stmts under its SQL text (stmt()); after every use it is
 *     reset with its bindings cleared (release()), so no statement holds a
 *     read snapshot or borrowed text between calls.  Only SQL built at run
 *     time (llm_spend) and the WAL switch at open are prepared per call.
 *   - Values always travel as bound parameters.  The one exception is the
 *     user_version a migration writes, which PRAGMA cannot bind; it is an
 *     integer constant of this file.
 *   - Reads turn rows into JSON in one place: collect_rows() and fetch_row()
 *     step a statement and hand each row to a row builder, which for objects
 *     is row_object() over a table of (key, kind) per column.
 */
#include "archive.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
    /* 5: the process that drives a run ({pid, host, since}), written when it
     * claims the run (avo_archive_run_claim), for refusals to name it. */
    [5] = "ALTER TABLE runs ADD COLUMN owner TEXT;",
    /* 6: the evaluator's baselines (vendor libraries, reference kernels)
     * measured once per run and device (lua/avo/baselines.lua). */
    [6] = "CREATE TABLE baselines ("
          "  id INTEGER PRIMARY KEY,"
          "  run_id INTEGER NOT NULL REFERENCES runs(id),"
          "  device TEXT NOT NULL,"
          "  device_name TEXT,"
          "  name TEXT NOT NULL,"
          "  status TEXT NOT NULL,"
          "  reason TEXT,"
          "  library TEXT,"
          "  version TEXT,"
          "  path TEXT,"
          "  result TEXT,"
          "  score REAL,"
          "  created_at REAL NOT NULL,"
          "  UNIQUE (run_id, device, name)"
          ") STRICT;",
    /* 7: experiments (lua/avo/experiment.lua): a grid of runs declared by one
     * Lua file, stored with its text, hash, planned cells and the machine;
     * each cell's run and how it ended. */
    [7] = "CREATE TABLE experiments ("
          "  id INTEGER PRIMARY KEY,"
          "  name TEXT NOT NULL,"
          "  path TEXT,"
          "  source TEXT NOT NULL,"
          "  hash TEXT NOT NULL,"
          "  plan TEXT NOT NULL,"
          "  machine TEXT,"
          "  engine_version TEXT,"
          "  created_at REAL NOT NULL"
          ") STRICT;"
          "CREATE TABLE experiment_cells ("
          "  experiment_id INTEGER NOT NULL REFERENCES experiments(id),"
          "  cell TEXT NOT NULL,"
          "  run_id INTEGER REFERENCES runs(id),"
          "  status TEXT NOT NULL,"
          "  reason TEXT,"
          "  exit_code INTEGER,"
          "  updated_at REAL NOT NULL,"
          "  PRIMARY KEY (experiment_id, cell)"
          ") STRICT;",
    /* 8: the evaluator (its name) of each candidate and baseline, so a
     * candidate is compared only with its own evaluator's baselines.  Old
     * rows: a run with one evaluator gives it to all its candidates; a
     * baseline "name@ev" is ev's, a plain one the run's first evaluator's
     * (lua/avo/baselines.lua named them so); candidates of a run with several
     * stay NULL (unknown), compared only with baselines of unknown evaluator. */
    [8] = "ALTER TABLE candidates ADD COLUMN evaluator TEXT;"
          "ALTER TABLE baselines ADD COLUMN evaluator TEXT;"
          "UPDATE candidates SET evaluator = (SELECT min(json_extract(e.data, '$.name'))"
          "  FROM events e WHERE e.run_id = candidates.run_id AND e.kind = 'evaluator')"
          " WHERE (SELECT count(DISTINCT json_extract(e.data, '$.name')) FROM events e"
          "  WHERE e.run_id = candidates.run_id AND e.kind = 'evaluator') = 1;"
          "UPDATE baselines SET evaluator = CASE WHEN instr(name, '@') > 0"
          "  THEN substr(name, instr(name, '@') + 1)"
          "  ELSE (SELECT json_extract(e.data, '$.name') FROM events e"
          "   WHERE e.run_id = baselines.run_id AND e.kind = 'evaluator' ORDER BY e.id LIMIT 1)"
          "  END;",
};

#define MIGRATION_COUNT ((int)(sizeof(migrations) / sizeof(migrations[0])) - 1)
_Static_assert(sizeof(migrations) / sizeof(migrations[0]) - 1 == AVO_ARCHIVE_SCHEMA_VERSION,
               "one migration step per schema version");

/* How long a write waits for another process's lock before failing, unless
 * AVO_DB_TIMEOUT (seconds) says otherwise; SQLite's busy handler backs off
 * from 1 ms to 100 ms between tries. */
#define BUSY_TIMEOUT_MS 60000

/* Run ownership: an open-file-description lock on one byte of the archive
 * file at RUN_LOCK_BASE + run id, far above the bytes SQLite locks (from
 * 1 GiB to 1 GiB + 512), held while the process lives. */
#define RUN_LOCK_BASE ((off_t)0x60000000)

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

struct avo_archive {
    sqlite3 *db;
    char *path;
    int opened_version;
    int readonly;         /* opened by avo_archive_open_read on a file it cannot write */
    int lock_fd;          /* holds the run lock of avo_archive_run_claim, or -1 */
    int busy_ms;          /* busy timeout in use */
    sqlite3_stmt **stmts; /* cached statements; stmt() finds them by SQL text */
    size_t n_stmts, cap_stmts;
};

/* ------------------------------------------------------------- statements */

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

static int oom(char *err, size_t errlen)
{
    return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
}

/*
 * The statement for `sql` in *ret: the cached one with the same text, or
 * prepared now and cached for the connection's life.  Keyed by text so
 * that each function carries its own SQL; the scan is a few dozen strcmp,
 * nothing beside a step.  It stays owned by ar;
 * the caller finishes with release(), directly or through a helper that
 * releases (step_done, collect_rows, fetch_row, single_id).  `what` names
 * the operation should preparing fail.
 */
static int stmt(avo_archive *ar, const char *sql, sqlite3_stmt **ret, char *err, size_t errlen,
                const char *what)
{
    for (size_t i = 0; i < ar->n_stmts; i++) {
        if (strcmp(sqlite3_sql(ar->stmts[i]), sql) == 0) {
            *ret = ar->stmts[i];
            return 0;
        }
    }
    if (ar->n_stmts == ar->cap_stmts) {
        size_t cap = ar->cap_stmts ? 2 * ar->cap_stmts : 32;
        sqlite3_stmt **stmts = realloc(ar->stmts, cap * sizeof *stmts);
        if (!stmts)
            return oom(err, errlen);
        ar->stmts = stmts;
        ar->cap_stmts = cap;
    }
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v3(ar->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
    if (rc != SQLITE_OK)
        return sql_error(ar->db, rc, err, errlen, what);
    ar->stmts[ar->n_stmts++] = st;
    *ret = st;
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

/* Step once: 1 for a row (st stays on it), 0 when done, or a negative code
 * naming `what`.  Does not release. */
static int step_row(avo_archive *ar, sqlite3_stmt *st, char *err, size_t errlen, const char *what)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return 1;
    return rc == SQLITE_DONE ? 0 : sql_error(ar->db, rc, err, errlen, what);
}

/* Step a statement that returns no rows, then release it. */
static int step_done(avo_archive *ar, sqlite3_stmt *st, char *err, size_t errlen, const char *what)
{
    int rc = sqlite3_step(st);
    int ret = rc == SQLITE_DONE ? 0 : sql_error(ar->db, rc, err, errlen, what);
    release(st);
    return ret;
}

/* Run a no-row statement without parameters (BEGIN, COMMIT, ...). */
static int exec_stmt(avo_archive *ar, const char *sql, char *err, size_t errlen, const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar, sql, &st, err, errlen, what);
    return rc < 0 ? rc : step_done(ar, st, err, errlen, what);
}

/* Step a statement that yields at most one id, then release it; *ret_id = 0
 * when there is none. */
static int single_id(avo_archive *ar, sqlite3_stmt *st, int64_t *ret_id, char *err, size_t errlen,
                     const char *what)
{
    int rc = step_row(ar, st, err, errlen, what);
    *ret_id = rc == 1 ? sqlite3_column_int64(st, 0) : 0;
    release(st);
    return rc < 0 ? rc : 0;
}

/* After an UPDATE of the row `id`: AVO_ENOTFOUND ("no <noun> <id>") when it
 * matched none. */
static int require_changed(avo_archive *ar, const char *noun, int64_t id, char *err, size_t errlen)
{
    if (sqlite3_changes(ar->db) > 0)
        return 0;
    return avo_error(err, errlen, AVO_ENOTFOUND, "no %s %lld", noun, (long long)id);
}

/* ----------------------------------------------------------- transactions */

/* Roll back the open transaction, if any; keeps the caller's error text. */
static void tx_rollback(avo_archive *ar)
{
    if (sqlite3_get_autocommit(ar->db))
        return;
    if (exec_stmt(ar, "ROLLBACK", NULL, 0, "rollback") < 0 && !sqlite3_get_autocommit(ar->db))
        sqlite3_exec(ar->db, "ROLLBACK", NULL, NULL, NULL);
}

/* The work of one transaction: 0 or a negative code with err filled. */
typedef int tx_body(avo_archive *ar, void *ctx, char *err, size_t errlen);

/*
 * Run body(ar, ctx) inside BEGIN IMMEDIATE ... COMMIT.  If the body or the
 * commit fails, the transaction is rolled back and that error returned;
 * either way no transaction is open afterwards.
 */
static int in_transaction(avo_archive *ar, tx_body *body, void *ctx, char *err, size_t errlen)
{
    int rc = exec_stmt(ar, "BEGIN IMMEDIATE", err, errlen, "begin transaction");
    if (rc < 0)
        return rc;
    rc = body(ar, ctx, err, errlen);
    if (rc == 0)
        rc = exec_stmt(ar, "COMMIT", err, errlen, "commit");
    if (rc < 0)
        tx_rollback(ar);
    return rc;
}

/* ---------------------------------------------------------------- binding */

/* Bind text or NULL. The text must outlive the statement's next release(). */
static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

/* Bind an id, or NULL for 0: "none" in the API (run_id 0, candidate_id 0). */
static void bind_id(sqlite3_stmt *st, int i, int64_t id)
{
    if (id > 0)
        sqlite3_bind_int64(st, i, id);
    else
        sqlite3_bind_null(st, i);
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

static const char *opt_string(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static double opt_number(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : 0;
}

/* Whether v holds a value: present and not JSON null. */
static int has_value(const json_t *v)
{
    return v && !json_is_null(v);
}

/* v as stored JSON text: compact, keys sorted, so equal values are equal
 * text.  Malloc'ed, owned by the caller; NULL when out of memory. */
static char *json_text(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* ------------------------------------------------------------ rows -> JSON */

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

/* How row_object() turns a column into JSON. */
enum column_kind {
    COL_VALUE, /* as stored: null, integer, real or string (column_json) */
    COL_JSON,  /* JSON text, parsed (column_parsed) */
    COL_BOOL,  /* integer as true / false */
};

typedef struct column {
    const char *key;
    enum column_kind kind;
} column;

/* The keys of a statement's result columns, in column order. */
typedef struct row_shape {
    const column *columns;
    size_t n;
} row_shape;

/* Turns the current row of st into a new JSON value; NULL when out of memory. */
typedef json_t *row_builder(sqlite3_stmt *st, const row_shape *shape);

/* The row as an object with one key per column of `shape`. */
static json_t *row_object(sqlite3_stmt *st, const row_shape *shape)
{
    json_t *obj = json_object();
    for (size_t k = 0; obj && k < shape->n; k++) {
        const column *c = &shape->columns[k];
        json_t *v = c->kind == COL_JSON   ? column_parsed(st, (int)k)
                    : c->kind == COL_BOOL ? json_boolean(sqlite3_column_int(st, (int)k))
                                          : column_json(st, (int)k);
        if (put(obj, c->key, v)) {
            json_decref(obj);
            obj = NULL;
        }
    }
    return obj;
}

/* The row's first column as a plain value (id lists); no shape. */
static json_t *row_first(sqlite3_stmt *st, const row_shape *shape)
{
    (void)shape;
    return column_json(st, 0);
}

/*
 * Step st to the end and collect build(row) of every row into a new array,
 * in *ret (owned by the caller); releases st.  *ret is left alone on error.
 */
static int collect_rows(avo_archive *ar, sqlite3_stmt *st, row_builder *build,
                        const row_shape *shape, json_t **ret, char *err, size_t errlen,
                        const char *what)
{
    json_t *rows = json_array();
    int rc = rows ? 0 : oom(err, errlen);
    while (rc == 0 && (rc = step_row(ar, st, err, errlen, what)) == 1)
        rc = json_array_append_new(rows, build(st, shape)) == 0 ? 0 : oom(err, errlen);
    release(st);
    if (rc < 0) {
        json_decref(rows);
        return rc;
    }
    *ret = rows;
    return 0;
}

/* Step st once: *ret = build(row), owned by the caller, or NULL when the
 * statement yields no row; releases st. */
static int fetch_row(avo_archive *ar, sqlite3_stmt *st, row_builder *build, const row_shape *shape,
                     json_t **ret, char *err, size_t errlen, const char *what)
{
    *ret = NULL;
    int rc = step_row(ar, st, err, errlen, what);
    if (rc == 1 && !(*ret = build(st, shape)))
        rc = oom(err, errlen);
    release(st);
    return rc < 0 ? rc : 0;
}

/* collect_rows() of the query `sql` with its one parameter bound to id. */
static int rows_by_id(avo_archive *ar, const char *sql, int64_t id, row_builder *build,
                      const row_shape *shape, json_t **ret, char *err, size_t errlen,
                      const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar, sql, &st, err, errlen, what);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    return collect_rows(ar, st, build, shape, ret, err, errlen, what);
}

/* fetch_row() of the query `sql` with its one parameter bound to id. */
static int row_by_id(avo_archive *ar, const char *sql, int64_t id, const row_shape *shape,
                     json_t **ret, char *err, size_t errlen, const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar, sql, &st, err, errlen, what);
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    return fetch_row(ar, st, row_object, shape, ret, err, errlen, what);
}

/* Fetches the object of one id (avo_archive_candidate_get's signature;
 * `flag` is its with_source). */
typedef int object_getter(avo_archive *ar, int64_t id, int flag, json_t **ret, char *err,
                          size_t errlen);

/*
 * get(id) for every id the one-column statement st yields, in order, as a
 * new array in *ret (owned by the caller); releases st.
 */
static int objects_by_id(avo_archive *ar, sqlite3_stmt *st, object_getter *get, int flag,
                         json_t **ret, char *err, size_t errlen, const char *what)
{
    json_t *ids = NULL, *all = NULL;
    int rc = collect_rows(ar, st, row_first, NULL, &ids, err, errlen, what);
    if (rc == 0 && !(all = json_array()))
        rc = oom(err, errlen);
    for (size_t i = 0; rc == 0 && i < json_array_size(ids); i++) {
        json_t *obj = NULL;
        rc = get(ar, json_integer_value(json_array_get(ids, i)), flag, &obj, err, errlen);
        if (rc == 0 && json_array_append_new(all, obj) != 0)
            rc = oom(err, errlen);
    }
    json_decref(ids);
    if (rc < 0) {
        json_decref(all);
        return rc;
    }
    *ret = all;
    return 0;
}

/* ---------------------------------------------------------------- opening */

/*
 * Read the schema version and the number of schema objects that are not
 * the knowledge base's in one statement, hence one snapshot: read
 * separately, another process's migration could commit in between and make
 * a fresh file look like a foreign database.  Objects of the KB module
 * (kb.c: tables named kb_..., their FTS5 shadow tables and indexes) and
 * SQLite's own (sqlite_...) do not count, so a file that holds only a
 * knowledge base can still become an archive.  ret_objects may be NULL.
 */
static int read_version(avo_archive *ar, int *ret_version, int *ret_objects, char *err,
                        size_t errlen)
{
    char what[512];
    snprintf(what, sizeof what, "cannot read archive '%s'", ar->path);
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar,
                  "SELECT (SELECT user_version FROM pragma_user_version),"
                  " (SELECT count(*) FROM sqlite_schema"
                  "  WHERE tbl_name NOT LIKE 'kb\\_%' ESCAPE '\\'"
                  "  AND tbl_name NOT LIKE 'sqlite\\_%' ESCAPE '\\')",
                  &st, err, errlen, what);
    if (rc < 0)
        return rc;
    rc = step_row(ar, st, err, errlen, what);
    if (rc == 1) {
        *ret_version = sqlite3_column_int(st, 0);
        if (ret_objects)
            *ret_objects = sqlite3_column_int(st, 1);
        rc = 0;
    }
    release(st);
    return rc;
}

/*
 * Switch to WAL and set the per-connection pragmas.  Done only after the
 * version check, because switching to WAL rewrites the file header.  The
 * switch needs an exclusive lock and SQLite answers SQLITE_BUSY at once,
 * without the busy handler, when other openers of a fresh file hold shared
 * locks (waiting could deadlock), so it is retried here for up to the
 * busy timeout.
 */
static int configure_connection(avo_archive *ar, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
    for (int waited = 0; rc == SQLITE_OK || rc == SQLITE_BUSY; waited += 10) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_BUSY || waited >= ar->busy_ms)
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
 * One migration step, run by in_transaction(): re-read the version inside
 * the transaction (another process may have migrated since we looked),
 * apply the next step and bump user_version with it.  Sets *(int *)ctx once
 * the file is current.
 */
static int migrate_step(avo_archive *ar, void *ctx, char *err, size_t errlen)
{
    int *ret_done = ctx;
    int version = 0;
    int rc = read_version(ar, &version, NULL, err, errlen);
    if (rc < 0)
        return rc;
    if (version >= MIGRATION_COUNT) {
        *ret_done = 1;
        return 0;
    }

    int next = version + 1;
    rc = sqlite3_exec(ar->db, migrations[next], NULL, NULL, NULL);
    if (rc != SQLITE_OK) {
        char what[128];
        snprintf(what, sizeof what, "migrate archive to schema version %d", next);
        return sql_error(ar->db, rc, err, errlen, what);
    }
    /* PRAGMA takes no parameters; `next` is our own integer. */
    char bump[64];
    snprintf(bump, sizeof bump, "PRAGMA user_version = %d", next);
    rc = sqlite3_exec(ar->db, bump, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : sql_error(ar->db, rc, err, errlen, "set schema version");
}

/* Apply migration steps, each in its own transaction, until the file is at
 * AVO_ARCHIVE_SCHEMA_VERSION. */
static int migrate(avo_archive *ar, char *err, size_t errlen)
{
    int done = 0;
    while (!done) {
        int rc = in_transaction(ar, migrate_step, &done, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/*
 * The busy timeout in ms: AVO_DB_TIMEOUT seconds when set to a number >= 0,
 * else BUSY_TIMEOUT_MS.  A malformed value is an error naming it.
 */
static int busy_timeout_ms(int *ret_ms, char *err, size_t errlen)
{
    const char *env = getenv("AVO_DB_TIMEOUT");
    *ret_ms = BUSY_TIMEOUT_MS;
    if (!env || !*env)
        return 0;
    char *end;
    errno = 0;
    double s = strtod(env, &end);
    if (errno || *end || !(s >= 0) || s > 86400)
        return avo_error(err, errlen, AVO_EINVAL,
                         "AVO_DB_TIMEOUT='%s' is not a number of seconds from 0 to 86400", env);
    *ret_ms = (int)(s * 1000.0);
    return 0;
}

/*
 * Open the SQLite connection of `ar` (flags as sqlite3_open_v2; `uri` names
 * the file instead of ar->path when not NULL), set the busy timeout and read
 * the version: a file from a newer avo, or a foreign database, is refused
 * before anything writes.  Fills ar->opened_version.
 */
static int open_connection(avo_archive *ar, int flags, const char *uri, char *err, size_t errlen)
{
    int rc = sqlite3_open_v2(uri ? uri : ar->path, &ar->db, flags, NULL);
    if (rc != SQLITE_OK) {
        char what[PATH_MAX + 64];
        snprintf(what, sizeof what, "cannot open archive '%s'", ar->path);
        return sql_error(ar->db, rc, err, errlen, what);
    }
    rc = busy_timeout_ms(&ar->busy_ms, err, errlen);
    if (rc < 0)
        return rc;
    sqlite3_busy_timeout(ar->db, ar->busy_ms);

    int version = 0, objects = 0;
    rc = read_version(ar, &version, &objects, err, errlen);
    if (rc < 0)
        return rc;
    if (version > AVO_ARCHIVE_SCHEMA_VERSION)
        return avo_error(err, errlen, AVO_ESCHEMA,
                         "archive '%s' has schema version %d but this avo knows up to %d;"
                         " upgrade avo",
                         ar->path, version, AVO_ARCHIVE_SCHEMA_VERSION);
    if (version == 0 && objects > 0)
        return avo_error(err, errlen, AVO_EINVAL,
                         "'%s' is not an avo archive (it has tables but no schema version)",
                         ar->path);
    ar->opened_version = version;
    return 0;
}

/* A fresh, closed archive handle for path, or NULL (out of memory). */
static avo_archive *archive_new(const char *path)
{
    avo_archive *ar = calloc(1, sizeof *ar);
    if (!ar)
        return NULL;
    ar->lock_fd = -1;
    ar->path = strdup(path);
    if (!ar->path) {
        free(ar);
        return NULL;
    }
    return ar;
}

/* Whether this process can write `path` and create files beside it (the
 * WAL and shared-memory files SQLite needs to write). */
static int writable(const char *path)
{
    if (access(path, W_OK) != 0)
        return 0;
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    return access(dirname(copy), W_OK) == 0;
}

/*
 * PRAGMA quick_check on an archive about to be written: writing a run into
 * a damaged file buries the damage under new rows (and can spread it), so
 * the caller is refused before anything writes, told which file and how to
 * recover what it holds.
 */
static int check_whole(avo_archive *ar, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db, "PRAGMA quick_check(1)", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    const char *answer = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    int whole = answer && strcmp(answer, "ok") == 0;
    char first[256]; /* the first problem on one line */
    snprintf(first, sizeof first, "%s", answer ? answer : sqlite3_errmsg(ar->db));
    for (char *c = first; *c; c++)
        if (*c == '\n')
            *c = ' ';
    if (!whole)
        avo_error(err, errlen, AVO_ESQL,
                  "archive %s is damaged (PRAGMA quick_check: %s); nothing was written to it."
                  " Run into a new archive (--db another file); what this one holds may"
                  " still be shown by the read commands, or copied into a new file to read"
                  " (README, \"A damaged archive\")",
                  ar->path, first);
    sqlite3_finalize(st);
    return whole ? 0 : AVO_ESQL;
}

/* How open_writable was asked to open: for a command that writes (creates
 * a missing file, checks an existing one) or for one that only reads. */
enum open_purpose { OPEN_TO_WRITE, OPEN_TO_READ };

/*
 * Open path read-write and bring it to the current schema.  The version is
 * checked before anything writes, so a file from a newer avo (or a foreign
 * database) is closed exactly as found.  To write, a missing file is
 * created and an existing one must pass check_whole(); to read, the file
 * must already be an avo archive (an empty file, or one holding only a
 * knowledge base, is refused rather than given a schema).  On failure *ret
 * is NULL and err says why.
 */
static int open_writable(avo_archive **ret, const char *path, enum open_purpose purpose, char *err,
                         size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "no place to return the archive");
    *ret = NULL;
    if (!path || !*path)
        return avo_error(err, errlen, AVO_EINVAL, "no archive path");

    struct stat st;
    int existed = stat(path, &st) == 0;
    if (existed && !writable(path))
        return avo_error(err, errlen, AVO_EIO,
                         "archive %s is read-only (%s): commands that write need a writable"
                         " archive; the read commands can read it",
                         path, strerror(errno));
    avo_archive *ar = archive_new(path);
    if (!ar)
        return oom(err, errlen);
    int flags = SQLITE_OPEN_READWRITE | (purpose == OPEN_TO_WRITE ? SQLITE_OPEN_CREATE : 0);
    int rc = open_connection(ar, flags, NULL, err, errlen);
    if (rc < 0)
        goto fail;
    if (purpose == OPEN_TO_READ && ar->opened_version == 0) {
        rc = avo_error(err, errlen, AVO_EINVAL, "'%s' is not an avo archive (%s)", path,
                       existed && st.st_size == 0 ? "it is an empty file" : "it has no avo schema");
        goto fail;
    }
    if (purpose == OPEN_TO_WRITE && existed && st.st_size > 0) {
        rc = check_whole(ar, err, errlen);
        if (rc < 0)
            goto fail;
    }
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

int avo_archive_open(avo_archive **ret, const char *path, char *err, size_t errlen)
{
    return open_writable(ret, path, OPEN_TO_WRITE, err, errlen);
}

/*
 * Copy the connection's database into memory and continue there: an
 * archive read from a read-only file whose schema is older than this avo's
 * is migrated in the copy, never on disk.
 */
static int copy_to_memory(avo_archive *ar, char *err, size_t errlen)
{
    sqlite3 *mem = NULL;
    int rc = sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_close(mem);
        return avo_error(err, errlen, AVO_ENOMEM, "cannot open a database in memory");
    }
    sqlite3_backup *b = sqlite3_backup_init(mem, "main", ar->db, "main");
    rc = b ? sqlite3_backup_step(b, -1) : sqlite3_errcode(mem);
    if (b)
        sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) {
        rc = sql_error(mem, rc, err, errlen, "copy the read-only archive into memory");
        sqlite3_close(mem);
        return rc;
    }
    for (size_t i = 0; i < ar->n_stmts; i++)
        sqlite3_finalize(ar->stmts[i]);
    ar->n_stmts = 0;
    sqlite3_close(ar->db);
    ar->db = mem;
    return 0;
}

/* Copy the file src to dst (created, mode 0600); 0 or an errno value. */
static int copy_file(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return errno;
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
        int e = errno;
        close(in);
        return e;
    }
    int e = 0;
    char buf[65536];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            e = n < 0 ? errno : 0;
            break;
        }
        for (ssize_t done = 0; done < n && !e;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w < 0 && errno != EINTR)
                e = errno;
            else if (w > 0)
                done += w;
        }
        if (e)
            break;
    }
    close(in);
    if (close(out) != 0 && !e)
        e = errno;
    return e;
}

/*
 * Read an archive whose newest data sits in its -wal while no -shm exists
 * and none may be made beside it (a read-only mount or directory, a file
 * this process may not write): SQLite cannot read that WAL in place, and
 * opening it immutable would ignore the WAL (an empty archive).  The file
 * and its WAL are copied into a private directory under $TMPDIR (or /tmp),
 * opened there (SQLite rebuilds the index from the WAL), copied into memory
 * and the private copies removed.  On success ar->db is the memory copy.
 */
static int read_private_copy(avo_archive *ar, char *err, size_t errlen)
{
    const char *tmpdir = getenv("TMPDIR");
    char dir[PATH_MAX], db[PATH_MAX + 16], wal[PATH_MAX + 16], shm[PATH_MAX + 16],
        from[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/avo-read-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(dir))
        return avo_error(err, errlen, AVO_EIO,
                         "archive %s has its data in %s-wal, which cannot be read in place"
                         " (no -shm beside it, and none may be made); copying it to read it"
                         " failed: cannot make a directory in %s: %s",
                         ar->path, ar->path, tmpdir && *tmpdir ? tmpdir : "/tmp", strerror(errno));
    snprintf(db, sizeof db, "%s/a.db", dir);
    snprintf(wal, sizeof wal, "%s/a.db-wal", dir);
    snprintf(shm, sizeof shm, "%s/a.db-shm", dir);
    snprintf(from, sizeof from, "%s-wal", ar->path);
    int e = copy_file(ar->path, db);
    if (!e)
        e = copy_file(from, wal);
    int rc = 0;
    if (e)
        rc = avo_error(err, errlen, AVO_EIO,
                       "archive %s has its data in %s-wal, which cannot be read in place"
                       " (no -shm beside it, and none may be made); copying it to %s failed: %s",
                       ar->path, ar->path, dir, strerror(e));
    if (rc == 0)
        rc = open_connection(ar, SQLITE_OPEN_READWRITE, db, err, errlen);
    if (rc == 0)
        rc = copy_to_memory(ar, err, errlen);
    if (rc < 0) {
        sqlite3_close(ar->db);
        ar->db = NULL;
    }
    unlink(shm);
    unlink(wal);
    unlink(db);
    rmdir(dir);
    return rc;
}

/* The size of path + suffix, or -1 when it does not exist. */
static off_t side_file_size(const char *path, const char *suffix)
{
    char name[PATH_MAX + 8];
    snprintf(name, sizeof name, "%s%s", path, suffix);
    struct stat st;
    return stat(name, &st) == 0 ? st.st_size : -1;
}

static int open_readonly(avo_archive **ret, const char *path, int live, char *err, size_t errlen);

/*
 * Open an existing archive for reading.  A file this process can write is
 * opened as avo_archive_open does (and migrated), but only if it already is
 * an avo archive: a read never gives an empty or foreign file a schema.  A
 * file it cannot write (a read-only mount, another user's experiment, the
 * owner's own file after chmod a-w) is opened read-only without creating
 * anything beside it: SQLite would make a -wal and -shm with the archive's
 * own mode (0444 files that later make the owner's writes fail).  So:
 *   - with a -wal and a -shm (a live or killed writer left them), read it
 *     as is, WAL included;
 *   - else, with a non-empty -wal, read a private copy (read_private_copy):
 *     SQLite cannot read that WAL in place;
 *   - else (no WAL data), read the file immutable (no locks, no side files).
 * An older schema is then migrated in a copy in memory.  Writes to such an
 * archive fail with SQLite's "attempt to write a readonly database".
 */
int avo_archive_open_read(avo_archive **ret, const char *path, char *err, size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "no place to return the archive");
    *ret = NULL;
    if (!path || !*path)
        return avo_error(err, errlen, AVO_EINVAL, "no archive path");
    if (access(path, R_OK) != 0)
        return avo_error(err, errlen, AVO_EIO, "cannot open archive %s: %s", path, strerror(errno));
    if (writable(path))
        return open_writable(ret, path, OPEN_TO_READ, err, errlen);
    return open_readonly(ret, path, 0, err, errlen);
}

/*
 * Open an existing archive read-only; see avo_archive_open_read (the part
 * for files it cannot write) and avo_archive_open_watch (`live`: a file
 * this process could write is read in place, WAL included, through a
 * read-only connection).
 */
static int open_readonly(avo_archive **ret, const char *path, int live, char *err, size_t errlen)
{
    avo_archive *ar = archive_new(path);
    if (!ar)
        return oom(err, errlen);
    ar->readonly = 1;
    int rc = -1;
    off_t wal = side_file_size(path, "-wal");
    if ((live && writable(path)) || (wal >= 0 && side_file_size(path, "-shm") >= 0)) {
        rc = open_connection(ar, SQLITE_OPEN_READONLY, NULL, err, errlen);
        if (rc < 0) {
            sqlite3_close(ar->db);
            ar->db = NULL;
        }
    }
    if (rc < 0 && wal > 0) {
        rc = read_private_copy(ar, err, errlen);
    } else if (rc < 0) {
        /* Characters with a meaning in URIs are percent-encoded. */
        char encoded[3 * PATH_MAX + 32];
        size_t k = 0;
        k += (size_t)snprintf(encoded, sizeof encoded, "file:");
        for (const unsigned char *c = (const unsigned char *)path; *c && k + 4 < sizeof encoded;
             c++) {
            if (*c == '%' || *c == '?' || *c == '#' || *c <= ' ' || *c >= 0x7f)
                k += (size_t)snprintf(encoded + k, sizeof encoded - k, "%%%02X", *c);
            else
                encoded[k++] = (char)*c;
        }
        snprintf(encoded + k, sizeof encoded - k, "?immutable=1");
        rc = open_connection(ar, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, encoded, err, errlen);
    }
    if (rc < 0)
        goto fail;
    if (ar->opened_version == 0) {
        struct stat st;
        rc = avo_error(err, errlen, AVO_EINVAL, "'%s' is not an avo archive (%s)", path,
                       stat(path, &st) == 0 && st.st_size == 0 ? "it is an empty file"
                                                              : "it has no avo schema");
        goto fail;
    }
    if (ar->opened_version < AVO_ARCHIVE_SCHEMA_VERSION) {
        rc = copy_to_memory(ar, err, errlen);
        if (rc == 0)
            rc = migrate(ar, err, errlen);
        if (rc < 0)
            goto fail;
    }
    rc = sqlite3_exec(ar->db, "PRAGMA foreign_keys = ON; PRAGMA query_only = ON;", NULL, NULL,
                      NULL);
    if (rc != SQLITE_OK) {
        rc = sql_error(ar->db, rc, err, errlen, "set pragmas");
        goto fail;
    }
    *ret = ar;
    return 0;

fail:
    avo_archive_free(ar);
    return rc;
}

int avo_archive_open_watch(avo_archive **ret, const char *path, char *err, size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "no place to return the archive");
    *ret = NULL;
    if (!path || !*path)
        return avo_error(err, errlen, AVO_EINVAL, "no archive path");
    if (access(path, R_OK) != 0)
        return avo_error(err, errlen, AVO_EIO, "cannot open archive %s: %s", path, strerror(errno));
    return open_readonly(ret, path, 1, err, errlen);
}

int avo_archive_readonly(const avo_archive *ar)
{
    return ar ? ar->readonly : 0;
}

/* Finalize every cached statement and close; accepts NULL and an archive
 * whose open failed half way.  Closing releases the run lock. */
void avo_archive_free(avo_archive *ar)
{
    if (!ar)
        return;
    for (size_t i = 0; i < ar->n_stmts; i++)
        sqlite3_finalize(ar->stmts[i]);
    free(ar->stmts);
    sqlite3_close(ar->db);
    if (ar->lock_fd >= 0)
        close(ar->lock_fd);
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
    int rc = stmt(ar,
                  "INSERT INTO runs (script_path, script_source, config, seed, engine_version,"
                  " compiler, host, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                  &st, err, errlen, "insert run");
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
        strcmp(status, "failed") != 0 && strcmp(status, "interrupted") != 0)
        return avo_error(err, errlen, AVO_EINVAL,
                         "run status '%s' is not one of done, stopped, interrupted, failed",
                         status);
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar, "UPDATE runs SET status = ?, ended_at = ? WHERE id = ?", &st, err, errlen,
                  "end run");
    if (rc < 0)
        return rc;
    bind_text(st, 1, status);
    sqlite3_bind_double(st, 2, avo_now());
    sqlite3_bind_int64(st, 3, run_id);
    rc = step_done(ar, st, err, errlen, "end run");
    return rc < 0 ? rc : require_changed(ar, "run", run_id, err, errlen);
}

int avo_archive_run_end_running(avo_archive *ar, int64_t run_id, const char *status, char *err,
                                size_t errlen)
{
    if (!ar || !status || (strcmp(status, "failed") != 0 && strcmp(status, "interrupted") != 0))
        return avo_error(err, errlen, AVO_EINVAL, "run_end_running: bad argument");
    sqlite3_stmt *st = NULL;
    int rc =
        stmt(ar, "UPDATE runs SET status = ?, ended_at = ? WHERE id = ? AND status = 'running'",
             &st, err, errlen, "end run");
    if (rc < 0)
        return rc;
    bind_text(st, 1, status);
    sqlite3_bind_double(st, 2, avo_now());
    sqlite3_bind_int64(st, 3, run_id);
    rc = step_done(ar, st, err, errlen, "end run");
    return rc < 0 ? rc : sqlite3_changes(ar->db) > 0;
}

/*
 * Reopen a finished or interrupted run for resumption: status back to
 * "running", ended_at cleared.
 */
int avo_archive_run_reopen(avo_archive *ar, int64_t run_id, char *err, size_t errlen)
{
    if (!ar)
        return avo_error(err, errlen, AVO_EINVAL, "run_reopen: missing argument");
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar, "UPDATE runs SET status = 'running', ended_at = NULL WHERE id = ?", &st, err,
                  errlen, "reopen run");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    rc = step_done(ar, st, err, errlen, "reopen run");
    return rc < 0 ? rc : require_changed(ar, "run", run_id, err, errlen);
}

/* This machine's name, for owner records ("unknown" when it has none). */
static void host_name(char *buf, size_t len)
{
    if (gethostname(buf, len) != 0 || !buf[0])
        snprintf(buf, len, "unknown");
    buf[len - 1] = '\0';
}

/* The run's owner record and status (both NULL-able; caller frees owner). */
static int run_owner(avo_archive *ar, int64_t run_id, json_t **ret_owner, char *status,
                     size_t status_len, char *err, size_t errlen)
{
    *ret_owner = NULL;
    sqlite3_stmt *st = NULL;
    int rc =
        stmt(ar, "SELECT owner, status FROM runs WHERE id = ?", &st, err, errlen, "read run owner");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    rc = step_row(ar, st, err, errlen, "read run owner");
    if (rc == 1) {
        if (sqlite3_column_type(st, 0) != SQLITE_NULL)
            *ret_owner = column_parsed(st, 0);
        const unsigned char *s = sqlite3_column_text(st, 1);
        snprintf(status, status_len, "%s", s ? (const char *)s : "");
        rc = 0;
    } else if (rc == 0) {
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no run %lld", (long long)run_id);
    }
    release(st);
    return rc;
}

/* "pid 123 on host h since 2026-12-02 22:40:29 UTC" into buf. */
static void describe_owner(const json_t *owner, char *buf, size_t len)
{
    const char *host = json_string_value(json_object_get(owner, "host"));
    json_int_t pid = json_integer_value(json_object_get(owner, "pid"));
    double since = json_number_value(json_object_get(owner, "since"));
    char when[64] = "an unknown time";
    time_t t = (time_t)since;
    struct tm tm;
    if (since > 0 && gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    snprintf(buf, len, "process %lld on host %s since %s", (long long)pid, host ? host : "?", when);
}

/*
 * Claim run `run_id` for this process: take its lock (an open file
 * description lock on the archive file, so it is released when the process
 * ends, by kill -9 too, and no other close in this process can drop it) and
 * record {pid, host, since} as the run's owner.
 *
 * AVO_EBUSY with err naming the owner when another process holds the lock,
 * or when the lock is free but the run is still `running` under an owner
 * on another host (a lock does not reach across machines): that may be a
 * live process, so only `takeover` claims it.  An owner on this host whose
 * lock is free is gone (stale) and is replaced; *ret_previous (may be NULL)
 * then receives its record (caller frees), else NULL.  An in-memory archive
 * has nothing to lock: the claim only succeeds.  One claim per handle.
 * On a file system without locks (ENOLCK, ...) the owner record decides: a
 * `running` owner on this host whose pid still exists refuses the claim.
 */
int avo_archive_run_claim(avo_archive *ar, int64_t run_id, int takeover, json_t **ret_previous,
                          char *err, size_t errlen)
{
    if (ret_previous)
        *ret_previous = NULL;
    if (!ar || run_id < 1)
        return avo_error(err, errlen, AVO_EINVAL, "run_claim: missing argument");
    if (ar->lock_fd >= 0)
        return avo_error(err, errlen, AVO_EINVAL, "this archive handle already owns a run");
    const char *file = sqlite3_db_filename(ar->db, "main");
    if (!file || !*file)
        return 0; /* in memory */
    if (ar->readonly)
        return avo_error(err, errlen, AVO_EIO, "archive '%s' is read-only", ar->path);

    json_t *owner = NULL;
    char status[32] = "";
    int rc = run_owner(ar, run_id, &owner, status, sizeof status, err, errlen);
    if (rc < 0)
        return rc;
    char who[512] = "";
    if (owner)
        describe_owner(owner, who, sizeof who);

    int fd = open(file, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        rc = avo_error(err, errlen, AVO_EIO, "cannot open '%s' to lock run %lld: %s", ar->path,
                       (long long)run_id, strerror(errno));
        goto out;
    }
    struct flock lock = {.l_type = F_WRLCK,
                         .l_whence = SEEK_SET,
                         .l_start = RUN_LOCK_BASE + (off_t)run_id,
                         .l_len = 1};
    char host[256];
    host_name(host, sizeof host);
    const char *owner_host = json_string_value(json_object_get(owner, "host"));
    if (fcntl(fd, F_OFD_SETLK, &lock) < 0) {
        int e = errno;
        if (e == ENOLCK || e == EINVAL || e == EOPNOTSUPP || e == ENOSYS) {
            /* A file system without locks: the owner record decides, an owner
             * on this host by whether its process still exists. */
            json_int_t pid = json_integer_value(json_object_get(owner, "pid"));
            int alive = pid > 0 && pid != getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
            if (owner && strcmp(status, "running") == 0 && owner_host &&
                strcmp(owner_host, host) == 0 && alive && !takeover) {
                close(fd);
                rc = avo_error(err, errlen, AVO_EBUSY,
                               "run %lld in %s may be live: driven by %s, which still exists"
                               " (this file system has no locks; --takeover if it is not avo)",
                               (long long)run_id, ar->path, who);
                goto out;
            }
        } else {
            close(fd);
            if (e == EAGAIN || e == EACCES)
                rc = avo_error(err, errlen, AVO_EBUSY, "run %lld in %s is live: driven by %s",
                               (long long)run_id, ar->path, owner ? who : "another process");
            else
                rc = avo_error(err, errlen, AVO_EIO, "cannot lock run %lld in %s: %s",
                               (long long)run_id, ar->path, strerror(e));
            goto out;
        }
    }

    if (owner && strcmp(status, "running") == 0 && owner_host && strcmp(owner_host, host) != 0 &&
        !takeover) {
        close(fd);
        rc = avo_error(err, errlen, AVO_EBUSY,
                       "run %lld in %s is still marked running by %s, which this machine (%s)"
                       " cannot check; if that process is gone, resume with --takeover",
                       (long long)run_id, ar->path, who, host);
        goto out;
    }

    json_t *me =
        json_pack("{s:I, s:s, s:f}", "pid", (json_int_t)getpid(), "host", host, "since", avo_now());
    char *text = me ? json_dumps(me, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(me);
    if (!text) {
        close(fd);
        rc = oom(err, errlen);
        goto out;
    }
    sqlite3_stmt *st = NULL;
    rc = stmt(ar, "UPDATE runs SET owner = ? WHERE id = ?", &st, err, errlen, "record run owner");
    if (rc == 0) {
        bind_text(st, 1, text);
        sqlite3_bind_int64(st, 2, run_id);
        rc = step_done(ar, st, err, errlen, "record run owner");
    }
    free(text);
    if (rc < 0) {
        close(fd);
        goto out;
    }
    ar->lock_fd = fd;
    if (ret_previous && owner && strcmp(status, "running") == 0) {
        *ret_previous = owner;
        owner = NULL;
    }
out:
    json_decref(owner);
    return rc;
}

/*
 * Whether run `run_id` is claimed by a live process on this machine: 1 when
 * its lock is held (by another handle or process), 0 when free.
 */
int avo_archive_run_live(avo_archive *ar, int64_t run_id)
{
    const char *file = ar ? sqlite3_db_filename(ar->db, "main") : NULL;
    if (!file || !*file)
        return 0;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct flock lock = {.l_type = F_WRLCK,
                         .l_whence = SEEK_SET,
                         .l_start = RUN_LOCK_BASE + (off_t)run_id,
                         .l_len = 1};
    int live = fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
    close(fd);
    return live;
}

typedef struct run_restore_ctx {
    int64_t run_id;
    const char *status;
    double ended_at; /* <= 0: NULL */
    const char *owner_json;
    int64_t last_event;
} run_restore_ctx;

static int restore_body(avo_archive *ar, void *ctx, char *err, size_t errlen)
{
    const run_restore_ctx *c = ctx;
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar, "UPDATE runs SET status = ?, ended_at = ?, owner = ? WHERE id = ?", &st, err,
                  errlen, "restore run");
    if (rc < 0)
        return rc;
    bind_text(st, 1, c->status);
    if (c->ended_at > 0)
        sqlite3_bind_double(st, 2, c->ended_at);
    else
        sqlite3_bind_null(st, 2);
    bind_text(st, 3, c->owner_json);
    sqlite3_bind_int64(st, 4, c->run_id);
    rc = step_done(ar, st, err, errlen, "restore run");
    if (rc < 0)
        return rc;
    rc = require_changed(ar, "run", c->run_id, err, errlen);
    if (rc < 0)
        return rc;
    rc = stmt(ar, "DELETE FROM events WHERE run_id = ? AND id > ?", &st, err, errlen,
              "restore run events");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, c->run_id);
    sqlite3_bind_int64(st, 2, c->last_event);
    return step_done(ar, st, err, errlen, "restore run events");
}

/*
 * Undo a resume that was refused after it reopened the run: status,
 * ended_at (<= 0: NULL) and owner (JSON text or NULL) back to what they
 * were, and the run's events after `last_event` deleted, in one
 * transaction.  The refusal happens before the resumed run wrote any
 * candidate of its own (avo.recorded), so the run is as it was.
 */
int avo_archive_run_restore(avo_archive *ar, int64_t run_id, const char *status, double ended_at,
                            const char *owner_json, int64_t last_event, char *err, size_t errlen)
{
    if (!ar || !status)
        return avo_error(err, errlen, AVO_EINVAL, "run_restore: missing argument");
    run_restore_ctx c = {run_id, status, ended_at, owner_json, last_event};
    return in_transaction(ar, restore_body, &c, err, errlen);
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
    rc = stmt(ar, "INSERT OR IGNORE INTO sources (hash, text) VALUES (?, ?)", &st, err, errlen,
              "insert source");
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

/* Source text by hash, byte for byte; *ret_text is malloc'ed and owned by
 * the caller. */
int avo_archive_source_get(avo_archive *ar, const char *hash, char **ret_text, char *err,
                           size_t errlen)
{
    if (!ar || !hash || !ret_text)
        return avo_error(err, errlen, AVO_EINVAL, "source_get: missing argument");
    *ret_text = NULL;
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar, "SELECT text FROM sources WHERE hash = ?", &st, err, errlen, "read source");
    if (rc < 0)
        return rc;
    bind_text(st, 1, hash);
    rc = step_row(ar, st, err, errlen, "read source");
    if (rc == 1) {
        const char *text = (const char *)sqlite3_column_text(st, 0);
        *ret_text = strdup(text ? text : "");
        rc = *ret_text ? 0 : oom(err, errlen);
    } else if (rc == 0) {
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no source %s", hash);
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
    rc = stmt(ar,
              "INSERT INTO candidates (run_id, generation, operator, source_hash, knobs, note,"
              " \"key\", created_at, evaluator) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
              &st, err, errlen, "insert candidate");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, info->run_id);
    sqlite3_bind_int(st, 2, info->generation);
    bind_text(st, 3, info->operator_name);
    bind_text(st, 4, hash);
    bind_text(st, 5, c->knobs);
    bind_text(st, 6, info->note);
    bind_text(st, 7, info->key);
    sqlite3_bind_double(st, 8, avo_now());
    bind_text(st, 9, info->evaluator);
    rc = step_done(ar, st, err, errlen, "insert candidate");
    if (rc < 0)
        return rc;
    c->id = sqlite3_last_insert_rowid(ar->db);

    rc = stmt(ar, "INSERT INTO edges (child, parent, role) VALUES (?, ?, ?)", &st, err, errlen,
              "insert parent edge");
    for (size_t i = 0; rc == 0 && i < info->n_parents; i++) {
        sqlite3_bind_int64(st, 1, c->id);
        sqlite3_bind_int64(st, 2, info->parents[i].parent_id);
        bind_text(st, 3, info->parents[i].role);
        rc = step_done(ar, st, err, errlen, "insert parent edge");
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
        rc = in_transaction(ar, insert_candidate, &c, err, errlen);
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
    bind_text(st, 10, opt_string(config, "reason"));
    return step_done(ar, st, err, errlen, "insert evaluation");
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
    int rc = stmt(ar,
                  "UPDATE candidates SET status = ?, reason = ?, log = ?, score = ?, result = ?,"
                  " evaluated_at = ? WHERE id = ?",
                  &st, err, errlen, "update candidate");
    if (rc < 0)
        return rc;
    bind_text(st, 1, opt_string(r->result, "status"));
    bind_text(st, 2, opt_string(r->result, "reason"));
    bind_text(st, 3, opt_string(r->result, "log"));
    sqlite3_bind_double(st, 4, r->score);
    bind_text(st, 5, r->meta_text);
    sqlite3_bind_double(st, 6, avo_now());
    sqlite3_bind_int64(st, 7, r->id);
    rc = step_done(ar, st, err, errlen, "update candidate");
    if (rc == 0)
        rc = require_changed(ar, "candidate", r->id, err, errlen);
    if (rc == 0)
        rc = stmt(ar, "DELETE FROM evaluations WHERE candidate_id = ?", &st, err, errlen,
                  "clear evaluations");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, r->id);
    rc = step_done(ar, st, err, errlen, "clear evaluations");
    if (rc == 0)
        rc = stmt(ar,
                  "INSERT INTO evaluations (candidate_id, config, correct, max_error, median_s,"
                  " spread, samples, gflops, gbs, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  &st, err, errlen, "insert evaluation");
    const json_t *configs = json_object_get(r->result, "configs");
    for (size_t i = 0; rc == 0 && i < json_array_size(configs); i++) {
        rc = insert_evaluation(ar, st, r->id, i, json_array_get(configs, i), err, errlen);
        if (rc < 0)
            release(st);
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
        return oom(err, errlen);
    static const char *const own_columns[] = {"id", "status", "reason", "log", "configs"};
    for (size_t i = 0; i < COUNT_OF(own_columns); i++)
        json_object_del(meta, own_columns[i]);
    char *meta_text = json_text(meta);
    json_decref(meta);
    if (!meta_text)
        return oom(err, errlen);

    candidate_result r = {.id = id, .result = result, .meta_text = meta_text, .score = score};
    int rc = in_transaction(ar, record_result, &r, err, errlen);
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
    int rc = stmt(ar, "INSERT INTO events (run_id, t, kind, data) VALUES (?, ?, ?, ?)", &st, err,
                  errlen, "insert event");
    if (rc < 0)
        return rc;
    bind_id(st, 1, run_id); /* run_id 0: an event of the engine, not of a run */
    sqlite3_bind_double(st, 2, avo_now());
    bind_text(st, 3, kind);
    bind_text(st, 4, data_json);
    return step_done(ar, st, err, errlen, "insert event");
}

/*
 * Events of run_id of the given kind (NULL: every kind), oldest first, as
 * [{id, t, kind, data}] with data parsed back from JSON.
 */
int avo_archive_events(avo_archive *ar, int64_t run_id, const char *kind, json_t **ret, char *err,
                       size_t errlen)
{
    static const column columns[] = {
        {"id", COL_VALUE}, {"t", COL_VALUE}, {"kind", COL_VALUE}, {"data", COL_JSON}};
    static const row_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "events: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar,
                  "SELECT id, t, kind, data FROM events WHERE run_id = ?1"
                  " AND (?2 IS NULL OR kind = ?2) ORDER BY id",
                  &st, err, errlen, "read events");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    bind_text(st, 2, kind);
    return collect_rows(ar, st, row_object, &shape, ret, err, errlen, "read events");
}

/* ------------------------------------------------------------- candidates */

/* [{id, role}] of the parents of id, ordered by role then parent id. */
static int parents_json(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    static const column columns[] = {{"id", COL_VALUE}, {"role", COL_VALUE}};
    static const row_shape shape = {columns, COUNT_OF(columns)};
    return rows_by_id(ar, "SELECT parent, role FROM edges WHERE child = ? ORDER BY role, parent",
                      id, row_object, &shape, ret, err, errlen, "read parents");
}

/* [ids] of the children of id, ascending. */
static int children_json(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    return rows_by_id(ar, "SELECT DISTINCT child FROM edges WHERE parent = ? ORDER BY child", id,
                      row_first, NULL, ret, err, errlen, "read children");
}

/* The protocol's config objects for id, in the order they were recorded. */
static int configs_json(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    static const column columns[] = {
        {"name", COL_VALUE},     {"correct", COL_BOOL}, {"max_error", COL_VALUE},
        {"median_s", COL_VALUE}, {"spread", COL_VALUE}, {"samples", COL_VALUE},
        {"gflops", COL_VALUE},   {"gbs", COL_VALUE},    {"reason", COL_VALUE},
    };
    static const row_shape shape = {columns, COUNT_OF(columns)};
    return rows_by_id(ar,
                      "SELECT config, correct, max_error, median_s, spread, samples, gflops, gbs,"
                      " reason FROM evaluations WHERE candidate_id = ? ORDER BY rowid",
                      id, row_object, &shape, ret, err, errlen, "read evaluations");
}

/*
 * The row of candidate id as an object of its columns (knobs and result
 * parsed), without parents, children or configs.  AVO_ENOTFOUND if absent.
 */
static int candidate_row(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen)
{
    static const column columns[] = {
        {"id", COL_VALUE},         {"run_id", COL_VALUE},       {"generation", COL_VALUE},
        {"operator", COL_VALUE},   {"status", COL_VALUE},       {"reason", COL_VALUE},
        {"log", COL_VALUE},        {"score", COL_VALUE},        {"source_hash", COL_VALUE},
        {"knobs", COL_JSON},       {"note", COL_VALUE},         {"key", COL_VALUE},
        {"created_at", COL_VALUE}, {"evaluated_at", COL_VALUE}, {"result", COL_JSON},
        {"evaluator", COL_VALUE},
    };
    static const row_shape shape = {columns, COUNT_OF(columns)};
    int rc = row_by_id(ar,
                       "SELECT id, run_id, generation, operator, status, reason, log, score,"
                       " source_hash, knobs, note, \"key\", created_at, evaluated_at, result,"
                       " evaluator FROM candidates WHERE id = ?",
                       id, &shape, ret, err, errlen, "read candidate");
    if (rc == 0 && !*ret)
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no candidate %lld", (long long)id);
    return rc;
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
        const char *hash = opt_string(obj, "source_hash");
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
    return rc < 0 ? rc : oom(err, errlen);
}

int avo_archive_candidate_by_key(avo_archive *ar, const char *key, json_t **ret, char *err,
                                 size_t errlen)
{
    if (!ar || !key || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "candidate_by_key: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar,
                  "SELECT id FROM candidates WHERE \"key\" = ? AND status <> 'pending'"
                  " ORDER BY id LIMIT 1",
                  &st, err, errlen, "find candidate by key");
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
    int rc = stmt(ar, "SELECT max(id) FROM runs", &st, err, errlen, "find latest run");
    if (rc == 0)
        rc = single_id(ar, st, ret, err, errlen, "find latest run");
    if (rc == 0 && !*ret)
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "the archive has no runs");
    return rc;
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
    rc = stmt(ar,
              "SELECT id FROM candidates WHERE run_id = ? AND status = 'ok'"
              " ORDER BY score DESC, id ASC LIMIT 1",
              &st, err, errlen, "find best candidate");
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

/* ------------------------------------------------------------------- runs */

int avo_archive_run_get(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    static const column columns[] = {
        {"id", COL_VALUE},       {"script_path", COL_VALUE}, {"script_source", COL_VALUE},
        {"config", COL_JSON},    {"seed", COL_VALUE},        {"engine_version", COL_VALUE},
        {"compiler", COL_VALUE}, {"host", COL_VALUE},        {"started_at", COL_VALUE},
        {"ended_at", COL_VALUE}, {"status", COL_VALUE},      {"owner", COL_JSON},
    };
    static const row_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "run_get: missing argument");
    *ret = NULL;
    int rc = resolve_run(ar, run_id, &run_id, err, errlen);
    if (rc == 0)
        rc = row_by_id(ar,
                       "SELECT id, script_path, script_source, config, seed, engine_version,"
                       " compiler, host, started_at, ended_at, status, owner FROM runs"
                       " WHERE id = ?",
                       run_id, &shape, ret, err, errlen, "read run");
    if (rc == 0 && !*ret)
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no run %lld", (long long)run_id);
    return rc;
}

/*
 * Add the candidate summary of run `id` to its object: candidates, ok,
 * failed (finished but not ok), pending (not evaluated yet), and best_id and best_score as
 * avo_archive_best() chooses (null when the run has no ok candidate).
 */
static int run_add_candidates(avo_archive *ar, json_t *run, int64_t id, char *err, size_t errlen)
{
    static const column count_columns[] = {{"candidates", COL_VALUE},
                                           {"ok", COL_VALUE},
                                           {"failed", COL_VALUE},
                                           {"pending", COL_VALUE}};
    static const row_shape count_shape = {count_columns, COUNT_OF(count_columns)};
    static const column best_columns[] = {
        {"best_id", COL_VALUE}, {"best_score", COL_VALUE}, {"best_evaluator", COL_VALUE}};
    static const row_shape best_shape = {best_columns, COUNT_OF(best_columns)};
    json_t *counts = NULL, *best = NULL;
    int rc = row_by_id(ar,
                       "SELECT count(*), count(*) FILTER (WHERE status = 'ok'),"
                       " count(*) FILTER (WHERE status NOT IN ('ok', 'pending')),"
                       " count(*) FILTER (WHERE status = 'pending')"
                       " FROM candidates WHERE run_id = ?",
                       id, &count_shape, &counts, err, errlen, "count candidates");
    if (rc == 0)
        rc = row_by_id(ar,
                       "SELECT id, score, evaluator FROM candidates WHERE run_id = ?"
                       " AND status = 'ok'"
                       " ORDER BY score DESC, id ASC LIMIT 1",
                       id, &best_shape, &best, err, errlen, "find best candidate");
    if (rc == 0 && !best)
        best = json_pack("{snsnsn}", "best_id", "best_score", "best_evaluator");
    if (rc == 0 && (json_object_update(run, counts) != 0 || json_object_update(run, best) != 0))
        rc = oom(err, errlen);
    json_decref(counts);
    json_decref(best);
    return rc;
}

/*
 * Add the agent attempts of run `id` (operators/agent.lua) to its object:
 * attempts = {explored, committed, outcomes: {outcome: count}}.  A
 * re-timing (outcome "retime") measures a recorded version again and
 * explores nothing, so it counts in outcomes only.  Zeros and {} for a run
 * without attempts.
 */
static int run_add_attempts(avo_archive *ar, json_t *run, int64_t id, char *err, size_t errlen)
{
    static const column columns[] = {{"outcome", COL_VALUE}, {"count", COL_VALUE}};
    static const row_shape shape = {columns, COUNT_OF(columns)};
    json_t *rows = NULL;
    int rc = rows_by_id(ar,
                        "SELECT outcome, count(*) FROM attempts WHERE run_id = ?"
                        " GROUP BY outcome ORDER BY outcome",
                        id, row_object, &shape, &rows, err, errlen, "count attempts");
    if (rc < 0)
        return rc;
    json_int_t explored = 0, committed = 0;
    json_t *outcomes = json_object();
    int bad = !outcomes;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const char *outcome = opt_string(row, "outcome");
        json_int_t n = json_integer_value(json_object_get(row, "count"));
        if (!outcome || bad)
            continue;
        explored += strcmp(outcome, "retime") != 0 ? n : 0;
        committed += strcmp(outcome, "committed") == 0 ? n : 0;
        bad |= put(outcomes, outcome, json_integer(n));
    }
    json_decref(rows);
    json_t *summary = bad ? NULL
                          : json_pack("{sIsIsO}", "explored", explored, "committed", committed,
                                      "outcomes", outcomes);
    json_decref(outcomes);
    return put(run, "attempts", summary) ? oom(err, errlen) : 0;
}

/*
 * Add the unit of the run's scores ("GFLOP/s", "GB/s", ...) to its object:
 * from the latest "evaluator" event that names one (lua/avo/init.lua);
 * null for runs that recorded none.
 */
static int run_add_unit(avo_archive *ar, json_t *run, int64_t id, char *err, size_t errlen)
{
    static const column columns[] = {{"data", COL_JSON}};
    static const row_shape shape = {columns, COUNT_OF(columns)};
    json_t *rows = NULL;
    int rc = rows_by_id(ar,
                        "SELECT data FROM events WHERE run_id = ? AND kind = 'evaluator'"
                        " ORDER BY id DESC",
                        id, row_object, &shape, &rows, err, errlen, "read evaluator events");
    if (rc < 0)
        return rc;
    json_t *unit = NULL;
    for (size_t i = 0; !unit && i < json_array_size(rows); i++) {
        json_t *v = json_object_get(json_object_get(json_array_get(rows, i), "data"), "unit");
        unit = json_is_string(v) ? v : NULL;
    }
    rc = put(run, "unit", unit ? json_incref(unit) : json_null()) ? oom(err, errlen) : 0;
    json_decref(rows);
    return rc;
}

/*
 * The run object (avo_archive_run_get) plus its summary: candidate counts
 * and best (run_add_candidates), agent attempts (run_add_attempts) and the
 * score unit (run_add_unit).
 */
int avo_archive_run_summary(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    json_t *run = NULL;
    int rc = avo_archive_run_get(ar, run_id, &run, err, errlen);
    if (rc < 0)
        return rc;
    int64_t id = json_integer_value(json_object_get(run, "id"));
    rc = run_add_candidates(ar, run, id, err, errlen);
    if (rc == 0)
        rc = run_add_attempts(ar, run, id, err, errlen);
    if (rc == 0)
        rc = run_add_unit(ar, run, id, err, errlen);
    if (rc == 0) {
        json_t *baselines = NULL;
        rc = avo_archive_baselines(ar, id, &baselines, err, errlen);
        if (rc == 0 && put(run, "baselines", baselines))
            rc = oom(err, errlen);
    }
    if (rc < 0) {
        json_decref(run);
        return rc;
    }
    *ret = run;
    return 0;
}

/* avo_archive_run_summary() as an object_getter. */
static int run_summary_of(avo_archive *ar, int64_t id, int unused, json_t **ret, char *err,
                          size_t errlen)
{
    (void)unused;
    return avo_archive_run_summary(ar, id, ret, err, errlen);
}

/* Every run, oldest first, each as avo_archive_run_summary() gives it.  An
 * archive without runs gives []. */
int avo_archive_runs(avo_archive *ar, json_t **ret, char *err, size_t errlen)
{
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "runs: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar, "SELECT id FROM runs ORDER BY id", &st, err, errlen, "list runs");
    if (rc < 0)
        return rc;
    return objects_by_id(ar, st, run_summary_of, 0, ret, err, errlen, "list runs");
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
    if (run_id) {
        json_t *run = NULL;
        int rc = avo_archive_run_get(ar, run_id, &run, err, errlen);
        json_decref(run);
        if (rc < 0)
            return rc;
    }
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar, "SELECT id FROM candidates WHERE ?1 = 0 OR run_id = ?1 ORDER BY id", &st, err,
                  errlen, "list candidates");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    return objects_by_id(ar, st, avo_archive_candidate_get, with_source, ret, err, errlen,
                         "list candidates");
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
        rc = oom(err, errlen);
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
            for (size_t k = 0; !bad && k < COUNT_OF(node_keys); k++)
                bad |= put(node, node_keys[k], json_incref(json_object_get(row, node_keys[k])));
            json_decref(row);
            bad |= json_array_append_new(nodes, node) != 0;
            if (bad) {
                json_decref(parents);
                rc = oom(err, errlen);
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
                rc = oom(err, errlen);
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
        rc = oom(err, errlen);
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
        rc = oom(err, errlen);
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

/* ------------------------------------------------------------- LLM calls */

/* 1 if table `name` exists, 0 if not, or a negative code. */
static int table_exists(avo_archive *ar, const char *name, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", &st, err,
                  errlen, "read schema");
    if (rc < 0)
        return rc;
    bind_text(st, 1, name);
    rc = step_row(ar, st, err, errlen, "read schema");
    release(st);
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
        return rc < 0 ? rc : *ret ? 0 : oom(err, errlen);
    }

    json_t *names = NULL;
    sqlite3_stmt *st = NULL;
    rc = stmt(ar, "SELECT name FROM pragma_table_info('llm_calls')", &st, err, errlen,
              "read llm_calls columns");
    if (rc == 0)
        rc = collect_rows(ar, st, row_first, NULL, &names, err, errlen, "read llm_calls columns");
    if (rc < 0)
        return rc;

    /* Column names come from our own list, never from the file. */
    column columns[1 + COUNT_OF(summed)] = {{"calls", COL_VALUE}};
    row_shape shape = {columns, 1};
    char sql[512] = "SELECT count(*)";
    for (size_t k = 0; k < COUNT_OF(summed); k++) {
        if (!has_string(names, summed[k]))
            continue;
        columns[shape.n++] = (column){summed[k], COL_VALUE};
        snprintf(sql + strlen(sql), sizeof sql - strlen(sql), ", total(\"%s\")", summed[k]);
    }
    int by_run = run_id && has_string(names, "run_id");
    json_decref(names);
    snprintf(sql + strlen(sql), sizeof sql - strlen(sql), " FROM llm_calls%s",
             by_run ? " WHERE run_id = ?" : "");

    rc = sqlite3_prepare_v2(ar->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return sql_error(ar->db, rc, err, errlen, "read llm_calls");
    if (by_run)
        sqlite3_bind_int64(st, 1, run_id);
    rc = fetch_row(ar, st, row_object, &shape, ret, err, errlen, "read llm_calls");
    sqlite3_finalize(st);
    return rc;
}

/*
 * Insert one row of llm_calls from `call` (see archive.h).  Request and
 * response are stored as json_text(), so equal requests are equal text.
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
    char *request = json_text(req ? req : json_null());
    char *response = has_value(resp) ? json_text(resp) : NULL;
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (!request || (has_value(resp) && !response))
        rc = avo_error(err, errlen, AVO_EINVAL, "llm call: request or response not encodable");
    else
        rc = stmt(ar,
                  "INSERT INTO llm_calls (run_id, t, provider, model, request_hash, request,"
                  " response, status, error, input_tokens, output_tokens, cost_usd, latency_s,"
                  " attempts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  &st, err, errlen, "record llm call");
    if (rc == 0) {
        const json_t *attempts = json_object_get(call, "attempts");
        bind_id(st, 1, run_id);
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
        sqlite3_bind_int64(st, 14, json_is_integer(attempts) ? json_integer_value(attempts) : 1);
        rc = step_done(ar, st, err, errlen, "record llm call");
    }
    free(request);
    free(response);
    if (rc == 0 && ret_id)
        *ret_id = sqlite3_last_insert_rowid(ar->db);
    return rc;
}

/* LLM calls of run_id (0: all runs), oldest first; request and response
 * parsed. */
int avo_archive_llm_calls(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    static const column columns[] = {
        {"id", COL_VALUE},       {"run_id", COL_VALUE},       {"t", COL_VALUE},
        {"provider", COL_VALUE}, {"model", COL_VALUE},        {"request_hash", COL_VALUE},
        {"request", COL_JSON},   {"response", COL_JSON},      {"status", COL_VALUE},
        {"error", COL_VALUE},    {"input_tokens", COL_VALUE}, {"output_tokens", COL_VALUE},
        {"cost_usd", COL_VALUE}, {"latency_s", COL_VALUE},    {"attempts", COL_VALUE},
    };
    static const row_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "llm_calls: missing argument");
    *ret = NULL;
    return rows_by_id(ar,
                      "SELECT id, run_id, t, provider, model, request_hash, request, response,"
                      " status, error, input_tokens, output_tokens, cost_usd, latency_s, attempts"
                      " FROM llm_calls WHERE ?1 = 0 OR run_id = ?1 ORDER BY id",
                      run_id, row_object, &shape, ret, err, errlen, "read llm calls");
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
    int rc = stmt(ar, "INSERT INTO rebench_sets (run_id, t, config) VALUES (?, ?, ?)", &st, err,
                  errlen, "start rebench set");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_double(st, 2, avo_now());
    bind_text(st, 3, config_json);
    rc = step_done(ar, st, err, errlen, "start rebench set");
    if (rc == 0)
        *ret_id = sqlite3_last_insert_rowid(ar->db);
    return rc;
}

/* Record one timing round of one candidate in rebench set set_id. */
int avo_archive_rebench_add(avo_archive *ar, int64_t set_id, int64_t candidate_id, int round,
                            double score, const char *result_json, char *err, size_t errlen)
{
    if (!ar)
        return avo_error(err, errlen, AVO_EINVAL, "rebench_add: missing argument");
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar,
                  "INSERT OR REPLACE INTO rebench_results (set_id, candidate_id, round, score,"
                  " result) VALUES (?, ?, ?, ?, ?)",
                  &st, err, errlen, "record rebench result");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, set_id);
    sqlite3_bind_int64(st, 2, candidate_id);
    sqlite3_bind_int(st, 3, round);
    sqlite3_bind_double(st, 4, score);
    bind_text(st, 5, result_json);
    return step_done(ar, st, err, errlen, "record rebench result");
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
    int rc = put_source(ar, opt_string(a->attempt, "source"), hash, err, errlen);
    sqlite3_stmt *st = NULL;
    if (rc == 0)
        rc = stmt(ar,
                  "INSERT INTO attempts (run_id, step, lineage, t, source_hash, knobs, status,"
                  " score, outcome, reason, candidate_id, configs)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  &st, err, errlen, "record attempt");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, a->run_id);
    sqlite3_bind_int64(st, 2, json_integer_value(json_object_get(a->attempt, "step")));
    bind_text(st, 3, opt_string(a->attempt, "lineage"));
    sqlite3_bind_double(st, 4, avo_now());
    bind_text(st, 5, hash);
    bind_text(st, 6, a->knobs_text);
    bind_text(st, 7, opt_string(a->attempt, "status"));
    bind_json_real(st, 8, json_object_get(a->attempt, "score"));
    bind_text(st, 9, opt_string(a->attempt, "outcome"));
    bind_text(st, 10, opt_string(a->attempt, "reason"));
    bind_json_int(st, 11, json_object_get(a->attempt, "candidate_id"));
    bind_text(st, 12, a->configs_text);
    rc = step_done(ar, st, err, errlen, "record attempt");
    if (rc == 0)
        a->id = sqlite3_last_insert_rowid(ar->db);
    return rc;
}

/*
 * Insert one attempt (see archive.h) and its source in one transaction.
 * Knobs and configs are stored as json_text().
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
        .knobs_text = has_value(knobs) ? json_text(knobs) : strdup("{}"),
        .configs_text = has_value(configs) ? json_text(configs) : NULL,
    };
    int rc;
    if (!a.knobs_text || (has_value(configs) && !a.configs_text))
        rc = avo_error(err, errlen, AVO_ENOMEM, "attempt: cannot encode knobs or configs");
    else
        rc = in_transaction(ar, insert_attempt, &a, err, errlen);
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
    int rc = stmt(ar,
                  "UPDATE attempts SET outcome = ?1, reason = coalesce(?2, reason),"
                  " candidate_id = coalesce(?3, candidate_id) WHERE id = ?4",
                  &st, err, errlen, "update attempt");
    if (rc < 0)
        return rc;
    bind_text(st, 1, outcome);
    bind_text(st, 2, reason);
    bind_id(st, 3, candidate_id);
    sqlite3_bind_int64(st, 4, id);
    rc = step_done(ar, st, err, errlen, "update attempt");
    return rc < 0 ? rc : require_changed(ar, "attempt", id, err, errlen);
}

/* Attempts of run_id (0: all runs), oldest first; knobs and configs parsed. */
int avo_archive_attempts(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    static const column columns[] = {
        {"id", COL_VALUE},      {"run_id", COL_VALUE}, {"step", COL_VALUE},
        {"lineage", COL_VALUE}, {"t", COL_VALUE},      {"source_hash", COL_VALUE},
        {"knobs", COL_JSON},    {"status", COL_VALUE}, {"score", COL_VALUE},
        {"outcome", COL_VALUE}, {"reason", COL_VALUE}, {"candidate_id", COL_VALUE},
        {"configs", COL_JSON},
    };
    static const row_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "attempts: missing argument");
    *ret = NULL;
    return rows_by_id(ar,
                      "SELECT id, run_id, step, lineage, t, source_hash, knobs, status, score,"
                      " outcome, reason, candidate_id, configs FROM attempts"
                      " WHERE ?1 = 0 OR run_id = ?1 ORDER BY id",
                      run_id, row_object, &shape, ret, err, errlen, "read attempts");
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
    char *result_text = has_value(result) ? json_text(result) : NULL;
    if (has_value(result) && !result_text)
        return avo_error(err, errlen, AVO_ENOMEM, "baseline: cannot encode the result");
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar,
                  "INSERT OR REPLACE INTO baselines (run_id, device, device_name, name, status,"
                  " reason, library, version, path, result, score, created_at, evaluator)"
                  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  &st, err, errlen, "record baseline");
    if (rc < 0) {
        free(result_text);
        return rc;
    }
    sqlite3_bind_int64(st, 1, run_id);
    bind_text(st, 2, opt_string(baseline, "device"));
    bind_text(st, 3, opt_string(baseline, "device_name"));
    bind_text(st, 4, opt_string(baseline, "name"));
    bind_text(st, 5, opt_string(baseline, "status"));
    bind_text(st, 6, opt_string(baseline, "reason"));
    bind_text(st, 7, opt_string(baseline, "library"));
    bind_text(st, 8, opt_string(baseline, "version"));
    bind_text(st, 9, opt_string(baseline, "path"));
    bind_text(st, 10, result_text);
    bind_json_real(st, 11, score);
    sqlite3_bind_double(st, 12, avo_now());
    bind_text(st, 13, opt_string(baseline, "evaluator"));
    rc = step_done(ar, st, err, errlen, "record baseline");
    free(result_text);
    if (rc == 0 && ret_id)
        *ret_id = sqlite3_last_insert_rowid(ar->db);
    return rc;
}

/* Baselines of run_id (0: all runs) in (run, name, device) order; result parsed. */
int avo_archive_baselines(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    static const column columns[] = {
        {"id", COL_VALUE},          {"run_id", COL_VALUE},  {"device", COL_VALUE},
        {"device_name", COL_VALUE}, {"name", COL_VALUE},    {"status", COL_VALUE},
        {"reason", COL_VALUE},      {"library", COL_VALUE}, {"version", COL_VALUE},
        {"path", COL_VALUE},        {"result", COL_JSON},   {"score", COL_VALUE},
        {"created_at", COL_VALUE},  {"evaluator", COL_VALUE},
    };
    static const row_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "baselines: missing argument");
    *ret = NULL;
    return rows_by_id(ar,
                      "SELECT id, run_id, device, device_name, name, status, reason, library,"
                      " version, path, result, score, created_at, evaluator FROM baselines"
                      " WHERE ?1 = 0 OR run_id = ?1 ORDER BY run_id, name, device",
                      run_id, row_object, &shape, ret, err, errlen, "read baselines");
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
    int rc = stmt(ar,
                  "INSERT INTO experiments (name, path, source, hash, plan, machine,"
                  " engine_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                  &st, err, errlen, "insert experiment");
    if (rc < 0)
        return rc;
    bind_text(st, 1, info->name);
    bind_text(st, 2, info->path);
    bind_text(st, 3, info->source);
    bind_text(st, 4, info->hash);
    bind_text(st, 5, info->plan_json);
    bind_text(st, 6, info->machine_json);
    bind_text(st, 7, info->engine_version);
    sqlite3_bind_double(st, 8, avo_now());
    rc = step_done(ar, st, err, errlen, "insert experiment");
    if (rc == 0)
        *ret_id = sqlite3_last_insert_rowid(ar->db);
    return rc;
}

/* Every experiment of the archive, oldest first, as [{id, name, path,
 * source, hash, plan, machine, engine_version, created_at}] (plan and
 * machine parsed). */
int avo_archive_experiments(avo_archive *ar, json_t **ret, char *err, size_t errlen)
{
    static const column columns[] = {
        {"id", COL_VALUE},     {"name", COL_VALUE},           {"path", COL_VALUE},
        {"source", COL_VALUE}, {"hash", COL_VALUE},           {"plan", COL_JSON},
        {"machine", COL_JSON}, {"engine_version", COL_VALUE}, {"created_at", COL_VALUE}};
    static const row_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "experiments: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar,
                  "SELECT id, name, path, source, hash, plan, machine, engine_version, created_at"
                  " FROM experiments ORDER BY id",
                  &st, err, errlen, "read experiments");
    if (rc < 0)
        return rc;
    return collect_rows(ar, st, row_object, &shape, ret, err, errlen, "read experiments");
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
    int rc = stmt(ar,
                  "INSERT INTO experiment_cells (experiment_id, cell, run_id, status, reason,"
                  " exit_code, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                  " ON CONFLICT (experiment_id, cell) DO UPDATE SET run_id = ?3, status = ?4,"
                  " reason = ?5, exit_code = ?6, updated_at = ?7",
                  &st, err, errlen, "record experiment cell");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, experiment_id);
    bind_text(st, 2, cell);
    bind_id(st, 3, run_id);
    bind_text(st, 4, status);
    bind_text(st, 5, reason);
    if (exit_code >= 0)
        sqlite3_bind_int(st, 6, exit_code);
    else
        sqlite3_bind_null(st, 6);
    sqlite3_bind_double(st, 7, avo_now());
    return step_done(ar, st, err, errlen, "record experiment cell");
}

/* The recorded cells of experiment_id as [{cell, run_id, status, reason,
 * exit_code, updated_at}], by cell name. */
int avo_archive_experiment_cells(avo_archive *ar, int64_t experiment_id, json_t **ret, char *err,
                                 size_t errlen)
{
    static const column columns[] = {{"cell", COL_VALUE},      {"run_id", COL_VALUE},
                                     {"status", COL_VALUE},    {"reason", COL_VALUE},
                                     {"exit_code", COL_VALUE}, {"updated_at", COL_VALUE}};
    static const row_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "experiment cells: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = stmt(ar,
                  "SELECT cell, run_id, status, reason, exit_code, updated_at FROM"
                  " experiment_cells WHERE experiment_id = ? ORDER BY cell",
                  &st, err, errlen, "read experiment cells");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, experiment_id);
    return collect_rows(ar, st, row_object, &shape, ret, err, errlen, "read experiment cells");
}
