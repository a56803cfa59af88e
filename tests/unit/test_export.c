/*
 * test_export.c — the inspection modules on a small hand-made archive:
 * CSV quoting (RFC 4180), the listing queries (runs, candidates, LLM
 * spend), CSV/JSON/git exports, candidate diffs and the HTML report.
 */
#include "store/archive.h"
#include "cli/compare.h"
#include "core/diff.h"
#include "cli/export.h"
#include "cli/report.h"
#include "core/strbuf.h"

#include "check.h"

#include <ftw.h>
#include <git2.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/avo-test-export-XXXXXX";

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int turn;
    char *p = buf[turn++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* CSV field of one string, as a new static buffer. */
static const char *csv(const char *field)
{
    static char out[256];
    avo_strbuf b = {0};
    avo_export_csv_field(&b, field);
    snprintf(out, sizeof out, "%s", avo_strbuf_text(&b));
    avo_strbuf_free(&b);
    return out;
}

static void test_csv_quoting(void)
{
    CHECK_STR(csv("plain"), "plain");
    CHECK_STR(csv(NULL), "");
    CHECK_STR(csv(""), "");
    CHECK_STR(csv("a,b"), "\"a,b\"");
    CHECK_STR(csv("say \"hi\""), "\"say \"\"hi\"\"\"");
    CHECK_STR(csv("two\nlines"), "\"two\nlines\"");
    CHECK_STR(csv("cr\rhere"), "\"cr\rhere\"");
    CHECK_STR(csv(" padded"), "\" padded\"");
    CHECK_STR(csv("{\"A\":1}"), "\"{\"\"A\"\":1}\"");
}

static void test_strbuf(void)
{
    avo_strbuf b = {0};
    CHECK_STR(avo_strbuf_text(&b), "");
    avo_strbuf_html(&b, "<a href='x'>&\"\x01</a>");
    CHECK_STR(avo_strbuf_text(&b), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;?&lt;/a&gt;");
    for (int i = 0; i < 1000; i++)
        avo_strbuf_printf(&b, "%d", i % 10);
    CHECK(b.len > 1000 && !b.failed);
    char *s = avo_strbuf_steal(&b);
    CHECK(s && b.data == NULL && b.len == 0);
    free(s);
    avo_strbuf_free(&b);
    avo_strbuf_free(NULL);
}

static void test_nice_axis(void)
{
    double lo, hi, step;
    avo_report_nice_axis(0, 9.5, 6, &lo, &hi, &step);
    CHECK(step == 2 && lo == 0 && hi == 10);
    avo_report_nice_axis(0.13, 0.87, 5, &lo, &hi, &step);
    CHECK(fabs(step - 0.2) < 1e-12 && fabs(lo - 0) < 1e-12 && fabs(hi - 1.0) < 1e-12);
    avo_report_nice_axis(5, 5, 4, &lo, &hi, &step); /* empty range still gets ticks */
    CHECK(hi > lo && step > 0);
}

static const char seed_src[] = "int k(void)\n{\n    return 1;\n}\n";
static const char left_src[] = "int k(void)\n{\n    return 2; /* left */\n}\n";

/* One finished candidate with two configs (or none when failed). */
static int64_t add(avo_archive *ar, int64_t run, int gen, const char *op, const char *src,
                   const char *knobs, const char *note, const avo_parent_edge *parents, size_t np,
                   double score, const char *status, const char *reason)
{
    char err[AVO_ERRLEN];
    int64_t id = 0;
    avo_candidate_info info = {.run_id = run, .generation = gen, .operator_name = op,
                               .source = src, .knobs_json = knobs, .note = note,
                               .parents = parents, .n_parents = np};
    CHECK_INT(avo_archive_candidate_add(ar, &info, &id, err, sizeof err), 0);
    json_t *result;
    if (strcmp(status, "ok") == 0)
        result = json_pack("{ss s[{ss sb sf sf si sf sf} {ss sb sf sf si sf sf}]}", "status", "ok",
                           "configs", "name", "small", "correct", 1, "median_s", 1.0 / score, "spread",
                           0.01, "samples", 5, "gflops", score, "gbs", 0.0, "name", "large", "correct", 1,
                           "median_s", 0.5 / score, "spread", 0.02, "samples", 7, "gflops",
                           score * 2, "gbs", 0.0);
    else
        result = json_pack("{ss ss ss}", "status", status, "reason", reason, "log", "cc: error");
    CHECK_INT(avo_archive_candidate_finish(ar, id, result, strcmp(status, "ok") ? 0 : score, err,
                                           sizeof err),
              0);
    json_decref(result);
    return id;
}

/* The lineage: seed(1) -> a(2), seed -> b(3, new source), a + b -> x(4,
 * crossover), failed f(5) of a; second run: one seed (6). */
static avo_archive *make_archive(void)
{
    char err[AVO_ERRLEN];
    avo_archive *ar = NULL;
    CHECK_INT(avo_archive_open(&ar, tmp_path("a.db"), err, sizeof err), 0);
    avo_run_info info = {.script_path = "x.lua", .script_source = "return 1 -- <b>",
                         .config_json = "{\"jobs\":2,\"max_evals\":10,\"baselines\":{\"cuBLAS\":3}}",
                         .seed = 7, .engine_version = "0.1.0", .compiler = "cc", .host = "h"};
    int64_t run = 0, run2 = 0;
    CHECK_INT(avo_archive_run_begin(ar, &info, &run, err, sizeof err), 0);
    avo_parent_edge p1[] = {{1, "parent"}};
    avo_parent_edge p2[] = {{2, "ours"}, {3, "theirs"}};
    avo_parent_edge p3[] = {{2, "parent"}};
    add(ar, run, 0, "seed", seed_src, "{\"A\":1,\"B\":4}", NULL, NULL, 0, 1.0, "ok", NULL);
    add(ar, run, 1, "param_tweak", seed_src, "{\"A\":2,\"B\":4}", "A 1->2", p1, 1, 2.0, "ok", NULL);
    add(ar, run, 1, "edit", left_src, "{\"A\":1,\"B\":4}", "a <b>bold</b>, \"quoted\" note", p1, 1,
        1.5, "ok", NULL);
    add(ar, run, 2, "crossover", left_src, "{\"A\":2,\"C\":1}", "merged", p2, 2, 3.0, "ok", NULL);
    add(ar, run, 2, "param_tweak", seed_src, "{\"A\":8}", NULL, p3, 1, 0, "compile_error",
        "error: x, \"y\"\nline 2");
    CHECK_INT(avo_archive_run_end(ar, run, "done", err, sizeof err), 0);
    CHECK_INT(avo_archive_run_begin(ar, &info, &run2, err, sizeof err), 0);
    add(ar, run2, 0, "seed", seed_src, "{}", NULL, NULL, 0, 1.0, "ok", NULL);
    return ar;
}

static void test_queries(avo_archive *ar)
{
    char err[AVO_ERRLEN];
    json_t *runs = NULL, *all = NULL, *spend = NULL;
    CHECK_INT(avo_archive_runs(ar, &runs, err, sizeof err), 0);
    CHECK_INT(json_array_size(runs), 2);
    json_t *r1 = json_array_get(runs, 0);
    CHECK_INT(json_integer_value(json_object_get(r1, "candidates")), 5);
    CHECK_INT(json_integer_value(json_object_get(r1, "ok")), 4);
    CHECK_INT(json_integer_value(json_object_get(r1, "failed")), 1);
    CHECK_INT(json_integer_value(json_object_get(r1, "best_id")), 4);
    CHECK(json_number_value(json_object_get(r1, "best_score")) == 3.0);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(r1, "config"), "max_evals")), 10);
    json_decref(runs);

    CHECK_INT(avo_archive_candidates(ar, 0, 0, &all, err, sizeof err), 0);
    CHECK_INT(json_array_size(all), 6);
    CHECK_INT(json_integer_value(json_object_get(json_array_get(all, 3), "id")), 4);
    CHECK(json_object_get(json_array_get(all, 0), "source") == NULL);
    json_decref(all);
    CHECK_INT(avo_archive_candidates(ar, 2, 1, &all, err, sizeof err), 0);
    CHECK_INT(json_array_size(all), 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(all, 0), "source")), seed_src);
    json_decref(all);
    CHECK_INT(avo_archive_candidates(ar, 9, 0, &all, err, sizeof err), AVO_ENOTFOUND);
    CHECK_CONTAINS(err, "no run 9");

    CHECK_INT(avo_archive_llm_spend(ar, 0, &spend, err, sizeof err), 0);
    CHECK_INT(json_integer_value(json_object_get(spend, "calls")), 0);
    json_decref(spend);
}

/* A later schema's llm_calls table, added by hand, is read defensively. */
static void test_llm_spend_table(void)
{
    sqlite3 *db = NULL;
    CHECK_INT(sqlite3_open(tmp_path("a.db"), &db), SQLITE_OK);
    char *msg = NULL;
    /* The table exists from schema version 3 on; older builds lack it. */
    int rc = sqlite3_exec(db,
                          "CREATE TABLE IF NOT EXISTS llm_calls (id INTEGER PRIMARY KEY,"
                          " run_id INTEGER, t REAL, provider TEXT, request_hash TEXT,"
                          " request TEXT, status TEXT, cost_usd REAL, input_tokens INTEGER);"
                          "INSERT INTO llm_calls (run_id, t, provider, request_hash, request,"
                          " status, cost_usd, input_tokens) VALUES"
                          " (1, 0, 'p', 'h', '{}', 'ok', 0.5, 100),"
                          " (1, 0, 'p', 'h', '{}', 'ok', 0.25, 50),"
                          " (2, 0, 'p', 'h', '{}', 'ok', 1, 10);",
                          NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        fprintf(stderr, "llm_calls: %s\n", msg ? msg : "?");
    CHECK_INT(rc, SQLITE_OK);
    sqlite3_free(msg);
    sqlite3_close(db);
    avo_archive *ar = NULL;
    char err[AVO_ERRLEN];
    json_t *spend = NULL;
    CHECK_INT(avo_archive_open(&ar, tmp_path("a.db"), err, sizeof err), 0);
    CHECK_INT(avo_archive_llm_spend(ar, 1, &spend, err, sizeof err), 0);
    CHECK_INT(json_integer_value(json_object_get(spend, "calls")), 2);
    CHECK(json_number_value(json_object_get(spend, "cost_usd")) == 0.75);
    CHECK(json_number_value(json_object_get(spend, "input_tokens")) == 150);
    CHECK(json_object_get(spend, "request") == NULL);
    json_decref(spend);
    avo_strbuf html = {0};
    CHECK_INT(avo_report_html(ar, 1, &html, err, sizeof err), 0);
    CHECK(strstr(avo_strbuf_text(&html), "no LLM calls") == NULL);
    CHECK_CONTAINS(avo_strbuf_text(&html), "input_tokens");
    avo_strbuf_free(&html);
    avo_archive_free(ar);
}

static void test_csv_json(avo_archive *ar)
{
    char err[AVO_ERRLEN];
    avo_strbuf out = {0};
    CHECK_INT(avo_export_csv(ar, 1, &out, err, sizeof err), 0);
    const char *text = avo_strbuf_text(&out);
    CHECK(strncmp(text, "id,run_id,generation,operator,status,reason,score,parents,knobs,", 64) == 0);
    /* 4 ok candidates x 2 configs + 1 failed without configs + header */
    int lines = 0;
    for (const char *p = text; (p = strstr(p, "\r\n")); p += 2)
        lines++;
    CHECK_INT(lines, 1 + 4 * 2 + 1); /* the failed reason's quoted \n is no row end */
    CHECK_CONTAINS(text, "\"a <b>bold</b>, \"\"quoted\"\" note\"");
    CHECK_CONTAINS(text, "2:ours;3:theirs");
    CHECK_CONTAINS(text, "\"{\"\"A\"\":2,\"\"C\"\":1}\"");
    CHECK_CONTAINS(text, "\"error: x, \"\"y\"\"\nline 2\"");
    CHECK_CONTAINS(text, ",small,1,");
    avo_strbuf_free(&out);

    CHECK_INT(avo_export_json(ar, 0, &out, err, sizeof err), 0);
    json_t *doc = json_loads(avo_strbuf_text(&out), 0, NULL);
    CHECK(doc != NULL);
    CHECK_INT(json_array_size(json_object_get(doc, "runs")), 2);
    CHECK_INT(json_array_size(json_object_get(doc, "candidates")), 6);
    CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(doc, "candidates"), 2),
                                                "source")),
              left_src);
    json_decref(doc);
    avo_strbuf_free(&out);
    CHECK_INT(avo_export_csv(ar, 5, &out, err, sizeof err), AVO_ENOTFOUND);
    avo_strbuf_free(&out);
}

static void test_git(avo_archive *ar)
{
    char err[AVO_ERRLEN];
    size_t commits = 0;
    char dir[512];
    snprintf(dir, sizeof dir, "%s", tmp_path("git"));
    CHECK_INT(avo_export_git(ar, 1, dir, &commits, err, sizeof err), 0);
    CHECK_INT(commits, 5);
    /* A second export into the same directory is refused. */
    CHECK_INT(avo_export_git(ar, 1, dir, NULL, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "not empty");
    mkdir(tmp_path("empty"), 0700);
    CHECK_INT(avo_export_git(ar, 2, tmp_path("empty"), &commits, err, sizeof err), 0);
    CHECK_INT(commits, 1);
    CHECK_INT(avo_export_git(ar, 7, tmp_path("nope"), NULL, err, sizeof err), AVO_ENOTFOUND);
    CHECK(access(tmp_path("nope"), F_OK) != 0);

    git_libgit2_init();
    git_repository *repo = NULL;
    git_object *obj = NULL;
    CHECK_INT(git_repository_open(&repo, dir), 0);
    CHECK_INT(git_revparse_single(&obj, repo, "c4"), 0);
    if (obj) {
        git_commit *commit = (git_commit *)obj;
        CHECK_INT(git_commit_parentcount(commit), 2);
        CHECK_CONTAINS(git_commit_message(commit), "#4 crossover (gen 2): score 3");
        CHECK_CONTAINS(git_commit_message(commit), "small: correct, 3 GFLOP/s");
        git_object_free(obj);
    }
    CHECK_INT(git_revparse_single(&obj, repo, "best"), 0);
    if (obj) {
        CHECK_CONTAINS(git_commit_message((git_commit *)obj), "#4 ");
        git_object_free(obj);
    }
    CHECK_INT(git_revparse_single(&obj, repo, "main:kernel.c"), 0);
    git_object_free(obj);
    CHECK_INT(git_revparse_single(&obj, repo, "c3:kernel.c"), 0);
    if (obj) {
        CHECK_STR((const char *)git_blob_rawcontent((git_blob *)obj), left_src);
        git_object_free(obj);
    }
    git_repository_free(repo);
    git_libgit2_shutdown();
}

static void test_diff(avo_archive *ar)
{
    char err[AVO_ERRLEN];
    json_t *d = NULL;
    CHECK_INT(avo_diff_candidates(ar, 1, 4, &d, err, sizeof err), 0);
    CHECK_CONTAINS(json_string_value(json_object_get(d, "source_diff")), "-    return 1;");
    CHECK_CONTAINS(json_string_value(json_object_get(d, "source_diff")), "+    return 2; /* left */");
    CHECK_CONTAINS(json_string_value(json_object_get(d, "source_diff")), "--- a/kernel.c");
    json_t *knobs = json_object_get(d, "knobs");
    CHECK_INT(json_array_size(knobs), 3); /* A changed, B removed, C added */
    CHECK_STR(json_string_value(json_object_get(json_array_get(knobs, 0), "change")), "changed");
    CHECK_STR(json_string_value(json_object_get(json_array_get(knobs, 1), "change")), "removed");
    CHECK_STR(json_string_value(json_object_get(json_array_get(knobs, 2), "change")), "added");
    json_t *large = json_array_get(json_object_get(d, "configs"), 1);
    CHECK_STR(json_string_value(json_object_get(large, "unit")), "GFLOP/s");
    CHECK(fabs(json_number_value(json_object_get(large, "ratio")) - 3.0) < 1e-12);
    CHECK(fabs(json_number_value(json_object_get(json_object_get(d, "score"), "delta")) - 2) < 1e-12);
    json_decref(d);

    CHECK_INT(avo_diff_candidates(ar, 1, 2, &d, err, sizeof err), 0);
    CHECK_STR(json_string_value(json_object_get(d, "source_diff")), "");
    json_decref(d);
    /* failed candidate: no configs on its side, ratio null */
    CHECK_INT(avo_diff_candidates(ar, 2, 5, &d, err, sizeof err), 0);
    CHECK(json_is_null(json_object_get(json_array_get(json_object_get(d, "configs"), 0), "b")));
    json_decref(d);
    CHECK_INT(avo_diff_candidates(ar, 1, 99, &d, err, sizeof err), AVO_ENOTFOUND);
}

static void test_report(avo_archive *ar)
{
    char err[AVO_ERRLEN];
    avo_strbuf html = {0};
    CHECK_INT(avo_report_html(ar, 1, &html, err, sizeof err), 0);
    const char *t = avo_strbuf_text(&html);
    CHECK(strncmp(t, "<!DOCTYPE html>", 15) == 0);
    CHECK_CONTAINS(t, "<svg");
    CHECK_CONTAINS(t, "no LLM calls");
    CHECK_CONTAINS(t, "a &lt;b&gt;bold&lt;/b&gt;, &quot;quoted&quot; note");
    CHECK(strstr(t, "<b>bold") == NULL);
    CHECK_CONTAINS(t, "id=\"c4\"");
    CHECK_CONTAINS(t, "cuBLAS");
    CHECK_CONTAINS(t, "seed #1");
    CHECK_CONTAINS(t, "return 1 -- &lt;b&gt;");
    CHECK(strstr(t, "http://") == NULL || strstr(t, "http://www.w3.org/2000/svg") != NULL);
    CHECK(strstr(t, "<script") == NULL);
    avo_strbuf_free(&html);
    /* run 0: the latest run; an unknown run is an error */
    CHECK_INT(avo_report_html(ar, 0, &html, err, sizeof err), 0);
    CHECK_CONTAINS(avo_strbuf_text(&html), "run 2");
    avo_strbuf_free(&html);
    CHECK_INT(avo_report_html(ar, 3, &html, err, sizeof err), AVO_ENOTFOUND);
    avo_strbuf_free(&html);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_csv_quoting();
    test_strbuf();
    test_nice_axis();
    avo_archive *ar = make_archive();
    if (ar) {
        test_queries(ar);
        test_csv_json(ar);
        test_git(ar);
        test_diff(ar);
        test_report(ar);
        avo_archive_free(ar);
        test_llm_spend_table();
    }
    char err[AVO_ERRLEN];
    CHECK_INT(avo_export_save(tmp_path("no/such/dir/x.csv"), "x", 1, err, sizeof err), AVO_EIO);
    CHECK_CONTAINS(err, "cannot write");
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return check_finish();
}
