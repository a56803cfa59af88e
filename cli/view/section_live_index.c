/*
 * section_live_index.c — the index of the live view (live.h, `avo serve`):
 * an archive's runs, newest first, each with its best (the re-timed #1
 * where the run was re-timed), and its experiments.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/paired.h"
#include "cli/report.h"
#include "cli/view/live.h"
#include "cli/view/view.h"

void avo_view_live_runs(avo_strbuf *out, avo_archive *ar, size_t k, const json_t *runs)
{
    if (!json_array_size(runs)) {
        avo_strbuf_puts(out, "<p class=\"muted\">no runs yet</p>\n");
        return;
    }
    avo_strbuf_puts(out, "<table class=\"runs\"><tr><th>run</th><th>script</th><th>status</th>"
                         "<th>started</th><th>evaluated</th><th>failed</th>"
                         "<th>in flight</th><th>best</th></tr>\n");
    size_t i;
    const json_t *r;
    /* Newest first. */
    for (i = json_array_size(runs); i-- > 0;) {
        r = json_array_get(runs, i);
        long long id = avo_view_int(r, "id");
        long long n = avo_view_int(r, "candidates"), ok = avo_view_int(r, "ok"),
                  failed = avo_view_int(r, "failed");
        avo_strbuf_printf(out,
                          "<tr data-run=\"%lld\"><td><a href=\"/a/%zu/run/%lld\">run %lld</a>"
                          "</td><td>",
                          id, k, id, id);
        avo_strbuf_html(out, avo_view_str(r, "script_path"));
        avo_strbuf_printf(out, "</td><td class=\"%s\">",
                          avo_view_status_class(avo_view_str(r, "status")));
        avo_strbuf_html(out, avo_view_str(r, "status"));
        avo_strbuf_puts(out, "</td><td>");
        avo_view_time(out, avo_view_num(r, "started_at"));
        avo_strbuf_printf(out,
                          "</td><td class=\"num\">%lld</td><td class=\"num\">%lld</td>"
                          "<td class=\"num\">%lld</td><td>",
                          ok + failed, failed, n - ok - failed);
        /* The re-timed #1 and its median where the run was re-timed
         * (paired.h), else the search's recorded best. */
        json_t *data = avo_paired_load(ar, id);
        const json_t *first = avo_paired_entry(data, avo_paired_best(data));
        if (first) {
            avo_strbuf_printf(out, "<a href=\"/a/%zu/c/%lld\">#%lld</a> ", k,
                              avo_view_int(first, "id"), avo_view_int(first, "id"));
            avo_view_number(out, avo_view_num(first, "median"));
            avo_strbuf_puts(out, " re-timed");
        } else if (json_is_integer(json_object_get(r, "best_id"))) {
            avo_strbuf_printf(out, "<a href=\"/a/%zu/c/%lld\">#%lld</a> ", k,
                              avo_view_int(r, "best_id"), avo_view_int(r, "best_id"));
            avo_view_number(out, avo_view_num(r, "best_score"));
        }
        json_decref(data);
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
}

void avo_view_live_experiments(avo_strbuf *out, size_t k, const json_t *exps)
{
    if (!json_array_size(exps))
        return;
    avo_strbuf_puts(out, "<h3>Experiments</h3>\n<table class=\"experiments\"><tr>"
                         "<th>experiment</th><th>name</th><th>file</th><th>created</th>"
                         "</tr>\n");
    size_t i;
    const json_t *e;
    json_array_foreach(exps, i, e)
    {
        long long id = avo_view_int(e, "id");
        avo_strbuf_printf(out,
                          "<tr><td><a href=\"/a/%zu/experiment/%lld\">experiment %lld</a>"
                          "</td><td>",
                          k, id, id);
        avo_strbuf_html(out, avo_view_str(e, "name"));
        avo_strbuf_puts(out, "</td><td>");
        avo_strbuf_html(out, avo_view_str(e, "path"));
        avo_strbuf_puts(out, "</td><td>");
        avo_view_time(out, avo_view_num(e, "created_at"));
        avo_strbuf_puts(out, "</td></tr>\n");
    }
    avo_strbuf_puts(out, "</table>\n");
}
