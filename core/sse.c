/*
 * sse.c — a streamed Chat Completions answer joined into one completion.
 *
 * Each event is read by yajl's event parser, which builds no document: the
 * callbacks follow the path of each value (choices[0].delta.content, ...)
 * and stage what the event says; only a whole, valid event is applied to
 * the joined answer (an event that breaks off counts for nothing).  yajl
 * reads the JSON that jansson reads (strict, UTF-8 checked, one value, no
 * comments, numbers that fit), at about a third of jansson's cost here:
 * the rules jansson adds are kept by hand (a key or string with a NUL byte,
 * nesting past 2048 levels: the event is not JSON), and so is its reading
 * of a repeated key (the last one counts).
 */
#include "core/sse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "core/strbuf.h"

/* Tool calls beyond this index are dropped: no model makes so many in one
 * answer, and a garbage index must not allocate without bound. */
#define MAX_TOOL_CALLS 1024
/* jansson's JSON_PARSER_MAX_DEPTH: deeper is not JSON to it. */
#define MAX_DEPTH 2048

/* A string that an event may or may not give (set: it gave one). */
typedef struct maybe_text {
    int set;
    avo_strbuf text;
} maybe_text;

/* One tool call being gathered across events. */
typedef struct tool_slot {
    int used;
    maybe_text id, name;
    avo_strbuf arguments;
} tool_slot;

/* A tool call as one event gives it (an element of delta.tool_calls). */
typedef struct event_call {
    int object;      /* the element is an object (else a call with nothing) */
    int has_index;   /* "index" is an integral number */
    long long index; /* ... this one */
    maybe_text id;
    int function; /* "function" is an object */
    maybe_text name, arguments;
} event_call;

/* What one event says, staged until it is known to be whole. */
typedef struct event {
    int object;    /* the event is a JSON object */
    json_t *usage; /* its last "usage" value, any type */
    int choice;    /* choices[0] is an object */
    int delta;     /* ... with an object "delta" */
    int content;   /* delta.content: 0 absent or null, 1 a string, 2 another value */
    avo_strbuf content_text;
    int calls;        /* delta.tool_calls: 0 absent or null, 1 an array, 2 another value */
    int calls_ended;  /* a null element ended the array's calls */
    event_call *call; /* the calls, up to a null element */
    size_t n_call, cap_call;
    maybe_text finish; /* choices[0].finish_reason, when a string */
} event;

/* Where a value is: the meaning the parser gives the next value. */
typedef enum role {
    R_TOP,       /* the event itself */
    R_SKIP,      /* of no interest (still read, to know the event is JSON) */
    R_USAGE,     /* "usage": kept whole */
    R_CHOICES,   /* "choices" */
    R_CHOICE,    /* choices[0] */
    R_DELTA,     /* choices[0].delta */
    R_FINISH,    /* choices[0].finish_reason */
    R_CONTENT,   /* delta.content */
    R_CALLS,     /* delta.tool_calls */
    R_CALL,      /* an element of it */
    R_INDEX,     /* call.index */
    R_ID,        /* call.id */
    R_FUNCTION,  /* call.function */
    R_NAME,      /* function.name */
    R_ARGUMENTS, /* function.arguments */
} role;

/* An open container: its role, and its children's (by key or place). */
typedef struct frame {
    role role;
    int array;
    size_t index;    /* arrays: the next element's place */
    role child;      /* maps: the role of the current key's value */
    json_t *capture; /* R_USAGE: the container being built */
    char *key;       /* ... and its current key */
} frame;

typedef struct parser {
    event ev;
    frame *stack;
    size_t depth, cap;
} parser;

typedef struct joiner {
    avo_strbuf content;
    tool_slot *slots;
    size_t n_slots; /* slots allocated (used or holes) */
    json_t *usage;
    maybe_text finish;
    long deltas;
    int failed;
} joiner;

/* Lua's %s: the C locale's white space. */
static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static void text_clear(maybe_text *t)
{
    t->set = 0;
    t->text.len = 0;
    if (t->text.data)
        t->text.data[0] = '\0';
}

/* Set t to s[0..len), or clear it when s is NULL.  0, or -1 out of memory. */
static int text_set(maybe_text *t, const unsigned char *s, size_t len)
{
    text_clear(t);
    if (!s)
        return 0;
    t->set = 1;
    return avo_strbuf_append(&t->text, (const char *)s, len) < 0 ? -1 : 0;
}

/* ------------------------------------------------------- reading an event */

static frame *top(parser *p)
{
    return p->depth ? &p->stack[p->depth - 1] : NULL;
}

/* The role of the value now beginning (an element of an array advances
 * its place). */
static role value_role(parser *p)
{
    frame *f = top(p);
    if (!f)
        return R_TOP;
    if (!f->array)
        return f->child;
    size_t i = f->index++;
    switch (f->role) {
    case R_CHOICES:
        return i == 0 ? R_CHOICE : R_SKIP;
    case R_CALLS:
        return p->ev.calls_ended ? R_SKIP : R_CALL;
    case R_USAGE:
        return R_USAGE;
    default:
        return R_SKIP;
    }
}

/* A value inside "usage": attach it to the container being built. */
static int capture(parser *p, json_t *value)
{
    frame *f = top(p);
    if (!value)
        return 0;
    if (f && f->role == R_USAGE) {
        int rc = f->array ? json_array_append_new(f->capture, value)
                          : json_object_set_new(f->capture, f->key ? f->key : "", value);
        return rc == 0;
    }
    json_decref(p->ev.usage); /* the event's "usage" itself: the last one counts */
    p->ev.usage = value;
    return 1;
}

static event_call *new_call(event *ev, int object)
{
    if (ev->n_call == ev->cap_call) {
        size_t cap = ev->cap_call ? 2 * ev->cap_call : 4;
        event_call *grown = realloc(ev->call, cap * sizeof *grown);
        if (!grown)
            return NULL;
        memset(grown + ev->cap_call, 0, (cap - ev->cap_call) * sizeof *grown);
        ev->call = grown;
        ev->cap_call = cap;
    }
    event_call *c = &ev->call[ev->n_call++];
    c->object = object;
    c->has_index = 0;
    c->function = 0;
    text_clear(&c->id);
    text_clear(&c->name);
    text_clear(&c->arguments);
    return c;
}

static event_call *last_call(event *ev)
{
    return &ev->call[ev->n_call - 1];
}

/*
 * A scalar value (or the opening of a container, `opens` 'm' or 'a') in
 * role r: stage what it says.  `s`/`len` for strings, `number`/`integral`
 * for numbers; `kind` is the JSON type ('s', 'i', 'd', 'b', 'n', 'm', 'a').
 * Returns the role of the container it opens, or -1 to stop (memory).
 */
static int stage(parser *p, role r, char kind, const unsigned char *s, size_t len, double number)
{
    event *ev = &p->ev;
    switch (r) {
    case R_TOP:
        ev->object = kind == 'm';
        return kind == 'm' ? R_TOP : R_SKIP;
    case R_CHOICES: /* the last "choices" counts: what an earlier one said goes */
        ev->choice = ev->delta = ev->content = ev->calls = ev->calls_ended = 0;
        ev->n_call = 0;
        text_clear(&ev->finish);
        return kind == 'a' ? R_CHOICES : R_SKIP;
    case R_CHOICE:
        ev->choice = kind == 'm';
        return kind == 'm' ? R_CHOICE : R_SKIP;
    case R_DELTA:
        ev->content = ev->calls = ev->calls_ended = 0;
        ev->n_call = 0;
        ev->delta = kind == 'm';
        return kind == 'm' ? R_DELTA : R_SKIP;
    case R_FINISH:
        return text_set(&ev->finish, kind == 's' ? s : NULL, len) < 0 ? -1 : R_SKIP;
    case R_CONTENT:
        ev->content = kind == 'n' ? 0 : kind == 's' ? 1 : 2;
        ev->content_text.len = 0;
        if (kind == 's' && avo_strbuf_append(&ev->content_text, (const char *)s, len) < 0)
            return -1;
        return R_SKIP;
    case R_CALLS:
        ev->calls = kind == 'n' ? 0 : kind == 'a' ? 1 : 2;
        ev->calls_ended = 0;
        ev->n_call = 0;
        return kind == 'a' ? R_CALLS : R_SKIP;
    case R_CALL:
        if (kind == 'n') {
            ev->calls_ended = 1; /* (a hole ends the list, as Lua's ipairs does) */
            return R_SKIP;
        }
        return new_call(ev, kind == 'm') ? (kind == 'm' ? R_CALL : R_SKIP) : -1;
    case R_INDEX: { /* an integral number, as Lua's math.tointeger takes */
        event_call *c = last_call(ev);
        c->has_index = (kind == 'i' || kind == 'd') && number > -9.2e18 && number < 9.2e18 &&
                       number == floor(number);
        c->index = c->has_index ? (long long)number : 0;
        return R_SKIP;
    }
    case R_ID:
        return text_set(&last_call(ev)->id, kind == 's' ? s : NULL, len) < 0 ? -1 : R_SKIP;
    case R_FUNCTION: {
        event_call *c = last_call(ev);
        c->function = kind == 'm';
        text_clear(&c->name);
        text_clear(&c->arguments);
        return kind == 'm' ? R_FUNCTION : R_SKIP;
    }
    case R_NAME:
        return text_set(&last_call(ev)->name, kind == 's' ? s : NULL, len) < 0 ? -1 : R_SKIP;
    case R_ARGUMENTS:
        return text_set(&last_call(ev)->arguments, kind == 's' ? s : NULL, len) < 0 ? -1 : R_SKIP;
    default:
        return R_SKIP;
    }
}

/* The role of key `k` of a map in role r. */
static role key_role(role r, const unsigned char *k, size_t len)
{
#define IS(name) (len == sizeof name - 1 && memcmp(k, name, len) == 0)
    switch (r) {
    case R_TOP:
        return IS("usage") ? R_USAGE : IS("choices") ? R_CHOICES : R_SKIP;
    case R_CHOICE:
        return IS("delta") ? R_DELTA : IS("finish_reason") ? R_FINISH : R_SKIP;
    case R_DELTA:
        return IS("content") ? R_CONTENT : IS("tool_calls") ? R_CALLS : R_SKIP;
    case R_CALL:
        return IS("index") ? R_INDEX : IS("id") ? R_ID : IS("function") ? R_FUNCTION : R_SKIP;
    case R_FUNCTION:
        return IS("name") ? R_NAME : IS("arguments") ? R_ARGUMENTS : R_SKIP;
    case R_USAGE:
        return R_USAGE;
    default:
        return R_SKIP;
    }
#undef IS
}

/* A scalar value: `kind` as for stage, `integer` the exact value of an
 * integer. */
typedef struct scalar_value {
    char kind;
    const unsigned char *s;
    size_t len;
    double number;
    long long integer;
} scalar_value;

static json_t *scalar_json(const scalar_value *v)
{
    switch (v->kind) {
    case 'n':
        return json_null();
    case 'b':
        return json_boolean(v->number != 0);
    case 'i':
        return json_integer(v->integer);
    case 'd':
        return json_real(v->number);
    default:
        return json_stringn((const char *)v->s, v->len);
    }
}

static int scalar(parser *p, scalar_value v)
{
    role r = value_role(p);
    if (r == R_USAGE)
        return capture(p, scalar_json(&v));
    if (r == R_INDEX && v.kind == 'i') { /* (exactly, not through a double) */
        event_call *c = last_call(&p->ev);
        c->has_index = 1;
        c->index = v.integer;
        return 1;
    }
    return stage(p, r, v.kind, v.s, v.len, v.number) >= 0;
}

static int on_null(void *ctx)
{
    return scalar(ctx, (scalar_value){.kind = 'n'});
}

static int on_boolean(void *ctx, int b)
{
    return scalar(ctx, (scalar_value){.kind = 'b', .number = b});
}

/* A real number's text (not NUL-terminated when long). */
static int scalar_real(void *ctx, const char *text, size_t len)
{
    char *copy = strndup(text, len);
    if (!copy)
        return 0;
    double v = strtod(copy, NULL);
    free(copy);
    if (v == HUGE_VAL || v == -HUGE_VAL)
        return 0;
    return scalar(ctx, (scalar_value){.kind = 'd', .number = v});
}

/* A number, as its text (yajl has checked its syntax): an integer when it
 * has no fraction or exponent, else a real; one that does not fit (an
 * integer outside 64 bits, a real past DBL_MAX) is not JSON to jansson. */
static int on_number(void *ctx, const char *text, size_t len)
{
    char buf[64];
    if (len >= sizeof buf) /* (more digits than any 64-bit integer has) */
        return strcspn(text, ".eE") < len ? scalar_real(ctx, text, len) : 0;
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (strcspn(buf, ".eE") < len)
        return scalar_real(ctx, buf, len);
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE)
        return 0;
    return scalar(ctx, (scalar_value){.kind = 'i', .number = (double)v, .integer = v});
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
    if (memchr(s, '\0', len))
        return 0; /* jansson refuses "\u0000" */
    return scalar(ctx, (scalar_value){.kind = 's', .s = s, .len = len});
}

static int open_container(parser *p, int array)
{
    role r = value_role(p);
    json_t *built = NULL;
    if (r == R_USAGE) {
        built = array ? json_array() : json_object();
        if (!built)
            return 0;
        if (!capture(p, json_incref(built))) {
            json_decref(built);
            return 0;
        }
    } else {
        int opened = stage(p, r, array ? 'a' : 'm', NULL, 0, 0);
        if (opened < 0)
            return 0;
        r = (role)opened;
    }
    if (p->depth == MAX_DEPTH) {
        json_decref(built);
        return 0;
    }
    if (p->depth == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        frame *grown = realloc(p->stack, cap * sizeof *grown);
        if (!grown) {
            json_decref(built);
            return 0;
        }
        p->stack = grown;
        p->cap = cap;
    }
    p->stack[p->depth++] = (frame){.role = r, .array = array, .child = R_SKIP, .capture = built};
    return 1;
}

static int close_container(parser *p)
{
    frame *f = top(p);
    json_decref(f->capture);
    free(f->key);
    p->depth--;
    return 1;
}

static int on_start_map(void *ctx)
{
    return open_container(ctx, 0);
}

static int on_start_array(void *ctx)
{
    return open_container(ctx, 1);
}

static int on_end(void *ctx)
{
    return close_container(ctx);
}

static int on_map_key(void *ctx, const unsigned char *k, size_t len)
{
    parser *p = ctx;
    frame *f = top(p);
    if (memchr(k, '\0', len))
        return 0; /* jansson refuses "\u0000" in keys */
    f->child = key_role(f->role, k, len);
    if (f->role == R_USAGE) {
        free(f->key);
        f->key = strndup((const char *)k, len);
        return f->key != NULL;
    }
    return 1;
}

static const yajl_callbacks callbacks = {
    .yajl_null = on_null,
    .yajl_boolean = on_boolean,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_map_key,
    .yajl_end_map = on_end,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end,
};

static void event_reset(event *ev)
{
    json_decref(ev->usage);
    ev->usage = NULL;
    ev->object = ev->choice = ev->delta = ev->content = ev->calls = ev->calls_ended = 0;
    ev->n_call = 0;
    ev->content_text.len = 0;
    text_clear(&ev->finish);
}

static int hex4(const char *s, const char *end)
{
    if (end - s < 4)
        return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Whether every \u escape of a surrogate in s[0..len) is half of a pair:
 * yajl reads a lone one as "?", jansson refuses it.  (Backslashes stand
 * only in strings in JSON; text that is not JSON yajl refuses anyway.) */
static int surrogates_paired(const char *s, size_t len)
{
    const char *end = s + len;
    for (const char *b = memchr(s, '\\', len); b; b = memchr(b, '\\', (size_t)(end - b))) {
        if (end - b < 2)
            return 1;
        if (b[1] != 'u') {
            b += 2;
            continue;
        }
        int u = hex4(b + 2, end);
        if (u < 0)
            return 1; /* (no escape: not JSON, which yajl says) */
        b += 6;
        if (u >= 0xDC00 && u <= 0xDFFF)
            return 0;
        if (u >= 0xD800 && u <= 0xDBFF) {
            int low = end - b >= 2 && b[0] == '\\' && b[1] == 'u' ? hex4(b + 2, end) : -1;
            if (low < 0xDC00 || low > 0xDFFF)
                return 0;
            b += 6;
        }
    }
    return 1;
}

/* Read the JSON text s[0..len) into p->ev.  1 when it is one whole JSON
 * value, 0 when not, -1 out of memory. */
static int read_event(parser *p, const char *s, size_t len)
{
    event_reset(&p->ev);
    while (p->depth)
        close_container(p);
    if (!surrogates_paired(s, len))
        return 0;
    yajl_handle h = yajl_alloc(&callbacks, NULL, p);
    if (!h)
        return -1;
    int ok = yajl_parse(h, (const unsigned char *)s, len) == yajl_status_ok &&
             yajl_complete_parse(h) == yajl_status_ok;
    yajl_free(h);
    return ok;
}

static void parser_free(parser *p)
{
    event_reset(&p->ev);
    while (p->depth)
        close_container(p);
    free(p->stack);
    avo_strbuf_free(&p->ev.content_text);
    avo_strbuf_free(&p->ev.finish.text);
    for (size_t i = 0; i < p->ev.cap_call; i++) {
        avo_strbuf_free(&p->ev.call[i].id.text);
        avo_strbuf_free(&p->ev.call[i].name.text);
        avo_strbuf_free(&p->ev.call[i].arguments.text);
    }
    free(p->ev.call);
}

/* ------------------------------------------------------ joining the events */

/* The first place without a tool call (where one without an index goes). */
static size_t border(const joiner *j)
{
    size_t i = 0;
    while (i < j->n_slots && j->slots[i].used)
        i++;
    return i;
}

/* The slot of tool call `c`, created when new; NULL when its index is out
 * of range (dropped) or memory ran out (j->failed). */
static tool_slot *slot_of(joiner *j, const event_call *c)
{
    long long at = c->object && c->has_index ? c->index : (long long)border(j);
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

static void copy_text(joiner *j, maybe_text *to, const maybe_text *from)
{
    if (from->set && text_set(to, (const unsigned char *)(from->text.data ? from->text.data : ""),
                              from->text.len) < 0)
        j->failed = 1;
}

static void add_tool_call(joiner *j, const event_call *c)
{
    tool_slot *s = slot_of(j, c);
    if (!s || !c->object)
        return;
    copy_text(j, &s->id, &c->id);
    if (!c->function)
        return;
    copy_text(j, &s->name, &c->name);
    if (c->arguments.set &&
        avo_strbuf_append(&s->arguments, c->arguments.text.data ? c->arguments.text.data : "",
                          c->arguments.text.len) < 0)
        j->failed = 1;
}

/* A whole event: its usage, then (within the cap) its delta. */
static void add_event(joiner *j, event *ev, long cap)
{
    if (json_is_object(ev->usage) || json_is_array(ev->usage)) {
        json_decref(j->usage);
        j->usage = json_incref(ev->usage);
    }
    if (!ev->choice)
        return;
    if (ev->delta && (ev->content || ev->calls))
        j->deltas++;
    if (cap >= 0 && j->deltas > cap)
        return;
    copy_text(j, &j->finish, &ev->finish);
    if (ev->delta && ev->content == 1 &&
        avo_strbuf_append(&j->content, ev->content_text.data ? ev->content_text.data : "",
                          ev->content_text.len) < 0)
        j->failed = 1;
    for (size_t i = 0; ev->delta && ev->calls == 1 && i < ev->n_call; i++)
        add_tool_call(j, &ev->call[i]);
}

/* One line [s, e) of the body. */
static void add_line(joiner *j, parser *p, const char *s, const char *e, long cap)
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
    int rc = read_event(p, s, (size_t)(e - s));
    if (rc < 0)
        j->failed = 1;
    else if (rc > 0 && p->ev.object)
        add_event(j, &p->ev, cap);
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

static json_t *text_json(const avo_strbuf *t)
{
    return json_stringn(t->data ? t->data : "", t->len);
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
        json_t *fn = json_pack("{s:o}", "arguments", text_json(&s->arguments));
        json_t *call = fn ? json_pack("{s:s, s:o}", "type", "function", "function", fn) : NULL;
        if (call && s->name.set)
            json_object_set_new(fn, "name", text_json(&s->name.text));
        if (call && s->id.set)
            json_object_set_new(call, "id", text_json(&s->id.text));
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
        avo_strbuf_free(&j->slots[i].id.text);
        avo_strbuf_free(&j->slots[i].name.text);
        avo_strbuf_free(&j->slots[i].arguments);
    }
    free(j->slots);
    json_decref(j->usage);
    avo_strbuf_free(&j->finish.text);
}

json_t *avo_sse_chat_join(const char *body, size_t len, long cap, long *ret_deltas)
{
    *ret_deltas = 0;
    if (!body || !is_stream(body, len))
        return NULL;
    joiner j = {0};
    parser p = {0};
    for (const char *s = body, *end = body + len; s < end;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        add_line(&j, &p, s, e, cap);
        s = e + 1;
    }
    parser_free(&p);
    json_t *message = json_pack("{s:o}", "content", text_json(&j.content));
    json_t *calls = tool_calls(&j);
    if (message && calls)
        json_object_set_new(message, "tool_calls", calls);
    else
        json_decref(calls);
    json_t *choice = message ? json_pack("{s:o}", "message", message) : NULL;
    if (choice && j.finish.set)
        json_object_set_new(choice, "finish_reason", text_json(&j.finish.text));
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
