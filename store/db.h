/*
 * db.h — the one SQL layer of store/: the SQLite connection that the
 * archive (archive.h) and the knowledge base (kb.h) are written on.
 *
 * What lives here and nowhere else:
 *   - opening a connection, with the busy timeout of AVO_DB_TIMEOUT parsed
 *     and checked in one place (avo_db_busy_timeout_ms), so every command
 *     refuses a malformed value the same way;
 *   - the translation of SQLite failures into AVO_E* codes and the caller's
 *     error buffer (avo_db_error);
 *   - statements: prepared once per connection and cached under their SQL
 *     text (avo_db_stmt), stepped and released by the helpers below, so no
 *     statement holds a read snapshot or borrowed text between calls;
 *   - transactions (avo_db_begin / avo_db_end);
 *   - columns to JSON, with the text fallback for bytes that are not UTF-8
 *     (avo_db_column_json), and rows to JSON objects by a table of columns;
 *   - schema versions: one migration routine (avo_db_migrate) for every set
 *     of tables a file holds, each step in its own transaction.
 *
 * An avo_db is reference-counted: the knowledge base of a run's archive
 * shares the archive's connection (avo_kb_open_archive) instead of opening
 * a second one, and the connection closes with its last holder.  One thread
 * only.  The struct is visible to store/ modules, which call SQLite on
 * db->sql directly for what has no helper (sqlite3_changes, ...); nothing
 * outside store/ includes this header.
 */
#ifndef AVO_DB_H
#define AVO_DB_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "core/avo.h"

/* How long a write waits for another process's lock before failing, unless
 * AVO_DB_TIMEOUT (seconds) says otherwise; SQLite's busy handler backs off
 * from 1 ms to 100 ms between tries. */
#define AVO_DB_BUSY_TIMEOUT_MS 60000

typedef struct avo_db {
    sqlite3 *sql;         /* NULL until avo_db_connect succeeds */
    char *path;           /* the file, for messages; owned */
    int busy_ms;          /* busy timeout in use */
    int refs;             /* holders; the last avo_db_unref closes */
    sqlite3_stmt **stmts; /* cached statements; avo_db_stmt finds them by SQL text */
    size_t n_stmts, cap_stmts;
} avo_db;

/* ------------------------------------------------------------ connection */

/*
 * The busy timeout in ms: AVO_DB_TIMEOUT seconds when set to a number from
 * 0 to 86400, else AVO_DB_BUSY_TIMEOUT_MS.  A malformed value is AVO_EINVAL
 * naming it; every connection of avo is opened through this check.
 */
int avo_db_busy_timeout_ms(int *ret_ms, char *err, size_t errlen);

/* A new handle for `path`, not yet connected, holding one reference; NULL
 * when out of memory.  Release with avo_db_unref. */
avo_db *avo_db_new(const char *path);

/* Another reference to db (returned); the connection stays open until every
 * holder has called avo_db_unref. */
avo_db *avo_db_ref(avo_db *db);

/* Drop one reference; the last finalizes the statements, closes the
 * connection and frees db.  Accepts NULL. */
void avo_db_unref(avo_db *db);

/*
 * Open the connection (flags as sqlite3_open_v2; `uri` names the file
 * instead of db->path when not NULL) and set the busy timeout.  `noun`
 * names the file in the message on failure ("archive", "knowledge base").
 * A connection opened before is closed first.  On failure the half-open
 * connection is closed again.
 */
int avo_db_connect(avo_db *db, int flags, const char *uri, const char *noun, char *err,
                   size_t errlen);

/* Finalize the cached statements and close the connection (db stays). */
void avo_db_disconnect(avo_db *db);

/*
 * Copy the connection's database into memory and continue there (a
 * read-only file whose schema is older than this avo's is migrated in the
 * copy, never on disk).
 */
int avo_db_copy_to_memory(avo_db *db, char *err, size_t errlen);

/* ---------------------------------------------------------------- errors */

/*
 * The one translation of SQLite failures: writes "what: <sqlite message>"
 * into the caller's buffer and returns AVO_ENOMEM for SQLITE_NOMEM, AVO_ESQL
 * otherwise (a SQLite without FTS5 is named as such).  Call it before any
 * rollback, which would replace the message.  db may be NULL.
 */
int avo_db_error(const avo_db *db, int rc, char *err, size_t errlen, const char *what);

/* AVO_ENOMEM, "out of memory". */
int avo_db_oom(char *err, size_t errlen);

/* ------------------------------------------------------------ statements */

/*
 * The statement for `sql` in *ret: the cached one with the same text, or
 * prepared now and cached for the connection's life.  Keyed by text so that
 * each function carries its own SQL; the scan is a few dozen strcmp,
 * nothing beside a step.  It stays owned by db; the caller finishes with
 * avo_db_release(), directly or through a helper that releases
 * (avo_db_step_done, avo_db_collect_rows, avo_db_fetch_row,
 * avo_db_single_id).  `what` names the operation should preparing fail.
 */
int avo_db_stmt(avo_db *db, const char *sql, sqlite3_stmt **ret, char *err, size_t errlen,
                const char *what);

/* Reset a statement and drop its bindings; tolerates NULL. */
void avo_db_release(sqlite3_stmt *st);

/* Step once: 1 for a row (st stays on it), 0 when done, or a negative code
 * naming `what`.  Does not release. */
int avo_db_step_row(avo_db *db, sqlite3_stmt *st, char *err, size_t errlen, const char *what);

/* Step a statement that returns no rows, then release it. */
int avo_db_step_done(avo_db *db, sqlite3_stmt *st, char *err, size_t errlen, const char *what);

/* Run one no-row statement without parameters (BEGIN, COMMIT, ...). */
int avo_db_exec(avo_db *db, const char *sql, char *err, size_t errlen, const char *what);

/* Run SQL text of several statements (schema steps), uncached. */
int avo_db_exec_script(avo_db *db, const char *sql, char *err, size_t errlen, const char *what);

/* Step a statement that yields at most one id, then release it; *ret_id = 0
 * when there is none. */
int avo_db_single_id(avo_db *db, sqlite3_stmt *st, int64_t *ret_id, char *err, size_t errlen,
                     const char *what);

/* After an UPDATE of the row `id`: AVO_ENOTFOUND ("no <noun> <id>") when it
 * matched none. */
int avo_db_require_changed(avo_db *db, const char *noun, int64_t id, char *err, size_t errlen);

/* The rowid of the last INSERT on this connection. */
int64_t avo_db_last_id(const avo_db *db);

/* ---------------------------------------------------------- transactions */

/* BEGIN IMMEDIATE: the write lock is taken now, waiting up to the busy
 * timeout, so a transaction never fails half way for want of it. */
int avo_db_begin(avo_db *db, char *err, size_t errlen);

/*
 * End the transaction that avo_db_begin opened: COMMIT when rc is 0, else
 * (or when the commit fails) ROLLBACK.  Returns rc, or the commit's error;
 * either way no transaction is open afterwards and err keeps the first
 * failure's text.
 */
int avo_db_end(avo_db *db, int rc, char *err, size_t errlen);

/* Roll back the open transaction, if any; keeps the caller's error text. */
void avo_db_rollback(avo_db *db);

/* --------------------------------------------------------------- binding */

/* Bind text or NULL.  The text must outlive the statement's next release. */
int avo_db_bind_text(sqlite3_stmt *st, int i, const char *s);

/* Bind an id, or NULL for 0: "none" in the API (run_id 0, candidate_id 0). */
void avo_db_bind_id(sqlite3_stmt *st, int i, int64_t id);

/* Bind a JSON number as REAL, anything else (null, absent) as NULL. */
void avo_db_bind_json_real(sqlite3_stmt *st, int i, const json_t *v);

/* Bind a JSON integer (or integral real) as INTEGER, anything else as NULL. */
void avo_db_bind_json_int(sqlite3_stmt *st, int i, const json_t *v);

/* v as stored JSON text: compact, keys sorted, so equal values are equal
 * text.  Malloc'ed, owned by the caller; NULL when out of memory. */
char *avo_db_json_text(const json_t *v);

/* ---------------------------------------------------------- rows -> JSON */

/*
 * A JSON string from n bytes of text.  Text that is not valid UTF-8 (a
 * kernel with a Latin-1 comment, a Latin-1 note in the knowledge base)
 * comes back with every non-ASCII byte as '?' rather than failing the whole
 * query.  NULL only when out of memory.
 */
json_t *avo_db_text_json(const unsigned char *s, int n);

/* Column i as JSON: null, integer, real or string (avo_db_text_json).
 * NULL when out of memory. */
json_t *avo_db_column_json(sqlite3_stmt *st, int i);

/* Column i holding JSON text, parsed; NULL column -> null; text that does
 * not parse comes back as a plain string. */
json_t *avo_db_column_parsed(sqlite3_stmt *st, int i);

/* Set obj[key] = v (stolen); returns 1 on failure so callers can OR up. */
int avo_db_put(json_t *obj, const char *key, json_t *v);

/* How avo_db_row_object() turns a column into JSON. */
enum avo_db_column_kind {
    AVO_DB_VALUE, /* as stored: null, integer, real or string (avo_db_column_json) */
    AVO_DB_JSON,  /* JSON text, parsed (avo_db_column_parsed) */
    AVO_DB_BOOL,  /* integer as true / false */
    AVO_DB_OPTIONAL, /* as AVO_DB_VALUE, but the key is left out where the value is null */
};

typedef struct avo_db_column {
    const char *key;
    enum avo_db_column_kind kind;
} avo_db_column;

/* The keys of a statement's result columns, in column order. */
typedef struct avo_db_shape {
    const avo_db_column *columns;
    size_t n;
} avo_db_shape;

/* Turns the current row of st into a new JSON value; NULL when out of memory. */
typedef json_t *avo_db_row_builder(sqlite3_stmt *st, const avo_db_shape *shape);

/* The row as an object with one key per column of `shape`. */
json_t *avo_db_row_object(sqlite3_stmt *st, const avo_db_shape *shape);

/* The row's first column as a plain value (id lists); no shape. */
json_t *avo_db_row_first(sqlite3_stmt *st, const avo_db_shape *shape);

/*
 * Step st to the end and collect build(row) of every row into a new array,
 * in *ret (owned by the caller); releases st.  *ret is left alone on error.
 */
int avo_db_collect_rows(avo_db *db, sqlite3_stmt *st, avo_db_row_builder *build,
                        const avo_db_shape *shape, json_t **ret, char *err, size_t errlen,
                        const char *what);

/* Step st once: *ret = build(row), owned by the caller, or NULL when the
 * statement yields no row; releases st. */
int avo_db_fetch_row(avo_db *db, sqlite3_stmt *st, avo_db_row_builder *build,
                     const avo_db_shape *shape, json_t **ret, char *err, size_t errlen,
                     const char *what);

/* avo_db_collect_rows() of the query `sql` with its one parameter bound to id. */
int avo_db_rows_by_id(avo_db *db, const char *sql, int64_t id, avo_db_row_builder *build,
                      const avo_db_shape *shape, json_t **ret, char *err, size_t errlen,
                      const char *what);

/* avo_db_fetch_row() of the query `sql` with its one parameter bound to id,
 * as an object of `shape`. */
int avo_db_row_by_id(avo_db *db, const char *sql, int64_t id, const avo_db_shape *shape,
                     json_t **ret, char *err, size_t errlen, const char *what);

/* --------------------------------------------------------------- schemas */

/*
 * A set of tables that a file holds and versions on its own: the archive's
 * (version in PRAGMA user_version) and the knowledge base's (version in
 * the row kb_meta('schema_version')).  Where each keeps its number is part
 * of the file format and stays; how a set is brought up to date is this
 * one routine.
 */
typedef struct avo_db_schema {
    /* Names the tables in messages: "migrate <name> to schema version 9". */
    const char *name;
    /* Names them before the file's path: "<in_file> 'x.db' has schema
     * version 9 but ..." ("archive", "knowledge base in"). */
    const char *in_file;
    /* steps[v] brings the tables from version v - 1 to v; steps[0] is
     * unused.  Append-only: a released step is never edited. */
    const char *const *steps;
    int version; /* the newest version: the last index of steps */
    /* The version the file records now (0: none yet). */
    int (*read)(avo_db *db, int *ret_version, char *err, size_t errlen);
    /* Record `version`, inside the step's transaction. */
    int (*write)(avo_db *db, int version, char *err, size_t errlen);
} avo_db_schema;

/* AVO_ESCHEMA: the file's `version` of `schema` is newer than this avo's. */
int avo_db_schema_newer(const avo_db *db, const avo_db_schema *schema, int version, char *err,
                        size_t errlen);

/*
 * Bring `schema` up to its newest version.  Each step runs in its own
 * BEGIN IMMEDIATE transaction together with the version it records, and
 * re-reads the version inside it (another process may have migrated since
 * we looked), so a file is always at exactly one version.  A version newer
 * than this avo's is refused (avo_db_schema_newer) before anything writes.
 */
int avo_db_migrate(avo_db *db, const avo_db_schema *schema, char *err, size_t errlen);

#endif
