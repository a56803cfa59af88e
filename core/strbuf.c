/*
 * strbuf.c — growable string with sticky out-of-memory failure.
 *
 * Invariant: when data is not NULL, data[len] == '\0' and len < cap.
 */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avo.h"

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
