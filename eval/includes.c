/*
 * includes.c — the #include gate's lexer (see includes.h).
 */
#include "eval/includes.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"

/* The source after translation phases 1-3 as far as directives care:
 * backslash-newlines spliced, comments replaced by one space (newlines in
 * block comments kept), raw string literals replaced by "" (their newlines
 * kept) so nothing inside them can look like a directive.  Ordinary string
 * and character literals are copied (they cannot span lines) and digit
 * separators (1'000) stay part of their number.  Caller frees. */
static char *strip_source(const char *src)
{
    size_t n = strlen(src);
    char *spliced = malloc(n + 1), *out = malloc(n + 3);
    if (!spliced || !out) {
        free(spliced);
        free(out);
        return NULL;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (src[i] == '\\') {
            size_t j = i + 1;
            if (src[j] == '\r')
                j++;
            if (src[j] == '\n') {
                i = j;
                continue;
            }
        }
        spliced[m++] = src[i];
    }
    spliced[m] = '\0';

    size_t o = 0;
    for (size_t i = 0; i < m;) {
        char c = spliced[i];
        if (c == '/' && spliced[i + 1] == '/') {
            while (i < m && spliced[i] != '\n')
                i++;
            out[o++] = ' ';
        } else if (c == '/' && spliced[i + 1] == '*') {
            i += 2;
            out[o++] = ' ';
            while (i < m && !(spliced[i] == '*' && spliced[i + 1] == '/')) {
                if (spliced[i] == '\n')
                    out[o++] = '\n';
                i++;
            }
            i = i < m ? i + 2 : m;
        } else if (isdigit((unsigned char)c) ||
                   (c == '.' && isdigit((unsigned char)spliced[i + 1]))) {
            /* pp-number: digits, letters, '.', e+/p+ signs and ' separators */
            while (i < m) {
                char d = spliced[i];
                if ((d == '+' || d == '-') && i > 0 && strchr("eEpP", spliced[i - 1])) {
                    out[o++] = spliced[i++];
                } else if (isalnum((unsigned char)d) || d == '.' || d == '_' ||
                           (d == '\'' && isalnum((unsigned char)spliced[i + 1]))) {
                    out[o++] = spliced[i++];
                } else {
                    break;
                }
            }
        } else if (isalpha((unsigned char)c) || c == '_') {
            size_t start = i;
            while (i < m && (isalnum((unsigned char)spliced[i]) || spliced[i] == '_'))
                i++;
            size_t len = i - start;
            int raw = spliced[i] == '"' && len <= 3 && spliced[i - 1] == 'R' &&
                      (len == 1 || strncmp(spliced + start, "u8R", 3) == 0 ||
                       (len == 2 && strchr("uUL", spliced[start])));
            memcpy(out + o, spliced + start, len);
            o += len;
            if (raw) {
                /* R"delim( ... )delim" */
                size_t d0 = i + 1, d1 = d0;
                while (d1 < m && spliced[d1] != '(' && d1 - d0 <= 16)
                    d1++;
                char close[20];
                int dl = (int)(d1 - d0);
                snprintf(close, sizeof close, ")%.*s\"", dl, spliced + d0);
                const char *endp = d1 < m ? strstr(spliced + d1, close) : NULL;
                for (size_t k = i; k < (endp ? (size_t)(endp - spliced) : m); k++)
                    if (spliced[k] == '\n')
                        out[o++] = '\n';
                out[o++] = '"';
                out[o++] = '"';
                i = endp ? (size_t)(endp - spliced) + strlen(close) : m;
            }
        } else if (c == '"' || c == '\'') {
            /* Copied as is (a quoted #include name is one), but lexed so a
             * comment marker inside is not taken for one. */
            out[o++] = spliced[i++];
            while (i < m && spliced[i] != c && spliced[i] != '\n') {
                if (spliced[i] == '\\' && i + 1 < m && spliced[i + 1] != '\n')
                    out[o++] = spliced[i++];
                out[o++] = spliced[i++];
            }
            if (i < m && spliced[i] == c)
                out[o++] = spliced[i++];
        } else {
            out[o++] = c;
            i++;
        }
    }
    out[o] = '\0';
    free(spliced);
    return out;
}

/* The directive at `s` (after the '#' or "%:") if it is one of the
 * #include family: its word's length, else 0. */
static size_t include_word(const char *s)
{
    size_t word = 0;
    while (isalnum((unsigned char)s[word]) || s[word] == '_')
        word++;
    if ((word == 7 && strncmp(s, "include", 7) == 0) ||
        (word == 12 && strncmp(s, "include_next", 12) == 0) ||
        (word == 6 && strncmp(s, "import", 6) == 0) || (word == 5 && strncmp(s, "embed", 5) == 0))
        return word;
    return 0;
}

/* Parse the directive on one line (NUL-terminated, comments gone) into
 * *inc; 0 when the line is no directive of the #include family. */
static int parse_line(char *s, int line, avo_include *inc)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\f' || *s == '\v')
        s++;
    if (*s == '#')
        s++;
    else if (s[0] == '%' && s[1] == ':') /* the digraph of # */
        s += 2;
    else
        return 0;
    while (*s == ' ' || *s == '\t')
        s++;
    size_t word = include_word(s);
    if (!word)
        return 0;
    *inc = (avo_include){.line = line, .directive = s, .directive_len = word};
    s += word;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s != '<' && *s != '"')
        return 1; /* computed: delim 0 */
    inc->delim = *s;
    inc->name = s + 1;
    const char *close = strchr(s + 1, *s == '<' ? '>' : '"');
    inc->closed = close != NULL;
    inc->name_len = close ? (size_t)(close - inc->name) : strlen(inc->name);
    return 1;
}

/* Call `rule` for the directive on each line of `text` (modified: lines
 * are cut at their newlines), until one returns non-zero. */
static int scan_lines(char *text, avo_include_rule rule, void *ctx, char *err, size_t errlen)
{
    int rc = 0, line = 0;
    for (char *p = text; p && *p && rc == 0;) {
        line++;
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        avo_include inc;
        if (parse_line(p, line, &inc))
            rc = rule(&inc, ctx, err, errlen);
        p = nl ? nl + 1 : NULL;
    }
    return rc;
}

int avo_includes_scan(const char *source, const char *what, int flags, avo_include_rule rule,
                      void *ctx, char *err, size_t errlen)
{
    char *text = strip_source(source);
    if (!text)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    int rc = 0;
    if ((flags & AVO_INCLUDES_REFUSE_HAS_INCLUDE) && strstr(text, "__has_include"))
        rc = avo_error(err, errlen, AVO_EINVAL,
                       "%s uses __has_include, which could probe host files; refused", what);
    if (rc == 0)
        rc = scan_lines(text, rule, ctx, err, errlen);
    free(text);
    if (rc == 0 && (flags & AVO_INCLUDES_RAW_LINES)) {
        char *raw = strdup(source);
        if (!raw)
            return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        rc = scan_lines(raw, rule, ctx, err, errlen);
        free(raw);
    }
    return rc;
}

int avo_include_name_escapes(const char *name, size_t len)
{
    if (len > 0 && name[0] == '/')
        return 1;
    for (size_t i = 0; i + 1 < len; i++)
        if (name[i] == '.' && name[i + 1] == '.' && (i == 0 || name[i - 1] == '/') &&
            (i + 2 == len || name[i + 2] == '/'))
            return 1;
    return 0;
}
