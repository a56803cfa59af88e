/*
 * report.c — the HTML report of a run (see report.h).
 *
 * The page is built in one avo_strbuf.  Data comes from the archive's query
 * functions; every string from the archive goes through avo_strbuf_html().
 * The sections of the page are in cli/view/ (one file each), the plots'
 * frame in cli/view/plot.c.
 */
#include "cli/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/avo.h"
#include "avo_config.h"
#include "cli/compare.h"
#include "cli/paired.h"
#include "core/diff.h"
#include "cli/view/view.h"

#define TOP_N 10

static const char style[] =
    "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;"
    "padding:0 1em}"
    "h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}"
    "table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}"
    "th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "pre{background:#f8f8f8;border:1px solid #e4e4e4;padding:.6em;overflow-x:auto;"
    "font-size:.85em;line-height:1.3}"
    "span.add{color:#116611;background:#eaffea}span.del{color:#aa1111;background:#ffecec}"
    "span.hunk{color:#555;font-style:italic}"
    ".muted{color:#777}.best{font-weight:bold}ul.tree{list-style:none;padding-left:1.2em;"
    "border-left:1px dotted #bbb}ul.tree li{margin:.15em 0}"
    "section.cand{border:1px solid #e4e4e4;border-radius:4px;padding:.2em 1em;margin:1em 0}"
    "svg{background:#fff;border:1px solid #eee;margin:.5em 0}"
    "svg text{font-family:system-ui,sans-serif;font-size:12px;fill:#333}";

/* ------------------------------------------------------------ sections */

static const json_t *find_by_id(const json_t *arr, long long id)
{
    size_t i;
    json_t *c;
    json_array_foreach(arr, i, c) if (avo_view_int(c, "id") == id) return c;
    return NULL;
}

/* A link to a candidate's section or page when it has one (every
 * candidate in the live view, the shown ones in the report), else plain
 * "#id". */
static void cand_ref(avo_strbuf *out, long long id, const avo_report_run *r)
{
    char key[24];
    snprintf(key, sizeof key, "%lld", id);
    if (r->link_all || json_object_get(r->shown, key))
        avo_strbuf_printf(out, "<a href=\"%s%lld\">#%lld</a>", r->cand_href, id, id);
    else
        avo_strbuf_printf(out, "#%lld", id);
}

/* The ancestry of the best candidate as nested lists; a node reached again
 * through another path (crossover) is referred to, not repeated. */
static void lineage_tree(avo_strbuf *out, const json_t *nodes, long long id, const char *role,
                         json_t *seen, const avo_report_run *shown, int depth)
{
    const json_t *n = find_by_id(nodes, id);
    char key[24];
    snprintf(key, sizeof key, "%lld", id);
    avo_strbuf_puts(out, "<li>");
    cand_ref(out, id, shown);
    if (!n) {
        avo_strbuf_puts(out, " <span class=\"muted\">(not in the archive)</span></li>\n");
        return;
    }
    avo_strbuf_puts(out, " ");
    avo_strbuf_html(out, avo_view_str(n, "operator"));
    avo_strbuf_printf(out, ", gen %lld, ", avo_view_int(n, "generation"));
    avo_strbuf_html(out, avo_view_str(n, "status"));
    avo_strbuf_puts(out, ", score ");
    avo_view_number(out, avo_view_num(n, "score"));
    if (role && strcmp(role, "parent") != 0) {
        avo_strbuf_puts(out, " <span class=\"muted\">[");
        avo_strbuf_html(out, role);
        avo_strbuf_puts(out, "]</span>");
    }
    if (json_object_get(seen, key) || depth > 200) {
        avo_strbuf_puts(out, " <span class=\"muted\">(shown above)</span></li>\n");
        return;
    }
    json_object_set_new(seen, key, json_true());
    const json_t *parents = json_object_get(n, "parents");
    if (json_array_size(parents)) {
        avo_strbuf_puts(out, "\n<ul class=\"tree\">\n");
        size_t i;
        json_t *p;
        json_array_foreach(parents, i, p)
            lineage_tree(out, nodes, avo_view_int(p, "id"), avo_view_str(p, "role"), seen, shown, depth + 1);
        avo_strbuf_puts(out, "</ul>");
    }
    avo_strbuf_puts(out, "</li>\n");
}

/* A unified diff in <pre>, its lines coloured by kind. */
static void html_patch(avo_strbuf *out, const char *patch)
{
    avo_strbuf_puts(out, "<pre>");
    const char *line = patch;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *copy = strndup(line, len);
        const char *cls = NULL;
        if (!strncmp(line, "+++", 3) || !strncmp(line, "---", 3))
            cls = NULL;
        else if (*line == '+')
            cls = "add";
        else if (*line == '-')
            cls = "del";
        else if (*line == '@')
            cls = "hunk";
        if (cls)
            avo_strbuf_printf(out, "<span class=\"%s\">", cls);
        if (!copy)
            out->failed = 1;
        avo_strbuf_html(out, copy);
        if (cls)
            avo_strbuf_puts(out, "</span>");
        avo_strbuf_puts(out, "\n");
        free(copy);
        line += len + (end ? 1 : 0);
    }
    avo_strbuf_puts(out, "</pre>");
}

/*
 * Render the diff of candidate `id` against parent `pid` as a <details>
 * (open when `open`): knob changes, then the source patch.
 */
static int parent_diff(avo_strbuf *out, avo_archive *ar, long long pid, long long id, int open,
                       char *err, size_t errlen)
{
    size_t i;
    json_t *d = NULL;
    int rc = avo_diff_candidates(ar, pid, id, &d, err, errlen);
    if (rc < 0)
        return rc;
    avo_strbuf_printf(out, "<details%s><summary>diff against parent #%lld</summary>\n",
                      open ? " open=\"open\"" : "", pid);
    const json_t *knobs = json_object_get(d, "knobs");
    json_t *k;
    if (json_array_size(knobs)) {
        avo_strbuf_puts(out, "<p>knobs: ");
        json_array_foreach(knobs, i, k)
        {
            const json_t *old = json_object_get(k, "old"), *new = json_object_get(k, "new");
            char *o = json_is_null(old) ? NULL : json_dumps(old, JSON_ENCODE_ANY);
            char *n = json_is_null(new) ? NULL : json_dumps(new, JSON_ENCODE_ANY);
            if (i)
                avo_strbuf_puts(out, ", ");
            avo_strbuf_html(out, avo_view_str(k, "name"));
            avo_strbuf_puts(out, " ");
            avo_strbuf_html(out, o ? o : "(absent)");
            avo_strbuf_puts(out, " → ");
            avo_strbuf_html(out, n ? n : "(removed)");
            free(o);
            free(n);
        }
        avo_strbuf_puts(out, "</p>\n");
    }
    const char *patch = avo_view_str(d, "source_diff");
    if (*patch)
        html_patch(out, patch);
    else
        avo_strbuf_puts(out, "<p class=\"muted\">source identical to the parent's</p>");
    avo_strbuf_puts(out, "</details>\n");
    json_decref(d);
    return 0;
}

/* A candidate's status, parents (role each), knobs, note and the libraries
 * the judge saw it load. */
static void candidate_facts(avo_strbuf *out, const avo_report_run *shown, const json_t *c)
{
    avo_strbuf_puts(out, "<p>status ");
    avo_strbuf_html(out, avo_view_str(c, "status"));
    if (*avo_view_str(c, "reason")) {
        avo_strbuf_puts(out, " — ");
        avo_strbuf_html(out, avo_view_str(c, "reason"));
    }
    avo_strbuf_puts(out, "; parents ");
    const json_t *parents = json_object_get(c, "parents");
    size_t i;
    json_t *p;
    json_array_foreach(parents, i, p)
    {
        if (i)
            avo_strbuf_puts(out, ", ");
        cand_ref(out, avo_view_int(p, "id"), shown);
        avo_strbuf_puts(out, " (");
        avo_strbuf_html(out, avo_view_str(p, "role"));
        avo_strbuf_puts(out, ")");
    }
    if (!json_array_size(parents))
        avo_strbuf_puts(out, "none");
    avo_strbuf_puts(out, "<br/>knobs <code>");
    avo_view_knobs(out, json_object_get(c, "knobs"));
    avo_strbuf_puts(out, "</code>");
    if (*avo_view_str(c, "note")) {
        avo_strbuf_puts(out, "<br/>note: ");
        avo_strbuf_html(out, avo_view_str(c, "note"));
    }
    /* Libraries the judge saw it load (eval/libraries.h): vendor code doing
     * the work is never hidden behind a score. */
    const json_t *libs = json_object_get(json_object_get(c, "result"), "libraries");
    if (json_array_size(libs)) {
        avo_strbuf_puts(out, "<br/>libraries <code>");
        json_array_foreach(libs, i, p)
        {
            if (i)
                avo_strbuf_puts(out, ", ");
            avo_strbuf_html(out, json_string_value(p) ? json_string_value(p) : "?");
        }
        avo_strbuf_puts(out, "</code>");
    }
    avo_strbuf_puts(out, "</p>\n");
}

/* A candidate's results per config: correct, throughput, median, spread,
 * samples, max error. */
static void candidate_configs(avo_strbuf *out, const json_t *c)
{
    const json_t *configs = json_object_get(c, "configs");
    if (json_array_size(configs)) {
        avo_strbuf_puts(out,
                        "<table><tr><th>config</th><th>correct</th><th>throughput</th>"
                        "<th>median</th><th>spread</th><th>samples</th><th>max error</th></tr>\n");
        size_t i;
        json_t *cfg;
        json_array_foreach(configs, i, cfg)
        {
            const char *unit = NULL;
            double v = avo_diff_config_metric(cfg, &unit);
            avo_strbuf_puts(out, "<tr><td>");
            avo_strbuf_html(out, avo_view_str(cfg, "name"));
            avo_strbuf_printf(out, "</td><td>%s</td><td class=\"num\">",
                              json_is_true(json_object_get(cfg, "correct")) ? "yes" : "NO");
            avo_view_number(out, v);
            avo_strbuf_printf(out, " %s</td><td class=\"num\">", unit ? unit : "");
            avo_view_number(out, avo_view_num(cfg, "median_s") * 1e3);
            avo_strbuf_puts(out, " ms</td><td class=\"num\">");
            avo_view_number(out, avo_view_num(cfg, "spread") * 100);
            avo_strbuf_printf(out, "%%</td><td class=\"num\">%lld</td><td class=\"num\">",
                              avo_view_int(cfg, "samples"));
            avo_view_number(out, avo_view_num(cfg, "max_error"));
            avo_strbuf_puts(out, "</td></tr>\n");
        }
        avo_strbuf_puts(out, "</table>\n");
    }
}

/* One candidate's section (see report.h). */
int avo_report_candidate(avo_strbuf *out, const avo_report_run *r, const json_t *c, int full,
                         char *err, size_t errlen)
{
    long long best_id = r->best ? avo_view_int(r->best, "id") : 0;
    long long id = avo_view_int(c, "id");
    avo_strbuf_printf(out, "<section class=\"cand\" id=\"c%lld\">\n<h3>#%lld ", id, id);
    avo_strbuf_html(out, avo_view_str(c, "operator"));
    avo_strbuf_printf(out, " (gen %lld) — score ", avo_view_int(c, "generation"));
    avo_view_number(out, avo_view_num(c, "score"));
    if (id == best_id)
        avo_strbuf_puts(out, " <span class=\"best\">(best)</span>");
    avo_strbuf_puts(out, "</h3>\n");
    candidate_facts(out, r, c);
    candidate_configs(out, c);
    avo_strbuf_printf(out, "<details%s><summary>source</summary><pre>",
                      full ? " open=\"open\"" : "");
    avo_strbuf_html(out, avo_view_str(c, "source"));
    avo_strbuf_puts(out, "</pre></details>\n");

    /* The report diffs against the first parent; a candidate page against
     * each, and shows the worker's log. */
    const json_t *parents = json_object_get(c, "parents");
    size_t n_diffs = full ? json_array_size(parents) : json_array_size(parents) > 0;
    for (size_t i = 0; i < n_diffs; i++) {
        int rc = parent_diff(out, r->ar, avo_view_int(json_array_get(parents, i), "id"), id, full,
                             err, errlen);
        if (rc < 0)
            return rc;
    }
    if (full) {
        avo_strbuf_puts(out, "<h4>log</h4>\n");
        if (*avo_view_str(c, "log")) {
            avo_strbuf_puts(out, "<pre class=\"log\">");
            avo_strbuf_html(out, avo_view_str(c, "log"));
            avo_strbuf_puts(out, "</pre>\n");
        } else {
            avo_strbuf_puts(out, "<p class=\"muted\">no log recorded</p>\n");
        }
    }
    avo_strbuf_puts(out, "</section>\n");
    return 0;
}

/* A verified candidate's sort key, read once: looking score and id up in
 * the object at each comparison was a sixth of a 100,000-candidate load. */
typedef struct ranked_entry {
    double score;
    long long id;
    const json_t *cand;
} ranked_entry;

static int cmp_score_desc(const void *a, const void *b)
{
    const ranked_entry *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Sort r->ranked best first: score descending, then id ascending. */
static int rank(avo_report_run *r)
{
    ranked_entry *e = calloc(r->n_ok + 1, sizeof *e);
    if (!e)
        return AVO_ENOMEM;
    for (size_t i = 0; i < r->n_ok; i++)
        e[i] = (ranked_entry){avo_view_num(r->ranked[i], "score"), avo_view_int(r->ranked[i], "id"),
                              r->ranked[i]};
    qsort(e, r->n_ok, sizeof *e, cmp_score_desc);
    for (size_t i = 0; i < r->n_ok; i++)
        r->ranked[i] = e[i].cand;
    free(e);
    return 0;
}

/* ------------------------------------------------------ the shared parts */

const char *avo_report_css(void)
{
    return style;
}

void avo_report_run_free(avo_report_run *r)
{
    if (!r)
        return;
    free(r->ranked);
    json_decref(r->shown);
    json_decref(r->run);
    json_decref(r->cands);
    json_decref(r->nodes);
    json_decref(r->spend);
    json_decref(r->calls);
    json_decref(r->outcomes);
    json_decref(r->retimed);
    memset(r, 0, sizeof *r);
}

/*
 * Complete into full rows (with source if with_sources) the brief rows the
 * sections read more of: the candidates with a section (r->shown) and the
 * pending ones (the live view's in flight lists their parents; a run has
 * a few).  In place: r->ranked, r->seed and r->best keep pointing at the
 * same objects.
 */
static int complete_rows(avo_report_run *r, int with_sources, char *err, size_t errlen)
{
    size_t i;
    json_t *c;
    char key[24];
    json_array_foreach(r->cands, i, c)
    {
        snprintf(key, sizeof key, "%lld", avo_view_int(c, "id"));
        if (!json_object_get(r->shown, key) && avo_view_is_finished(c))
            continue;
        json_t *full = NULL;
        int rc = avo_archive_candidate_get(r->ar, avo_view_int(c, "id"), with_sources, &full, err,
                                           errlen);
        if (rc < 0)
            return rc;
        rc = json_object_update(c, full);
        json_decref(full);
        if (rc < 0)
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    return 0;
}

/*
 * Read what the sections show: the run with its summary (unit, attempts,
 * baselines), its candidates, the LLM calls and spend, the operator
 * outcomes and re-timing events, the best candidate's lineage; then rank
 * the verified candidates and pick the ones the report gives a section
 * (the top ones and the best's ancestors).  Every candidate is read brief
 * (avo_archive_candidates_brief: what the sections read of all of them),
 * those with a section in full, with sources if with_sources: a run of
 * 100,000 would otherwise hold every log, knob and child list.  On failure
 * *ret is left empty (nothing to free).
 */
int avo_report_load(avo_archive *ar, int64_t run_id, int with_sources, avo_report_run *ret,
                    char *err, size_t errlen)
{
    if (!ar || !ret || run_id < 0)
        return avo_error(err, errlen, AVO_EINVAL, "report: bad argument");
    avo_report_run *r = ret;
    memset(r, 0, sizeof *r);
    r->ar = ar;
    r->cand_href = "#c";
    int rc = avo_archive_run_summary(ar, run_id, &r->run, err, errlen);
    if (rc < 0)
        return rc;
    run_id = avo_view_int(r->run, "id");
    if ((rc = avo_archive_candidates_brief(ar, run_id, &r->cands, err, errlen)) < 0 ||
        (rc = avo_archive_llm_spend(ar, run_id, &r->spend, err, errlen)) < 0 ||
        (rc = avo_archive_llm_calls(ar, run_id, &r->calls, err, errlen)) < 0 ||
        (rc = avo_archive_events(ar, run_id, "operator_outcome", &r->outcomes, err, errlen)) < 0 ||
        (rc = avo_archive_events(ar, run_id, "retimed", &r->retimed, err, errlen)) < 0)
        goto fail;

    size_t i;
    json_t *c;
    r->ranked = calloc(json_array_size(r->cands) + 1, sizeof *r->ranked);
    r->shown = json_object();
    if (!r->ranked || !r->shown) {
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        goto fail;
    }
    json_array_foreach(r->cands, i, c)
    {
        if (!avo_view_is_finished(c))
            continue;
        if (!avo_view_is_ok(c)) {
            r->n_failed++;
            continue;
        }
        r->ranked[r->n_ok++] = c;
        if (!r->seed && strcmp(avo_view_str(c, "operator"), "seed") == 0)
            r->seed = c;
    }
    if ((rc = rank(r)) < 0) {
        rc = avo_error(err, errlen, rc, "out of memory");
        goto fail;
    }
    r->best = r->n_ok ? r->ranked[0] : NULL;
    /* The best of a re-timed run is its re-timed #1 (paired.h). */
    json_int_t first = avo_paired_best(
        json_object_get(json_array_get(r->retimed, json_array_size(r->retimed) - 1), "data"));
    for (i = 0; first && i < r->n_ok; i++)
        if (avo_view_int(r->ranked[i], "id") == first)
            r->best = r->ranked[i];
    if (r->best &&
        (rc = avo_archive_lineage(ar, avo_view_int(r->best, "id"), &r->nodes, err, errlen)) < 0)
        goto fail;

    char key[24];
    for (i = 0; i < r->n_ok && i < TOP_N; i++) {
        snprintf(key, sizeof key, "%lld", avo_view_int(r->ranked[i], "id"));
        json_object_set_new(r->shown, key, json_true());
    }
    json_array_foreach(r->nodes, i, c)
    {
        snprintf(key, sizeof key, "%lld", avo_view_int(c, "id"));
        json_object_set_new(r->shown, key, json_true());
    }
    if ((rc = complete_rows(r, with_sources, err, errlen)) < 0)
        goto fail;
    return 0;

fail:
    avo_report_run_free(r);
    return rc;
}

void avo_report_summary(avo_strbuf *out, const avo_report_run *r)
{
    const json_t *best = r->best, *seed = r->seed;
    avo_strbuf_puts(out, "<p class=\"summary\">");
    if (best) {
        avo_strbuf_puts(out, "best ");
        cand_ref(out, avo_view_int(best, "id"), r);
        avo_strbuf_puts(out, " (");
        avo_strbuf_html(out, avo_view_str(best, "operator"));
        avo_strbuf_printf(out, ", generation %lld)", avo_view_int(best, "generation"));
        const json_t *data =
            json_object_get(json_array_get(r->retimed, json_array_size(r->retimed) - 1), "data");
        const json_t *e = avo_paired_entry(data, avo_view_int(best, "id"));
        if (e) {
            /* The re-timed figures first, paired round by round. */
            avo_strbuf_printf(out, ", re-timed: <span class=\"retimed\">%.4g [%.4g, %.4g]</span>"
                                   " (median of %lld rounds, each a fresh process)",
                              avo_view_num(e, "median"), avo_view_num(e, "low"), avo_view_num(e, "high"),
                              avo_view_int(data, "rounds"));
            avo_strbuf text = {0};
            avo_paired_text(&text, e);
            if (text.len) {
                avo_strbuf_puts(out, json_is_true(json_object_get(data, "paired"))
                                         ? "; paired per round (median [95% interval]): "
                                         : "; re-timed before pairing: ");
                avo_strbuf_puts(out, "<span class=\"paired\">");
                avo_strbuf_html(out, avo_strbuf_text(&text));
                avo_strbuf_puts(out, "</span>");
            }
            avo_strbuf_free(&text);
            avo_strbuf_printf(out, ". Recorded in the search (unpaired): score %.4g",
                              avo_view_num(best, "score"));
        } else {
            avo_strbuf_printf(out, ": score %.4g", avo_view_num(best, "score"));
        }
        if (seed && avo_view_num(seed, "score") > 0)
            avo_strbuf_printf(out, ", %.2fx the seed (#%lld: %.4g)",
                              avo_view_num(best, "score") / avo_view_num(seed, "score"), avo_view_int(seed, "id"),
                              avo_view_num(seed, "score"));
        json_t *own = avo_compare_of(json_object_get(r->run, "baselines"),
                                     json_string_value(json_object_get(best, "evaluator")));
        const json_t *strongest = avo_compare_strongest(own);
        if (strongest) {
            avo_strbuf_printf(out, ", %.2fx ", avo_view_num(best, "score") / avo_view_num(strongest, "score"));
            avo_strbuf_html(out, avo_view_str(strongest, "name"));
            avo_strbuf_printf(out, " (the strongest baseline: %.4g)", avo_view_num(strongest, "score"));
        }
        json_decref(own);
        if (!e) {
            avo_strbuf_puts(out, " (<span class=\"unpaired\">");
            avo_strbuf_html(out, AVO_PAIRED_NONE);
            avo_strbuf_puts(out, "</span>)");
        }
        avo_strbuf_puts(out, ". ");
    } else {
        avo_strbuf_puts(out, "no verified candidate. ");
    }
    avo_strbuf_printf(out,
                      "<span class=\"n-evaluations\">%zu</span> evaluations, %zu failed.</p>\n",
                      r->n_ok + r->n_failed, r->n_failed);
}

void avo_report_lineage(avo_strbuf *out, const avo_report_run *r)
{
    avo_strbuf_puts(out, "<h2 id=\"lineage\">Lineage of the best candidate</h2>\n");
    if (!r->best) {
        avo_strbuf_puts(out, "<p>no verified candidate</p>\n");
        return;
    }
    json_t *seen = json_object();
    if (!seen) {
        out->failed = 1;
        return;
    }
    avo_strbuf_puts(out, "<ul class=\"tree\">\n");
    lineage_tree(out, r->nodes, avo_view_int(r->best, "id"), NULL, seen, r, 0);
    avo_strbuf_puts(out, "</ul>\n");
    json_decref(seen);
}

void avo_report_top(avo_strbuf *out, const avo_report_run *r)
{
    const json_t *seed = r->seed;
    avo_strbuf_puts(out, "<h2 id=\"top\">Top versions</h2>\n");
    if (!r->n_ok) {
        avo_strbuf_puts(out, "<p>no verified candidate</p>\n");
        return;
    }
    avo_strbuf_puts(out, "<table><tr><th>rank</th><th>candidate</th><th>score</th>"
                         "<th>vs seed</th><th>operator</th><th>gen</th><th>parents</th>"
                         "<th>knobs</th></tr>\n");
    for (size_t i = 0; i < r->n_ok && i < TOP_N; i++) {
        const json_t *c = r->ranked[i];
        avo_strbuf_printf(out, "<tr><td class=\"num\">%zu</td><td>", i + 1);
        cand_ref(out, avo_view_int(c, "id"), r);
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        avo_view_number(out, avo_view_num(c, "score"));
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        if (seed && avo_view_num(seed, "score") > 0)
            avo_strbuf_printf(out, "%.2fx", avo_view_num(c, "score") / avo_view_num(seed, "score"));
        avo_strbuf_puts(out, "</td><td>");
        avo_strbuf_html(out, avo_view_str(c, "operator"));
        avo_strbuf_printf(out, "</td><td class=\"num\">%lld</td><td>", avo_view_int(c, "generation"));
        size_t j;
        json_t *p;
        json_array_foreach(json_object_get(c, "parents"), j, p)
        {
            if (j)
                avo_strbuf_puts(out, " ");
            cand_ref(out, avo_view_int(p, "id"), r);
        }
        avo_strbuf_puts(out, "</td><td><code>");
        avo_view_knobs(out, json_object_get(c, "knobs"));
        avo_strbuf_puts(out, "</code></td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
}

void avo_report_candidate_ref(avo_strbuf *out, const avo_report_run *r, long long id)
{
    cand_ref(out, id, r);
}

/*
 * The static page: the sections in order, then a section for each shown
 * candidate, newest first.  Returns the first archive error; out->failed
 * means out of memory.
 */
int avo_report_html(avo_archive *ar, int64_t run_id, avo_strbuf *out, char *err, size_t errlen)
{
    if (!ar || !out || run_id < 0)
        return avo_error(err, errlen, AVO_EINVAL, "report: bad argument");
    avo_report_run r;
    int rc = avo_report_load(ar, run_id, 1, &r, err, errlen);
    if (rc < 0)
        return rc;
    run_id = avo_view_int(r.run, "id");

    avo_strbuf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                         "<title>");
    avo_strbuf_printf(out, "avo report: run %lld (", (long long)run_id);
    avo_strbuf_html(out, avo_view_str(r.run, "script_path"));
    avo_strbuf_printf(out, ")</title>\n<style>%s</style>\n</head>\n<body>\n", style);
    avo_strbuf_printf(out, "<h1>avo report — run %lld: ", (long long)run_id);
    avo_strbuf_html(out, avo_view_str(r.run, "script_path"));
    avo_strbuf_puts(out, "</h1>\n");
    avo_report_summary(out, &r);
    avo_strbuf_puts(out, "<p><a href=\"#trajectory\">trajectory</a> · <a href=\"#generations\">"
                         "generations</a> · <a href=\"#baselines\">baselines</a> · "
                         "<a href=\"#retimed\">re-timed</a> · "
                         "<a href=\"#lineage\">lineage</a> · <a href=\"#top\">"
                         "top versions</a> · <a href=\"#run\">run</a> · <a href=\"#llm\">LLM "
                         "spend</a></p>\n");
    avo_report_trajectory(out, &r);
    avo_report_generations(out, &r);
    avo_report_baselines(out, &r);
    avo_report_retimed(out, &r);
    avo_report_lineage(out, &r);
    avo_report_top(out, &r);
    /* Sections, highest id first: the newest versions lead. */
    char key[24];
    for (size_t k = json_array_size(r.cands); k-- > 0;) {
        const json_t *c = json_array_get(r.cands, k);
        snprintf(key, sizeof key, "%lld", avo_view_int(c, "id"));
        if (!json_object_get(r.shown, key))
            continue;
        if ((rc = avo_report_candidate(out, &r, c, 0, err, errlen)) < 0)
            goto out;
    }
    avo_report_devices(out, &r);
    avo_report_metadata(out, &r);
    avo_report_llm(out, &r);
    avo_strbuf_puts(out, "<p class=\"muted\">generated by avo " AVO_VERSION " at ");
    avo_view_time(out, avo_now());
    avo_strbuf_puts(out, "</p>\n</body>\n</html>\n");
    if (out->failed)
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
out:
    avo_report_run_free(&r);
    return rc;
}
