/*
 * strbuf.h — a growable NUL-terminated string for code that builds text
 * (CSV, HTML, SVG, diffs).
 *
 * Failure is sticky: once an append runs out of memory the buffer is marked
 * failed, later appends do nothing, and every append returns AVO_ENOMEM from
 * then on.  Builders can therefore append freely and check `failed` (or the
 * last return) once at the end.  A zeroed avo_strbuf is empty and valid;
 * `data` is NULL until the first append.
 */
#ifndef AVO_STRBUF_H
#define AVO_STRBUF_H

#include <stddef.h>

typedef struct avo_strbuf {
    char *data; /* NUL-terminated text, owned by the buffer */
    size_t len;
    size_t cap;
    int failed; /* an append ran out of memory */
} avo_strbuf;

/* Append n bytes of s. */
int avo_strbuf_append(avo_strbuf *b, const char *s, size_t n);

/* Append a NUL-terminated string; NULL appends nothing. */
int avo_strbuf_puts(avo_strbuf *b, const char *s);

/* Append printf-formatted text. */
int avo_strbuf_printf(avo_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append s with &, <, >, " and ' escaped for HTML/XML text and attributes;
 * control characters other than tab, newline and CR (not allowed in XML)
 * become '?'.  NULL appends nothing. */
int avo_strbuf_html(avo_strbuf *b, const char *s);

/*
 * Append n bytes of s made inert for a terminal: text from candidates and
 * servers (compile logs, reasons, model answers) shown so that it cannot
 * drive the terminal.  ESC becomes "\e"; other C0 controls, DEL, C1
 * controls (U+0080..U+009F) and the bidirectional overrides and isolates
 * (U+202A..U+202E, U+2066..U+2069) become "\r", "\xNN" or "\uNNNN"; bytes
 * that are not UTF-8 become "\xNN".  Tab is kept; newline is kept with
 * AVO_INERT_LINES (a multi-line log), else shown as "\n"; a CR before a
 * newline is dropped there, a bare CR is shown.  Everything else is copied.
 */
#define AVO_INERT_LINES 1
int avo_strbuf_inert(avo_strbuf *b, const char *s, size_t n, int flags);

/* The text ("" for an empty buffer); the pointer stays owned by b. */
const char *avo_strbuf_text(const avo_strbuf *b);

/* Take the text (malloc'ed, owned by the caller; NULL if the buffer failed)
 * and leave b empty. */
char *avo_strbuf_steal(avo_strbuf *b);

/* Free the text and leave b empty; accepts NULL. */
void avo_strbuf_free(avo_strbuf *b);

#endif
