/*
 * export.c — CSV, JSON and git views of the archive.
 *
 * Everything is read through the archive's query functions
 * (avo_archive_candidates, avo_archive_runs), so the exports show exactly
 * what `avo show --json` shows.  The git export writes objects with libgit2
 * into a fresh repository; nothing is written outside it.
 */
#include "cli/export.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <git2.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/avo.h"
#include "cli/compare.h"
#include "core/diff.h"
#include "cli/paired.h"

/* ------------------------------------------------------------------- CSV */

int avo_export_csv_field(avo_strbuf *out, const char *field)
{
    if (!field || !*field)
        return out->failed ? AVO_ENOMEM : 0;
    size_t n = strlen(field);
    int quote = strpbrk(field, ",\"\r\n") != NULL || field[0] == ' ' || field[n - 1] == ' ';
    if (!quote)
        return avo_strbuf_append(out, field, n);
    avo_strbuf_append(out, "\"", 1);
    for (const char *p = field; *p; p++) {
        if (*p == '"')
            avo_strbuf_append(out, "\"", 1);
        avo_strbuf_append(out, p, 1);
    }
    return avo_strbuf_append(out, "\"", 1);
}

/* One JSON scalar as a CSV field: null empty, booleans 1/0, reals with 17
 * significant digits, strings quoted as needed, anything else as JSON. */
static void csv_value(avo_strbuf *out, const json_t *v)
{
    if (!v || json_is_null(v))
        return;
    if (json_is_true(v) || json_is_false(v)) {
        avo_strbuf_puts(out, json_is_true(v) ? "1" : "0");
    } else if (json_is_integer(v)) {
        avo_strbuf_printf(out, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        avo_strbuf_printf(out, "%.17g", json_real_value(v));
    } else if (json_is_string(v)) {
        avo_export_csv_field(out, json_string_value(v));
    } else {
        char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        if (!text)
            out->failed = 1;
        avo_export_csv_field(out, text);
        free(text);
    }
}

static const char csv_header[] =
    "id,run_id,generation,operator,status,reason,score,parents,knobs,note,source_hash,"
    "created_at,config,correct,max_error,median_s,spread,samples,gflops,gbs,config_reason,"
    "evaluator,vs_baselines\r\n";

/* The last two columns of a row: the candidate's evaluator and its ratio to
 * each baseline of its own evaluator, for `config` (NULL: the aggregate
 * score), "openblas=0.41;plain=1.2" (avo_compare_ratios). */
static void csv_baseline_columns(avo_strbuf *out, const json_t *c, const json_t *ratios,
                                 const char *config)
{
    avo_strbuf_puts(out, ",");
    csv_value(out, json_object_get(c, "evaluator"));
    avo_strbuf_puts(out, ",");
    avo_strbuf text = {0};
    const char *name;
    const json_t *r;
    json_object_foreach((json_t *)ratios, name, r)
    {
        const json_t *v = config ? json_object_get(json_object_get(r, "configs"), config)
                                 : json_object_get(r, "score");
        if (json_is_number(v))
            avo_strbuf_printf(&text, "%s%s=%.6g", text.len ? ";" : "", name,
                              json_number_value(v));
    }
    out->failed |= text.failed;
    avo_export_csv_field(out, text.data);
    avo_strbuf_free(&text);
}

/* The candidate columns (up to and including created_at) of one row. */
static void csv_candidate_columns(avo_strbuf *out, const json_t *c)
{
    static const char *const before[] = {"id", "run_id", "generation", "operator",
                                         "status", "reason", "score"};
    for (size_t k = 0; k < sizeof before / sizeof before[0]; k++) {
        csv_value(out, json_object_get(c, before[k]));
        avo_strbuf_puts(out, ",");
    }
    avo_strbuf parents = {0};
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(c, "parents"), i, p)
        avo_strbuf_printf(&parents, "%s%lld:%s", i ? ";" : "",
                          (long long)json_integer_value(json_object_get(p, "id")),
                          json_string_value(json_object_get(p, "role")));
    out->failed |= parents.failed;
    avo_export_csv_field(out, parents.data);
    avo_strbuf_free(&parents);
    avo_strbuf_puts(out, ",");
    csv_value(out, json_object_get(c, "knobs"));
    avo_strbuf_puts(out, ",");
    csv_value(out, json_object_get(c, "note"));
    avo_strbuf_puts(out, ",");
    csv_value(out, json_object_get(c, "source_hash"));
    avo_strbuf_puts(out, ",");
    csv_value(out, json_object_get(c, "created_at"));
}

int avo_export_csv(avo_archive *ar, int64_t run_id, avo_strbuf *out, char *err, size_t errlen)
{
    static const char *const config_keys[] = {"name",   "correct", "max_error", "median_s", "spread",
                                              "samples", "gflops", "gbs",       "reason"};
    if (!ar || !out)
        return avo_error(err, errlen, AVO_EINVAL, "export_csv: missing argument");
    json_t *all = NULL;
    int rc = avo_archive_candidates(ar, run_id, 0, &all, err, errlen);
    if (rc < 0)
        return rc;
    json_t *baselines = NULL;
    if ((rc = avo_archive_baselines(ar, run_id, &baselines, err, errlen)) < 0) {
        json_decref(all);
        return rc;
    }
    avo_strbuf_puts(out, csv_header);
    size_t i, j;
    json_t *c, *cfg;
    json_array_foreach(all, i, c)
    {
        const json_t *configs = json_object_get(c, "configs");
        json_t *ratios = avo_compare_ratios(c, baselines);
        if (!ratios)
            out->failed = 1;
        if (json_array_size(configs) == 0) {
            csv_candidate_columns(out, c);
            avo_strbuf_puts(out, ",,,,,,,,,");
            csv_baseline_columns(out, c, ratios, NULL);
            avo_strbuf_puts(out, "\r\n");
        }
        json_array_foreach(configs, j, cfg)
        {
            csv_candidate_columns(out, c);
            for (size_t k = 0; k < sizeof config_keys / sizeof config_keys[0]; k++) {
                avo_strbuf_puts(out, ",");
                csv_value(out, json_object_get(cfg, config_keys[k]));
            }
            csv_baseline_columns(out, c, ratios, json_string_value(json_object_get(cfg, "name")));
            avo_strbuf_puts(out, "\r\n");
        }
        json_decref(ratios);
    }
    json_decref(all);
    json_decref(baselines);
    return out->failed ? avo_error(err, errlen, AVO_ENOMEM, "out of memory") : 0;
}

static const char csv_baseline_header[] =
    "run_id,device,device_name,baseline,status,reason,library,version,path,score,created_at,"
    "config,correct,unavailable,max_error,median_s,spread,samples,gflops,gbs,config_reason\r\n";

int avo_export_csv_baselines(avo_archive *ar, int64_t run_id, avo_strbuf *out, char *err,
                             size_t errlen)
{
    static const char *const row_keys[] = {"run_id", "device", "device_name", "name",
                                           "status", "reason", "library",     "version",
                                           "path",   "score",  "created_at"};
    static const char *const config_keys[] = {"name",     "correct", "unavailable", "max_error",
                                              "median_s", "spread",  "samples",     "gflops",
                                              "gbs",      "reason"};
    if (!ar || !out)
        return avo_error(err, errlen, AVO_EINVAL, "export_csv_baselines: missing argument");
    if (run_id) {
        json_t *run = NULL;
        int rc = avo_archive_run_get(ar, run_id, &run, err, errlen);
        json_decref(run);
        if (rc < 0)
            return rc;
    }
    json_t *rows = NULL;
    int rc = avo_archive_baselines(ar, run_id, &rows, err, errlen);
    if (rc < 0)
        return rc;
    avo_strbuf_puts(out, csv_baseline_header);
    size_t i, j;
    json_t *row, *cfg;
    json_array_foreach(rows, i, row)
    {
        const json_t *configs = json_object_get(json_object_get(row, "result"), "configs");
        size_t n = json_array_size(configs);
        for (j = 0; j < (n ? n : 1); j++) {
            cfg = json_array_get(configs, j);
            for (size_t k = 0; k < sizeof row_keys / sizeof row_keys[0]; k++) {
                if (k)
                    avo_strbuf_puts(out, ",");
                csv_value(out, json_object_get(row, row_keys[k]));
            }
            for (size_t k = 0; k < sizeof config_keys / sizeof config_keys[0]; k++) {
                avo_strbuf_puts(out, ",");
                csv_value(out, cfg ? json_object_get(cfg, config_keys[k]) : NULL);
            }
            avo_strbuf_puts(out, "\r\n");
        }
    }
    json_decref(rows);
    return out->failed ? avo_error(err, errlen, AVO_ENOMEM, "out of memory") : 0;
}

/* ------------------------------------------------------------------ JSON */

int avo_export_json(avo_archive *ar, int64_t run_id, avo_strbuf *out, char *err, size_t errlen)
{
    if (!ar || !out)
        return avo_error(err, errlen, AVO_EINVAL, "export_json: missing argument");
    json_t *runs = NULL, *all = NULL, *doc = NULL, *baselines = NULL;
    int rc;
    if (run_id) {
        json_t *run = NULL;
        rc = avo_archive_run_get(ar, run_id, &run, err, errlen);
        if (rc == 0 && !(runs = json_array()))
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        if (rc == 0 && json_array_append(runs, run) != 0)
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        json_decref(run);
    } else {
        rc = avo_archive_runs(ar, &runs, err, errlen);
    }
    if (rc == 0)
        rc = avo_archive_candidates(ar, run_id, 1, &all, err, errlen);
    if (rc == 0)
        rc = avo_archive_baselines(ar, run_id, &baselines, err, errlen);
    /* Each run's re-timing (the last "retimed" event's data, null when it
     * was not re-timed) and its re-timed #1 as "retimed_best" (paired.h). */
    size_t i;
    json_t *c, *run;
    json_t *by_run = json_object();
    if (rc == 0 && !by_run)
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    json_array_foreach(rc == 0 ? runs : NULL, i, run)
    {
        json_int_t id = json_integer_value(json_object_get(run, "id"));
        json_t *data = avo_paired_load(ar, id);
        json_int_t first = avo_paired_best(data);
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)id);
        if (json_object_set_new(run, "retimed", data ? json_incref(data) : json_null()) != 0 ||
            json_object_set_new(run, "retimed_best", first ? json_integer(first) : json_null()) ||
            (data && json_object_set_new(by_run, key, data) != 0))
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    /* Each candidate's ratios to its own evaluator's baselines (measured
     * beside the search) and its re-timed, paired figures. */
    json_array_foreach(rc == 0 ? all : NULL, i, c)
    {
        char key[32];
        snprintf(key, sizeof key, "%lld",
                 (long long)json_integer_value(json_object_get(c, "run_id")));
        if (json_object_set_new(c, "vs_baselines", avo_compare_ratios(c, baselines)) != 0 ||
            json_object_set_new(c, "retimed",
                                avo_paired_json(json_object_get(by_run, key),
                                                json_integer_value(json_object_get(c, "id")))) != 0)
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    json_decref(by_run);
    if (rc == 0) {
        doc = json_pack("{sOsOsO}", "runs", runs, "candidates", all, "baselines", baselines);
        char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
        if (!text || avo_strbuf_puts(out, text) < 0 || avo_strbuf_puts(out, "\n") < 0)
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        free(text);
    }
    json_decref(doc);
    json_decref(runs);
    json_decref(all);
    json_decref(baselines);
    return rc;
}

/* ------------------------------------------------------------------- git */

static pthread_once_t export_once = PTHREAD_ONCE_INIT;
static int export_init_rc;

static void export_init(void)
{
    export_init_rc = git_libgit2_init();
}

/* The one translation of libgit2 failures in this module. */
static int export_git_error(int git_rc, const char *what, char *err, size_t errlen)
{
    const git_error *e = git_error_last();
    int code = (e && e->klass == GIT_ERROR_NOMEMORY) ? AVO_ENOMEM : AVO_EIO;
    if (e && e->message)
        return avo_error(err, errlen, code, "git export: %s: %s", what, e->message);
    return avo_error(err, errlen, code, "git export: %s: libgit2 error %d", what, git_rc);
}

/* 0 if dir does not exist or is an empty directory; AVO_EINVAL otherwise. */
static int check_target_dir(const char *dir, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(dir, &sb) < 0) {
        if (errno == ENOENT)
            return 0;
        return avo_error(err, errlen, AVO_EIO, "git export: cannot use '%s': %s", dir,
                         strerror(errno));
    }
    if (!S_ISDIR(sb.st_mode))
        return avo_error(err, errlen, AVO_EINVAL, "git export: '%s' exists and is not a directory",
                         dir);
    DIR *d = opendir(dir);
    if (!d)
        return avo_error(err, errlen, AVO_EIO, "git export: cannot read '%s': %s", dir,
                         strerror(errno));
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)))
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    if (!empty)
        return avo_error(err, errlen, AVO_EINVAL,
                         "git export: '%s' exists and is not empty; give a new directory", dir);
    return 0;
}

/* The commit message of candidate c: a title line, the note, the status and
 * one line per config. */
static void commit_message(avo_strbuf *msg, const json_t *c)
{
    const json_t *score = json_object_get(c, "score");
    avo_strbuf_printf(msg, "#%lld %s (gen %lld): score ",
                      (long long)json_integer_value(json_object_get(c, "id")),
                      json_string_value(json_object_get(c, "operator")),
                      (long long)json_integer_value(json_object_get(c, "generation")));
    if (json_is_number(score))
        avo_strbuf_printf(msg, "%.6g\n\n", json_number_value(score));
    else
        avo_strbuf_puts(msg, "-\n\n");
    const char *note = json_string_value(json_object_get(c, "note"));
    if (note && *note)
        avo_strbuf_printf(msg, "%s\n", note);
    avo_strbuf_printf(msg, "status: %s", json_string_value(json_object_get(c, "status")));
    const char *reason = json_string_value(json_object_get(c, "reason"));
    if (reason && *reason)
        avo_strbuf_printf(msg, " (%s)", reason);
    avo_strbuf_puts(msg, "\n");
    const json_t *parents = json_object_get(c, "parents");
    size_t i;
    json_t *item;
    json_array_foreach(parents, i, item)
        avo_strbuf_printf(msg, "%s#%lld (%s)", i ? ", " : "parents: ",
                          (long long)json_integer_value(json_object_get(item, "id")),
                          json_string_value(json_object_get(item, "role")));
    if (json_array_size(parents))
        avo_strbuf_puts(msg, "\n");
    json_array_foreach(json_object_get(c, "configs"), i, item)
    {
        const char *unit = NULL;
        double v = avo_diff_config_metric(item, &unit);
        avo_strbuf_printf(msg, "%s: %s", json_string_value(json_object_get(item, "name")),
                          json_is_true(json_object_get(item, "correct")) ? "correct" : "WRONG");
        if (unit)
            avo_strbuf_printf(msg, ", %.6g %s", v, unit);
        const json_t *median = json_object_get(item, "median_s");
        if (json_is_number(median))
            avo_strbuf_printf(msg, ", median %.4g ms", json_number_value(median) * 1e3);
        avo_strbuf_puts(msg, "\n");
    }
}

/* Text of a JSON value as a file: indented, sorted keys, final newline.
 * Caller frees; NULL when out of memory. */
static char *json_file(const json_t *v)
{
    char *text = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!text)
        return NULL;
    size_t n = strlen(text);
    char *out = realloc(text, n + 2);
    if (!out) {
        free(text);
        return NULL;
    }
    out[n] = '\n';
    out[n + 1] = '\0';
    return out;
}

/* Write a blob of text and add it to the tree builder under name. */
static int tree_add(git_repository *repo, git_treebuilder *tb, const char *name, const char *text,
                    char *err, size_t errlen)
{
    git_oid oid;
    int grc = git_blob_create_from_buffer(&oid, repo, text, strlen(text));
    if (grc == 0)
        grc = git_treebuilder_insert(NULL, tb, name, &oid, GIT_FILEMODE_BLOB);
    return grc < 0 ? export_git_error(grc, name, err, errlen) : 0;
}

/* The tree of one candidate: kernel.c, knobs.json, scores.json. */
static int candidate_tree(git_repository *repo, const json_t *c, git_tree **ret, char *err,
                          size_t errlen)
{
    git_treebuilder *tb = NULL;
    int grc = git_treebuilder_new(&tb, repo, NULL);
    if (grc < 0)
        return export_git_error(grc, "tree", err, errlen);
    json_t *scores = json_pack("{sOsOsOsO}", "score", json_object_get(c, "score"), "status",
                               json_object_get(c, "status"), "reason", json_object_get(c, "reason"),
                               "configs", json_object_get(c, "configs"));
    char *knobs = json_file(json_object_get(c, "knobs"));
    char *scores_text = scores ? json_file(scores) : NULL;
    const char *source = json_string_value(json_object_get(c, "source"));
    int rc = 0;
    if (!knobs || !scores_text)
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    if (rc == 0)
        rc = tree_add(repo, tb, "kernel.c", source ? source : "", err, errlen);
    if (rc == 0)
        rc = tree_add(repo, tb, "knobs.json", knobs, err, errlen);
    if (rc == 0)
        rc = tree_add(repo, tb, "scores.json", scores_text, err, errlen);
    git_oid tree_id;
    if (rc == 0 && (grc = git_treebuilder_write(&tree_id, tb)) < 0)
        rc = export_git_error(grc, "write tree", err, errlen);
    if (rc == 0 && (grc = git_tree_lookup(ret, repo, &tree_id)) < 0)
        rc = export_git_error(grc, "read tree", err, errlen);
    free(knobs);
    free(scores_text);
    json_decref(scores);
    git_treebuilder_free(tb);
    return rc;
}

/* Exported commits so far, ascending by candidate id. */
typedef struct commit_map {
    int64_t *ids;
    git_oid *oids;
    size_t len;
} commit_map;

static const git_oid *commit_of(const commit_map *m, int64_t id)
{
    size_t lo = 0, hi = m->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->ids[mid] == id)
            return &m->oids[mid];
        if (m->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Write the commit of candidate c, whose parents (exported earlier, since
 * parents have smaller ids) are looked up in map; *ret_oid gets its id. */
static int candidate_commit(git_repository *repo, const json_t *c, const commit_map *map,
                            git_oid *ret_oid, char *err, size_t errlen)
{
    git_tree *tree = NULL;
    int rc = candidate_tree(repo, c, &tree, err, errlen);
    if (rc < 0)
        return rc;

    /* Distinct exported parents, in edge order; parents outside the
     * exported run are left out. */
    const json_t *parents = json_object_get(c, "parents");
    size_t n = 0, np = json_array_size(parents);
    git_commit **pc = calloc(np ? np : 1, sizeof *pc);
    if (!pc)
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < np; i++) {
        const git_oid *oid =
            commit_of(map, json_integer_value(json_object_get(json_array_get(parents, i), "id")));
        int dup = 0;
        for (size_t k = 0; oid && k < n; k++)
            dup |= git_oid_equal(git_commit_id(pc[k]), oid);
        if (!oid || dup)
            continue;
        int grc = git_commit_lookup(&pc[n], repo, oid);
        if (grc < 0)
            rc = export_git_error(grc, "read parent commit", err, errlen);
        else
            n++;
    }

    avo_strbuf msg = {0};
    commit_message(&msg, c);
    git_signature *sig = NULL;
    double created = json_number_value(json_object_get(c, "created_at"));
    int grc;
    if (rc == 0 && msg.failed)
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    if (rc == 0 &&
        (grc = git_signature_new(&sig, "avo", "avo@localhost", (git_time_t)floor(created), 0)) < 0)
        rc = export_git_error(grc, "signature", err, errlen);
    if (rc == 0 && (grc = git_commit_create(ret_oid, repo, NULL, sig, sig, "UTF-8", msg.data, tree,
                                            n, (const git_commit **)pc)) < 0)
        rc = export_git_error(grc, "commit", err, errlen);
    git_signature_free(sig);
    avo_strbuf_free(&msg);
    for (size_t k = 0; k < n; k++)
        git_commit_free(pc[k]);
    free(pc);
    git_tree_free(tree);
    return rc;
}

/* Point refs/heads/<branch> at oid (created or moved). */
static int set_branch(git_repository *repo, const char *branch, const git_oid *oid, char *err,
                      size_t errlen)
{
    char name[128];
    snprintf(name, sizeof name, "refs/heads/%s", branch);
    git_reference *ref = NULL;
    int grc = git_reference_create(&ref, repo, name, oid, 1, "avo export");
    git_reference_free(ref);
    return grc < 0 ? export_git_error(grc, name, err, errlen) : 0;
}

/* Lightweight tag c<id> at the commit oid. */
static int tag_candidate(git_repository *repo, int64_t id, const git_oid *oid, char *err,
                         size_t errlen)
{
    char name[32];
    snprintf(name, sizeof name, "c%lld", (long long)id);
    git_object *target = NULL;
    git_oid tag_oid;
    int grc = git_object_lookup(&target, repo, oid, GIT_OBJECT_COMMIT);
    if (grc == 0)
        grc = git_tag_create_lightweight(&tag_oid, repo, name, target, 1);
    git_object_free(target);
    return grc < 0 ? export_git_error(grc, name, err, errlen) : 0;
}

/* Index in `all` of the best ok candidate: the re-timed #1 of `run_id`'s
 * re-timing where it has one (paired.h), else the highest score, lowest
 * id; -1.  (For every run at once, run_id 0: the latest run's re-timed #1.) */
static long best_index(avo_archive *ar, int64_t run_id, const json_t *all)
{
    json_t *one = NULL;
    char err[AVO_ERRLEN];
    if (!run_id && avo_archive_best(ar, 0, &one, err, sizeof err) == 0)
        run_id = json_integer_value(json_object_get(one, "run_id"));
    json_decref(one);
    json_t *data = run_id ? avo_paired_load(ar, run_id) : NULL;
    json_int_t first = avo_paired_best(data);
    json_decref(data);
    size_t k;
    json_t *item;
    json_array_foreach(first ? all : NULL, k, item)
    {
        if (json_integer_value(json_object_get(item, "id")) == first)
            return (long)k;
    }
    long best = -1;
    double best_score = 0;
    size_t i;
    json_t *c;
    json_array_foreach(all, i, c)
    {
        const char *status = json_string_value(json_object_get(c, "status"));
        double s = json_number_value(json_object_get(c, "score"));
        if (status && strcmp(status, "ok") == 0 && (best < 0 || s > best_score)) {
            best = (long)i;
            best_score = s;
        }
    }
    return best;
}

/* Fill the repository at `path` (made here) with the commits of `all`
 * (count > 0 candidates), as export.h describes; branch `best` at index
 * `best` of `all` (none when negative). */
static int build_repository(const char *path, const json_t *all, size_t count, long best,
                            size_t *ret_commits, char *err, size_t errlen)
{
    int rc = 0;
    git_repository *repo = NULL;
    commit_map map = {calloc(count, sizeof(int64_t)), calloc(count, sizeof(git_oid)), 0};
    int grc = git_repository_init(&repo, path, 0);
    if (grc < 0)
        rc = export_git_error(grc, "create repository", err, errlen);
    if (rc == 0 && (!map.ids || !map.oids))
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    size_t i;
    json_t *c;
    json_array_foreach(all, i, c)
    {
        if (rc < 0)
            break;
        int64_t id = json_integer_value(json_object_get(c, "id"));
        rc = candidate_commit(repo, c, &map, &map.oids[map.len], err, errlen);
        if (rc == 0)
            rc = tag_candidate(repo, id, &map.oids[map.len], err, errlen);
        if (rc == 0)
            map.ids[map.len++] = id;
    }
    if (rc == 0)
        rc = set_branch(repo, "main", &map.oids[map.len - 1], err, errlen);
    if (rc == 0 && best >= 0)
        rc = set_branch(repo, "best", &map.oids[best], err, errlen);
    if (rc == 0 && (grc = git_repository_set_head(repo, "refs/heads/main")) < 0)
        rc = export_git_error(grc, "set HEAD", err, errlen);
    if (rc == 0) {
        git_checkout_options co;
        git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
        co.checkout_strategy = GIT_CHECKOUT_FORCE;
        if ((grc = git_checkout_head(repo, &co)) < 0)
            rc = export_git_error(grc, "check out main", err, errlen);
    }
    if (rc == 0 && ret_commits)
        *ret_commits = map.len;
    git_repository_free(repo);
    free(map.ids);
    free(map.oids);
    return rc;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0; /* go on: remove what can be removed */
}

/* Remove the tree at path (a half-made export), not following symlinks. */
static void remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Move every entry of `from` into `to` (an empty directory on the same
 * file system) and remove `from`.  On failure what was moved is removed
 * from `to` again, so `to` is left empty.
 */
static int move_entries(const char *from, const char *to, char *err, size_t errlen)
{
    DIR *d = opendir(from);
    if (!d)
        return avo_error(err, errlen, AVO_EIO, "git export: cannot read '%s': %s", from,
                         strerror(errno));
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char src[PATH_MAX + 512], dst[PATH_MAX + 512];
        snprintf(src, sizeof src, "%s/%s", from, e->d_name);
        snprintf(dst, sizeof dst, "%s/%s", to, e->d_name);
        if (rename(src, dst) != 0)
            rc = avo_error(err, errlen, AVO_EIO, "git export: cannot move %s into %s: %s",
                           e->d_name, to, strerror(errno));
    }
    closedir(d);
    if (rc == 0 && rmdir(from) != 0)
        rc = avo_error(err, errlen, AVO_EIO, "git export: cannot remove '%s': %s", from,
                       strerror(errno));
    if (rc < 0 && (d = opendir(to))) {
        while ((e = readdir(d))) {
            char path[PATH_MAX + 512];
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof path, "%s/%s", to, e->d_name);
            remove_tree(path);
        }
        closedir(d);
    }
    return rc;
}

/*
 * The git export (see export.h).  The target is checked before anything is
 * created, and candidates are read before the repository is made, so the
 * usual mistakes (existing directory, unknown run, empty run) leave nothing
 * behind.  The repository is built under a temporary name and appears
 * under `dir` only when whole: a new directory is built beside it
 * (DIR.tmp.XXXXXX) and renamed into place; an existing empty one (perhaps
 * a mount point, or in a directory we cannot write) gets a hidden
 * temporary inside whose entries are moved up at the end.  A failure (a
 * full disk) removes the temporary, leaving `dir` as it was.
 */
int avo_export_git(avo_archive *ar, int64_t run_id, const char *dir, size_t *ret_commits, char *err,
                   size_t errlen)
{
    if (!ar || !dir || !*dir)
        return avo_error(err, errlen, AVO_EINVAL, "export_git: missing argument");
    pthread_once(&export_once, export_init);
    if (export_init_rc < 0)
        return export_git_error(export_init_rc, "libgit2 init", err, errlen);
    int rc = check_target_dir(dir, err, errlen);
    if (rc < 0)
        return rc;
    json_t *all = NULL;
    rc = avo_archive_candidates(ar, run_id, 1, &all, err, errlen);
    if (rc < 0)
        return rc;
    size_t count = json_array_size(all);
    if (count == 0) {
        json_decref(all);
        return avo_error(err, errlen, AVO_ENOTFOUND, "git export: no candidates to export");
    }

    /* dir without trailing slashes: "out/" is built as "out.tmp.XXXXXX" */
    char target[PATH_MAX], build[PATH_MAX + 32];
    snprintf(target, sizeof target, "%s", dir);
    for (size_t n = strlen(target); n > 1 && target[n - 1] == '/'; n--)
        target[n - 1] = 0;
    struct stat st;
    int exists = stat(target, &st) == 0;
    snprintf(build, sizeof build, exists ? "%s/.avo-export.tmp.XXXXXX" : "%s.tmp.XXXXXX", target);
    if (!mkdtemp(build)) {
        json_decref(all);
        return avo_error(err, errlen, AVO_EIO, "git export: cannot create a directory for %s: %s",
                         target, strerror(errno));
    }
    /* mkdtemp makes it 0700; the repository gets the mode mkdir would give */
    mode_t mask = umask(0);
    umask(mask);
    if (!exists)
        chmod(build, 0777 & ~mask);
    rc = build_repository(build, all, count, best_index(ar, run_id, all), ret_commits, err,
                          errlen);
    json_decref(all);
    if (rc == 0 && exists)
        rc = move_entries(build, target, err, errlen);
    else if (rc == 0 && rename(build, target) != 0)
        rc = avo_error(err, errlen, AVO_EIO, "git export: cannot rename %s to %s: %s", build,
                       target, strerror(errno));
    if (rc < 0)
        remove_tree(build);
    return rc;
}

/* ------------------------------------------------------------------ files */

/*
 * Write through `path` as a shell redirection would: open it (following a
 * symlink, creating a missing target), truncate what can be truncated,
 * write.  For what is not a regular file named directly: a device, a FIFO,
 * a symlink (to /dev/stdout's /proc/self/fd/1, or to a file).  A path that
 * is our standard output (/dev/stdout and the like) is written through
 * descriptor 1, as the shell does: reopening it would truncate a file the
 * shell opened and write over what came before.
 */
static int save_through(const char *path, const char *data, size_t len, char *err, size_t errlen)
{
    struct stat st, out;
    if (stat(path, &st) == 0 && fstat(STDOUT_FILENO, &out) == 0 && st.st_dev == out.st_dev &&
        st.st_ino == out.st_ino) {
        int e = -avo_write_all(STDOUT_FILENO, data, len);
        return e ? avo_error(err, errlen, AVO_EIO, "cannot write %s: %s", path, strerror(e)) : 0;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_CLOEXEC, 0666);
    if (fd < 0)
        return avo_error(err, errlen, AVO_EIO, "cannot write %s: %s", path, strerror(errno));
    int e = -avo_write_all(fd, data, len);
    if (close(fd) != 0 && !e && errno != EINTR)
        e = errno;
    if (e)
        return avo_error(err, errlen, AVO_EIO, "cannot write %s: %s", path, strerror(e));
    return 0;
}

/*
 * Write len bytes of data to a new temporary beside path, synced and
 * closed, each step checked (a full disk fails here, not later); its name
 * into *ret_tmp (the caller's to rename or unlink, and free).  On a failure
 * nothing is left behind: "cannot write PATH: reason".
 */
static int save_temporary(const char *path, const char *data, size_t len, char **ret_tmp,
                          char *err, size_t errlen)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return avo_error(err, errlen, AVO_EIO, "cannot write %s: %s", path, strerror(e));
    }
    /* fsync before the rename: after a crash the name holds the old
     * contents or the new, never an empty file. */
    int e = -avo_write_all(fd, data, len);
    if (!e && fsync(fd) != 0 && errno != EINVAL)
        e = errno;
    if (close(fd) != 0 && !e && errno != EINTR)
        e = errno;
    if (e) {
        unlink(tmp);
        free(tmp);
        return avo_error(err, errlen, AVO_EIO, "cannot write %s: %s", path, strerror(e));
    }
    *ret_tmp = tmp;
    return 0;
}

int avo_export_save(const char *path, const char *data, size_t len, char *err, size_t errlen)
{
    if (!path || !*path || (!data && len))
        return avo_error(err, errlen, AVO_EINVAL, "save: missing argument");
    if (strcmp(path, "-") == 0) {
        int e = -avo_write_all(STDOUT_FILENO, data, len);
        return e ? avo_error(err, errlen, AVO_EIO, "cannot write to standard output: %s",
                             strerror(e))
                 : 0;
    }
    /* Only a regular file (or a new name) is replaced by a rename: renaming
     * over a device, a FIFO or a symlink would replace that node itself
     * (as root, the machine's /dev/stdout) instead of writing to it. */
    struct stat st;
    int exists = lstat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return avo_error(err, errlen, AVO_EIO, "cannot write %s: %s", path, strerror(EISDIR));
    if (exists && !S_ISREG(st.st_mode))
        return save_through(path, data, len, err, errlen);
    char *tmp = NULL;
    int rc = save_temporary(path, data, len, &tmp, err, errlen);
    if (rc < 0)
        return rc;
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return avo_error(err, errlen, AVO_EIO, "cannot write %s: %s", path, strerror(e));
    }
    free(tmp);
    return 0;
}

int avo_export_save_all(size_t n, const char *const *paths, const char *const *data,
                        const size_t *len, char *err, size_t errlen)
{
    char **tmp = calloc(n ? n : 1, sizeof *tmp);
    if (!tmp)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct stat st;
        if (lstat(paths[i], &st) == 0 && S_ISDIR(st.st_mode))
            rc = avo_error(err, errlen, AVO_EIO, "cannot write %s: %s", paths[i],
                           strerror(EISDIR));
        else
            rc = save_temporary(paths[i], data[i], len[i], &tmp[i], err, errlen);
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (rename(tmp[i], paths[i]) != 0) {
            rc = avo_error(err, errlen, AVO_EIO, "cannot write %s: %s", paths[i],
                           strerror(errno));
        } else {
            free(tmp[i]);
            tmp[i] = NULL;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (tmp[i])
            unlink(tmp[i]);
        free(tmp[i]);
    }
    free(tmp);
    return rc;
}
