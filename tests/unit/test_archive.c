/*
 * test_archive.c — the run archive: schema and migrations, every write and
 * query of archive.h on a small DAG, refusal of newer files, and a writer
 * killed with SIGKILL mid-stream leaving a consistent file that holds every
 * evaluation it reported.
 */
#include "store/archive.h"

#include "check.h"

#include <errno.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/avo-test-archive-XXXXXX";

/* tmpdir/name in a static buffer (one at a time is enough here). */
static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int turn;
    char *p = buf[turn++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

/* First column of the first row of `sql` on a raw connection, as an integer. */
static long long raw_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long long v = -12345;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* Same, as text (malloc'ed, or NULL). */
static char *raw_text(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    char *v = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_text(st, 0))
        v = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* Run SQL on a raw connection (creating the file); 0 on success. */
static int raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

/* Whole file into a malloc'ed, NUL-terminated buffer. */
static char *slurp(const char *path, size_t *ret_len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            buf = realloc(buf, cap);
        }
        memcpy(buf + len, chunk, n);
        len += n;
        buf[len] = '\0'; /* callers may use it as a string */
    }
    fclose(f);
    *ret_len = len;
    return buf ? buf : calloc(1, 1);
}

static avo_archive *open_ok(const char *path)
{
    avo_archive *ar = NULL;
    char err[AVO_ERRLEN] = "";
    int rc = avo_archive_open(&ar, path, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "open %s: %s\n", path, err);
    CHECK_INT(rc, 0);
    return ar;
}

static int64_t begin_run(avo_archive *ar, uint64_t seed)
{
    avo_run_info info = {.script_path = "examples/x.lua", .seed = seed};
    int64_t id = 0;
    char err[AVO_ERRLEN];
    CHECK_INT(avo_archive_run_begin(ar, &info, &id, err, sizeof err), 0);
    return id;
}

/* Add a candidate with up to two parents. */
static int64_t add(avo_archive *ar, int64_t run, const char *source, int64_t p1, const char *role1,
                   int64_t p2, const char *role2, const char *key)
{
    avo_parent_edge edges[2] = {{p1, role1}, {p2, role2}};
    avo_candidate_info info = {
        .run_id = run,
        .generation = p1 ? 1 : 0,
        .operator_name = p2   ? "crossover"
                         : p1 ? "param_tweak"
                              : "seed",
        .source = source,
        .knobs_json = "{\"BM\": 32}",
        .key = key,
        .parents = edges,
        .n_parents = p2   ? 2
                     : p1 ? 1
                          : 0,
    };
    int64_t id = 0;
    char err[AVO_ERRLEN];
    int rc = avo_archive_candidate_add(ar, &info, &id, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "candidate_add: %s\n", err);
    CHECK_INT(rc, 0);
    return id;
}

/* A worker result with two configs, the second with nulls. */
static json_t *two_config_result(const char *status)
{
    json_t *result = json_loads(
        "{\"id\": 17, \"reason\": null, \"log\": \"compiled\", \"compiler\": \"cc 12\","
        " \"cflags\": \"-O3 -DBM=32\", \"cache_hit\": true, \"compile_s\": 0.5,"
        " \"run_s\": 0.25, \"configs\": ["
        "  {\"name\": \"small\", \"correct\": true, \"max_error\": 3e-6, \"median_s\": 0.002,"
        "   \"spread\": 0.01, \"samples\": 12, \"gflops\": 15.5, \"gbs\": 0.0,"
        "   \"reason\": null},"
        "  {\"name\": \"large\", \"correct\": false, \"max_error\": null,"
        "   \"median_s\": null, \"spread\": null, \"samples\": null, \"gflops\": null,"
        "   \"gbs\": null, \"reason\": \"off tolerance\"}]}",
        0, NULL);
    json_object_set_new(result, "status", json_string(status));
    return result;
}

static void finish(avo_archive *ar, int64_t id, const char *status, double score)
{
    json_t *result = two_config_result(status);
    char err[AVO_ERRLEN];
    int rc = avo_archive_candidate_finish(ar, id, result, score, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "candidate_finish: %s\n", err);
    CHECK_INT(rc, 0);
    json_decref(result);
}

static const char *jstr(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static long long jint(const json_t *obj, const char *key)
{
    return json_integer_value(json_object_get(obj, key));
}

/* A fresh file: version 0 found, 1 on disk, WAL, every table STRICT. */
static void test_fresh_schema(void)
{
    const char *path = tmp_path("fresh.db");
    avo_archive *ar = open_ok(path);
    CHECK_INT(avo_archive_opened_version(ar), 0);
    avo_archive_free(ar);

    CHECK_INT(raw_int(path, "PRAGMA user_version"), AVO_ARCHIVE_SCHEMA_VERSION);
    char *mode = raw_text(path, "PRAGMA journal_mode");
    CHECK_STR(mode, "wal");
    free(mode);

    static const char *const tables[] = {"runs",  "sources",     "candidates",
                                         "edges", "evaluations", "events"};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT sql FROM sqlite_schema WHERE name = '%s'", tables[i]);
        char *text = raw_text(path, sql);
        CHECK_CONTAINS(text, "STRICT");
        free(text);
    }
    CHECK_INT(raw_int(path, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"
                            " AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE '%STRICT'"),
              0);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM sqlite_schema WHERE type = 'index'"
                            " AND name IN ('candidates_key', 'candidates_run_score',"
                            " 'edges_parent')"),
              3);
}

static void test_runs(void)
{
    avo_archive *ar = open_ok(tmp_path("runs.db"));
    avo_run_info info = {.script_path = "examples/quickstart.lua",
                         .script_source = "print('hi')",
                         .config_json = "{\"jobs\": 4}",
                         .seed = 0xfedcba9876543210ull,
                         .engine_version = "0.1.0",
                         .compiler = "cc 12",
                         .host = "box, 16 cores"};
    int64_t r1 = 0, r2 = 0;
    char err[AVO_ERRLEN];
    CHECK_INT(avo_archive_run_begin(ar, &info, &r1, err, sizeof err), 0);
    CHECK(r1 > 0);

    json_t *run = NULL;
    CHECK_INT(avo_archive_run_get(ar, r1, &run, err, sizeof err), 0);
    CHECK_INT(jint(run, "id"), r1);
    CHECK_STR(jstr(run, "script_path"), "examples/quickstart.lua");
    CHECK_STR(jstr(run, "script_source"), "print('hi')");
    CHECK_INT(jint(json_object_get(run, "config"), "jobs"), 4);
    CHECK(json_is_integer(json_object_get(run, "seed")));
    CHECK((uint64_t)jint(run, "seed") == 0xfedcba9876543210ull);
    CHECK_STR(jstr(run, "engine_version"), "0.1.0");
    CHECK_STR(jstr(run, "compiler"), "cc 12");
    CHECK_STR(jstr(run, "host"), "box, 16 cores");
    CHECK(json_real_value(json_object_get(run, "started_at")) > 1e9);
    CHECK(json_is_null(json_object_get(run, "ended_at")));
    CHECK_STR(jstr(run, "status"), "running");
    json_decref(run);

    avo_run_info bare = {.seed = 1};
    CHECK_INT(avo_archive_run_begin(ar, &bare, &r2, err, sizeof err), 0);
    CHECK(r2 > r1);
    CHECK_INT(avo_archive_run_get(ar, 0, &run, err, sizeof err), 0);
    CHECK_INT(jint(run, "id"), r2);
    CHECK(json_is_null(json_object_get(run, "script_path")));
    json_decref(run);

    CHECK_INT(avo_archive_run_end(ar, r1, "done", err, sizeof err), 0);
    CHECK_INT(avo_archive_run_get(ar, r1, &run, err, sizeof err), 0);
    CHECK_STR(jstr(run, "status"), "done");
    CHECK(json_real_value(json_object_get(run, "ended_at")) >=
          json_real_value(json_object_get(run, "started_at")));
    json_decref(run);

    CHECK_INT(avo_archive_run_end(ar, r1, "finished", err, sizeof err), AVO_EINVAL);
    CHECK_INT(avo_archive_run_end(ar, 999, "failed", err, sizeof err), AVO_ENOTFOUND);
    run = json_true();
    CHECK_INT(avo_archive_run_get(ar, 999, &run, err, sizeof err), AVO_ENOTFOUND);
    CHECK(run == NULL);

    CHECK_INT(avo_archive_event(ar, r1, "generation", "{\"n\": 1}", err, sizeof err), 0);
    CHECK_INT(avo_archive_event(ar, 0, "engine", NULL, err, sizeof err), 0);
    CHECK_INT(avo_archive_event(ar, r1, "bad", "{oops", err, sizeof err), AVO_EINVAL);
    avo_archive_free(ar);
    CHECK_INT(raw_int(tmp_path("runs.db"), "SELECT count(*) FROM events"), 2);
    CHECK_INT(raw_int(tmp_path("runs.db"), "SELECT count(*) FROM events WHERE run_id IS NULL"), 1);
}

static void test_sources(void)
{
    avo_archive *ar = open_ok(tmp_path("sources.db"));
    char h1[41], h2[41], err[AVO_ERRLEN];
    /* `printf 'hello\n' | git hash-object --stdin` */
    CHECK_INT(avo_archive_put_source(ar, "hello\n", h1, err, sizeof err), 0);
    CHECK_STR(h1, "ce013625030ba8dba906f756967f9e9ca394464a");
    CHECK_INT(avo_archive_put_source(ar, "hello\n", h2, err, sizeof err), 0);
    CHECK_STR(h2, h1);
    CHECK_INT(avo_archive_put_source(ar, "", h2, err, sizeof err), 0);
    CHECK_STR(h2, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");

    char *text = NULL;
    CHECK_INT(avo_archive_source_get(ar, h1, &text, err, sizeof err), 0);
    CHECK_STR(text, "hello\n");
    free(text);
    CHECK_INT(avo_archive_source_get(ar, "0000", &text, err, sizeof err), AVO_ENOTFOUND);
    CHECK(text == NULL);
    avo_archive_free(ar);
    CHECK_INT(raw_int(tmp_path("sources.db"), "SELECT count(*) FROM sources"), 2);
}

/* Add with parents, finish with two configs, read every field back. */
static void test_candidate_roundtrip(void)
{
    avo_archive *ar = open_ok(tmp_path("cand.db"));
    int64_t run = begin_run(ar, 7);
    int64_t p1 = add(ar, run, "int seed;\n", 0, NULL, 0, NULL, NULL);
    int64_t p2 = add(ar, run, "int other;\n", 0, NULL, 0, NULL, NULL);
    /* given theirs first: the query orders by role then parent id */
    int64_t c = add(ar, run, "int child;\n", p2, "theirs", p1, "ours", "key-c");
    CHECK(p1 > 0 && p2 > p1 && c > p2);

    char err[AVO_ERRLEN];
    json_t *got = NULL;
    CHECK_INT(avo_archive_candidate_get(ar, c, 0, &got, err, sizeof err), 0);
    CHECK_STR(jstr(got, "status"), "pending");
    CHECK(json_is_null(json_object_get(got, "score")));
    CHECK(json_is_null(json_object_get(got, "evaluated_at")));
    CHECK_INT(json_array_size(json_object_get(got, "configs")), 0);
    CHECK(json_object_get(got, "source") == NULL);
    json_decref(got);

    finish(ar, c, "ok", 2.5);
    CHECK_INT(avo_archive_candidate_get(ar, c, 1, &got, err, sizeof err), 0);
    CHECK_INT(jint(got, "id"), c);
    CHECK_INT(jint(got, "run_id"), run);
    CHECK_INT(jint(got, "generation"), 1);
    CHECK_STR(jstr(got, "operator"), "crossover");
    CHECK_STR(jstr(got, "status"), "ok");
    CHECK(json_is_null(json_object_get(got, "reason")));
    CHECK_STR(jstr(got, "log"), "compiled");
    CHECK(json_real_value(json_object_get(got, "score")) == 2.5);
    /* `printf 'int child;\n' | git hash-object --stdin` */
    CHECK_STR(jstr(got, "source_hash"), "3f0561aaaca3c13efc59862214883665c4e19738");
    CHECK_STR(jstr(got, "source"), "int child;\n");
    json_t *knobs = json_object_get(got, "knobs");
    CHECK(json_is_object(knobs));
    CHECK_INT(jint(knobs, "BM"), 32);
    CHECK(json_is_null(json_object_get(got, "note")));
    CHECK_STR(jstr(got, "key"), "key-c");
    CHECK(json_real_value(json_object_get(got, "created_at")) > 1e9);
    CHECK(json_real_value(json_object_get(got, "evaluated_at")) >=
          json_real_value(json_object_get(got, "created_at")));
    json_t *meta = json_object_get(got, "result");
    CHECK_STR(jstr(meta, "compiler"), "cc 12");
    CHECK_STR(jstr(meta, "cflags"), "-O3 -DBM=32");
    CHECK(json_is_true(json_object_get(meta, "cache_hit")));
    CHECK(json_real_value(json_object_get(meta, "compile_s")) == 0.5);
    CHECK(json_real_value(json_object_get(meta, "run_s")) == 0.25);
    CHECK(json_object_get(meta, "configs") == NULL);
    CHECK(json_object_get(meta, "log") == NULL);

    json_t *parents = json_object_get(got, "parents");
    CHECK_INT(json_array_size(parents), 2);
    CHECK_INT(jint(json_array_get(parents, 0), "id"), p1);
    CHECK_STR(jstr(json_array_get(parents, 0), "role"), "ours");
    CHECK_INT(jint(json_array_get(parents, 1), "id"), p2);
    CHECK_STR(jstr(json_array_get(parents, 1), "role"), "theirs");
    CHECK_INT(json_array_size(json_object_get(got, "children")), 0);

    json_t *configs = json_object_get(got, "configs");
    CHECK_INT(json_array_size(configs), 2);
    json_t *small = json_array_get(configs, 0), *large = json_array_get(configs, 1);
    CHECK_STR(jstr(small, "name"), "small");
    CHECK(json_is_true(json_object_get(small, "correct")));
    CHECK(json_real_value(json_object_get(small, "max_error")) == 3e-6);
    CHECK(json_real_value(json_object_get(small, "median_s")) == 0.002);
    CHECK(json_real_value(json_object_get(small, "spread")) == 0.01);
    CHECK_INT(jint(small, "samples"), 12);
    CHECK(json_real_value(json_object_get(small, "gflops")) == 15.5);
    CHECK(json_real_value(json_object_get(small, "gbs")) == 0.0);
    CHECK(json_is_null(json_object_get(small, "reason")));
    CHECK_INT(json_object_size(small), 9);
    CHECK_STR(jstr(large, "name"), "large");
    CHECK(json_is_false(json_object_get(large, "correct")));
    static const char *const nulls[] = {"max_error", "median_s", "spread",
                                        "samples",   "gflops",   "gbs"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        CHECK(json_is_null(json_object_get(large, nulls[i])));
    CHECK_STR(jstr(large, "reason"), "off tolerance");
    json_decref(got);

    CHECK_INT(avo_archive_candidate_get(ar, p1, 0, &got, err, sizeof err), 0);
    CHECK_STR(jstr(got, "operator"), "seed");
    CHECK_INT(json_array_size(json_object_get(got, "parents")), 0);
    CHECK_INT(json_array_size(json_object_get(got, "children")), 1);
    CHECK_INT(json_integer_value(json_array_get(json_object_get(got, "children"), 0)), c);
    json_decref(got);

    /* finishing again replaces: one config now, new status and score */
    json_t *again = json_pack("{s:s, s:s, s:[{s:s, s:b}]}", "status", "wrong", "reason", "off",
                              "configs", "name", "only", "correct", 0);
    CHECK_INT(avo_archive_candidate_finish(ar, c, again, 0, err, sizeof err), 0);
    CHECK_INT(avo_archive_candidate_finish(ar, c, again, 0, err, sizeof err), 0);
    json_decref(again);
    CHECK_INT(avo_archive_candidate_get(ar, c, 0, &got, err, sizeof err), 0);
    CHECK_STR(jstr(got, "status"), "wrong");
    CHECK_STR(jstr(got, "reason"), "off");
    CHECK_INT(json_array_size(json_object_get(got, "configs")), 1);
    CHECK_STR(jstr(json_array_get(json_object_get(got, "configs"), 0), "name"), "only");
    json_decref(got);

    /* a yardstick's paired figures (timing.yardstick) are kept per config,
     * in the one and in the bulk read */
    json_t *paired = json_pack("{s:s, s:[{s:s, s:b, s:f, s:f, s:f}]}", "status", "ok", "configs",
                               "name", "p", "correct", 1, "median_s", 0.002, "yardstick_s", 0.0025,
                               "vs_yardstick", 1.25);
    CHECK_INT(avo_archive_candidate_finish(ar, c, paired, 1.25, err, sizeof err), 0);
    json_decref(paired);
    CHECK_INT(avo_archive_candidate_get(ar, c, 0, &got, err, sizeof err), 0);
    json_t *pc = json_array_get(json_object_get(got, "configs"), 0);
    CHECK(json_real_value(json_object_get(pc, "yardstick_s")) == 0.0025);
    CHECK(json_real_value(json_object_get(pc, "vs_yardstick")) == 1.25);
    json_decref(got);
    CHECK_INT(avo_archive_candidates(ar, run, 0, &got, err, sizeof err), 0);
    json_t *row;
    size_t at;
    int seen = 0;
    json_array_foreach(got, at, row)
    {
        if (jint(row, "id") != c)
            continue;
        pc = json_array_get(json_object_get(row, "configs"), 0);
        CHECK(json_real_value(json_object_get(pc, "vs_yardstick")) == 1.25);
        seen = 1;
    }
    CHECK(seen);
    json_decref(got);

    /* failures leave nothing behind */
    got = json_true();
    CHECK_INT(avo_archive_candidate_get(ar, 999, 0, &got, err, sizeof err), AVO_ENOTFOUND);
    CHECK(got == NULL);
    json_t *ok = two_config_result("ok");
    CHECK_INT(avo_archive_candidate_finish(ar, 999, ok, 1, err, sizeof err), AVO_ENOTFOUND);
    json_t *nameless = json_pack("{s:s, s:[{s:s, s:b}, {s:b}]}", "status", "ok", "configs", "name",
                                 "x", "correct", 1, "correct", 1);
    CHECK_INT(avo_archive_candidate_finish(ar, p2, nameless, 1, err, sizeof err), AVO_EINVAL);
    json_decref(nameless);
    json_decref(ok);
    CHECK_INT(avo_archive_candidate_get(ar, p2, 0, &got, err, sizeof err), 0);
    CHECK_STR(jstr(got, "status"), "pending");
    CHECK_INT(json_array_size(json_object_get(got, "configs")), 0);
    json_decref(got);

    avo_parent_edge ghost = {424242, "parent"};
    avo_candidate_info bad = {.run_id = run,
                              .operator_name = "x",
                              .source = "int ghost;",
                              .parents = &ghost,
                              .n_parents = 1};
    int64_t id = 0;
    CHECK_INT(avo_archive_candidate_add(ar, &bad, &id, err, sizeof err), AVO_ESQL);
    CHECK_CONTAINS(err, "FOREIGN KEY");
    bad.n_parents = 0;
    bad.knobs_json = "[1]";
    CHECK_INT(avo_archive_candidate_add(ar, &bad, &id, err, sizeof err), AVO_EINVAL);
    bad.knobs_json = NULL;
    bad.run_id = 777;
    CHECK_INT(avo_archive_candidate_add(ar, &bad, &id, err, sizeof err), AVO_ESQL);
    avo_archive_free(ar);
    CHECK_INT(raw_int(tmp_path("cand.db"), "SELECT count(*) FROM candidates"), 3);
    CHECK_INT(raw_int(tmp_path("cand.db"), "SELECT count(*) FROM sources"), 3);
}

/* obj restricted to keys (a new object; a key obj lacks is left out). */
static json_t *restricted(const json_t *obj, const char *const *keys, size_t n)
{
    json_t *out = json_object();
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_object_get(obj, keys[i]);
        if (v)
            json_object_set(out, keys[i], v);
    }
    return out;
}

/* Each brief row is its full row restricted to the brief keys, its configs
 * to name, gflops and gbs: for ok, failed and unfinished candidates, for a
 * run and for all runs. */
static void check_brief_rows(avo_archive *ar, int64_t run, size_t expect)
{
    static const char *const keys[] = {"id",    "generation", "operator",     "status", "reason",
                                       "score", "created_at", "evaluated_at", "result", "configs"};
    static const char *const config_keys[] = {"name", "gflops", "gbs"};
    const size_t n_keys = sizeof keys / sizeof keys[0];
    char err[AVO_ERRLEN];
    json_t *full = NULL, *brief = NULL;
    CHECK_INT(avo_archive_candidates(ar, run, 0, &full, err, sizeof err), 0);
    CHECK_INT(avo_archive_candidates_brief(ar, run, &brief, err, sizeof err), 0);
    CHECK_INT(json_array_size(brief), expect);
    CHECK_INT(json_array_size(full), expect);
    for (size_t i = 0; i < json_array_size(full); i++) {
        json_t *f = json_array_get(full, i), *b = json_array_get(brief, i);
        json_t *want = restricted(f, keys, n_keys);
        json_t *configs = json_array();
        for (size_t k = 0; k < json_array_size(json_object_get(f, "configs")); k++)
            json_array_append_new(
                configs,
                restricted(json_array_get(json_object_get(f, "configs"), k), config_keys, 3));
        json_object_set_new(want, "configs", configs);
        CHECK_INT(json_object_size(b), n_keys);
        CHECK(json_equal(want, b));
        json_decref(want);
    }
    json_decref(full);
    json_decref(brief);
}

static void test_candidates_brief(void)
{
    avo_archive *ar = open_ok(tmp_path("brief.db"));
    int64_t run = begin_run(ar, 3), other = begin_run(ar, 4);
    int64_t seed = add(ar, run, "int seed;\n", 0, NULL, 0, NULL, "k-seed");
    int64_t failed = add(ar, run, "int failed;\n", seed, "parent", 0, NULL, NULL);
    int64_t both = add(ar, run, "int both;\n", seed, "ours", failed, "theirs", NULL);
    add(ar, run, "int unfinished;\n", both, "parent", 0, NULL, NULL);
    int64_t elsewhere = add(ar, other, "int elsewhere;\n", 0, NULL, 0, NULL, NULL);
    finish(ar, seed, "ok", 2.5);
    finish(ar, both, "ok", 3.5);
    char err[AVO_ERRLEN];
    json_t *crash = json_pack("{s:s, s:s, s:s}", "status", "crashed", "reason", "SIGSEGV <x>",
                              "log", "core dumped");
    CHECK_INT(avo_archive_candidate_finish(ar, failed, crash, 0, err, sizeof err), 0);
    json_decref(crash);
    finish(ar, elsewhere, "wrong", 0);

    check_brief_rows(ar, run, 4);
    check_brief_rows(ar, other, 1);
    check_brief_rows(ar, 0, 5);

    json_t *got = json_true();
    CHECK_INT(avo_archive_candidates_brief(ar, 99, &got, err, sizeof err), AVO_ENOTFOUND);
    CHECK(got == NULL);
    CHECK_INT(avo_archive_candidates_brief(ar, -1, &got, err, sizeof err), AVO_EINVAL);
    avo_archive_free(ar);
}

static void test_best_and_key(void)
{
    avo_archive *ar = open_ok(tmp_path("best.db"));
    char err[AVO_ERRLEN];
    json_t *got = NULL;
    int64_t r1 = begin_run(ar, 1);
    CHECK_INT(avo_archive_best(ar, r1, &got, err, sizeof err), AVO_ENOTFOUND);

    int64_t a = add(ar, r1, "a", 0, NULL, 0, NULL, "ka");
    int64_t b = add(ar, r1, "b", 0, NULL, 0, NULL, "kb");
    int64_t w = add(ar, r1, "w", 0, NULL, 0, NULL, "kw");
    int64_t p = add(ar, r1, "p", 0, NULL, 0, NULL, "kp");
    int64_t t = add(ar, r1, "t", 0, NULL, 0, NULL, "kt");
    finish(ar, a, "ok", 1.0);
    finish(ar, b, "ok", 3.0);
    finish(ar, w, "wrong", 10.0);
    finish(ar, t, "ok", 3.0); /* ties b; b has the lower id */
    (void)p;                  /* stays pending */

    CHECK_INT(avo_archive_best(ar, r1, &got, err, sizeof err), 0);
    CHECK_INT(jint(got, "id"), b);
    CHECK_INT(json_array_size(json_object_get(got, "configs")), 2);
    json_decref(got);

    /* a later run becomes "latest"; its own best only */
    int64_t r2 = begin_run(ar, 2);
    CHECK_INT(avo_archive_best(ar, 0, &got, err, sizeof err), AVO_ENOTFOUND);
    int64_t c = add(ar, r2, "c", 0, NULL, 0, NULL, "kc");
    finish(ar, c, "ok", 0.5);
    CHECK_INT(avo_archive_best(ar, 0, &got, err, sizeof err), 0);
    CHECK_INT(jint(got, "id"), c);
    json_decref(got);
    CHECK_INT(avo_archive_best(ar, r1, &got, err, sizeof err), 0);
    CHECK_INT(jint(got, "id"), b);
    json_decref(got);

    CHECK_INT(avo_archive_candidate_by_key(ar, "kb", &got, err, sizeof err), 0);
    CHECK_INT(jint(got, "id"), b);
    json_decref(got);
    CHECK_INT(avo_archive_candidate_by_key(ar, "kw", &got, err, sizeof err), 0);
    CHECK_INT(jint(got, "id"), w);
    CHECK_STR(jstr(got, "status"), "wrong");
    json_decref(got);
    CHECK_INT(avo_archive_candidate_by_key(ar, "kp", &got, err, sizeof err), AVO_ENOTFOUND);
    CHECK(got == NULL);
    CHECK_INT(avo_archive_candidate_by_key(ar, "nope", &got, err, sizeof err), AVO_ENOTFOUND);
    avo_archive_free(ar);
}

/* seed -> a, seed -> b, a + b -> c (ours/theirs), c -> d; e unrelated. */
static void test_lineage_dag(void)
{
    avo_archive *ar = open_ok(tmp_path("dag.db"));
    char err[AVO_ERRLEN];
    int64_t run = begin_run(ar, 3);
    int64_t seed = add(ar, run, "seed", 0, NULL, 0, NULL, NULL);
    int64_t a = add(ar, run, "a", seed, "parent", 0, NULL, NULL);
    int64_t b = add(ar, run, "b", seed, "parent", 0, NULL, NULL);
    int64_t c = add(ar, run, "c", a, "ours", b, "theirs", NULL);
    int64_t d = add(ar, run, "d", c, "parent", 0, NULL, NULL);
    int64_t e = add(ar, run, "e", 0, NULL, 0, NULL, NULL);
    finish(ar, c, "ok", 4.0);

    json_t *lin = NULL;
    CHECK_INT(avo_archive_lineage(ar, d, &lin, err, sizeof err), 0);
    int64_t expect[] = {d, c, a, b, seed};
    CHECK_INT(json_array_size(lin), 5);
    for (size_t i = 0; i < 5 && i < json_array_size(lin); i++)
        CHECK_INT(jint(json_array_get(lin, i), "id"), expect[i]);
    json_t *node_c = json_array_get(lin, 1);
    CHECK_STR(jstr(node_c, "operator"), "crossover");
    CHECK_STR(jstr(node_c, "status"), "ok");
    CHECK(json_real_value(json_object_get(node_c, "score")) == 4.0);
    CHECK_INT(jint(node_c, "generation"), 1);
    json_t *pc = json_object_get(node_c, "parents");
    CHECK_INT(json_array_size(pc), 2);
    CHECK_INT(jint(json_array_get(pc, 0), "id"), a);
    CHECK_STR(jstr(json_array_get(pc, 0), "role"), "ours");
    CHECK_INT(jint(json_array_get(pc, 1), "id"), b);
    CHECK_STR(jstr(json_array_get(pc, 1), "role"), "theirs");
    json_t *node_seed = json_array_get(lin, 4);
    CHECK_INT(json_array_size(json_object_get(node_seed, "parents")), 0);
    CHECK(json_is_null(json_object_get(node_seed, "score")));
    CHECK_INT(json_object_size(node_seed), 6);
    json_decref(lin);

    CHECK_INT(avo_archive_lineage(ar, seed, &lin, err, sizeof err), 0);
    CHECK_INT(json_array_size(lin), 1);
    json_decref(lin);
    CHECK_INT(avo_archive_lineage(ar, 999, &lin, err, sizeof err), AVO_ENOTFOUND);

    int64_t got = -1;
    CHECK_INT(avo_archive_common_ancestor(ar, a, b, &got, err, sizeof err), 0);
    CHECK_INT(got, seed);
    CHECK_INT(avo_archive_common_ancestor(ar, d, b, &got, err, sizeof err), 0);
    CHECK_INT(got, b);
    CHECK_INT(avo_archive_common_ancestor(ar, b, d, &got, err, sizeof err), 0);
    CHECK_INT(got, b);
    CHECK_INT(avo_archive_common_ancestor(ar, a, a, &got, err, sizeof err), 0);
    CHECK_INT(got, a);
    CHECK_INT(avo_archive_common_ancestor(ar, c, d, &got, err, sizeof err), 0);
    CHECK_INT(got, c);
    CHECK_INT(avo_archive_common_ancestor(ar, d, e, &got, err, sizeof err), 0);
    CHECK_INT(got, 0);
    CHECK_INT(avo_archive_common_ancestor(ar, d, 999, &got, err, sizeof err), AVO_ENOTFOUND);
    avo_archive_free(ar);
}

/* A file from a newer avo is refused and left byte for byte as it was. */
static void test_newer_schema_refused(void)
{
    const char *path = tmp_path("newer.db");
    CHECK_INT(raw_exec(path, "CREATE TABLE future (x INTEGER) STRICT;"
                             " INSERT INTO future VALUES (1); PRAGMA user_version = 99;"),
              0);
    size_t before_len = 0, after_len = 0;
    char *before = slurp(path, &before_len);

    avo_archive *ar = (avo_archive *)1;
    char err[AVO_ERRLEN] = "";
    CHECK_INT(avo_archive_open(&ar, path, err, sizeof err), AVO_ESCHEMA);
    CHECK(ar == NULL);
    CHECK_CONTAINS(err, "99");
    CHECK_CONTAINS(err, "upgrade avo");

    char *after = slurp(path, &after_len);
    CHECK(before && after);
    CHECK_INT(after_len, before_len);
    CHECK(before && after && memcmp(before, after, before_len) == 0);
    CHECK(access(tmp_path("newer.db-wal"), F_OK) != 0);
    free(before);
    free(after);
    CHECK_INT(raw_int(path, "PRAGMA user_version"), 99);
    avo_archive_free(NULL);
}

/* Version 0: an empty file migrates; a foreign database is refused. */
static void test_v0_and_reopen(void)
{
    const char *path = tmp_path("empty.db");
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    avo_archive *ar = open_ok(path);
    CHECK_INT(avo_archive_opened_version(ar), 0);
    int64_t run = begin_run(ar, 5);
    add(ar, run, "kept", 0, NULL, 0, NULL, NULL);
    avo_archive_free(ar);
    CHECK_INT(raw_int(path, "PRAGMA user_version"), AVO_ARCHIVE_SCHEMA_VERSION);

    char *schema_before = raw_text(path, "SELECT group_concat(sql, ';') FROM sqlite_schema");
    ar = open_ok(path);
    CHECK_INT(avo_archive_opened_version(ar), AVO_ARCHIVE_SCHEMA_VERSION);
    avo_archive_free(ar);
    char *schema_after = raw_text(path, "SELECT group_concat(sql, ';') FROM sqlite_schema");
    CHECK_STR(schema_after, schema_before);
    free(schema_before);
    free(schema_after);
    CHECK_INT(raw_int(path, "PRAGMA user_version"), AVO_ARCHIVE_SCHEMA_VERSION);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM candidates"), 1);

    const char *foreign = tmp_path("foreign.db");
    CHECK_INT(raw_exec(foreign, "CREATE TABLE runs (x)"), 0);
    char err[AVO_ERRLEN] = "";
    CHECK_INT(avo_archive_open(&ar, foreign, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "not an avo archive");

    /* Tables of the knowledge base (kb_...) and SQLite's own do not make a
     * file foreign; any other table beside them does. */
    const char *kb_only = tmp_path("kb-only.db");
    CHECK_INT(raw_exec(kb_only, "CREATE TABLE kb_docs (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                                " path TEXT UNIQUE); CREATE INDEX kb_docs_path ON kb_docs(path)"),
              0);
    ar = open_ok(kb_only);
    CHECK_INT(avo_archive_opened_version(ar), 0);
    avo_archive_free(ar);
    CHECK_INT(raw_int(kb_only, "PRAGMA user_version"), AVO_ARCHIVE_SCHEMA_VERSION);
    CHECK_INT(raw_int(kb_only, "SELECT count(*) FROM kb_docs"), 0);
    const char *kb_and_other = tmp_path("kb-and-other.db");
    CHECK_INT(raw_exec(kb_and_other, "CREATE TABLE kb_docs (x); CREATE TABLE kbx (x)"), 0);
    CHECK_INT(avo_archive_open(&ar, kb_and_other, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "not an avo archive");
    CHECK_INT(raw_int(kb_and_other, "PRAGMA user_version"), 0);

    const char *garbage = tmp_path("garbage.db");
    f = fopen(garbage, "w");
    if (f) {
        fputs("this is not a database, just text that is long enough to have a header....\n"
              "....................................................................\n",
              f);
        fclose(f);
    }
    CHECK_INT(avo_archive_open(&ar, garbage, err, sizeof err), AVO_ESQL);
    CHECK_CONTAINS(err, "not a database");
    CHECK_INT(avo_archive_open(&ar, tmp_path("no/such/dir.db"), err, sizeof err), AVO_ESQL);
}

/*
 * A child writes and finishes candidates as fast as it can, reporting each
 * id once finish has returned; it is SIGKILLed mid-stream.  The file must be
 * intact and hold every reported evaluation.
 */
static void test_crash_safety(void)
{
    const char *path = tmp_path("crash.db");
    avo_archive *ar = open_ok(path);
    int64_t run = begin_run(ar, 9);
    avo_archive_free(ar);

    int fds[2];
    CHECK_INT(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        avo_archive *child = NULL;
        char err[AVO_ERRLEN];
        if (avo_archive_open(&child, path, err, sizeof err) != 0)
            _exit(2);
        json_t *result = two_config_result("ok");
        avo_parent_edge edge = {0, "parent"};
        for (int i = 0; i < 10000000; i++) {
            char source[64];
            snprintf(source, sizeof source, "int k%d;\n", i);
            avo_candidate_info info = {.run_id = run,
                                       .operator_name = "param_tweak",
                                       .source = source,
                                       .knobs_json = "{}",
                                       .parents = &edge,
                                       .n_parents = edge.parent_id ? 1 : 0};
            int64_t id;
            if (avo_archive_candidate_add(child, &info, &id, err, sizeof err) != 0 ||
                avo_archive_candidate_finish(child, id, result, i, err, sizeof err) != 0)
                _exit(3);
            if (write(fds[1], &id, sizeof id) != (ssize_t)sizeof id)
                _exit(4);
            edge.parent_id = id;
        }
        _exit(0);
    }
    CHECK(pid > 0);
    close(fds[1]);

    /* collect ids for ~200 ms after the first one arrives, then kill */
    size_t n = 0, cap = 1024;
    int64_t *ids = malloc(cap * sizeof *ids);
    char buf[8 * 512];
    size_t pending = 0;
    struct timespec start = {0};
    int killed = 0, started = 0;
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double elapsed = started ? (double)(now.tv_sec - start.tv_sec) +
                                       (double)(now.tv_nsec - start.tv_nsec) * 1e-9
                                 : 0;
        if (started && !killed && elapsed >= 0.2) {
            kill(pid, SIGKILL);
            killed = 1;
        }
        struct pollfd pfd = {fds[0], POLLIN, 0};
        if (poll(&pfd, 1, killed ? -1 : 10) == 0)
            continue;
        ssize_t got = read(fds[0], buf + pending, sizeof buf - pending);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        pending += (size_t)got;
        size_t whole = pending / 8 * 8;
        for (size_t off = 0; off < whole; off += 8) {
            if (n == cap)
                ids = realloc(ids, (cap *= 2) * sizeof *ids);
            memcpy(&ids[n++], buf + off, 8);
        }
        memmove(buf, buf + whole, pending - whole);
        pending -= whole;
        if (!started && n) {
            started = 1;
            clock_gettime(CLOCK_MONOTONIC, &start);
        }
    }
    close(fds[0]);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    CHECK(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);
    CHECK(n > 0);

    char *integrity = raw_text(path, "PRAGMA integrity_check");
    CHECK_STR(integrity, "ok");
    free(integrity);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);

    ar = open_ok(path);
    int missing = 0;
    char err[AVO_ERRLEN];
    for (size_t i = 0; ar && i < n; i++) {
        json_t *got = NULL;
        if (avo_archive_candidate_get(ar, ids[i], 0, &got, err, sizeof err) != 0 ||
            strcmp(jstr(got, "status"), "ok") != 0 ||
            json_array_size(json_object_get(got, "configs")) != 2)
            missing++;
        json_decref(got);
    }
    CHECK_INT(missing, 0);
    avo_archive_free(ar);
    free(ids);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Agent attempts (schema step 4): add, update the outcome, read back. */
static void test_attempts(void)
{
    const char *path = tmp_path("attempts.db");
    avo_archive *ar = open_ok(path);
    avo_run_info info = {.seed = 1};
    int64_t run = 0, cand = 0, a1 = 0, a2 = 0;
    char err[AVO_ERRLEN];
    CHECK_INT(avo_archive_run_begin(ar, &info, &run, err, sizeof err), 0);
    avo_candidate_info ci = {.run_id = run, .operator_name = "seed", .source = "k1\n",
                             .knobs_json = "{}"};
    CHECK_INT(avo_archive_candidate_add(ar, &ci, &cand, err, sizeof err), 0);

    json_t *a = json_pack("{s:i, s:s, s:s, s:{s:i}, s:s, s:f, s:s, s:[{s:s, s:b}]}", "step", 2,
                          "lineage", "L1", "source", "k2\n", "knobs", "BM", 32, "status", "ok",
                          "score", 1.5, "outcome", "evaluated", "configs", "name", "small",
                          "correct", 1);
    CHECK_INT(avo_archive_attempt_add(ar, run, a, &a1, err, sizeof err), 0);
    json_object_set_new(a, "outcome", json_string("retime"));
    json_object_set_new(a, "candidate_id", json_integer(cand));
    json_object_set_new(a, "score", json_null());
    CHECK_INT(avo_archive_attempt_add(ar, run, a, &a2, err, sizeof err), 0);
    CHECK(a2 > a1);
    json_object_del(a, "lineage");
    CHECK_INT(avo_archive_attempt_add(ar, run, a, NULL, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "lineage");
    json_decref(a);

    CHECK_INT(avo_archive_attempt_update(ar, a1, "committed", "faster", cand, err, sizeof err), 0);
    CHECK_INT(avo_archive_attempt_update(ar, a2, "retime", NULL, 0, err, sizeof err), 0);
    CHECK_INT(avo_archive_attempt_update(ar, 999, "committed", NULL, 0, err, sizeof err),
              AVO_ENOTFOUND);

    json_t *rows = NULL;
    CHECK_INT(avo_archive_attempts(ar, run, &rows, err, sizeof err), 0);
    CHECK_INT((long long)json_array_size(rows), 2);
    json_t *r1 = json_array_get(rows, 0), *r2 = json_array_get(rows, 1);
    CHECK_STR(jstr(r1, "outcome"), "committed");
    CHECK_STR(jstr(r1, "reason"), "faster");
    CHECK_STR(jstr(r1, "lineage"), "L1");
    CHECK_INT(jint(r1, "step"), 2);
    CHECK_INT(jint(r1, "candidate_id"), cand);
    CHECK_INT(jint(json_object_get(r1, "knobs"), "BM"), 32);
    CHECK(json_is_array(json_object_get(r1, "configs")));
    CHECK_STR(jstr(r1, "source_hash"), jstr(r2, "source_hash"));
    CHECK(json_is_null(json_object_get(r2, "score")));
    CHECK(json_is_null(json_object_get(r2, "reason")));
    CHECK_INT(jint(r2, "candidate_id"), cand);
    json_decref(rows);
    avo_archive_free(ar);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM sources WHERE text = 'k2' || char(10)"), 1);
}

/*
 * An archive written by an older avo (schema 1, tests/unit/fixtures) opens,
 * migrates to the current schema in place and keeps every row: candidates,
 * their per-config evaluations, parents, the run; new tables are usable.
 */
static void test_migrate_old_archive(void)
{
    const char *root = getenv("AVO_SOURCE_ROOT");
    if (!root) {
        fprintf(stderr, "note: AVO_SOURCE_ROOT unset; skipping the schema-1 fixture\n");
        return;
    }
    char fixture[1024];
    snprintf(fixture, sizeof fixture, "%s/tests/unit/fixtures/archive-v1.sql", root);
    size_t len;
    char *sql = slurp(fixture, &len);
    CHECK(sql != NULL);
    if (!sql)
        return;
    const char *path = tmp_path("old-v1.db");
    CHECK_INT(raw_exec(path, sql), SQLITE_OK);
    free(sql);
    CHECK_INT(raw_int(path, "PRAGMA user_version"), 1);
    long long cands = raw_int(path, "SELECT count(*) FROM candidates");
    long long evals = raw_int(path, "SELECT count(*) FROM evaluations");
    CHECK(cands > 0 && evals > 0);

    avo_archive *ar = open_ok(path);
    CHECK_INT(avo_archive_opened_version(ar), 1);
    json_t *c = NULL;
    char err[AVO_ERRLEN];
    CHECK_INT(avo_archive_candidate_get(ar, 2, 1, &c, err, sizeof err), 0);
    CHECK(json_array_size(json_object_get(c, "configs")) > 0);
    CHECK(json_array_size(json_object_get(c, "parents")) > 0);
    CHECK(json_string_length(json_object_get(c, "source")) > 0);
    json_decref(c);
    json_t *best = NULL;
    CHECK_INT(avo_archive_best(ar, 1, &best, err, sizeof err), 0);
    json_decref(best);
    /* The tables later versions added work on the migrated file. */
    int64_t set_id = 0;
    CHECK_INT(avo_archive_rebench_begin(ar, 1, "{}", &set_id, err, sizeof err), 0);
    CHECK_INT(avo_archive_rebench_add(ar, set_id, 2, 1, 1.5, "{}", err, sizeof err), 0);
    avo_archive_free(ar);

    CHECK_INT(raw_int(path, "PRAGMA user_version"), AVO_ARCHIVE_SCHEMA_VERSION);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM candidates"), cands);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM evaluations"), evals);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM attempts"), 0);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM llm_calls"), 0);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM baselines"), 0);
    char *check = raw_text(path, "PRAGMA integrity_check");
    CHECK_STR(check, "ok");
    free(check);
}

/*
 * Baselines (schema step 6): put and read back with the result parsed, one
 * row per (run, device, name) with a second put replacing the first, bad
 * rows refused naming what is missing, the run summary lists them, and the
 * foreign key holds.
 */
static void test_baselines(void)
{
    const char *path = tmp_path("baselines.db");
    avo_archive *ar = open_ok(path);
    avo_run_info info = {.seed = 1};
    int64_t run = 0, id1 = 0, id2 = 0;
    char err[AVO_ERRLEN];
    CHECK_INT(avo_archive_run_begin(ar, &info, &run, err, sizeof err), 0);

    json_t *b = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:{s:s, s:[{s:s, s:b, s:f}]}}",
                          "name", "cublas", "device", "cuda:0", "device_name", "NVIDIA H200",
                          "status", "ok", "library", "cuBLASLt", "version", "13.1.0", "path",
                          "/usr/lib/libcublasLt.so.13", "score", 812.5, "result", "status", "ok",
                          "configs", "name", "4096", "correct", 1, "gflops", 812.5);
    CHECK_INT(avo_archive_baseline_put(ar, run, b, &id1, err, sizeof err), 0);
    /* The same baseline on another device is another row. */
    json_object_set_new(b, "device", json_string("cuda:1"));
    CHECK_INT(avo_archive_baseline_put(ar, run, b, &id2, err, sizeof err), 0);
    CHECK(id2 != id1);
    /* The same (run, device, name) again replaces the row. */
    json_t *u = json_pack("{s:s, s:s, s:s, s:s, s:n}", "name", "cudnn_sdpa", "device", "cuda:0",
                          "status", "unavailable", "reason", "libcudnn.so.9 not found", "score");
    CHECK_INT(avo_archive_baseline_put(ar, run, u, NULL, err, sizeof err), 0);
    json_object_set_new(u, "reason", json_string("still not found"));
    CHECK_INT(avo_archive_baseline_put(ar, run, u, NULL, err, sizeof err), 0);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM baselines WHERE name = 'cudnn_sdpa'"), 1);

    json_t *rows = NULL;
    CHECK_INT(avo_archive_baselines(ar, run, &rows, err, sizeof err), 0);
    CHECK_INT((long long)json_array_size(rows), 3);
    json_t *r0 = json_array_get(rows, 0), *r2 = json_array_get(rows, 2);
    CHECK_STR(jstr(r0, "name"), "cublas");
    CHECK_STR(jstr(r0, "device"), "cuda:0");
    CHECK_STR(jstr(r0, "device_name"), "NVIDIA H200");
    CHECK_STR(jstr(r0, "version"), "13.1.0");
    CHECK(json_number_value(json_object_get(r0, "score")) == 812.5);
    CHECK(json_is_array(json_object_get(json_object_get(r0, "result"), "configs")));
    CHECK_STR(jstr(r2, "name"), "cudnn_sdpa");
    CHECK_STR(jstr(r2, "status"), "unavailable");
    CHECK_STR(jstr(r2, "reason"), "still not found");
    CHECK(json_is_null(json_object_get(r2, "score")));
    CHECK(json_is_null(json_object_get(r2, "result")));
    json_decref(rows);

    /* In the run summary; none for another run. */
    json_t *summary = NULL;
    CHECK_INT(avo_archive_run_summary(ar, run, &summary, err, sizeof err), 0);
    CHECK_INT((long long)json_array_size(json_object_get(summary, "baselines")), 3);
    json_decref(summary);
    int64_t run2 = 0;
    CHECK_INT(avo_archive_run_begin(ar, &info, &run2, err, sizeof err), 0);
    CHECK_INT(avo_archive_baselines(ar, run2, &rows, err, sizeof err), 0);
    CHECK_INT((long long)json_array_size(rows), 0);
    json_decref(rows);

    /* Bad rows. */
    json_object_del(u, "status");
    CHECK_INT(avo_archive_baseline_put(ar, run, u, NULL, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "name, device and status");
    json_object_set_new(u, "status", json_string("ok"));
    json_object_set_new(u, "score", json_string("fast"));
    CHECK_INT(avo_archive_baseline_put(ar, run, u, NULL, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "score must be a number or null");
    json_object_set_new(u, "score", json_real(1.0));
    CHECK(avo_archive_baseline_put(ar, 999, u, NULL, err, sizeof err) < 0); /* no such run */
    json_decref(u);
    json_decref(b);
    avo_archive_free(ar);
}

/*
 * An archive of schema 5 (before baselines) migrates to 6 and keeps its
 * rows; the baselines table is then usable.
 */
static void test_migrate_v5(void)
{
    const char *path = tmp_path("v5.db");
    avo_archive *ar = open_ok(path);
    avo_run_info info = {.seed = 1};
    int64_t run = 0;
    char err[AVO_ERRLEN];
    CHECK_INT(avo_archive_run_begin(ar, &info, &run, err, sizeof err), 0);
    avo_archive_free(ar);
    /* Make it what avo with schema 5 wrote. */
    CHECK_INT(raw_exec(path, "DROP TABLE baselines; DROP TABLE experiment_cells;"
                             " DROP TABLE experiments; ALTER TABLE candidates DROP COLUMN evaluator;"
                             " ALTER TABLE evaluations DROP COLUMN yardstick_s;"
                             " ALTER TABLE evaluations DROP COLUMN vs_yardstick;"
                             " PRAGMA user_version = 5;"),
              SQLITE_OK);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'baselines'"), 0);

    ar = open_ok(path);
    CHECK_INT(avo_archive_opened_version(ar), 5);
    json_t *b = json_pack("{s:s, s:s, s:s}", "name", "k", "device", "cpu", "status", "ok");
    CHECK_INT(avo_archive_baseline_put(ar, run, b, NULL, err, sizeof err), 0);
    json_decref(b);
    /* Schema 7: experiments and their cells (lua/avo/experiment.lua). */
    avo_experiment_info e = {.name = "grid",
                             .source = "return {}",
                             .hash = "h",
                             .plan_json = "[{\"key\":\"a/w/b/s1\"}]",
                             .machine_json = "{}"};
    int64_t exp = 0;
    CHECK_INT(avo_archive_experiment_add(ar, &e, &exp, err, sizeof err), 0);
    e.plan_json = "not json";
    CHECK_INT(avo_archive_experiment_add(ar, &e, &exp, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "plan is not JSON");
    CHECK_INT(avo_archive_experiment_cell_put(ar, 1, "a/w/b/s1", run, "running", NULL, -1, err,
                                              sizeof err),
              0);
    CHECK_INT(avo_archive_experiment_cell_put(ar, 1, "a/w/b/s1", run, "failed", "why", 1, err,
                                              sizeof err),
              0);
    json_t *cells = NULL, *exps = NULL;
    CHECK_INT(avo_archive_experiment_cells(ar, 1, &cells, err, sizeof err), 0);
    CHECK_INT(json_array_size(cells), 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(cells, 0), "status")), "failed");
    CHECK_STR(json_string_value(json_object_get(json_array_get(cells, 0), "reason")), "why");
    CHECK_INT(avo_archive_experiments(ar, &exps, err, sizeof err), 0);
    CHECK_INT(json_array_size(json_object_get(json_array_get(exps, 0), "plan")), 1);
    json_decref(cells);
    json_decref(exps);
    avo_archive_free(ar);
    CHECK_INT(raw_int(path, "PRAGMA user_version"), AVO_ARCHIVE_SCHEMA_VERSION);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM runs"), 1);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM baselines"), 1);
}

/* A candidate at `gen` of `run` from `source`, recording `evaluator`. */
static int64_t add_of(avo_archive *ar, int64_t run, const char *source, const char *evaluator)
{
    avo_candidate_info c = {
        .run_id = run, .operator_name = "seed", .source = source, .evaluator = evaluator};
    int64_t id = 0;
    char err[AVO_ERRLEN];
    CHECK_INT(avo_archive_candidate_add(ar, &c, &id, err, sizeof err), 0);
    return id;
}

/*
 * Schema 7 records the evaluator of candidates and baselines.  New rows
 * keep what they are given; an archive of schema 7 gets it from its runs'
 * evaluator events: every candidate of a run with one evaluator; a baseline
 * "name@ev" ev, a plain one the run's first evaluator; candidates of a run
 * with several evaluators stay unknown (NULL).
 */
static void test_migrate_v7(void)
{
    const char *path = tmp_path("v7.db");
    avo_archive *ar = open_ok(path);
    char err[AVO_ERRLEN];
    avo_run_info info = {.seed = 1};
    int64_t one = 0, two = 0;
    CHECK_INT(avo_archive_run_begin(ar, &info, &one, err, sizeof err), 0);
    CHECK_INT(avo_archive_run_begin(ar, &info, &two, err, sizeof err), 0);
    CHECK_INT(avo_archive_event(ar, one, "evaluator", "{\"name\": \"sgemm\"}", err, sizeof err),
              0);
    CHECK_INT(avo_archive_event(ar, two, "evaluator", "{\"name\": \"gemm\"}", err, sizeof err), 0);
    CHECK_INT(avo_archive_event(ar, two, "evaluator", "{\"name\": \"sdpa\"}", err, sizeof err), 0);
    int64_t c1 = add_of(ar, one, "a", "sgemm");
    int64_t c2 = add_of(ar, two, "b", "sdpa");
    json_t *b = json_pack("{s:s, s:s, s:s, s:s}", "name", "blas", "device", "cpu", "status", "ok",
                          "evaluator", "sgemm");
    CHECK_INT(avo_archive_baseline_put(ar, one, b, NULL, err, sizeof err), 0);
    json_decref(b);
    json_t *got = NULL;
    CHECK_INT(avo_archive_candidate_get(ar, c2, 0, &got, err, sizeof err), 0);
    CHECK_STR(json_string_value(json_object_get(got, "evaluator")), "sdpa");
    json_decref(got);
    CHECK_INT(avo_archive_baselines(ar, one, &got, err, sizeof err), 0);
    CHECK_STR(json_string_value(json_object_get(json_array_get(got, 0), "evaluator")), "sgemm");
    json_decref(got);
    avo_archive_free(ar);

    /* Make it what avo with schema 7 wrote: no evaluator columns (nor
     * schema 9's yardstick ones). */
    CHECK_INT(raw_exec(path, "ALTER TABLE candidates DROP COLUMN evaluator;"
                             " ALTER TABLE evaluations DROP COLUMN yardstick_s;"
                             " ALTER TABLE evaluations DROP COLUMN vs_yardstick;"
                             " ALTER TABLE baselines DROP COLUMN evaluator;"
                             " INSERT INTO baselines (run_id, device, name, status, created_at)"
                             " VALUES (2, 'cpu', 'cublas', 'ok', 0), (2, 'cpu', 'cublas@sdpa',"
                             " 'ok', 0); PRAGMA user_version = 7;"),
              SQLITE_OK);
    ar = open_ok(path);
    CHECK_INT(avo_archive_opened_version(ar), 7);
    avo_archive_free(ar);
    CHECK_INT(raw_int(path, "PRAGMA user_version"), AVO_ARCHIVE_SCHEMA_VERSION);
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT evaluator FROM candidates WHERE id = %lld", (long long)c1);
    char *text = raw_text(path, sql);
    CHECK_STR(text, "sgemm");
    free(text);
    snprintf(sql, sizeof sql, "SELECT evaluator IS NULL FROM candidates WHERE id = %lld",
             (long long)c2);
    CHECK_INT(raw_int(path, sql), 1);
    text = raw_text(path, "SELECT group_concat(name || '=' || evaluator, ' ') FROM"
                          " (SELECT * FROM baselines ORDER BY run_id, name)");
    CHECK_STR(text, "blas=sgemm cublas=gemm cublas@sdpa=sdpa");
    free(text);
}

/*
 * Run ownership: one claim per run at a time (a second handle, as a second
 * process would, gets AVO_EBUSY naming the owner); the claim ends with the
 * handle; an owner on another host still marked running needs takeover; a
 * refused resume is undone by run_restore; read-only opening reads.
 */
static void test_run_claim(void)
{
    const char *path = tmp_path("claim.db");
    avo_archive *a = open_ok(path), *b = open_ok(path);
    avo_run_info info = {.script_path = "s.lua", .seed = 1};
    int64_t run = 0;
    char err[AVO_ERRLEN];
    json_t *prev = NULL;
    CHECK_INT(avo_archive_run_begin(a, &info, &run, err, sizeof err), 0);
    CHECK_INT(avo_archive_run_live(b, run), 0);
    CHECK_INT(avo_archive_run_claim(a, run, 0, &prev, err, sizeof err), 0);
    CHECK(prev == NULL);
    CHECK_INT(avo_archive_run_live(b, run), 1);
    CHECK_INT(avo_archive_run_claim(b, run, 0, &prev, err, sizeof err), AVO_EBUSY);
    CHECK_CONTAINS(err, "is live: driven by process");
    /* Another run of the same file is free. */
    int64_t run2 = 0;
    CHECK_INT(avo_archive_run_begin(b, &info, &run2, err, sizeof err), 0);
    CHECK_INT(avo_archive_run_claim(b, run2, 0, NULL, err, sizeof err), 0);
    avo_archive_free(a); /* the owner ends: its claim with it */
    avo_archive_free(b);

    /* The run is still `running` with an owner on this host: stale. */
    a = open_ok(path);
    CHECK_INT(avo_archive_run_claim(a, run, 0, &prev, err, sizeof err), 0);
    CHECK(prev != NULL && json_integer_value(json_object_get(prev, "pid")) == getpid());
    json_decref(prev);
    avo_archive_free(a);

    /* Another host: refused unless takeover. */
    sqlite3 *db = NULL;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_INT(sqlite3_exec(db, "UPDATE runs SET owner = '{\"host\":\"far\",\"pid\":7}'", NULL, NULL,
                           NULL),
              SQLITE_OK);
    sqlite3_close(db);
    a = open_ok(path);
    CHECK_INT(avo_archive_run_claim(a, run, 0, NULL, err, sizeof err), AVO_EBUSY);
    CHECK_CONTAINS(err, "process 7 on host far");
    CHECK_CONTAINS(err, "--takeover");
    CHECK_INT(avo_archive_run_claim(a, run, 1, NULL, err, sizeof err), 0);

    /* run_restore puts status, ended_at, owner back and drops later events. */
    CHECK_INT(avo_archive_event(a, run, "kept", NULL, err, sizeof err), 0);
    long long last = raw_int(path, "SELECT max(id) FROM events");
    CHECK_INT(avo_archive_run_end(a, run, "interrupted", err, sizeof err), 0);
    CHECK_INT(avo_archive_event(a, run, "resume", NULL, err, sizeof err), 0);
    CHECK_INT(avo_archive_run_restore(a, run, "stopped", 123.5, NULL, last, err, sizeof err), 0);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM events WHERE kind = 'resume'"), 0);
    CHECK_INT(raw_int(path, "SELECT count(*) FROM events WHERE kind = 'kept'"), 1);
    char *status = raw_text(path, "SELECT status || ',' || ended_at || ',' || (owner IS NULL)"
                                  " FROM runs WHERE id = 1");
    CHECK_STR(status, "stopped,123.5,1");
    free(status);
    CHECK_INT(avo_archive_run_end(a, run, "bogus", err, sizeof err), AVO_EINVAL);
    avo_archive_free(a);

    /* Reading: a writable file opens as usual, a missing one is an error. */
    avo_archive *r = NULL;
    CHECK_INT(avo_archive_open_read(&r, path, err, sizeof err), 0);
    CHECK_INT(avo_archive_readonly(r), 0);
    avo_archive_free(r);
    CHECK_INT(avo_archive_open_read(&r, tmp_path("none.db"), err, sizeof err), AVO_EIO);
    CHECK_CONTAINS(err, "cannot open archive");
    CHECK(access(tmp_path("none.db"), F_OK) != 0);
}

/* Number of events of run `run` seen through `ar`. */
static size_t n_events(avo_archive *ar, int64_t run)
{
    json_t *ev = NULL;
    char err[AVO_ERRLEN];
    CHECK_INT(avo_archive_events(ar, run, NULL, &ev, err, sizeof err), 0);
    size_t n = json_array_size(ev);
    json_decref(ev);
    return n;
}

/*
 * avo_archive_open_watch (avo serve): read-only even on a writable file,
 * each read sees the writer's latest commit, the writer goes on writing
 * while it is open, and a missing file is an error that creates nothing.
 */
static void test_open_watch(void)
{
    const char *path = tmp_path("watch.db");
    char err[AVO_ERRLEN];
    avo_archive *w = open_ok(path);
    int64_t run = begin_run(w, 1);
    CHECK_INT(avo_archive_event(w, run, "one", NULL, err, sizeof err), 0);
    avo_archive *r = NULL;
    CHECK_INT(avo_archive_open_watch(&r, path, err, sizeof err), 0);
    CHECK_INT(avo_archive_readonly(r), 1);
    CHECK_INT((int)n_events(r, run), 1);
    CHECK_INT(avo_archive_event(w, run, "two", NULL, err, sizeof err), 0);
    CHECK_INT((int)n_events(r, run), 2);
    CHECK(avo_archive_event(r, run, "three", NULL, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "readonly");
    CHECK_INT(raw_int(path, "SELECT count(*) FROM events"), 2);
    avo_archive_free(r);
    avo_archive_free(w);
    CHECK_INT(avo_archive_open_watch(&r, tmp_path("none.db"), err, sizeof err), AVO_EIO);
    CHECK_CONTAINS(err, "cannot open archive");
    CHECK(r == NULL);
    CHECK(access(tmp_path("none.db"), F_OK) != 0);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_fresh_schema();
    test_runs();
    test_sources();
    test_candidate_roundtrip();
    test_candidates_brief();
    test_best_and_key();
    test_lineage_dag();
    test_newer_schema_refused();
    test_v0_and_reopen();
    test_crash_safety();
    test_attempts();
    test_migrate_old_archive();
    test_baselines();
    test_migrate_v5();
    test_migrate_v7();
    test_run_claim();
    test_open_watch();
    nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return check_finish();
}
