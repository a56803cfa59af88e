/*
 * live.h — the sections only the live view (`avo serve`, cli/serve.c)
 * shows, one file each (cli/view/section_live_*.c): what a run is doing
 * now (in flight, budgets and workers, the agent's steps, recent failures),
 * its candidate table, the index of an archive's runs and experiments, a
 * candidate's page and an experiment's cells.  serve.c is the HTTP server,
 * its routing and the live plumbing (event streams, the page cache); what
 * these render comes from the archive, escaped with view.h's formatters.
 * Links point into the server's URL space: /a/K/run/ID, /a/K/c/ID,
 * /a/K/experiment/ID for archive number k.
 */
#ifndef AVO_VIEW_LIVE_H
#define AVO_VIEW_LIVE_H

#include <jansson.h>
#include <stddef.h>

#include "cli/report.h"
#include "core/strbuf.h"
#include "store/archive.h"

#define AVO_VIEW_RECENT_N 10      /* rows in the "recent" tables */
#define AVO_VIEW_CANDIDATES_N 500 /* rows in a run's candidate table */

/* A run's page below its title: status, summary, what is happening now,
 * the report's sections and every candidate.  attempts, steps (agent_step
 * events) and logs (log events) are the run's, borrowed. */
void avo_view_live_run(avo_strbuf *out, const avo_report_run *r, const json_t *attempts,
                       const json_t *steps, const json_t *logs);
/* The sections of the "Now" block and the candidate table. */
void avo_view_live_in_flight(avo_strbuf *out, const avo_report_run *r);
void avo_view_live_budgets(avo_strbuf *out, const avo_report_run *r);
void avo_view_live_agent(avo_strbuf *out, const avo_report_run *r, const json_t *attempts,
                         const json_t *steps);
void avo_view_live_failures(avo_strbuf *out, const avo_report_run *r, const json_t *logs);
void avo_view_live_candidates(avo_strbuf *out, const avo_report_run *r);

/* Archive k's runs (newest first, each with its re-timed or recorded best,
 * read through ar) and experiments, on the index; both arrays borrowed. */
void avo_view_live_runs(avo_strbuf *out, avo_archive *ar, size_t k, const json_t *runs);
void avo_view_live_experiments(avo_strbuf *out, size_t k, const json_t *experiments);

/* A candidate's page below its title: the report's candidate section in
 * full (r as avo_report_candidate wants it), the worker's result and its
 * children.  c is the candidate with its source, borrowed. */
void avo_view_live_candidate(avo_strbuf *out, const avo_report_run *r, const json_t *c);

/* An experiment's page below its title: its file, planned and recorded
 * cells, each with its run and how it ended (archive k).  Returns whether
 * the experiment is still open (a cell running or a planned one not
 * started), so the page refreshes itself. */
int avo_view_live_experiment(avo_strbuf *out, size_t k, const json_t *experiment,
                             const json_t *cells);

#endif
