/*
 * test_kb.c — the knowledge base: adding and replacing documents, sections,
 * ranking and snippets, hostile free-text queries (none may reach FTS5 as
 * syntax), reading by path, id and suffix, directory indexing with skips
 * and pruning, refusal of a newer kb schema, coexistence with the run
 * archive in one file whichever of the two is created first, the KB on the
 * archive's own connection, text that is not UTF-8, and AVO_DB_TIMEOUT
 * refused as the archive refuses it.
 */
#include "store/kb.h"

#include "store/archive.h"
#include "check.h"

#include <ftw.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/avo-test-kb-XXXXXX";

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int turn;
    char *p = buf[turn++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static const char softmax_md[] =
    "# Softmax\n"
    "\n"
    "Row-wise softmax is memory bound.\n"
    "\n"
    "## One-pass online softmax\n"
    "\n"
    "Keep a running maximum and a running sum; when the maximum grows, rescale\n"
    "the sum by exp(old - new).  One pass over the row instead of three.\n"
    "\n"
    "```c\n"
    "# this is not a heading, it is inside a fence\n"
    "m_new = fmaxf(m, x); s = s * expf(m - m_new) + expf(x - m_new);\n"
    "```\n"
    "\n"
    "## Warp reductions\n"
    "\n"
    "Use __shfl_xor_sync butterflies to reduce max and sum across a warp.\n";

static const char gemm_md[] =
    "# GEMM\n"
    "\n"
    "## Shared memory tiles\n"
    "\n"
    "Stage tiles of A and B in shared memory; pad rows to avoid bank conflicts.\n"
    "A softmax is sometimes fused into the epilogue.\n"
    "\n"
    "## Double buffering\n"
    "\n"
    "Load the next tile with cp.async while computing on the current one.\n";

static int array_len(const json_t *a)
{
    return json_is_array(a) ? (int)json_array_size(a) : -1;
}

/* The integer the first row of sql gives on an open connection, or -1. */
static long long raw_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static const char *first_doc(const json_t *hits)
{
    return json_string_value(json_object_get(json_array_get(hits, 0), "doc"));
}

static void test_add_search_read(void)
{
    const char *db = tmp_path("kb.db");
    avo_kb *kb = NULL;
    char err[AVO_ERRLEN] = "";
    CHECK_INT(avo_kb_open(&kb, db, err, sizeof err), 0);
    if (!kb) {
        fprintf(stderr, "open: %s\n", err);
        check_failures++;
        return;
    }
    int changed = -1;
    CHECK_INT(avo_kb_add_file(kb, "notes/softmax.md", softmax_md, &changed, err, sizeof err), 0);
    CHECK_INT(changed, 1);
    CHECK_INT(avo_kb_add_file(kb, "./notes/gemm.md", gemm_md, &changed, err, sizeof err), 0);
    CHECK_INT(changed, 1);

    /* Source is cut into chunks of about 60 lines. */
    char source[16384] = "";
    for (int i = 1; i <= 150; i++) {
        char line[64];
        snprintf(line, sizeof line, i == 100 ? "int marker_%d_register_tile;\n" : "int x%d;\n", i);
        strcat(source, line);
    }
    CHECK_INT(avo_kb_add_file(kb, "src/kernel.cu", source, &changed, err, sizeof err), 0);

    json_t *list = NULL;
    CHECK_INT(avo_kb_list(kb, &list, err, sizeof err), 0);
    CHECK_INT(array_len(list), 3);
    /* Path order; "./" is dropped from paths. */
    CHECK_STR(json_string_value(json_object_get(json_array_get(list, 0), "path")), "notes/gemm.md");
    const json_t *sm = json_array_get(list, 1);
    CHECK_STR(json_string_value(json_object_get(sm, "title")), "Softmax");
    /* Preamble, two "##" sections; the '#' line inside the fence is not a heading. */
    CHECK_INT(json_integer_value(json_object_get(sm, "sections")), 3);
    const json_t *src = json_array_get(list, 2);
    CHECK_STR(json_string_value(json_object_get(src, "kind")), "source");
    CHECK(json_integer_value(json_object_get(src, "sections")) >= 2);
    json_decref(list);

    /* Ranking: the section about online softmax comes first, with a snippet. */
    json_t *hits = NULL;
    CHECK_INT(avo_kb_search(kb, "online softmax", 5, &hits, err, sizeof err), 0);
    CHECK(array_len(hits) >= 2);
    CHECK_STR(first_doc(hits), "notes/softmax.md");
    const json_t *top = json_array_get(hits, 0);
    CHECK_STR(json_string_value(json_object_get(top, "title")), "One-pass online softmax");
    CHECK_INT(json_integer_value(json_object_get(top, "line")), 5);
    CHECK_CONTAINS(json_string_value(json_object_get(top, "snippet")), "**");
    CHECK(json_number_value(json_object_get(top, "score")) > 0);
    /* Scores never increase down the list. */
    for (size_t i = 1; i < json_array_size(hits); i++)
        CHECK(json_number_value(json_object_get(json_array_get(hits, i), "score")) <=
              json_number_value(json_object_get(json_array_get(hits, i - 1), "score")) + 1e-9);
    json_decref(hits);

    /* Any word matches when no section has all of them; stemming applies. */
    CHECK_INT(avo_kb_search(kb, "buffering zzzunknownword", 5, &hits, err, sizeof err), 0);
    CHECK_INT(array_len(hits), 1);
    CHECK_STR(first_doc(hits), "notes/gemm.md");
    json_decref(hits);
    CHECK_INT(avo_kb_search(kb, "buffered", 5, &hits, err, sizeof err), 0);
    CHECK_INT(array_len(hits), 1);
    json_decref(hits);
    CHECK_INT(avo_kb_search(kb, "marker_100", 5, &hits, err, sizeof err), 0);
    CHECK_INT(array_len(hits), 1);
    CHECK_STR(first_doc(hits), "src/kernel.cu");
    json_decref(hits);
    CHECK_INT(avo_kb_search(kb, "warp*", 5, &hits, err, sizeof err), 0);
    CHECK_INT(array_len(hits), 1);
    json_decref(hits);
    CHECK_INT(avo_kb_search(kb, "softmax", 1, &hits, err, sizeof err), 0);
    CHECK_INT(array_len(hits), 1);
    json_decref(hits);

    /* Hostile queries: never an error, always an array. */
    static const char *const hostile[] = {
        "\"",
        "*",
        "NEAR(",
        "a OR",
        ")",
        "",
        "   ",
        "(((",
        "\"unbalanced",
        "title:softmax",
        "body : x",
        "-softmax",
        "^softmax",
        "AND",
        "NOT softmax",
        "softmax NOT",
        "a AND OR NOT",
        "NEAR(softmax warp, 2)",
        "soft*max",
        "***",
        "\"\"\"\"",
        "{title body}: warp",
        "+",
        "x'; DROP TABLE kb_docs; --",
        "é ñ ü 中文",
        "\\",
        "%_",
        "warp\"reduction",
    };
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        hits = NULL;
        int rc = avo_kb_search(kb, hostile[i], 10, &hits, err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "query [%s]: %s\n", hostile[i], err);
        CHECK_INT(rc, 0);
        CHECK(json_is_array(hits));
        json_decref(hits);
    }
    char longq[8192] = "";
    for (int i = 0; i < 500; i++)
        strcat(longq, i % 3 ? "softmax " : "( \" ");
    CHECK_INT(avo_kb_search(kb, longq, 10, &hits, err, sizeof err), 0);
    CHECK(array_len(hits) >= 1);
    json_decref(hits);
    CHECK_INT(avo_kb_search(kb, "", 10, &hits, err, sizeof err), 0);
    CHECK_INT(array_len(hits), 0);
    json_decref(hits);
    /* The tables survived the injection attempt. */
    CHECK_INT(avo_kb_list(kb, &list, err, sizeof err), 0);
    CHECK_INT(array_len(list), 3);
    json_decref(list);

    /* Re-adding: same content is a no-op, new content replaces (same id). */
    json_t *doc = NULL;
    CHECK_INT(avo_kb_read(kb, "notes/softmax.md", &doc, err, sizeof err), 0);
    json_int_t id = json_integer_value(json_object_get(doc, "id"));
    CHECK_STR(json_string_value(json_object_get(doc, "text")), softmax_md);
    json_decref(doc);
    CHECK_INT(avo_kb_add_file(kb, "notes/softmax.md", softmax_md, &changed, err, sizeof err), 0);
    CHECK_INT(changed, 0);
    CHECK_INT(avo_kb_add_file(kb, "notes/softmax.md", "# Softmax\n\nNow about exponentials.\n",
                              &changed, err, sizeof err),
              0);
    CHECK_INT(changed, 1);
    CHECK_INT(avo_kb_search(kb, "online", 5, &hits, err, sizeof err), 0);
    CHECK_INT(array_len(hits), 0);
    json_decref(hits);
    CHECK_INT(avo_kb_search(kb, "exponentials", 5, &hits, err, sizeof err), 0);
    CHECK_INT(array_len(hits), 1);
    json_decref(hits);
    CHECK_INT(avo_kb_list(kb, &list, err, sizeof err), 0);
    CHECK_INT(array_len(list), 3);
    json_decref(list);

    /* Reading by id and by unique suffix; missing and ambiguous documents. */
    char idtext[32];
    snprintf(idtext, sizeof idtext, "%lld", (long long)id);
    CHECK_INT(avo_kb_read(kb, idtext, &doc, err, sizeof err), 0);
    CHECK_STR(json_string_value(json_object_get(doc, "path")), "notes/softmax.md");
    json_decref(doc);
    CHECK_INT(avo_kb_read(kb, "softmax.md", &doc, err, sizeof err), 0);
    CHECK_STR(json_string_value(json_object_get(doc, "path")), "notes/softmax.md");
    json_decref(doc);
    doc = (json_t *)1;
    CHECK_INT(avo_kb_read(kb, "nope.md", &doc, err, sizeof err), AVO_ENOTFOUND);
    CHECK(doc == NULL);
    CHECK_CONTAINS(err, "nope.md");
    CHECK_INT(avo_kb_read(kb, "9999", &doc, err, sizeof err), AVO_ENOTFOUND);
    CHECK_INT(avo_kb_read(kb, "", &doc, err, sizeof err), AVO_ENOTFOUND);
    CHECK_INT(avo_kb_read(kb, "ftmax.md", &doc, err, sizeof err), AVO_ENOTFOUND);
    CHECK_INT(avo_kb_add_file(kb, "other/softmax.md", "# Other\n", NULL, err, sizeof err), 0);
    CHECK_INT(avo_kb_read(kb, "softmax.md", &doc, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "ambiguous");

    /* A text with NUL bytes cannot be given through add_file's C string, and a
     * file that holds one is refused. */
    const char *bin = tmp_path("blob.txt");
    FILE *f = fopen(bin, "wb");
    fwrite("ab\0cd", 1, 5, f);
    fclose(f);
    CHECK_INT(avo_kb_add_file(kb, bin, NULL, &changed, err, sizeof err), AVO_EINVAL);
    CHECK_INT(avo_kb_add_file(kb, tmp_path("missing.md"), NULL, &changed, err, sizeof err),
              AVO_ENOTFOUND);
    avo_kb_free(kb);
    avo_kb_free(NULL);

    /* The file the KB created holds the KB alone: no archive tables, no
     * schema version.  It still opens as an archive, which adds its tables
     * beside the KB's. */
    sqlite3 *raw = NULL;
    CHECK_INT(sqlite3_open(db, &raw), SQLITE_OK);
    CHECK_INT(raw_int(raw, "PRAGMA user_version"), 0);
    CHECK_INT(raw_int(raw, "SELECT count(*) FROM sqlite_schema WHERE tbl_name NOT LIKE 'kb\\_%'"
                           " ESCAPE '\\' AND tbl_name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"),
              0);
    long long n_docs = raw_int(raw, "SELECT count(*) FROM kb_docs");
    CHECK(n_docs > 0);
    sqlite3_close(raw);
    avo_archive *ar = NULL;
    CHECK_INT(avo_archive_open(&ar, db, err, sizeof err), 0);
    CHECK_INT(avo_archive_opened_version(ar), 0);
    avo_run_info info = {.script_path = "x.lua", .seed = 1};
    int64_t run_id = 0;
    CHECK_INT(avo_archive_run_begin(ar, &info, &run_id, err, sizeof err), 0);
    avo_archive_free(ar);
    CHECK_INT(avo_kb_open(&kb, db, err, sizeof err), 0);
    json_t *docs = NULL;
    CHECK_INT(avo_kb_list(kb, &docs, err, sizeof err), 0);
    CHECK_INT(array_len(docs), n_docs);
    json_decref(docs);
    avo_kb_free(kb);
}

static void test_add_dir(void)
{
    const char *root = tmp_path("tree");
    char p[600];
    mkdir(root, 0755);
    snprintf(p, sizeof p, "%s/sub", root), mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/.hidden", root), mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/a.md", root), write_file(p, "# A\n\n## Tiling\n\nTiles.\n");
    snprintf(p, sizeof p, "%s/b.txt", root), write_file(p, "plain text about swizzling\n");
    snprintf(p, sizeof p, "%s/c.cu", root), write_file(p, "__global__ void k() {}\n");
    snprintf(p, sizeof p, "%s/d.bin", root), write_file(p, "not indexed\n");
    snprintf(p, sizeof p, "%s/.g.md", root), write_file(p, "# hidden\n");
    snprintf(p, sizeof p, "%s/.hidden/e.md", root), write_file(p, "# hidden too\n");
    snprintf(p, sizeof p, "%s/sub/f.py", root), write_file(p, "print('warp specialisation')\n");
    snprintf(p, sizeof p, "%s/sub/g.h", root);
    FILE *f = fopen(p, "wb");
    fwrite("x\0y", 1, 3, f); /* binary: skipped */
    fclose(f);

    avo_kb *kb = NULL;
    char err[AVO_ERRLEN];
    CHECK_INT(avo_kb_open(&kb, tmp_path("dir.db"), err, sizeof err), 0);
    if (!kb)
        return;
    avo_kb_stats s;
    CHECK_INT(avo_kb_add_dir(kb, root, &s, err, sizeof err), 0);
    CHECK_INT(s.added, 4);
    CHECK_INT(s.skipped, 2);
    CHECK_INT(s.unchanged + s.replaced + s.removed, 0);
    CHECK(s.sections >= 4);
    json_t *list = NULL;
    CHECK_INT(avo_kb_list(kb, &list, err, sizeof err), 0);
    CHECK_INT(array_len(list), 4);
    snprintf(p, sizeof p, "%s/a.md", root);
    CHECK_STR(json_string_value(json_object_get(json_array_get(list, 0), "path")), p);
    json_decref(list);

    /* Trailing slash, same documents: all unchanged. */
    snprintf(p, sizeof p, "%s/", root);
    CHECK_INT(avo_kb_add_dir(kb, p, &s, err, sizeof err), 0);
    CHECK_INT(s.unchanged, 4);
    CHECK_INT(s.added, 0);

    /* A changed file is replaced, a deleted one removed, others kept. */
    snprintf(p, sizeof p, "%s/b.txt", root), write_file(p, "plain text about pipelines\n");
    snprintf(p, sizeof p, "%s/sub/f.py", root), remove(p);
    CHECK_INT(avo_kb_add_file(kb, "elsewhere/keep.md", "# Keep\n", NULL, err, sizeof err), 0);
    CHECK_INT(avo_kb_add_dir(kb, root, &s, err, sizeof err), 0);
    CHECK_INT(s.replaced, 1);
    CHECK_INT(s.removed, 1);
    CHECK_INT(s.unchanged, 2);
    CHECK_INT(avo_kb_list(kb, &list, err, sizeof err), 0);
    CHECK_INT(array_len(list), 4); /* a, b, c and elsewhere/keep.md */
    json_decref(list);
    json_t *hits = NULL;
    CHECK_INT(avo_kb_search(kb, "swizzling", 5, &hits, err, sizeof err), 0);
    CHECK_INT(array_len(hits), 0);
    json_decref(hits);

    /* Errors: missing directory, a file given as a directory. */
    CHECK_INT(avo_kb_add_dir(kb, tmp_path("no-such-dir"), &s, err, sizeof err), AVO_ENOTFOUND);
    CHECK_CONTAINS(err, "no-such-dir");
    snprintf(p, sizeof p, "%s/a.md", root);
    CHECK_INT(avo_kb_add_dir(kb, p, &s, err, sizeof err), AVO_EINVAL);
    avo_kb_free(kb);
}

/* A KB added to an existing archive, used beside it, and the archive still
 * opening afterwards; then a KB written by a newer avo is refused. */
static void test_archive_coexistence(void)
{
    const char *db = tmp_path("archive.db");
    char err[AVO_ERRLEN];
    avo_archive *ar = NULL;
    CHECK_INT(avo_archive_open(&ar, db, err, sizeof err), 0);
    avo_run_info info = {.script_path = "x.lua", .seed = 7};
    int64_t run_id = 0;
    CHECK_INT(avo_archive_run_begin(ar, &info, &run_id, err, sizeof err), 0);

    /* Both connections open at once. */
    avo_kb *kb = NULL;
    CHECK_INT(avo_kb_open(&kb, db, err, sizeof err), 0);
    if (!kb) {
        avo_archive_free(ar);
        return;
    }
    CHECK_INT(avo_kb_add_file(kb, "notes/gemm.md", gemm_md, NULL, err, sizeof err), 0);
    CHECK_INT(avo_archive_event(ar, run_id, "log", "{\"message\":\"hi\"}", err, sizeof err), 0);
    json_t *hits = NULL;
    CHECK_INT(avo_kb_search(kb, "bank conflicts", 5, &hits, err, sizeof err), 0);
    CHECK_INT(array_len(hits), 1);
    json_decref(hits);
    avo_kb_free(kb);
    CHECK_INT(avo_archive_run_end(ar, run_id, "done", err, sizeof err), 0);
    avo_archive_free(ar);

    /* The archive reopens untouched by the kb tables, and the KB is there. */
    ar = NULL;
    CHECK_INT(avo_archive_open(&ar, db, err, sizeof err), 0);
    CHECK_INT(avo_archive_opened_version(ar), AVO_ARCHIVE_SCHEMA_VERSION);
    json_t *run = NULL;
    CHECK_INT(avo_archive_run_get(ar, run_id, &run, err, sizeof err), 0);
    CHECK_STR(json_string_value(json_object_get(run, "status")), "done");
    json_decref(run);
    avo_archive_free(ar);
    CHECK_INT(avo_kb_open(&kb, db, err, sizeof err), 0);
    json_t *list = NULL;
    CHECK_INT(avo_kb_list(kb, &list, err, sizeof err), 0);
    CHECK_INT(array_len(list), 1);
    json_decref(list);
    avo_kb_free(kb);

    /* A newer kb schema is refused; the archive does not care. */
    sqlite3 *raw = NULL;
    CHECK_INT(sqlite3_open(db, &raw), SQLITE_OK);
    CHECK_INT(sqlite3_exec(raw, "UPDATE kb_meta SET value = 99 WHERE key = 'schema_version'", NULL,
                           NULL, NULL),
              SQLITE_OK);
    sqlite3_close(raw);
    kb = (avo_kb *)1;
    CHECK_INT(avo_kb_open(&kb, db, err, sizeof err), AVO_ESCHEMA);
    CHECK(kb == NULL);
    CHECK_CONTAINS(err, "99");
    CHECK_INT(avo_archive_open(&ar, db, err, sizeof err), 0);
    avo_archive_free(ar);

    /* Bad arguments. */
    CHECK_INT(avo_kb_open(&kb, "", err, sizeof err), AVO_EINVAL);
    CHECK_INT(avo_kb_open(NULL, db, err, sizeof err), AVO_EINVAL);
}

/*
 * A Latin-1 document (bytes that are not UTF-8) is indexed, listed,
 * searched and read: the text comes back with '?' for each such byte, as
 * the archive's sources do, never as "out of memory" or "no document".
 */
static void test_not_utf8(void)
{
    const char *db = tmp_path("latin1.db");
    const char *md = tmp_path("cafe.md");
    write_file(md, "# Caf\xe9 tiling\n\nTiles of 32 r\xe9" "duce bank conflicts.\n");
    avo_kb *kb = NULL;
    char err[AVO_ERRLEN];
    CHECK_INT(avo_kb_open(&kb, db, err, sizeof err), 0);
    if (!kb)
        return;
    int changed = 0;
    CHECK_INT(avo_kb_add_file(kb, md, NULL, &changed, err, sizeof err), 0);
    CHECK_INT(changed, 1);
    json_t *list = NULL;
    CHECK_INT(avo_kb_list(kb, &list, err, sizeof err), 0);
    CHECK_INT(array_len(list), 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(list, 0), "title")), "Caf? tiling");
    json_decref(list);
    json_t *hits = NULL;
    CHECK_INT(avo_kb_search(kb, "bank conflicts", 5, &hits, err, sizeof err), 0);
    CHECK_INT(array_len(hits), 1);
    CHECK_CONTAINS(json_string_value(json_object_get(json_array_get(hits, 0), "snippet")),
                   "r?duce");
    json_decref(hits);
    json_t *doc = NULL;
    CHECK_INT(avo_kb_read(kb, "cafe.md", &doc, err, sizeof err), 0);
    CHECK_CONTAINS(json_string_value(json_object_get(doc, "text")), "# Caf? tiling");
    json_decref(doc);
    avo_kb_free(kb);
}

/* AVO_DB_TIMEOUT is read by the one SQL layer: a malformed value is refused
 * by the KB with the archive's words, before any file is made. */
static void test_db_timeout(void)
{
    const char *db = tmp_path("timeout.db");
    char kb_err[AVO_ERRLEN] = "", ar_err[AVO_ERRLEN] = "";
    setenv("AVO_DB_TIMEOUT", "abc", 1);
    avo_kb *kb = (avo_kb *)1;
    CHECK_INT(avo_kb_open(&kb, db, kb_err, sizeof kb_err), AVO_EINVAL);
    CHECK(kb == NULL);
    avo_archive *ar = (avo_archive *)1;
    CHECK_INT(avo_archive_open(&ar, db, ar_err, sizeof ar_err), AVO_EINVAL);
    CHECK(ar == NULL);
    CHECK_STR(kb_err, ar_err);
    CHECK_CONTAINS(kb_err, "AVO_DB_TIMEOUT='abc' is not a number of seconds");
    CHECK(access(db, F_OK) != 0);
    setenv("AVO_DB_TIMEOUT", "0.5", 1);
    CHECK_INT(avo_kb_open(&kb, db, kb_err, sizeof kb_err), 0);
    avo_kb_free(kb);
    unsetenv("AVO_DB_TIMEOUT");
}

/*
 * The KB of a run's archive on the archive's own connection: its writes
 * are seen at once by the archive's handle, it outlives the archive's
 * handle, and an archive from an older avo (schema 1) takes a KB beside
 * its migrated tables.  Both sets keep their own version: the archive's in
 * user_version, the KB's in kb_meta.
 */
static void test_on_archive(void)
{
    const char *db = tmp_path("shared.db");
    char err[AVO_ERRLEN];
    avo_archive *ar = NULL;
    CHECK_INT(avo_archive_open(&ar, db, err, sizeof err), 0);
    if (!ar)
        return;
    avo_kb *kb = (avo_kb *)1;
    CHECK_INT(avo_kb_open_archive(&kb, NULL, err, sizeof err), AVO_EINVAL);
    CHECK(kb == NULL);
    CHECK_INT(avo_kb_open_archive(&kb, ar, err, sizeof err), 0);
    if (!kb) {
        avo_archive_free(ar);
        return;
    }
    avo_run_info info = {.script_path = "x.lua", .seed = 3};
    int64_t run_id = 0;
    CHECK_INT(avo_archive_run_begin(ar, &info, &run_id, err, sizeof err), 0);
    CHECK_INT(avo_kb_add_file(kb, "notes/gemm.md", gemm_md, NULL, err, sizeof err), 0);
    avo_archive_free(ar);
    json_t *hits = NULL;
    CHECK_INT(avo_kb_search(kb, "bank conflicts", 5, &hits, err, sizeof err), 0);
    CHECK_INT(array_len(hits), 1);
    json_decref(hits);
    avo_kb_free(kb);

    sqlite3 *raw = NULL;
    CHECK_INT(sqlite3_open(db, &raw), SQLITE_OK);
    CHECK_INT(raw_int(raw, "PRAGMA user_version"), AVO_ARCHIVE_SCHEMA_VERSION);
    CHECK_INT(raw_int(raw, "SELECT value FROM kb_meta WHERE key = 'schema_version'"),
              AVO_KB_SCHEMA_VERSION);
    CHECK_INT(raw_int(raw, "SELECT count(*) FROM runs"), 1);
    sqlite3_close(raw);

    /* An archive of schema 1 (tests/unit/fixtures): migrated, then the KB. */
    const char *root = getenv("AVO_SOURCE_ROOT");
    CHECK(root != NULL);
    if (!root)
        return;
    char fixture[1024];
    snprintf(fixture, sizeof fixture, "%s/tests/unit/fixtures/archive-v1.sql", root);
    FILE *f = fopen(fixture, "rb");
    CHECK(f != NULL);
    if (!f)
        return;
    static char sql[1 << 20];
    size_t n = fread(sql, 1, sizeof sql - 1, f);
    fclose(f);
    sql[n] = '\0';
    const char *old = tmp_path("old-v1.db");
    CHECK_INT(sqlite3_open(old, &raw), SQLITE_OK);
    CHECK_INT(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
    long long cands = raw_int(raw, "SELECT count(*) FROM candidates");
    sqlite3_close(raw);
    CHECK_INT(avo_archive_open(&ar, old, err, sizeof err), 0);
    CHECK_INT(avo_archive_opened_version(ar), 1);
    CHECK_INT(avo_kb_open_archive(&kb, ar, err, sizeof err), 0);
    CHECK_INT(avo_kb_add_file(kb, "notes/softmax.md", softmax_md, NULL, err, sizeof err), 0);
    avo_kb_free(kb);
    avo_archive_free(ar);
    CHECK_INT(sqlite3_open(old, &raw), SQLITE_OK);
    CHECK_INT(raw_int(raw, "PRAGMA user_version"), AVO_ARCHIVE_SCHEMA_VERSION);
    CHECK_INT(raw_int(raw, "SELECT count(*) FROM candidates"), cands);
    CHECK_INT(raw_int(raw, "SELECT count(*) FROM kb_docs"), 1);
    sqlite3_close(raw);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_add_search_read();
    test_add_dir();
    test_archive_coexistence();
    test_not_utf8();
    test_db_timeout();
    test_on_archive();
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return check_finish();
}
