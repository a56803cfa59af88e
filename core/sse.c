#include "core/sse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"

/* Tool calls beyond this index are dropped: no model makes so many in one
 * answer, and a garbage index must not allocate without bound. */
#define MAX_TOOL_CALLS 1024

/* One tool call being gathered: its id and name (borrowed from the latest
 * event that had them, kept alive by a reference), its arguments joined. */
typedef struct tool_slot {
    int used;
    json_t *id;
    json_t *name;
    avo_strbuf arguments;
} tool_slot;

typedef struct joiner {
    avo_strbuf content;
    tool_slot *slots;
    size_t n_slots; /* slots allocated (used or holes) */
    json_t *usage;
    json_t *finish;
    long deltas;
    int failed;
} joiner;

/* Lua's %s: the C locale's white space. */
static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static void keep(json_t **slot, json_t *value)
{
    json_decref(*slot);
    *slot = json_incref(value);
}

/* The first place without a tool call (where one without an index goes). */
static size_t border(const joiner *j)
{
    size_t i = 0;
    while (i < j->n_slots && j->slots[i].used)
        i++;
    return i;
}

/* The slot of tool call `tc`, created when new; NULL when its index is out
 * of range (dropped) or memory ran out (j->failed). */
static tool_slot *slot_of(joiner *j, const json_t *tc)
{
    const json_t *index = json_is_object(tc) ? json_object_get(tc, "index") : NULL;
    double real = json_is_real(index) ? json_real_value(index) : 0.5;
    long long at;
    if (json_is_integer(index))
        at = json_integer_value(index);
    else if (real > -9.2e18 && real < 9.2e18 && real == floor(real))
        at = (long long)real; /* an integral number, as Lua's math.tointeger takes */
    else
        at = (long long)border(j);
    if (at < 0 || at >= MAX_TOOL_CALLS)
        return NULL;
    if ((size_t)at >= j->n_slots) {
        tool_slot *grown = realloc(j->slots, ((size_t)at + 1) * sizeof *grown);
        if (!grown) {
            j->failed = 1;
            return NULL;
        }
        memset(grown + j->n_slots, 0, ((size_t)at + 1 - j->n_slots) * sizeof *grown);
        j->slots = grown;
        j->n_slots = (size_t)at + 1;
    }
    j->slots[at].used = 1;
    return &j->slots[at];
}

static void add_tool_call(joiner *j, const json_t *tc)
{
    tool_slot *s = slot_of(j, tc);
    if (!s || !json_is_object(tc))
        return;
    json_t *id = json_object_get(tc, "id");
    if (json_is_string(id))
        keep(&s->id, id);
    json_t *fn = json_object_get(tc, "function");
    if (!json_is_object(fn))
        return;
    json_t *name = json_object_get(fn, "name");
    if (json_is_string(name))
        keep(&s->name, name);
    json_t *args = json_object_get(fn, "arguments");
    if (json_is_string(args) &&
        avo_strbuf_append(&s->arguments, json_string_value(args), json_string_length(args)) < 0)
        j->failed = 1;
}

/* One event's document `ev`: usage, then (within the cap) the delta. */
static void add_event(joiner *j, const json_t *ev, long cap)
{
    json_t *usage = json_object_get(ev, "usage");
    if (json_is_object(usage) || json_is_array(usage))
        keep(&j->usage, usage);
    json_t *choices = json_object_get(ev, "choices");
    json_t *choice = json_is_array(choices) ? json_array_get(choices, 0) : NULL;
    if (!json_is_object(choice))
        return;
    json_t *delta = json_object_get(choice, "delta");
    json_t *content = json_is_object(delta) ? json_object_get(delta, "content") : NULL;
    json_t *calls = json_is_object(delta) ? json_object_get(delta, "tool_calls") : NULL;
    if ((content && !json_is_null(content)) || (calls && !json_is_null(calls)))
        j->deltas++;
    if (cap >= 0 && j->deltas > cap)
        return;
    json_t *finish = json_object_get(choice, "finish_reason");
    if (json_is_string(finish))
        keep(&j->finish, finish);
    if (json_is_string(content) &&
        avo_strbuf_append(&j->content, json_string_value(content), json_string_length(content)) < 0)
        j->failed = 1;
    size_t i;
    json_t *tc;
    json_array_foreach(json_is_array(calls) ? calls : NULL, i, tc)
    {
        if (json_is_null(tc))
            break; /* (a hole ends the list, as Lua's ipairs does) */
        add_tool_call(j, tc);
    }
}

/* One line [s, e) of the body. */
static void add_line(joiner *j, const char *s, const char *e, long cap)
{
    if (e - s < 5 || memcmp(s, "data:", 5) != 0)
        return;
    s += 5;
    if (s < e && is_space(*s))
        s++;
    while (e > s && is_space(e[-1]))
        e--;
    if (e - s == 6 && memcmp(s, "[DONE]", 6) == 0)
        return;
    json_t *ev = json_loadb(s, (size_t)(e - s), JSON_DECODE_ANY, NULL);
    if (json_is_object(ev))
        add_event(j, ev, cap);
    json_decref(ev);
}

static int is_stream(const char *body, size_t len)
{
    size_t i = 0;
    while (i < len && is_space(body[i]))
        i++;
    if (len - i >= 5 && memcmp(body + i, "data:", 5) == 0)
        return 1;
    if (i < len && body[i] == ':') {
        for (const char *p = body; (p = memchr(p, '\n', (size_t)(body + len - p))); p++) {
            if ((size_t)(body + len - p) > 5 && memcmp(p + 1, "data:", 5) == 0)
                return 1;
        }
    }
    return 0;
}

/* The gathered tool calls up to the first hole, as Chat Completions has
 * them; NULL when there are none (or on failure, j->failed). */
static json_t *tool_calls(joiner *j)
{
    size_t n = border(j);
    if (n == 0)
        return NULL;
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++) {
        tool_slot *s = &j->slots[i];
        json_t *fn = json_pack("{s:s%}", "arguments", s->arguments.data ? s->arguments.data : "",
                               s->arguments.len);
        json_t *call = fn ? json_pack("{s:s, s:o}", "type", "function", "function", fn) : NULL;
        if (call && s->name)
            json_object_set(fn, "name", s->name);
        if (call && s->id)
            json_object_set(call, "id", s->id);
        if (!call || json_array_append_new(list, call) < 0) {
            json_decref(list);
            list = NULL;
        }
    }
    if (!list)
        j->failed = 1;
    return list;
}

static void joiner_free(joiner *j)
{
    avo_strbuf_free(&j->content);
    for (size_t i = 0; i < j->n_slots; i++) {
        json_decref(j->slots[i].id);
        json_decref(j->slots[i].name);
        avo_strbuf_free(&j->slots[i].arguments);
    }
    free(j->slots);
    json_decref(j->usage);
    json_decref(j->finish);
}

json_t *avo_sse_chat_join(const char *body, size_t len, long cap, long *ret_deltas)
{
    *ret_deltas = 0;
    if (!body || !is_stream(body, len))
        return NULL;
    joiner j = {0};
    for (const char *s = body, *end = body + len; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        add_line(&j, s, e, cap);
        s = e + 1;
    }
    json_t *message =
        json_pack("{s:s%}", "content", j.content.data ? j.content.data : "", j.content.len);
    json_t *calls = tool_calls(&j);
    if (message && calls)
        json_object_set_new(message, "tool_calls", calls);
    else
        json_decref(calls);
    json_t *choice = message ? json_pack("{s:o}", "message", message) : NULL;
    if (choice && j.finish)
        json_object_set(choice, "finish_reason", j.finish);
    json_t *doc = choice ? json_pack("{s:[o]}", "choices", choice) : NULL;
    if (doc && j.usage)
        json_object_set(doc, "usage", j.usage);
    if (!doc || j.failed || j.content.failed) {
        json_decref(doc);
        joiner_free(&j);
        *ret_deltas = -1;
        return NULL;
    }
    *ret_deltas = cap >= 0 && j.deltas > cap ? cap : j.deltas;
    joiner_free(&j);
    return doc;
}
