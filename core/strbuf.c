/*
 * strbuf.c — growable string with sticky out-of-memory failure.
 *
 * Invariant: when data is not NULL, data[len] == '\0' and len < cap.
 */
#include "core/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"

/* Make room for n more bytes plus the NUL. */
static int reserve(avo_strbuf *b, size_t n)
{
    if (b->failed)
        return AVO_ENOMEM;
    if (b->len + n + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) {
        if (cap > (size_t)-1 / 2) {
            b->failed = 1;
            return AVO_ENOMEM;
        }
        cap *= 2;
    }
    char *data = realloc(b->data, cap);
    if (!data) {
        b->failed = 1;
        return AVO_ENOMEM;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

int avo_strbuf_append(avo_strbuf *b, const char *s, size_t n)
{
    int rc = reserve(b, n);
    if (rc < 0)
        return rc;
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int avo_strbuf_puts(avo_strbuf *b, const char *s)
{
    if (!s)
        return b->failed ? AVO_ENOMEM : 0;
    return avo_strbuf_append(b, s, strlen(s));
}

int avo_strbuf_printf(avo_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return AVO_ENOMEM;
    }
    int rc = reserve(b, (size_t)n);
    if (rc < 0)
        return rc;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

int avo_strbuf_html(avo_strbuf *b, const char *s)
{
    if (!s)
        return b->failed ? AVO_ENOMEM : 0;
    const char *run = s;
    for (const char *p = s; *p; p++) {
        const char *rep = NULL;
        unsigned char c = (unsigned char)*p;
        switch (c) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
                rep = "?";
            else if (c == 0x7f)
                rep = "?";
        }
        if (rep) {
            avo_strbuf_append(b, run, (size_t)(p - run));
            avo_strbuf_puts(b, rep);
            run = p + 1;
        }
    }
    return avo_strbuf_append(b, run, strlen(run));
}

/* Length of the UTF-8 sequence at s (n bytes left) and its code point, or 0
 * when it is not well-formed (overlong, surrogate, beyond U+10FFFF, cut). */
static size_t utf8_sequence(const unsigned char *s, size_t n, unsigned *ret_cp)
{
    unsigned c = s[0], cp;
    size_t len;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    *ret_cp = cp;
    return len;
}

int avo_strbuf_inert(avo_strbuf *b, const char *s, size_t n, int flags)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t run = 0, i = 0;
    while (i < n) {
        unsigned c = u[i], cp = 0;
        size_t len = 1;
        char rep[16] = "";
        if (c == '\t' || (c == '\n' && (flags & AVO_INERT_LINES)) || (c >= 0x20 && c < 0x7f)) {
            i++;
            continue;
        }
        if (c == '\r' && (flags & AVO_INERT_LINES) && i + 1 < n && u[i + 1] == '\n') {
            rep[0] = '\0'; /* CR LF: the line ends all the same */
        } else if (c == 0x1b) {
            snprintf(rep, sizeof rep, "\\e");
        } else if (c == '\r') {
            snprintf(rep, sizeof rep, "\\r");
        } else if (c == '\n') {
            snprintf(rep, sizeof rep, "\\n");
        } else if (c < 0x80) {
            snprintf(rep, sizeof rep, "\\x%02x", c);
        } else if (!(len = utf8_sequence(u + i, n - i, &cp))) {
            len = 1;
            snprintf(rep, sizeof rep, "\\x%02x", c);
        } else if (cp <= 0x9f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) {
            snprintf(rep, sizeof rep, "\\u%04x", cp);
        } else {
            i += len; /* printable UTF-8 */
            continue;
        }
        avo_strbuf_append(b, s + run, i - run);
        avo_strbuf_puts(b, rep);
        i += len;
        run = i;
    }
    return avo_strbuf_append(b, s + run, n - run);
}

const char *avo_strbuf_text(const avo_strbuf *b)
{
    return b->data && !b->failed ? b->data : "";
}

char *avo_strbuf_steal(avo_strbuf *b)
{
    char *text = NULL;
    if (!b->failed)
        text = b->data ? b->data : strdup("");
    else
        free(b->data);
    *b = (avo_strbuf){0};
    return text;
}

void avo_strbuf_free(avo_strbuf *b)
{
    if (!b)
        return;
    free(b->data);
    *b = (avo_strbuf){0};
}
