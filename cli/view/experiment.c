/*
 * experiment.c — the report of an experiment (see experiment.h): the page
 * around its sections, the CSV and the short table on stdout.
 */
#include "cli/view/experiment.h"

#include <math.h>
#include <string.h>

#include "cli/view/view.h"

static const char STYLE[] =
    "body { font-family: sans-serif; margin: 2em auto; max-width: 1000px; color: #222 }\n"
    "table { border-collapse: collapse; margin: 0.5em 0 1.5em }\n"
    "th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right }\n"
    "th { background: #f4f4f4 } td.l, th.l { text-align: left }\n"
    ".bad { color: #b00 } .note { color: #666; font-size: 90% }\n";

void avo_view_experiment_value(avo_strbuf *out, double v, int digits)
{
    if (isnan(v))
        avo_strbuf_puts(out, "-");
    else
        avo_strbuf_printf(out, "%.*g", digits, v);
}

const char *avo_view_experiment_unit(const json_t *group)
{
    const char *unit = json_string_value(json_object_get(group, "unit"));
    return unit ? unit : "score";
}

int avo_view_experiment_retimed(const json_t *group)
{
    const char *figure = json_string_value(json_object_get(group, "figure"));
    return figure && strcmp(figure, "retimed") == 0;
}

void avo_view_experiment_paired(avo_strbuf *out, const json_t *arm, int html)
{
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(arm, "paired"), i, p)
    {
        avo_strbuf_puts(out, i ? ", " : "");
        avo_view_experiment_value(out, avo_view_num(p, "median"), 3);
        avo_strbuf_puts(out, "x ");
        const char *against = avo_view_str(p, "against");
        if (html)
            avo_strbuf_html(out, against);
        else
            avo_strbuf_inert(out, against, strlen(against), 0);
        avo_strbuf_puts(out, " [");
        avo_view_experiment_value(out, avo_view_num(p, "q1"), 3);
        avo_strbuf_puts(out, ", ");
        avo_view_experiment_value(out, avo_view_num(p, "q3"), 3);
        avo_strbuf_puts(out, "]");
    }
}

void avo_view_experiment_run(avo_strbuf *out, const json_t *cell)
{
    if (json_is_integer(json_object_get(cell, "run_id")))
        avo_strbuf_printf(out, "%lld", avo_view_int(cell, "run_id"));
    else
        avo_strbuf_puts(out, "-");
}

void avo_view_experiment_html(avo_strbuf *out, const json_t *report)
{
    const json_t *doc = json_object_get(report, "document");
    const json_t *exp = json_object_get(doc, "experiment");
    avo_strbuf_puts(out, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>experiment ");
    avo_strbuf_html(out, avo_view_str(exp, "name"));
    avo_strbuf_puts(out, "</title><style>");
    avo_strbuf_puts(out, STYLE);
    avo_strbuf_puts(out, "</style></head><body>");
    avo_view_experiment_section_methods(out, doc, json_object_get(report, "description"));
    avo_view_experiment_section_excluded(out, doc);
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(doc, "groups"), i, g)
    {
        avo_view_experiment_section_group(out, g);
        avo_view_experiment_section_curves(out, g);
    }
    avo_view_experiment_section_cells(out, doc);
    avo_strbuf_puts(out, "<p class=note>Every number here is computed from the "
                         "archive's runs and candidates; the JSON and CSV beside this file "
                         "hold them.</p></body></html>\n");
}

/* One CSV field as the report has always written them: a number with 17
 * digits (it reads back exactly), a string quoted when it holds a comma, a
 * quote or a newline, a missing value empty. */
static void csv_field(avo_strbuf *out, const json_t *v)
{
    if (json_is_number(v)) {
        avo_strbuf_printf(out, "%.17g", json_number_value(v));
        return;
    }
    const char *s = json_string_value(v);
    if (!s)
        return;
    if (!strpbrk(s, ",\"\n")) {
        avo_strbuf_puts(out, s);
        return;
    }
    avo_strbuf_puts(out, "\"");
    for (const char *p = s; *p; p++) {
        avo_strbuf_append(out, p, 1);
        if (*p == '"') /* doubled */
            avo_strbuf_append(out, p, 1);
    }
    avo_strbuf_puts(out, "\"");
}

/* An arm's paired medians as one field: "seed=1.0191;openblas=0.80313". */
static void csv_paired(avo_strbuf *out, const json_t *arm)
{
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(arm, "paired"), i, p)
    {
        const char *name = avo_view_str(p, "against");
        if (strpbrk(name, ",;=\"\n"))
            name = "?";
        avo_strbuf_printf(out, "%s%s=%.17g", i ? ";" : "", name, avo_view_num(p, "median"));
    }
}

void avo_view_experiment_csv(avo_strbuf *out, const json_t *document)
{
    static const char *const arm_fields[] = {"arm",    "n",       "planned", "median", "q1", "q3",
                                             "ci_low", "ci_high", "min",     "max",    NULL};
    avo_strbuf_puts(out, "workload,budget,arm,n,planned,median,q1,q3,ci_low,ci_high,min,max,"
                         "figure,recorded_median,paired\n");
    size_t i, j;
    const json_t *g, *a;
    json_array_foreach(json_object_get(document, "groups"), i, g)
    {
        json_array_foreach(json_object_get(g, "arms"), j, a)
        {
            csv_field(out, json_object_get(g, "workload"));
            avo_strbuf_puts(out, ",");
            csv_field(out, json_object_get(g, "budget"));
            for (const char *const *f = arm_fields; *f; f++) {
                avo_strbuf_puts(out, ",");
                csv_field(out, json_object_get(a, *f));
            }
            avo_strbuf_puts(out, ",");
            csv_field(out, json_object_get(g, "figure"));
            avo_strbuf_puts(out, ",");
            csv_field(out, json_object_get(json_object_get(a, "recorded"), "median"));
            avo_strbuf_puts(out, ",");
            csv_paired(out, a);
            avo_strbuf_puts(out, "\n");
        }
    }
}

/* A group's lines of the table on stdout: its arms, then its tests. */
static void summary_group(avo_strbuf *out, const json_t *g)
{
    int retimed = avo_view_experiment_retimed(g);
    avo_strbuf_printf(out, "%s, budget %s (%s, %s):\n", avo_view_str(g, "workload"),
                      avo_view_str(g, "budget"), avo_view_experiment_unit(g),
                      retimed ? "each run's re-timed best" : "best as recorded, not re-timed");
    size_t i;
    const json_t *a, *t;
    json_array_foreach(json_object_get(g, "arms"), i, a)
    {
        avo_strbuf_printf(out, "  %-14s n=%lld/%lld median ", avo_view_str(a, "arm"),
                          avo_view_int(a, "n"), avo_view_int(a, "planned"));
        avo_view_experiment_value(out, avo_view_num(a, "median"), 4);
        avo_strbuf_puts(out, " IQR [");
        avo_view_experiment_value(out, avo_view_num(a, "q1"), 4);
        avo_strbuf_puts(out, ", ");
        avo_view_experiment_value(out, avo_view_num(a, "q3"), 4);
        avo_strbuf_puts(out, "] 95% CI [");
        avo_view_experiment_value(out, avo_view_num(a, "ci_low"), 4);
        avo_strbuf_puts(out, ", ");
        avo_view_experiment_value(out, avo_view_num(a, "ci_high"), 4);
        avo_strbuf_puts(out, "]\n");
        if (retimed && json_array_size(json_object_get(a, "paired")) > 0) {
            avo_strbuf_puts(out, "                 paired: ");
            avo_view_experiment_paired(out, a, 0);
            avo_strbuf_puts(out, "; recorded median ");
            avo_view_experiment_value(out, avo_view_num(json_object_get(a, "recorded"), "median"),
                                      4);
            avo_strbuf_puts(out, "\n");
        }
    }
    json_array_foreach(json_object_get(g, "tests"), i, t)
    {
        avo_strbuf_printf(out, "  %s vs %s: U=%g A12=%.3f (%s) p=%.4g p_holm=%.4g\n",
                          avo_view_str(t, "a"), avo_view_str(t, "b"), avo_view_num(t, "u"),
                          avo_view_num(t, "a12"), avo_view_str(t, "magnitude"),
                          avo_view_num(t, "p"), avo_view_num(t, "p_holm"));
    }
}

void avo_view_experiment_summary(avo_strbuf *out, const json_t *report)
{
    const json_t *doc = json_object_get(report, "document");
    const json_t *counts = json_object_get(doc, "counts");
    size_t i;
    const json_t *g;
    json_array_foreach(json_object_get(doc, "groups"), i, g) summary_group(out, g);
    long long incomplete = avo_view_int(counts, "missing") + avo_view_int(counts, "unfinished");
    if (incomplete > 0)
        avo_strbuf_printf(out, "incomplete: %lld of %zu cells missing or unfinished\n", incomplete,
                          json_array_size(json_object_get(doc, "cells")));
    if (avo_view_int(counts, "failed") > 0)
        avo_strbuf_printf(out, "%lld cell(s) failed (listed in the report with their reason)\n",
                          avo_view_int(counts, "failed"));
    const char *prefix = avo_view_str(report, "out");
    avo_strbuf_printf(out, "wrote %s.html, %s.csv, %s.json\n", prefix, prefix, prefix);
}
