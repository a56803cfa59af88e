/*
 * section_devices.c — one section of the run's page, shared by `avo report`
 * and `avo serve` (report.h): the devices: which worker and device timed the candidates (only when
 * results name one).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report.h"
#include "cli/view/view.h"

/* "local GPU 2 (H100)", "node7/4242 GPU 0", "node7/4242": who timed a result. */
static void worker_label(const json_t *result, char *buf, size_t len)
{
    const json_t *w = json_object_get(result, "worker");
    const json_t *device = json_object_get(w, "device");
    const char *name = avo_view_str(w, "name");
    const char *model = avo_view_str(json_object_get(result, "device"), "name");
    int n = snprintf(buf, len, "%s", name && *name ? name : "local");
    if (json_is_integer(device) && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " GPU %lld", (long long)json_integer_value(device));
    if (model && *model && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " (%s)", model);
}

/*
 * Evaluations per device or remote worker: how many, how many verified, and
 * the median and best score of those, so a slow or failing GPU stands out.
 * Shown only when results name a GPU or a remote worker.
 */
static void section_devices(avo_strbuf *out, const json_t *cands)
{
    json_t *groups = json_object(); /* label -> [scores...], plus counts */
    size_t i;
    const json_t *c;
    int any = 0;
    json_array_foreach(cands, i, c)
    {
        const json_t *result = json_object_get(c, "result");
        const json_t *w = json_object_get(result, "worker");
        if (!w || (!json_object_get(w, "device") && !json_object_get(w, "name")))
            continue;
        any = 1;
        char label[512];
        worker_label(result, label, sizeof label);
        json_t *g = json_object_get(groups, label);
        if (!g) {
            g = json_pack("{s:i, s:[]}", "n", 0, "scores");
            json_object_set_new(groups, label, g);
        }
        json_object_set_new(g, "n", json_integer(avo_view_int(g, "n") + 1));
        if (avo_view_is_ok(c))
            json_array_append_new(json_object_get(g, "scores"),
                                  json_real(avo_view_num(c, "score")));
    }
    if (any) {
        avo_strbuf_puts(out, "<h2 id=\"devices\">Devices</h2>\n<table>\n<tr><th>worker</th>"
                             "<th>evaluations</th><th>verified</th><th>median score</th>"
                             "<th>best score</th></tr>\n");
        const char *label;
        json_t *g;
        json_object_foreach(groups, label, g)
        {
            const json_t *scores = json_object_get(g, "scores");
            size_t n = json_array_size(scores);
            double *v = calloc(n + 1, sizeof *v);
            if (!v) {
                out->failed = 1;
                break;
            }
            for (size_t k = 0; k < n; k++)
                v[k] = json_real_value(json_array_get(scores, k));
            qsort(v, n, sizeof *v, avo_view_cmp_double);
            avo_strbuf_puts(out, "<tr><td>");
            avo_strbuf_html(out, label);
            avo_strbuf_printf(out, "</td><td>%lld</td><td>%zu</td><td>", avo_view_int(g, "n"), n);
            if (n)
                avo_view_number(out, avo_view_quantile(v, n, 0.5));
            avo_strbuf_puts(out, "</td><td>");
            if (n)
                avo_view_number(out, v[n - 1]);
            avo_strbuf_puts(out, "</td></tr>\n");
            free(v);
        }
        avo_strbuf_puts(out, "</table>\n");
    }
    json_decref(groups);
}

void avo_report_devices(avo_strbuf *out, const avo_report_run *r)
{
    section_devices(out, r->cands);
}
