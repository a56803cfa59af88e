/*
 * test_db.c — the one SQL layer of store/ (store/db.h): AVO_DB_TIMEOUT
 * parsed in one place, SQLite errors translated, cached statements,
 * transactions that commit or roll back, text that is not UTF-8 turned into
 * JSON, and the migration routine both the archive and the knowledge base
 * use: step by step, each step with its version, a failing step leaving
 * the file at the version before it, a newer file refused untouched.
 */
#include "store/db.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/avo-test-db-XXXXXX";

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int turn;
    char *p = buf[turn++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static void test_busy_timeout(void)
{
    char err[AVO_ERRLEN];
    int ms = -1;
    unsetenv("AVO_DB_TIMEOUT");
    CHECK_INT(avo_db_busy_timeout_ms(&ms, err, sizeof err), 0);
    CHECK_INT(ms, AVO_DB_BUSY_TIMEOUT_MS);
    setenv("AVO_DB_TIMEOUT", "2.5", 1);
    CHECK_INT(avo_db_busy_timeout_ms(&ms, err, sizeof err), 0);
    CHECK_INT(ms, 2500);
    setenv("AVO_DB_TIMEOUT", "0", 1);
    CHECK_INT(avo_db_busy_timeout_ms(&ms, err, sizeof err), 0);
    CHECK_INT(ms, 0);
    static const char *const bad[] = {"abc", "-1", "1s", "nan", "86401", " "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("AVO_DB_TIMEOUT", bad[i], 1);
        CHECK_INT(avo_db_busy_timeout_ms(&ms, err, sizeof err), AVO_EINVAL);
        CHECK_CONTAINS(err, "is not a number of seconds from 0 to 86400");
    }
    /* A connection is refused before its file is made. */
    setenv("AVO_DB_TIMEOUT", "abc", 1);
    avo_db *db = avo_db_new(tmp_path("never.db"));
    CHECK_INT(avo_db_connect(db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL, "archive", err,
                             sizeof err),
              AVO_EINVAL);
    CHECK_CONTAINS(err, "AVO_DB_TIMEOUT='abc'");
    CHECK(access(tmp_path("never.db"), F_OK) != 0);
    avo_db_unref(db);
    unsetenv("AVO_DB_TIMEOUT");
}

static void test_text_json(void)
{
    json_t *v = avo_db_text_json((const unsigned char *)"caf\xc3\xa9", 5);
    CHECK_STR(json_string_value(v), "caf\xc3\xa9");
    json_decref(v);
    v = avo_db_text_json((const unsigned char *)"caf\xe9!", 5);
    CHECK_STR(json_string_value(v), "caf?!");
    json_decref(v);
}

/* A toy set of tables: two steps, versioned in a table of its own. */
static const char *const toy_steps[] = {
    [1] = "CREATE TABLE toy (a INTEGER);",
    [2] = "ALTER TABLE toy ADD COLUMN b TEXT;",
};
static const char *const broken_steps[] = {
    [1] = "CREATE TABLE toy (a INTEGER);",
    [2] = "ALTER TABLE toy ADD COLUMN b TEXT;",
    [3] = "CREATE TABLE toy2 (x); SELECT no_such_function();",
};

static int toy_read(avo_db *db, int *ret_version, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int64_t v = 0;
    int rc = avo_db_stmt(db, "SELECT (SELECT user_version FROM pragma_user_version)", &st, err,
                         errlen, "read version");
    if (rc == 0)
        rc = avo_db_single_id(db, st, &v, err, errlen, "read version");
    *ret_version = (int)v;
    return rc;
}

static int toy_write(avo_db *db, int version, char *err, size_t errlen)
{
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", version);
    return avo_db_exec_script(db, sql, err, errlen, "set version");
}

static void test_migrate(void)
{
    char err[AVO_ERRLEN];
    const avo_db_schema toy = {"toy", "toy", toy_steps, 2, toy_read, toy_write};
    avo_db *db = avo_db_new(tmp_path("toy.db"));
    CHECK(db != NULL);
    if (!db)
        return;
    CHECK_INT(avo_db_connect(db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL, "toy", err,
                             sizeof err),
              0);
    CHECK_INT(avo_db_migrate(db, &toy, err, sizeof err), 0);
    int v = 0;
    CHECK_INT(toy_read(db, &v, err, sizeof err), 0);
    CHECK_INT(v, 2);
    /* Current: nothing to do. */
    CHECK_INT(avo_db_migrate(db, &toy, err, sizeof err), 0);

    /* A step that fails is rolled back with its version: the file stays at
     * the version before it, and no transaction stays open. */
    const avo_db_schema broken = {"toy", "toy", broken_steps, 3, toy_read, toy_write};
    CHECK_INT(avo_db_migrate(db, &broken, err, sizeof err), AVO_ESQL);
    CHECK_CONTAINS(err, "migrate toy to schema version 3");
    CHECK_INT(toy_read(db, &v, err, sizeof err), 0);
    CHECK_INT(v, 2);
    CHECK(sqlite3_get_autocommit(db->sql));
    sqlite3_stmt *st = NULL;
    int64_t n = -1;
    CHECK_INT(avo_db_stmt(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'toy2'", &st, err,
                          sizeof err, "x"),
              0);
    CHECK_INT(avo_db_single_id(db, st, &n, err, sizeof err, "x"), 0);
    CHECK_INT(n, 0);

    /* A newer file is refused, naming both versions. */
    const avo_db_schema old = {"toy", "toy file", toy_steps, 1, toy_read, toy_write};
    CHECK_INT(avo_db_migrate(db, &old, err, sizeof err), AVO_ESCHEMA);
    CHECK_CONTAINS(err, "toy file '");
    CHECK_CONTAINS(err, "has schema version 2 but this avo knows up to 1");

    /* Transactions: avo_db_end commits on 0 and rolls back on failure. */
    CHECK_INT(avo_db_begin(db, err, sizeof err), 0);
    CHECK_INT(avo_db_exec(db, "INSERT INTO toy (a) VALUES (1)", err, sizeof err, "insert"), 0);
    CHECK_INT(avo_db_end(db, 0, err, sizeof err), 0);
    CHECK_INT(avo_db_begin(db, err, sizeof err), 0);
    CHECK_INT(avo_db_exec(db, "INSERT INTO toy (a) VALUES (2)", err, sizeof err, "insert"), 0);
    CHECK_INT(avo_db_end(db, AVO_EINVAL, err, sizeof err), AVO_EINVAL);
    CHECK(sqlite3_get_autocommit(db->sql));
    CHECK_INT(avo_db_stmt(db, "SELECT count(*) FROM toy", &st, err, sizeof err, "count"), 0);
    CHECK_INT(avo_db_single_id(db, st, &n, err, sizeof err, "count"), 0);
    CHECK_INT(n, 1);

    /* Errors name the operation; a bad statement is not cached. */
    CHECK_INT(avo_db_stmt(db, "SELECT nope FROM toy", &st, err, sizeof err, "read nope"), AVO_ESQL);
    CHECK_CONTAINS(err, "read nope: no such column: nope");

    /* A second holder keeps the connection open after the first lets go. */
    avo_db *other = avo_db_ref(db);
    avo_db_unref(db);
    CHECK_INT(avo_db_exec(other, "INSERT INTO toy (a) VALUES (3)", err, sizeof err, "insert"), 0);
    avo_db_unref(other);
    avo_db_unref(NULL);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_busy_timeout();
    test_text_json();
    test_migrate();
    unlink(tmp_path("toy.db"));
    unlink(tmp_path("toy.db-journal"));
    rmdir(tmpdir);
    return check_finish();
}
