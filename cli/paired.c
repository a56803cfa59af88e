/*
 * paired.c — the re-timed, paired figures of a run as every view shows them
 * (see paired.h).  The figures are computed once, by lua/avo/retime.lua;
 * this file only reads and formats them, so the text here matches the
 * summary of `avo run` character for character.
 */
#include "cli/paired.h"

#include <string.h>

static double num(const json_t *obj, const char *key)
{
    return json_number_value(json_object_get(obj, key));
}

static json_int_t integer(const json_t *obj, const char *key)
{
    return json_integer_value(json_object_get(obj, key));
}

json_t *avo_paired_load(avo_archive *ar, int64_t run_id)
{
    json_t *events = NULL;
    char err[AVO_ERRLEN];
    if (avo_archive_events(ar, run_id, "retimed", &events, err, sizeof err) < 0)
        return NULL;
    json_t *data = json_object_get(json_array_get(events, json_array_size(events) - 1), "data");
    data = json_is_object(data) ? json_incref(data) : NULL;
    json_decref(events);
    return data;
}

const json_t *avo_paired_entry(const json_t *data, json_int_t id)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(data, "ranked"), i, e)
    {
        if (integer(e, "id") == id)
            return e;
    }
    return NULL;
}

json_int_t avo_paired_best(const json_t *data)
{
    return integer(json_array_get(json_object_get(data, "ranked"), 0), "id");
}

/* "seed #1" or the baseline's name: what ratio `p` is against. */
static void against(avo_strbuf *out, const json_t *p)
{
    const char *name = json_string_value(json_object_get(p, "against"));
    if (name && strcmp(name, "seed") == 0)
        avo_strbuf_printf(out, "seed #%lld", (long long)integer(p, "id"));
    else
        avo_strbuf_puts(out, name ? name : "?");
}

void avo_paired_text(avo_strbuf *out, const json_t *e)
{
    size_t i;
    const json_t *p;
    const char *sep = "";
    if (json_is_array(json_object_get(e, "paired"))) {
        json_array_foreach(json_object_get(e, "paired"), i, p)
        {
            avo_strbuf_printf(out, "%s%.2fx ", sep, num(p, "median"));
            against(out, p);
            avo_strbuf_printf(out, " [%.2f, %.2f]", num(p, "low"), num(p, "high"));
            sep = ", ";
        }
        return;
    }
    const char *name;
    json_object_foreach((json_t *)json_object_get(e, "vs"), name, p)
    {
        avo_strbuf_printf(out, "%s%.2fx %s (ratio of medians)", sep, json_number_value(p), name);
        sep = ", ";
    }
}

void avo_paired_configs_text(avo_strbuf *out, const json_t *p)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(p, "configs"), i, c)
    {
        avo_strbuf_printf(out, "%s%s %.2fx [%.2f, %.2f]", i ? ", " : "",
                          json_string_value(json_object_get(c, "name")), num(c, "median"),
                          num(c, "low"), num(c, "high"));
    }
}

void avo_paired_lines(avo_strbuf *out, const json_t *data, json_int_t id, const char *unit)
{
    if (!data) {
        avo_strbuf_printf(out, "%s\n", AVO_PAIRED_NONE);
        return;
    }
    const json_t *e = avo_paired_entry(data, id);
    size_t of = json_array_size(json_object_get(data, "ranked")) +
                json_array_size(json_object_get(data, "dropped"));
    if (!e) {
        avo_strbuf_printf(out,
                          "not re-timed ok in every round of the run's re-timing (top %zu);"
                          " its score is the search's own, unpaired\n",
                          of);
        return;
    }
    avo_strbuf_printf(out,
                      "re-timed %.4g%s%s [%.4g, %.4g] (median of %lld rounds, each a fresh"
                      " process), #%lld of %zu\n",
                      num(e, "median"), unit ? " " : "", unit ? unit : "", num(e, "low"),
                      num(e, "high"), (long long)integer(data, "rounds"),
                      (long long)integer(e, "rank"), of);
    avo_strbuf t = {0};
    avo_paired_text(&t, e);
    if (t.len)
        avo_strbuf_printf(out, "%s %s\n",
                          json_is_true(json_object_get(data, "paired"))
                              ? "paired per round (median [95% interval]):"
                              : "re-timed before pairing:",
                          avo_strbuf_text(&t));
    avo_strbuf_free(&t);
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(e, "paired"), i, p)
    {
        const char *name = json_string_value(json_object_get(p, "against"));
        if (!name || strcmp(name, "seed") == 0 ||
            json_array_size(json_object_get(p, "configs")) == 0)
            continue;
        avo_strbuf_printf(out, "  %s per config, paired: ", name);
        avo_paired_configs_text(out, p);
        avo_strbuf_puts(out, "\n");
    }
}

json_t *avo_paired_json(const json_t *data, json_int_t id)
{
    const json_t *e = data ? avo_paired_entry(data, id) : NULL;
    if (!e)
        return json_pack("{sbss}", "paired", 0, "why",
                         data ? "not re-timed ok in every round" : "the run was not re-timed");
    json_t *out =
        json_pack("{sbsIsOsIsIsbsfsfsfsf}", "paired", json_is_true(json_object_get(data, "paired")),
                  "rounds", integer(data, "rounds"), "set",
                  json_object_get(data, "set") ? json_object_get(data, "set") : json_null(), "rank",
                  integer(e, "rank"), "of",
                  (json_int_t)(json_array_size(json_object_get(data, "ranked")) +
                               json_array_size(json_object_get(data, "dropped"))),
                  "best", avo_paired_best(data) == id, "median", num(e, "median"), "low",
                  num(e, "low"), "high", num(e, "high"), "recorded", num(e, "recorded"));
    if (!out)
        return NULL;
    const json_t *ratios = json_object_get(e, "paired");
    json_object_set_new(out, "ratios", ratios ? json_deep_copy(ratios) : json_array());
    if (!ratios && json_object_get(e, "vs"))
        json_object_set_new(out, "vs", json_deep_copy(json_object_get(e, "vs")));
    return out;
}
