/*
 * section_metadata.c — one section of the run's page, shared by `avo report`
 * and `avo serve` (report.h): the run's metadata: strategy, script, seed, status, times, counts and
 * the engine's version.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/view.h"

/* One row of the metadata table; value escaped, NULL shown as a dash. */
static void meta_row(avo_strbuf *out, const char *name, const char *value)
{
    avo_strbuf_printf(out, "<tr><th>%s</th><td>", name);
    if (value && *value)
        avo_strbuf_html(out, value);
    else
        avo_strbuf_puts(out, "<span class=\"muted\">—</span>");
    avo_strbuf_puts(out, "</td></tr>\n");
}

/*
 * The agent's attempts as one row of the run table, as the AVO paper counts
 * them: directions explored against versions committed, then every outcome
 * (re-timings included) with its count.  No row for a run without attempts.
 */
static void attempts_row(avo_strbuf *out, const json_t *attempts)
{
    const json_t *outcomes = json_object_get(attempts, "outcomes");
    if (json_object_size(outcomes) == 0)
        return;
    avo_strbuf_printf(out, "<tr><th>agent attempts</th><td>%lld explored, %lld committed (",
                      avo_view_int(attempts, "explored"), avo_view_int(attempts, "committed"));
    const char *key;
    json_t *n;
    int first = 1;
    json_object_foreach((json_t *)outcomes, key, n)
    {
        if (!first)
            avo_strbuf_puts(out, ", ");
        first = 0;
        avo_strbuf_html(out, key);
        avo_strbuf_printf(out, " %lld", (long long)json_integer_value(n));
    }
    avo_strbuf_puts(out, ")</td></tr>\n");
}

static void section_metadata(avo_strbuf *out, const json_t *run, size_t n_ok, size_t n_failed)
{
    avo_strbuf_puts(out, "<h2 id=\"run\">Run</h2>\n<table>\n");
    char buf[64];
    snprintf(buf, sizeof buf, "%lld", avo_view_int(run, "id"));
    meta_row(out, "run", buf);
    meta_row(out, "script", avo_view_str(run, "script_path"));
    long long seed = avo_view_int(run, "seed");
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
    meta_row(out, "seed", buf);
    meta_row(out, "status", avo_view_str(run, "status"));
    avo_strbuf_puts(out, "<tr><th>started</th><td>");
    avo_view_time(out, avo_view_num(run, "started_at"));
    avo_strbuf_puts(out, "</td></tr>\n<tr><th>ended</th><td>");
    avo_view_time(out, avo_view_num(run, "ended_at"));
    double dur = avo_view_num(run, "ended_at") - avo_view_num(run, "started_at");
    if (isfinite(dur))
        avo_strbuf_printf(out, " (%.1f s)", dur);
    avo_strbuf_puts(out, "</td></tr>\n");
    snprintf(buf, sizeof buf, "%zu ok, %zu failed", n_ok, n_failed);
    meta_row(out, "evaluations", buf);
    meta_row(out, "score unit", avo_view_str(run, "unit"));
    attempts_row(out, json_object_get(run, "attempts"));
    meta_row(out, "engine", avo_view_str(run, "engine_version"));
    meta_row(out, "compiler", avo_view_str(run, "compiler"));
    meta_row(out, "host", avo_view_str(run, "host"));
    char *config =
        json_dumps(json_object_get(run, "config"), JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!config)
        out->failed = 1;
    meta_row(out, "config", config);
    free(config);
    avo_strbuf_puts(out, "</table>\n<details><summary>script source</summary><pre>");
    avo_strbuf_html(out, avo_view_str(run, "script_source"));
    avo_strbuf_puts(out, "</pre></details>\n");
}

void avo_report_metadata(avo_strbuf *out, const avo_report_run *r)
{
    section_metadata(out, r->run, r->n_ok, r->n_failed);
}
