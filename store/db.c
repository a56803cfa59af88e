/*
 * db.c — the one SQL layer of store/ (see db.h for what it holds).
 *
 * Invariants:
 *   - Every statement of fixed text is prepared once, on first use, and
 *     cached in db->stmts under its SQL text; after every use it is reset
 *     with its bindings cleared (avo_db_release), so no statement holds a
 *     read snapshot or borrowed text between calls.
 *   - Values always travel as bound parameters.
 *   - No transaction stays open after avo_db_end or a failed migration step.
 */
#include "store/db.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ connection */

int avo_db_busy_timeout_ms(int *ret_ms, char *err, size_t errlen)
{
    const char *env = getenv("AVO_DB_TIMEOUT");
    *ret_ms = AVO_DB_BUSY_TIMEOUT_MS;
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

avo_db *avo_db_new(const char *path)
{
    avo_db *db = calloc(1, sizeof *db);
    if (!db)
        return NULL;
    db->refs = 1;
    db->busy_ms = AVO_DB_BUSY_TIMEOUT_MS;
    db->path = strdup(path);
    if (!db->path) {
        free(db);
        return NULL;
    }
    return db;
}

avo_db *avo_db_ref(avo_db *db)
{
    if (db)
        db->refs++;
    return db;
}

void avo_db_disconnect(avo_db *db)
{
    for (size_t i = 0; i < db->n_stmts; i++)
        sqlite3_finalize(db->stmts[i]);
    db->n_stmts = 0;
    sqlite3_close(db->sql);
    db->sql = NULL;
}

void avo_db_unref(avo_db *db)
{
    if (!db || --db->refs > 0)
        return;
    avo_db_disconnect(db);
    free(db->stmts);
    free(db->path);
    free(db);
}

int avo_db_connect(avo_db *db, int flags, const char *uri, const char *noun, char *err,
                   size_t errlen)
{
    /* The timeout first: a malformed AVO_DB_TIMEOUT is refused before any
     * file is opened (or created). */
    int rc = avo_db_busy_timeout_ms(&db->busy_ms, err, errlen);
    if (rc < 0)
        return rc;
    avo_db_disconnect(db);
    rc = sqlite3_open_v2(uri ? uri : db->path, &db->sql, flags, NULL);
    if (rc != SQLITE_OK) {
        char what[PATH_MAX + 64];
        snprintf(what, sizeof what, "cannot open %s '%s'", noun, db->path);
        rc = avo_db_error(db, rc, err, errlen, what);
        avo_db_disconnect(db);
        return rc;
    }
    sqlite3_busy_timeout(db->sql, db->busy_ms);
    return 0;
}

int avo_db_copy_to_memory(avo_db *db, char *err, size_t errlen)
{
    sqlite3 *mem = NULL;
    int rc = sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE, NULL);
    if (rc != SQLITE_OK) {
        sqlite3_close(mem);
        return avo_error(err, errlen, AVO_ENOMEM, "cannot open a database in memory");
    }
    sqlite3_backup *b = sqlite3_backup_init(mem, "main", db->sql, "main");
    rc = b ? sqlite3_backup_step(b, -1) : sqlite3_errcode(mem);
    if (b)
        sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) {
        avo_db copy = {.sql = mem};
        rc = avo_db_error(&copy, rc, err, errlen, "copy the read-only archive into memory");
        sqlite3_close(mem);
        return rc;
    }
    avo_db_disconnect(db);
    db->sql = mem;
    return 0;
}

/* ---------------------------------------------------------------- errors */

int avo_db_error(const avo_db *db, int rc, char *err, size_t errlen, const char *what)
{
    const char *msg = db && db->sql ? sqlite3_errmsg(db->sql) : sqlite3_errstr(rc);
    if (strstr(msg, "no such module: fts5"))
        return avo_error(err, errlen, AVO_ESQL,
                         "%s: this SQLite was built without FTS5, which the knowledge base needs",
                         what);
    int code = (rc & 0xff) == SQLITE_NOMEM ? AVO_ENOMEM : AVO_ESQL;
    return avo_error(err, errlen, code, "%s: %s", what, msg);
}

int avo_db_oom(char *err, size_t errlen)
{
    return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
}

/* ------------------------------------------------------------ statements */

int avo_db_stmt(avo_db *db, const char *sql, sqlite3_stmt **ret, char *err, size_t errlen,
                const char *what)
{
    for (size_t i = 0; i < db->n_stmts; i++) {
        if (strcmp(sqlite3_sql(db->stmts[i]), sql) == 0) {
            *ret = db->stmts[i];
            return 0;
        }
    }
    if (db->n_stmts == db->cap_stmts) {
        size_t cap = db->cap_stmts ? 2 * db->cap_stmts : 32;
        sqlite3_stmt **stmts = realloc(db->stmts, cap * sizeof *stmts);
        if (!stmts)
            return avo_db_oom(err, errlen);
        db->stmts = stmts;
        db->cap_stmts = cap;
    }
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v3(db->sql, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
    if (rc != SQLITE_OK)
        return avo_db_error(db, rc, err, errlen, what);
    db->stmts[db->n_stmts++] = st;
    *ret = st;
    return 0;
}

void avo_db_release(sqlite3_stmt *st)
{
    if (st) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
}

int avo_db_step_row(avo_db *db, sqlite3_stmt *st, char *err, size_t errlen, const char *what)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        return 1;
    return rc == SQLITE_DONE ? 0 : avo_db_error(db, rc, err, errlen, what);
}

int avo_db_step_done(avo_db *db, sqlite3_stmt *st, char *err, size_t errlen, const char *what)
{
    int rc = sqlite3_step(st);
    int ret = rc == SQLITE_DONE ? 0 : avo_db_error(db, rc, err, errlen, what);
    avo_db_release(st);
    return ret;
}

int avo_db_exec(avo_db *db, const char *sql, char *err, size_t errlen, const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(db, sql, &st, err, errlen, what);
    return rc < 0 ? rc : avo_db_step_done(db, st, err, errlen, what);
}

int avo_db_exec_script(avo_db *db, const char *sql, char *err, size_t errlen, const char *what)
{
    int rc = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : avo_db_error(db, rc, err, errlen, what);
}

int avo_db_single_id(avo_db *db, sqlite3_stmt *st, int64_t *ret_id, char *err, size_t errlen,
                     const char *what)
{
    int rc = avo_db_step_row(db, st, err, errlen, what);
    *ret_id = rc == 1 ? sqlite3_column_int64(st, 0) : 0;
    avo_db_release(st);
    return rc < 0 ? rc : 0;
}

int avo_db_require_changed(avo_db *db, const char *noun, int64_t id, char *err, size_t errlen)
{
    if (sqlite3_changes(db->sql) > 0)
        return 0;
    return avo_error(err, errlen, AVO_ENOTFOUND, "no %s %lld", noun, (long long)id);
}

int64_t avo_db_last_id(const avo_db *db)
{
    return sqlite3_last_insert_rowid(db->sql);
}

/* ---------------------------------------------------------- transactions */

void avo_db_rollback(avo_db *db)
{
    if (sqlite3_get_autocommit(db->sql))
        return;
    if (avo_db_exec(db, "ROLLBACK", NULL, 0, "rollback") < 0 && !sqlite3_get_autocommit(db->sql))
        sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
}

int avo_db_begin(avo_db *db, char *err, size_t errlen)
{
    return avo_db_exec(db, "BEGIN IMMEDIATE", err, errlen, "begin transaction");
}

int avo_db_end(avo_db *db, int rc, char *err, size_t errlen)
{
    if (rc == 0)
        rc = avo_db_exec(db, "COMMIT", err, errlen, "commit");
    if (rc < 0)
        avo_db_rollback(db);
    return rc;
}

/* --------------------------------------------------------------- binding */

int avo_db_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, i);
}

void avo_db_bind_id(sqlite3_stmt *st, int i, int64_t id)
{
    if (id > 0)
        sqlite3_bind_int64(st, i, id);
    else
        sqlite3_bind_null(st, i);
}

void avo_db_bind_json_real(sqlite3_stmt *st, int i, const json_t *v)
{
    if (json_is_number(v))
        sqlite3_bind_double(st, i, json_number_value(v));
    else
        sqlite3_bind_null(st, i);
}

void avo_db_bind_json_int(sqlite3_stmt *st, int i, const json_t *v)
{
    if (json_is_integer(v))
        sqlite3_bind_int64(st, i, json_integer_value(v));
    else if (json_is_real(v))
        sqlite3_bind_int64(st, i, (sqlite3_int64)json_real_value(v));
    else
        sqlite3_bind_null(st, i);
}

char *avo_db_json_text(const json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

/* ---------------------------------------------------------- rows -> JSON */

json_t *avo_db_text_json(const unsigned char *s, int n)
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

json_t *avo_db_column_json(sqlite3_stmt *st, int i)
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
        return s ? avo_db_text_json(s, sqlite3_column_bytes(st, i)) : NULL;
    }
    }
}

json_t *avo_db_column_parsed(sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return json_null();
    const char *s = (const char *)sqlite3_column_text(st, i);
    json_t *v = s ? json_loads(s, JSON_DECODE_ANY, NULL) : NULL;
    return v ? v : avo_db_column_json(st, i);
}

int avo_db_put(json_t *obj, const char *key, json_t *v)
{
    return !v || json_object_set_new(obj, key, v) != 0;
}

json_t *avo_db_row_object(sqlite3_stmt *st, const avo_db_shape *shape)
{
    json_t *obj = json_object();
    for (size_t k = 0; obj && k < shape->n; k++) {
        const avo_db_column *c = &shape->columns[k];
        if (c->kind == AVO_DB_OPTIONAL && sqlite3_column_type(st, (int)k) == SQLITE_NULL)
            continue;
        json_t *v = c->kind == AVO_DB_JSON   ? avo_db_column_parsed(st, (int)k)
                    : c->kind == AVO_DB_BOOL ? json_boolean(sqlite3_column_int(st, (int)k))
                                             : avo_db_column_json(st, (int)k);
        if (avo_db_put(obj, c->key, v)) {
            json_decref(obj);
            obj = NULL;
        }
    }
    return obj;
}

json_t *avo_db_row_first(sqlite3_stmt *st, const avo_db_shape *shape)
{
    (void)shape;
    return avo_db_column_json(st, 0);
}

int avo_db_collect_rows(avo_db *db, sqlite3_stmt *st, avo_db_row_builder *build,
                        const avo_db_shape *shape, json_t **ret, char *err, size_t errlen,
                        const char *what)
{
    json_t *rows = json_array();
    int rc = rows ? 0 : avo_db_oom(err, errlen);
    while (rc == 0 && (rc = avo_db_step_row(db, st, err, errlen, what)) == 1)
        rc = json_array_append_new(rows, build(st, shape)) == 0 ? 0 : avo_db_oom(err, errlen);
    avo_db_release(st);
    if (rc < 0) {
        json_decref(rows);
        return rc;
    }
    *ret = rows;
    return 0;
}

int avo_db_fetch_row(avo_db *db, sqlite3_stmt *st, avo_db_row_builder *build,
                     const avo_db_shape *shape, json_t **ret, char *err, size_t errlen,
                     const char *what)
{
    *ret = NULL;
    int rc = avo_db_step_row(db, st, err, errlen, what);
    if (rc == 1 && !(*ret = build(st, shape)))
        rc = avo_db_oom(err, errlen);
    avo_db_release(st);
    return rc < 0 ? rc : 0;
}

/* The statement for `sql` with its one parameter bound to id. */
static int stmt_with_id(avo_db *db, const char *sql, int64_t id, sqlite3_stmt **ret, char *err,
                        size_t errlen, const char *what)
{
    int rc = avo_db_stmt(db, sql, ret, err, errlen, what);
    if (rc == 0)
        sqlite3_bind_int64(*ret, 1, id);
    return rc;
}

int avo_db_rows_by_id(avo_db *db, const char *sql, int64_t id, avo_db_row_builder *build,
                      const avo_db_shape *shape, json_t **ret, char *err, size_t errlen,
                      const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_with_id(db, sql, id, &st, err, errlen, what);
    return rc < 0 ? rc : avo_db_collect_rows(db, st, build, shape, ret, err, errlen, what);
}

int avo_db_row_by_id(avo_db *db, const char *sql, int64_t id, const avo_db_shape *shape,
                     json_t **ret, char *err, size_t errlen, const char *what)
{
    sqlite3_stmt *st = NULL;
    int rc = stmt_with_id(db, sql, id, &st, err, errlen, what);
    return rc < 0 ? rc : avo_db_fetch_row(db, st, avo_db_row_object, shape, ret, err, errlen, what);
}

/* --------------------------------------------------------------- schemas */

int avo_db_schema_newer(const avo_db *db, const avo_db_schema *schema, int version, char *err,
                        size_t errlen)
{
    return avo_error(err, errlen, AVO_ESCHEMA,
                     "%s '%s' has schema version %d but this avo knows up to %d; upgrade avo",
                     schema->in_file, db->path, version, schema->version);
}

/*
 * One step inside its transaction: re-read the version, apply the next
 * step and record it.  *ret_done = 1 once the tables are current.
 */
static int migrate_step(avo_db *db, const avo_db_schema *schema, int *ret_done, char *err,
                        size_t errlen)
{
    int version = 0;
    int rc = schema->read(db, &version, err, errlen);
    if (rc < 0)
        return rc;
    if (version > schema->version)
        return avo_db_schema_newer(db, schema, version, err, errlen);
    if (version == schema->version) {
        *ret_done = 1;
        return 0;
    }
    int next = version + 1;
    char what[128];
    snprintf(what, sizeof what, "migrate %s to schema version %d", schema->name, next);
    rc = avo_db_exec_script(db, schema->steps[next], err, errlen, what);
    return rc < 0 ? rc : schema->write(db, next, err, errlen);
}

int avo_db_migrate(avo_db *db, const avo_db_schema *schema, char *err, size_t errlen)
{
    /* Read first, outside any transaction: current tables (the common case)
     * need no write lock, so opening never waits for another writer. */
    int version = 0;
    int rc = schema->read(db, &version, err, errlen);
    if (rc < 0)
        return rc;
    if (version > schema->version)
        return avo_db_schema_newer(db, schema, version, err, errlen);
    int done = version == schema->version;
    while (!done) {
        rc = avo_db_begin(db, err, errlen);
        if (rc < 0)
            return rc;
        rc = avo_db_end(db, migrate_step(db, schema, &done, err, errlen), err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}
