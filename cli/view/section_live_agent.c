/*
 * section_live_agent.c — one section of a run's live page (live.h, `avo serve`):
 * the agent: its latest steps, attempts, and the tool calls of the latest LLM answer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/live.h"
#include "cli/view/view.h"

/* The latest agent steps (agent_step events), newest first. */
static void agent_steps(avo_strbuf *out, const avo_report_run *r, const json_t *steps)
{
    size_t n = json_array_size(steps);
    if (!n)
        return;
    avo_strbuf_puts(out, "<table><tr><th>lineage</th><th>step</th><th>turns</th>"
                         "<th>tool calls</th><th>evals</th><th>committed</th><th>why not</th>"
                         "</tr>\n");
    for (size_t i = n; i-- > 0 && i + AVO_VIEW_RECENT_N >= n;) {
        const json_t *d = json_object_get(json_array_get(steps, i), "data");
        avo_strbuf_puts(out, "<tr><td>");
        avo_strbuf_html(out, avo_view_str(d, "lineage"));
        avo_strbuf_printf(out,
                          "</td><td class=\"num\">%lld</td><td class=\"num\">%lld</td>"
                          "<td class=\"num\">%lld (%lld errors)</td><td class=\"num\">%lld</td>"
                          "<td>",
                          avo_view_int(d, "step"), avo_view_int(d, "turns"),
                          avo_view_int(d, "tool_calls"), avo_view_int(d, "tool_errors"),
                          avo_view_int(d, "evaluations"));
        if (json_is_integer(json_object_get(d, "committed")))
            avo_report_candidate_ref(out, r, avo_view_int(d, "committed"));
        avo_strbuf_puts(out, "</td><td>");
        avo_view_cut(out, avo_view_str(d, "why"), 300);
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
}

/* The latest attempts, newest first. */
static void agent_attempts(avo_strbuf *out, const avo_report_run *r, const json_t *attempts)
{
    size_t n = json_array_size(attempts);
    if (!n)
        return;
    avo_strbuf_printf(out,
                      "<p>latest attempts (of %zu):</p>\n<table><tr><th>lineage</th>"
                      "<th>step</th><th>status</th><th>score</th><th>outcome</th>"
                      "<th>reason</th></tr>\n",
                      n);
    for (size_t i = n; i-- > 0 && i + AVO_VIEW_RECENT_N >= n;) {
        const json_t *a = json_array_get(attempts, i);
        avo_strbuf_puts(out, "<tr><td>");
        avo_strbuf_html(out, avo_view_str(a, "lineage"));
        avo_strbuf_printf(out, "</td><td class=\"num\">%lld</td><td>", avo_view_int(a, "step"));
        avo_strbuf_html(out, avo_view_str(a, "status"));
        avo_strbuf_puts(out, "</td><td class=\"num\">");
        avo_view_number(out, avo_view_num(a, "score"));
        avo_strbuf_puts(out, "</td><td>");
        avo_strbuf_html(out, avo_view_str(a, "outcome"));
        if (json_is_integer(json_object_get(a, "candidate_id"))) {
            avo_strbuf_puts(out, " ");
            avo_report_candidate_ref(out, r, avo_view_int(a, "candidate_id"));
        }
        avo_strbuf_puts(out, "</td><td>");
        avo_view_cut(out, avo_view_str(a, "reason"), 300);
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
}

/* The latest LLM call and the tool calls of its answer. */
static void agent_last_call(avo_strbuf *out, const avo_report_run *r)
{
    size_t n = json_array_size(r->calls);
    if (!n)
        return;
    const json_t *last = json_array_get(r->calls, n - 1);
    avo_strbuf_printf(out, "<p>latest LLM call (%zu in all): ", n);
    avo_strbuf_html(out, avo_view_str(last, "model"));
    avo_strbuf_puts(out, ", ");
    avo_strbuf_html(out, avo_view_str(last, "status"));
    avo_strbuf_puts(out, ", at ");
    avo_view_time(out, avo_view_num(last, "t"));
    if (*avo_view_str(last, "error")) {
        avo_strbuf_puts(out, ": ");
        avo_view_cut(out, avo_view_str(last, "error"), 300);
    }
    avo_strbuf_puts(out, "</p>\n");
    const json_t *calls = json_object_get(json_object_get(last, "response"), "tool_calls");
    size_t i;
    const json_t *tc;
    if (!json_array_size(calls))
        return;
    avo_strbuf_puts(out, "<table><tr><th>tool call</th><th>arguments</th></tr>\n");
    json_array_foreach(calls, i, tc)
    {
        char *args = json_dumps(json_object_get(tc, "arguments"),
                                JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        avo_strbuf_puts(out, "<tr><td>");
        avo_strbuf_html(out, avo_view_str(tc, "name"));
        avo_strbuf_puts(out, "</td><td><code>");
        avo_view_cut(out, args ? args : "", 400);
        avo_strbuf_puts(out, "</code></td></tr>\n");
        free(args);
    }
    avo_strbuf_puts(out, "</table>\n");
}

/* The agent: its latest steps (agent_step events), attempts, and the tool
 * calls of the latest LLM answer. */
void avo_view_live_agent(avo_strbuf *out, const avo_report_run *r, const json_t *attempts,
                         const json_t *steps)
{
    if (!json_array_size(attempts) && !json_array_size(steps) && !json_array_size(r->calls))
        return;
    avo_strbuf_puts(out, "<div><h3 id=\"agent\">Agent and LLM</h3>\n");
    agent_steps(out, r, steps);
    agent_attempts(out, r, attempts);
    agent_last_call(out, r);
    avo_strbuf_puts(out, "</div>\n");
}
