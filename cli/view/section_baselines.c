/*
 * section_baselines.c — one section of the run's page, shared by `avo report`
 * and `avo serve` (report.h): the baselines measured in the run against the best, per config.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/compare.h"
#include "cli/report.h"
#include "cli/view/view.h"

/* A baseline's device, library and version cells (the part of its row that
 * says what was measured). */
static void baseline_what(avo_strbuf *out, const json_t *row)
{
    avo_strbuf_html(out, avo_view_str(row, "device"));
    if (*avo_view_str(row, "device_name")) {
        avo_strbuf_puts(out, " (");
        avo_strbuf_html(out, avo_view_str(row, "device_name"));
        avo_strbuf_puts(out, ")");
    }
    avo_strbuf_puts(out, "</td><td>");
    avo_strbuf_html(out, avo_view_str(row, "library"));
    if (*avo_view_str(row, "path")) {
        avo_strbuf_puts(out, " <span class=\"muted\">");
        avo_strbuf_html(out, avo_view_str(row, "path"));
        avo_strbuf_puts(out, "</span>");
    }
    avo_strbuf_puts(out, "</td><td><code>");
    /* A content hash is cut short; a library's own version string is not. */
    const char *v = avo_view_str(row, "version");
    char version[16];
    snprintf(version, sizeof version, "%.12s", v);
    avo_strbuf_html(out, strspn(v, "0123456789abcdef") == strlen(v) ? version : v);
    const json_t *lib = json_object_get(json_object_get(row, "result"), "baseline");
    const char *core = json_string_value(json_object_get(json_object_get(lib, "info"), "core"));
    if (core) {
        avo_strbuf_puts(out, "</code> core ");
        avo_strbuf_html(out, core);
        avo_strbuf_puts(out, "<code>");
    }
    if (json_is_integer(json_object_get(lib, "threads")))
        avo_strbuf_printf(out, "</code> %lld thread(s)<code>", avo_view_int(lib, "threads"));
    avo_strbuf_puts(out, "</code></td><td>");
}

/* One baseline's row: what it is, whether it measured, its score and the
 * best's ratio to it (only against the best's own evaluator). */
static void baseline_row(avo_strbuf *out, const json_t *row, const json_t *best,
                         const char *evaluator)
{
    avo_strbuf_puts(out, "<tr><td>");
    avo_strbuf_html(out, avo_view_str(row, "name"));
    avo_strbuf_puts(out, "</td><td>");
    avo_strbuf_html(out,
                    *avo_view_str(row, "evaluator") ? avo_view_str(row, "evaluator") : "unknown");
    avo_strbuf_puts(out, "</td><td>");
    baseline_what(out, row);
    if (avo_compare_usable(row)) {
        avo_strbuf_puts(out, "ok</td><td class=\"num\">");
        avo_view_number(out, avo_view_num(row, "score"));
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        if (best && avo_compare_owned(row, evaluator))
            avo_strbuf_printf(out, "%.2fx",
                              avo_view_num(best, "score") / avo_view_num(row, "score"));
        else if (best)
            avo_strbuf_puts(out, "another evaluator's");
    } else {
        char text[600];
        avo_compare_describe(row, NULL, text, sizeof text);
        const char *colon = strstr(text, ": ");
        avo_strbuf_html(out, colon ? colon + 2 : text);
        avo_strbuf_puts(out, "</td><td>—</td><td>—");
    }
    avo_strbuf_puts(out, "</td></tr>\n");
}

/* The config names of the best and of the baselines `rows`, each once, the
 * best's first (new reference, the caller's). */
static json_t *config_names(const json_t *best, const json_t *rows)
{
    json_t *names = json_array();
    size_t i, k;
    const json_t *row;
    json_array_foreach(json_object_get(best, "configs"), k, row)
        json_array_append_new(names, json_string(avo_view_str(row, "name")));
    json_array_foreach(rows, i, row)
    {
        const json_t *cfg;
        json_array_foreach(json_object_get(json_object_get(row, "result"), "configs"), k, cfg)
        {
            size_t m;
            json_t *n;
            int seen = 0;
            json_array_foreach(names, m, n) seen |=
                strcmp(json_string_value(n), avo_view_str(cfg, "name")) == 0;
            if (!seen)
                json_array_append_new(names, json_string(avo_view_str(cfg, "name")));
        }
    }
    return names;
}

/* One config's row: the best's throughput, then each baseline's with the
 * best's ratio to it, or why it has none. */
static void config_row(avo_strbuf *out, const char *config, const json_t *best, const json_t *rows)
{
    const char *unit = NULL;
    double mine = best ? avo_view_config_metric(best, config, &unit) : NAN;
    avo_strbuf_puts(out, "<tr><td>");
    avo_strbuf_html(out, config);
    avo_strbuf_puts(out, "</td><td class=\"num\">");
    if (isfinite(mine) && mine > 0) {
        avo_view_number(out, mine);
        avo_strbuf_printf(out, " %s", unit ? unit : "");
    } else {
        avo_strbuf_puts(out, "—");
    }
    avo_strbuf_puts(out, "</td>");
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        double theirs = 0;
        const char *their_unit = NULL;
        char why[600];
        if (avo_compare_config(row, config, &theirs, &their_unit, why, sizeof why)) {
            avo_strbuf_puts(out, "<td class=\"num\">");
            avo_view_number(out, theirs);
            avo_strbuf_printf(out, " %s", their_unit ? their_unit : "");
            if (isfinite(mine) && mine > 0)
                avo_strbuf_printf(out, " (%.2fx)", mine / theirs);
        } else {
            avo_strbuf_puts(out, "<td>");
            avo_strbuf_html(out, why);
        }
        avo_strbuf_puts(out, "</td>");
    }
    avo_strbuf_puts(out, "</tr>\n");
}

/* Per config: the best candidate against each of the baselines `rows` (the
 * best's own evaluator's); nothing when there is no config or baseline. */
static void per_config_table(avo_strbuf *out, const json_t *best, const json_t *rows)
{
    json_t *names = config_names(best, rows);
    if (!json_array_size(names) || !json_array_size(rows)) {
        json_decref(names);
        return;
    }
    avo_strbuf_puts(out, "<p>Per config: the best candidate's throughput and each baseline's,"
                         " with the best's ratio to it.</p>\n<table><tr><th>config</th>"
                         "<th>best");
    if (best)
        avo_strbuf_printf(out, " #%lld", avo_view_int(best, "id"));
    avo_strbuf_puts(out, "</th>");
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        avo_strbuf_puts(out, "<th>");
        avo_strbuf_html(out, avo_view_str(row, "name"));
        avo_strbuf_puts(out, " (");
        avo_strbuf_html(out, avo_view_str(row, "device"));
        avo_strbuf_puts(out, ")</th>");
    }
    avo_strbuf_puts(out, "</tr>\n");
    json_t *name;
    json_array_foreach(names, i, name)
    {
        config_row(out, json_string_value(name), best, rows);
    }
    avo_strbuf_puts(out, "</table>\n");
    json_decref(names);
}

/*
 * The baselines measured in the run (lua/avo/baselines.lua): one row per
 * baseline and device with its library, status and score and the best's
 * ratio to it, then per config the best candidate's throughput against
 * each baseline's.  A baseline or config that did not measure shows its
 * status and reason, never a zero.
 */
static void section_baselines(avo_strbuf *out, const json_t *run, const json_t *best)
{
    const json_t *rows = json_object_get(run, "baselines");
    avo_strbuf_puts(out, "<h2 id=\"baselines\">Baselines</h2>\n");
    if (!json_array_size(rows)) {
        avo_strbuf_puts(out, "<p class=\"muted\">the evaluator names no baselines (its"
                             " <code>baselines</code> field), or none was measured</p>\n");
        return;
    }
    /* Only the best's own evaluator's baselines are compared with. */
    const char *evaluator = best ? json_string_value(json_object_get(best, "evaluator")) : NULL;
    avo_strbuf_puts(out, "<table><tr><th>baseline</th><th>evaluator</th><th>device</th>"
                         "<th>library</th><th>version</th><th>status</th><th>score</th>"
                         "<th>best vs it</th></tr>\n");
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        baseline_row(out, row, best, evaluator);
    }
    avo_strbuf_puts(out, "</table>\n");
    json_t *own = avo_compare_of(rows, evaluator);
    per_config_table(out, best, own);
    json_decref(own);
}

void avo_report_baselines(avo_strbuf *out, const avo_report_run *r)
{
    section_baselines(out, r->run, r->best);
}
