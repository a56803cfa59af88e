/*
 * section_live_run.c — a run's live page (live.h, `avo serve`): its status
 * and summary, what is happening now (in flight, budgets, agent, recent
 * failures), then the report's sections and every candidate.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/live.h"
#include "cli/view/view.h"

void avo_view_live_run(avo_strbuf *out, const avo_report_run *r, const json_t *attempts,
                       const json_t *steps, const json_t *logs)
{
    const char *status = avo_view_str(r->run, "status");
    avo_strbuf_printf(out, "<p>status <span class=\"%s run-status\">",
                      avo_view_status_class(status));
    avo_strbuf_html(out, status);
    avo_strbuf_puts(out, "</span>; started ");
    avo_view_time(out, avo_view_num(r->run, "started_at"));
    avo_strbuf_puts(out, "</p>\n");
    avo_report_summary(out, r);
    avo_strbuf_puts(out, "<p><a href=\"#now\">now</a> · <a href=\"#trajectory\">trajectory</a> · "
                         "<a href=\"#generations\">generations</a> · <a href=\"#baselines\">"
                         "baselines</a> · <a href=\"#lineage\">lineage</a> · <a href=\"#top\">"
                         "top versions</a> · <a href=\"#candidates\">candidates</a> · "
                         "<a href=\"#run\">run</a> · <a href=\"#llm\">LLM spend</a></p>\n");
    avo_strbuf_puts(out, "<h2 id=\"now\">Now</h2>\n<div class=\"grid\">\n");
    avo_view_live_in_flight(out, r);
    avo_view_live_budgets(out, r);
    avo_strbuf_puts(out, "</div>\n");
    avo_view_live_agent(out, r, attempts, steps);
    avo_view_live_failures(out, r, logs);
    avo_report_trajectory(out, r);
    avo_report_generations(out, r);
    avo_report_baselines(out, r);
    avo_report_retimed(out, r);
    avo_report_lineage(out, r);
    avo_report_top(out, r);
    avo_view_live_candidates(out, r);
    avo_report_devices(out, r);
    avo_report_metadata(out, r);
    avo_report_llm(out, r);
}
