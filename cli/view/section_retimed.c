/*
 * section_retimed.c — one section of the run's page, shared by `avo report`
 * and `avo serve` (report.h): the re-timed bests: the latest `retimed` event's paired figures.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/paired.h"
#include "cli/report.h"
#include "cli/view/view.h"

/* One ranked candidate e: rank, re-timed median and interval, recorded
 * score, change, and its paired figures. */
static void ranked_row(avo_strbuf *out, const json_t *e, const avo_report_run *shown)
{
    avo_strbuf_printf(out, "<tr><td class=\"num\">%lld</td><td>", avo_view_int(e, "rank"));
    avo_report_candidate_ref(out, shown, avo_view_int(e, "id"));
    avo_strbuf_puts(out, "</td><td class=\"num\">");
    avo_view_number(out, avo_view_num(e, "median"));
    avo_strbuf_puts(out, "</td><td class=\"num\">");
    avo_view_number(out, avo_view_num(e, "low"));
    avo_strbuf_puts(out, " – ");
    avo_view_number(out, avo_view_num(e, "high"));
    avo_strbuf_puts(out, "</td><td class=\"num\">");
    avo_view_number(out, avo_view_num(e, "recorded"));
    avo_strbuf_printf(out, "</td><td class=\"num\">%+.1f%%</td><td>",
                      avo_view_num(e, "recorded") > 0
                          ? (avo_view_num(e, "median") / avo_view_num(e, "recorded") - 1) * 100
                          : 0);
    avo_strbuf text = {0};
    avo_paired_text(&text, e);
    avo_strbuf_html(out, avo_strbuf_text(&text));
    avo_strbuf_free(&text);
    avo_strbuf_puts(out, "</td></tr>\n");
}

/* The seed, timed in the same rounds (when it is not ranked above). */
static void seed_row(avo_strbuf *out, const json_t *data, const avo_report_run *shown)
{
    const json_t *seed = json_object_get(data, "seed");
    if (json_is_object(seed) && !avo_paired_entry(data, avo_view_int(seed, "id"))) {
        avo_strbuf_puts(out, "<tr><td>seed</td><td>");
        avo_report_candidate_ref(out, shown, avo_view_int(seed, "id"));
        if (json_object_get(seed, "median")) {
            avo_strbuf_puts(out, "</td><td class=\"num\">");
            avo_view_number(out, avo_view_num(seed, "median"));
            avo_strbuf_puts(out, "</td><td class=\"num\">");
            avo_view_number(out, avo_view_num(seed, "low"));
            avo_strbuf_puts(out, " – ");
            avo_view_number(out, avo_view_num(seed, "high"));
            avo_strbuf_puts(out, "</td><td class=\"num\">");
            avo_view_number(out, avo_view_num(seed, "recorded"));
            avo_strbuf_puts(out, "</td><td colspan=\"2\">timed in the same rounds</td></tr>\n");
        } else {
            avo_strbuf_puts(out, "</td><td colspan=\"5\">");
            avo_strbuf_html(out, avo_view_str(seed, "why"));
            avo_strbuf_puts(out, "</td></tr>\n");
        }
    }
}

/* A baseline e timed in the same rounds, or why it was not. */
static void baseline_row(avo_strbuf *out, const json_t *e)
{
    avo_strbuf_puts(out, "<tr><td>baseline</td><td>");
    avo_strbuf_html(out, avo_view_str(e, "name"));
    if (json_object_get(e, "median")) {
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        avo_view_number(out, avo_view_num(e, "median"));
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        avo_view_number(out, avo_view_num(e, "low"));
        avo_strbuf_puts(out, " – ");
        avo_view_number(out, avo_view_num(e, "high"));
        avo_strbuf_puts(out, "</td><td colspan=\"3\">timed in the same rounds</td></tr>\n");
    } else {
        avo_strbuf_puts(out, "</td><td colspan=\"5\">");
        avo_strbuf_html(out, avo_view_str(e, "why"));
        avo_strbuf_puts(out, "</td></tr>\n");
    }
}

/* A candidate e that was out (not ok in every round) and why. */
static void dropped_row(avo_strbuf *out, const json_t *e, const avo_report_run *shown)
{
    avo_strbuf_puts(out, "<tr><td>out</td><td>");
    avo_report_candidate_ref(out, shown, avo_view_int(e, "id"));
    avo_strbuf_puts(out, "</td><td colspan=\"5\">");
    avo_strbuf_html(out, avo_view_str(e, "why"));
    avo_strbuf_puts(out, "</td></tr>\n");
}

/* The re-timed #1's paired ratio to each baseline per config. */
static void per_config(avo_strbuf *out, const json_t *data)
{
    size_t i;
    const json_t *p;
    const json_t *first = json_array_get(json_object_get(data, "ranked"), 0);
    json_array_foreach(json_object_get(first, "paired"), i, p)
    {
        const char *against = avo_view_str(p, "against");
        if (strcmp(against, "seed") == 0 || json_array_size(json_object_get(p, "configs")) == 0)
            continue;
        avo_strbuf text = {0};
        avo_paired_configs_text(&text, p);
        avo_strbuf_puts(out, "<p class=\"per-config\">");
        avo_strbuf_html(out, against);
        avo_strbuf_puts(out, " per config, paired: ");
        avo_strbuf_html(out, avo_strbuf_text(&text));
        avo_strbuf_puts(out, "</p>\n");
        avo_strbuf_free(&text);
    }
}

/*
 * The bests re-timed at the end of the run (lua/avo/retime.lua, the last
 * "retimed" event's `data`, NULL when the run has none): the ranking after
 * re-timing with each median and its interval (between processes), and the
 * candidates dropped for failing a round.
 */
static void section_retimed(avo_strbuf *out, const json_t *data, const avo_report_run *shown)
{
    avo_strbuf_puts(out, "<h2 id=\"retimed\">Re-timed bests</h2>\n");
    if (!json_is_object(data)) {
        avo_strbuf_puts(out, "<p class=\"muted\">not re-timed (the run did not end, the"
                             " evaluator times nothing, or --retime 0)</p>\n");
        return;
    }
    avo_strbuf_printf(out, "<p>The top %zu of ",
                      json_array_size(json_object_get(data, "ranked")) +
                          json_array_size(json_object_get(data, "dropped")));
    avo_strbuf_html(out, avo_view_str(data, "evaluator"));
    avo_strbuf_printf(out,
                      " timed again in %lld interleaved rounds, each evaluation a fresh"
                      " process; interval: where another process's measurement falls"
                      " (95%%). A candidate not ok in every round is out.</p>\n",
                      avo_view_int(data, "rounds"));
    avo_strbuf_puts(out, "<table><tr><th>rank</th><th>candidate</th><th>re-timed median</th>"
                         "<th>interval</th><th>recorded</th><th>change</th>"
                         "<th>paired per round vs the seed and baselines"
                         " (median [95% interval])</th>"
                         "</tr>\n");
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(data, "ranked"), i, e)
    {
        ranked_row(out, e, shown);
    }
    seed_row(out, data, shown);
    json_array_foreach(json_object_get(data, "baselines"), i, e)
    {
        baseline_row(out, e);
    }
    json_array_foreach(json_object_get(data, "dropped"), i, e)
    {
        dropped_row(out, e, shown);
    }
    avo_strbuf_puts(out, "</table>\n");
    per_config(out, data);
}

void avo_report_retimed(avo_strbuf *out, const avo_report_run *r)
{
    section_retimed(
        out, json_object_get(json_array_get(r->retimed, json_array_size(r->retimed) - 1), "data"),
        r);
}
