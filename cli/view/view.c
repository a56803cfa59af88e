/*
 * view.c — the accessors and formatters every view shares (see view.h).
 */
#include "cli/view/view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/diff.h"

const char *avo_view_str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

long long avo_view_int(const json_t *obj, const char *key)
{
    return (long long)json_integer_value(json_object_get(obj, key));
}

double avo_view_num(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

int avo_view_is_ok(const json_t *c)
{
    return strcmp(avo_view_str(c, "status"), "ok") == 0;
}

int avo_view_is_finished(const json_t *c)
{
    return strcmp(avo_view_str(c, "status"), "pending") != 0;
}

void avo_view_cut(avo_strbuf *out, const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max) {
        avo_strbuf_html(out, s);
        return;
    }
    while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
        max--;
    char *copy = strndup(s, max);
    if (!copy) {
        out->failed = 1;
        return;
    }
    avo_strbuf_html(out, copy);
    avo_strbuf_puts(out, "…");
    free(copy);
}

void avo_view_time(avo_strbuf *out, double t)
{
    if (!isfinite(t)) {
        avo_strbuf_puts(out, "<span class=\"muted\">—</span>");
        return;
    }
    time_t s = (time_t)t;
    struct tm tm;
    char buf[64];
    gmtime_r(&s, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    avo_strbuf_puts(out, buf);
}

void avo_view_number(avo_strbuf *out, double v)
{
    if (isfinite(v))
        avo_strbuf_printf(out, "%.4g", v);
    else
        avo_strbuf_puts(out, "—");
}

void avo_view_knobs(avo_strbuf *out, const json_t *knobs)
{
    const char *key;
    json_t *v;
    int first = 1;
    json_object_foreach((json_t *)knobs, key, v)
    {
        char *text = json_dumps(v, JSON_ENCODE_ANY);
        if (!first)
            avo_strbuf_puts(out, " ");
        avo_strbuf_html(out, key);
        avo_strbuf_puts(out, "=");
        avo_strbuf_html(out, json_is_string(v) ? json_string_value(v) : text);
        free(text);
        first = 0;
    }
    if (first)
        avo_strbuf_puts(out, "<span class=\"muted\">(none)</span>");
}

double avo_view_config_metric(const json_t *c, const char *name, const char **ret_unit)
{
    size_t i;
    json_t *cfg;
    json_array_foreach(json_object_get(c, "configs"), i, cfg)
    {
        if (strcmp(avo_view_str(cfg, "name"), name) == 0)
            return avo_diff_config_metric(cfg, ret_unit);
    }
    return NAN;
}

int avo_view_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double avo_view_quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double f = pos - (double)i;
    return i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

const char *avo_view_score_label(const json_t *run)
{
    const char *unit = avo_view_str(run, "unit");
    return unit && *unit ? unit : "score";
}

const char *avo_view_status_class(const char *status)
{
    if (!strcmp(status, "running"))
        return "status-running";
    if (!strcmp(status, "failed") || !strcmp(status, "interrupted"))
        return "status-failed";
    return "";
}
