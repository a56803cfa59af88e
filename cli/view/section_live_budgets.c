/*
 * section_live_budgets.c — one section of a run's live page (live.h, `avo serve`):
 * spend against the run's budgets (evaluations, time, LLM calls, tokens and cost) and the workers
 * it was given.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/live.h"
#include "cli/view/view.h"

/* One budget row: spent, of the limit with a bar when the run has one. */
static void budget_row(avo_strbuf *out, const char *what, double spent, const json_t *limit,
                       const char *fmt)
{
    char buf[64];
    snprintf(buf, sizeof buf, fmt, spent);
    avo_strbuf_printf(out, "<tr><th>%s</th><td class=\"num\">%s</td><td class=\"bar\">", what, buf);
    if (json_is_number(limit) && json_number_value(limit) > 0) {
        double max = json_number_value(limit);
        snprintf(buf, sizeof buf, fmt, max);
        avo_strbuf_printf(out, "of %s <progress max=\"%g\" value=\"%g\">%.0f%%</progress> %.0f%%",
                          buf, max, spent < max ? spent : max, 100 * spent / max,
                          100 * spent / max);
    } else {
        avo_strbuf_puts(out, "<span class=\"muted\">no limit</span>");
    }
    avo_strbuf_puts(out, "</td></tr>\n");
}

/* Spend against the run's budgets (its config: max_evals, max_time,
 * max_tokens, max_usd) and the workers it was given. */
void avo_view_live_budgets(avo_strbuf *out, const avo_report_run *r)
{
    const json_t *config = json_object_get(r->run, "config");
    double started = avo_view_num(r->run, "started_at"), ended = avo_view_num(r->run, "ended_at");
    double elapsed = (isfinite(ended) ? ended : avo_now()) - started;
    avo_strbuf_puts(out, "<div><h3 id=\"budgets\">Budgets</h3>\n<table>\n");
    budget_row(out, "evaluations", (double)(r->n_ok + r->n_failed),
               json_object_get(config, "max_evals"), "%.0f");
    budget_row(out, "time (s)", isfinite(elapsed) ? elapsed : 0,
               json_object_get(config, "max_time"), "%.0f");
    budget_row(out, "LLM calls",
               avo_view_num(r->spend, "calls") > 0 ? avo_view_num(r->spend, "calls") : 0, NULL,
               "%.0f");
    double tokens = 0, usd = 0;
    if (isfinite(avo_view_num(r->spend, "input_tokens")))
        tokens += avo_view_num(r->spend, "input_tokens");
    if (isfinite(avo_view_num(r->spend, "output_tokens")))
        tokens += avo_view_num(r->spend, "output_tokens");
    if (isfinite(avo_view_num(r->spend, "cost_usd")))
        usd = avo_view_num(r->spend, "cost_usd");
    budget_row(out, "LLM tokens", tokens, json_object_get(config, "max_tokens"), "%.0f");
    budget_row(out, "LLM cost (USD)", usd, json_object_get(config, "max_usd"), "%.4f");
    avo_strbuf_puts(out, "</table>\n<p>workers: ");
    const json_t *jobs = json_object_get(config, "jobs");
    if (json_is_integer(jobs))
        avo_strbuf_printf(out, "%lld local job(s)", (long long)json_integer_value(jobs));
    else
        avo_strbuf_puts(out, "default");
    if (*avo_view_str(config, "devices")) {
        avo_strbuf_puts(out, "; devices ");
        avo_strbuf_html(out, avo_view_str(config, "devices"));
    }
    if (*avo_view_str(config, "slurm")) {
        avo_strbuf_puts(out, "; Slurm ");
        avo_strbuf_html(out, avo_view_str(config, "slurm"));
    }
    if (*avo_view_str(config, "listen")) {
        avo_strbuf_puts(out, "; remote workers on ");
        avo_strbuf_html(out, avo_view_str(config, "listen"));
    }
    avo_strbuf_puts(out, "</p></div>\n");
}
