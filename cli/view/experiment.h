/*
 * experiment.h — the view of an experiment's report (`avo experiment
 * report`): the statistics are computed in Lua (lua/avo/experiment_report.lua)
 * and handed over as one JSON value, `report`:
 *
 *   { "document": what PREFIX.json holds (experiment, methods, counts, llm,
 *                 groups with arms, tests and curves, cells),
 *     "description": the definition's description (optional),
 *     "out": the files' prefix }
 *
 * The page is made of sections, one file each (section_experiment_*.c),
 * with the accessors and escaping of view.h.  Nothing here writes a file
 * or prints: the caller (cli/cli_lua.c) does.
 */
#ifndef AVO_VIEW_EXPERIMENT_H
#define AVO_VIEW_EXPERIMENT_H

#include <jansson.h>

#include "core/strbuf.h"

/* Append PREFIX.html, PREFIX.csv (one row per workload, budget and arm)
 * and the short table printed on stdout to the caller's buffers. */
void avo_view_experiment_html(avo_strbuf *out, const json_t *report);
void avo_view_experiment_csv(avo_strbuf *out, const json_t *document);
void avo_view_experiment_summary(avo_strbuf *out, const json_t *report);

/* The sections of the page, in its order; each renders from the document. */
void avo_view_experiment_section_methods(avo_strbuf *out, const json_t *document,
                                         const json_t *description);
void avo_view_experiment_section_excluded(avo_strbuf *out, const json_t *document);
void avo_view_experiment_section_group(avo_strbuf *out, const json_t *group);
void avo_view_experiment_section_curves(avo_strbuf *out, const json_t *group);
void avo_view_experiment_section_cells(avo_strbuf *out, const json_t *document);

/* What the sections share: v with `digits` significant digits ("%.*g"),
 * or "-" when it is missing (not a number); what a group's scores measure
 * (its "unit", or "score" when it has none). */
void avo_view_experiment_value(avo_strbuf *out, double v, int digits);
const char *avo_view_experiment_unit(const json_t *group);
/* What a group's best scores are: "re-timed" (every finished run re-timed
 * its bests, so the scores are the re-timed #1's medians) or "recorded"
 * (the search's own figures). */
int avo_view_experiment_retimed(const json_t *group);
/* An arm's paired ratios over its seeds: "1.02x seed [1.01, 1.03], 0.81x
 * openblas [0.8, 0.83]" (median [Q1, Q3] of the runs' paired medians);
 * names escaped for HTML when `html`, else for a terminal. */
void avo_view_experiment_paired(avo_strbuf *out, const json_t *arm, int html);
/* A cell's run id, or "-" when it has none (a missing cell). */
void avo_view_experiment_run(avo_strbuf *out, const json_t *cell);

#endif
