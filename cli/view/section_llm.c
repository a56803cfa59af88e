/*
 * section_llm.c — one section of the run's page, shared by `avo report`
 * and `avo serve` (report.h): the LLM spend: tokens and cost per model, failed calls and rejected
 * answers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/view.h"

/* Add one to counts[text] (text cut at 300 bytes).  NULL counts: no-op. */
static void count_text(json_t *counts, const char *text)
{
    char key[304];
    snprintf(key, sizeof key, "%s", text);
    if (strlen(text) >= 300)
        strcpy(key + 296, "...");
    json_int_t n = json_integer_value(json_object_get(counts, key));
    json_object_set_new(counts, key, json_integer(n + 1));
}

typedef struct {
    const char *text;
    json_int_t n;
} counted;

static int cmp_counted(const void *a, const void *b)
{
    const counted *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    return strcmp(x->text, y->text);
}

/*
 * A table of `counts` (text -> times), most frequent first, under the
 * heading `title`; nothing when counts is empty.
 */
static void counts_table(avo_strbuf *out, const char *title, const char *what, const json_t *counts)
{
    size_t n = json_object_size(counts), k = 0;
    if (n == 0)
        return;
    counted *rows = calloc(n, sizeof *rows);
    if (!rows) {
        out->failed = 1;
        return;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)counts, key, v)
    {
        rows[k++] = (counted){key, json_integer_value(v)};
    }
    qsort(rows, n, sizeof *rows, cmp_counted);
    avo_strbuf_printf(out, "<h3>%s</h3>\n<table><tr><th>times</th><th>%s</th></tr>\n", title, what);
    for (k = 0; k < n; k++) {
        avo_strbuf_printf(out, "<tr><td class=\"num\">%lld</td><td>", (long long)rows[k].n);
        avo_strbuf_html(out, rows[k].text);
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
    free(rows);
}

/*
 * The LLM section: spend, then the failed calls (model and error) and the
 * operator outcomes that made no child (operator_outcome events: rejected
 * answers and failed calls, with their reasons), each counted.
 */
static void section_llm(avo_strbuf *out, const json_t *spend, const json_t *calls,
                        const json_t *outcomes)
{
    json_t *failed = json_object(), *rejected = json_object();
    size_t i;
    json_t *row;
    json_array_foreach(calls, i, row)
    {
        if (strcmp(avo_view_str(row, "status"), "ok") == 0)
            continue;
        char text[400];
        snprintf(text, sizeof text, "%s: %s", avo_view_str(row, "model"),
                 avo_view_str(row, "error"));
        if (failed)
            count_text(failed, text);
    }
    json_array_foreach(outcomes, i, row)
    {
        const json_t *d = json_object_get(row, "data");
        if (strcmp(avo_view_str(d, "outcome"), "applied") == 0)
            continue;
        char text[400];
        snprintf(text, sizeof text, "%s — %s: %s", avo_view_str(d, "operator"),
                 avo_view_str(d, "outcome"), avo_view_str(d, "reason"));
        if (rejected)
            count_text(rejected, text);
    }
    if (!failed || !rejected)
        out->failed = 1;
    avo_strbuf_puts(out, "<h2 id=\"llm\">LLM spend</h2>\n");
    if (avo_view_int(spend, "calls") == 0) {
        avo_strbuf_puts(out, "<p>no LLM calls</p>\n");
        counts_table(out, "Operators that made no child", "operator — outcome: reason", rejected);
        json_decref(failed);
        json_decref(rejected);
        return;
    }
    avo_strbuf_puts(out, "<table>\n");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)spend, key, v)
    {
        avo_strbuf_puts(out, "<tr><th>");
        avo_strbuf_html(out, key);
        avo_strbuf_puts(out, "</th><td class=\"num\">");
        avo_view_number(out, json_number_value(v));
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
    counts_table(out, "Failed LLM calls", "model: error", failed);
    counts_table(out, "Operators that made no child", "operator — outcome: reason", rejected);
    json_decref(failed);
    json_decref(rejected);
}

void avo_report_llm(avo_strbuf *out, const avo_report_run *r)
{
    section_llm(out, r->spend, r->calls, r->outcomes);
}
