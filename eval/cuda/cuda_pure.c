/*
 * cuda_pure.c — the GPU-free rules of the CUDA backend (see cuda_pure.h): launch
 * specs and device limits, argument packing, and the #include gate.  No I/O,
 * no globals.  Element types live in dtype.c.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avo.h"
#include "cuda_pure.h"

/* ----------------------------------------------------------------- launch */

void avo_cuda_limits_for_arch(int cc, avo_cuda_limits *ret)
{
    *ret = (avo_cuda_limits){
        .max_threads_per_block = 1024,
        .max_block = {1024, 1024, 64},
        .max_grid = {2147483647L, 65535, 65535},
        .max_shared_default = 48 * 1024,
    };
    /* Opt-in shared memory per block, CUDA C Programming Guide, compute
     * capabilities table. */
    if (cc >= 100)
        ret->max_shared_optin = 227 * 1024;
    else if (cc >= 90)
        ret->max_shared_optin = 227 * 1024;
    else if (cc == 80 || cc == 87)
        ret->max_shared_optin = 163 * 1024;
    else if (cc >= 86)
        ret->max_shared_optin = 99 * 1024;
    else if (cc >= 75)
        ret->max_shared_optin = 64 * 1024;
    else
        ret->max_shared_optin = 96 * 1024;
}

/* A positive integer (or >= 0 when `zero_ok`) from a JSON number. */
static int count_value(const json_t *v, int zero_ok, long long max, unsigned *ret)
{
    double d;
    if (json_is_integer(v))
        d = (double)json_integer_value(v);
    else if (json_is_real(v))
        d = json_real_value(v);
    else
        return -1;
    if (d != floor(d) || d < (zero_ok ? 0 : 1) || d > (double)max)
        return -1;
    *ret = (unsigned)d;
    return 0;
}

static int parse_dims(const json_t *v, const char *field, unsigned dims[3], char *err,
                      size_t errlen)
{
    dims[0] = dims[1] = dims[2] = 1;
    if (json_is_number(v)) {
        if (count_value(v, 0, 0xffffffffLL, &dims[0]) < 0)
            return avo_error(err, errlen, AVO_EINVAL,
                             "launch %s must be a positive integer, got %g", field,
                             json_number_value(v));
        return 0;
    }
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > 3)
        return avo_error(err, errlen, AVO_EINVAL,
                         "launch %s must be a positive integer or a list of 1 to 3 of them",
                         field);
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *e = json_array_get(v, i);
        if (count_value(e, 0, 0xffffffffLL, &dims[i]) < 0) {
            if (json_is_number(e))
                return avo_error(err, errlen, AVO_EINVAL,
                                 "launch %s[%zu] must be a positive integer, got %g", field, i + 1,
                                 json_number_value(e));
            return avo_error(err, errlen, AVO_EINVAL, "launch %s[%zu] must be a positive integer",
                             field, i + 1);
        }
    }
    return 0;
}

int avo_cuda_launch_parse(const json_t *spec, avo_cuda_launch *ret, char *err, size_t errlen)
{
    memset(ret, 0, sizeof *ret);
    if (!json_is_object(spec))
        return avo_error(err, errlen, AVO_EINVAL, "launch spec must be an object");
    int rc = parse_dims(json_object_get(spec, "grid"), "grid", ret->grid, err, errlen);
    if (rc == 0)
        rc = parse_dims(json_object_get(spec, "block"), "block", ret->block, err, errlen);
    if (rc < 0)
        return rc;
    const json_t *smem = json_object_get(spec, "shared_bytes");
    if (smem && !json_is_null(smem) && count_value(smem, 1, 0x7fffffffLL, &ret->shared_bytes) < 0)
        return avo_error(err, errlen, AVO_EINVAL,
                         "launch shared_bytes must be an integer >= 0, got %g",
                         json_number_value(smem));
    return 0;
}

int avo_cuda_launch_check(const avo_cuda_launch *l, long static_shared,
                          const avo_cuda_limits *lim, int *ret_needs_optin, char *err,
                          size_t errlen)
{
    static const char axis[] = "xyz";
    *ret_needs_optin = 0;
    for (int i = 0; i < 3; i++) {
        if (l->block[i] < 1 || (long)l->block[i] > lim->max_block[i])
            return avo_error(err, errlen, AVO_EINVAL,
                             "block.%c = %u is larger than the device allows (%d)", axis[i],
                             l->block[i], lim->max_block[i]);
        if (l->grid[i] < 1 || (long)l->grid[i] > lim->max_grid[i])
            return avo_error(err, errlen, AVO_EINVAL,
                             "grid.%c = %u is outside what the device allows (1..%ld)", axis[i],
                             l->grid[i], lim->max_grid[i]);
    }
    unsigned long long threads = (unsigned long long)l->block[0] * l->block[1] * l->block[2];
    if (threads > (unsigned long long)lim->max_threads_per_block)
        return avo_error(err, errlen, AVO_EINVAL,
                         "block of %ux%ux%u = %llu threads is larger than the device allows (%d)",
                         l->block[0], l->block[1], l->block[2], threads,
                         lim->max_threads_per_block);
    long total = static_shared + (long)l->shared_bytes;
    if (total > lim->max_shared_optin)
        return avo_error(err, errlen, AVO_EINVAL,
                         "too much shared memory: %ld bytes static + %u dynamic = %ld > %ld "
                         "bytes per block",
                         static_shared, l->shared_bytes, total, lim->max_shared_optin);
    *ret_needs_optin = total > lim->max_shared_default;
    return 0;
}

/* -------------------------------------------------------------- arguments */

avo_cuda_arg avo_cuda_arg_make(const avo_arg_spec *spec, const avo_scalar *scalar, uint64_t ptr)
{
    avo_cuda_arg arg = {.name = spec->name, .type = spec->type};
    if (spec->kind != AVO_ARG_SCALAR) {
        arg.is_pointer = 1;
        arg.v.ptr = ptr;
        return arg;
    }
    switch (spec->type) {
    case AVO_DT_F32:
        arg.v.f32 = scalar->f32;
        break;
    case AVO_DT_F64:
        arg.v.f64 = scalar->f64;
        break;
    case AVO_DT_I32:
        arg.v.i32 = scalar->i32;
        break;
    case AVO_DT_I64:
        arg.v.i64 = scalar->i64;
        break;
    default:
        arg.v.bits16 = scalar->bits16;
    }
    return arg;
}

int avo_cuda_pack_args(const avo_cuda_arg *args, size_t nargs, const avo_cubin_kernel *kernel,
                       unsigned char *buf, size_t buflen, void **ret_params, char *err,
                       size_t errlen)
{
    if (kernel && kernel->nparams >= 0 && (size_t)kernel->nparams != nargs)
        return avo_error(err, errlen, AVO_EINVAL,
                         "kernel %s takes %d parameter%s, the evaluator gives %zu", kernel->name,
                         kernel->nparams, kernel->nparams == 1 ? "" : "s", nargs);
    size_t at = 0;
    for (size_t i = 0; i < nargs; i++) {
        const avo_cuda_arg *a = &args[i];
        size_t size = a->is_pointer ? sizeof(uint64_t) : avo_dtype_size(a->type);
        if (kernel && kernel->nparams >= 0 && kernel->params[i].size != size)
            return avo_error(err, errlen, AVO_EINVAL,
                             "parameter %zu of kernel %s is %u bytes, but argument '%s' is %s "
                             "(%zu bytes)",
                             i + 1, kernel->name, kernel->params[i].size, a->name ? a->name : "?",
                             a->is_pointer ? "a pointer" : avo_dtype_name(a->type), size);
        at = (at + size - 1) / size * size;
        if (at + size > buflen)
            return avo_error(err, errlen, AVO_EINVAL, "kernel arguments exceed %zu bytes", buflen);
        const void *src = a->is_pointer           ? (const void *)&a->v.ptr
                          : a->type == AVO_DT_F32 ? (const void *)&a->v.f32
                          : a->type == AVO_DT_F64 ? (const void *)&a->v.f64
                          : a->type == AVO_DT_I32 ? (const void *)&a->v.i32
                          : a->type == AVO_DT_I64 ? (const void *)&a->v.i64
                                                  : (const void *)&a->v.bits16;
        memcpy(buf + at, src, size);
        ret_params[i] = buf + at;
        at += size;
    }
    return (int)at;
}

/* --------------------------------------------------------------- includes */

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

int avo_cuda_check_includes(const char *source, const char *what, const char *const *allowed,
                            size_t nallowed, int *ret_used, char *err, size_t errlen)
{
    char *text = strip_source(source);
    if (!text)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    int rc = 0, line = 0;
    if (strstr(text, "__has_include")) {
        rc = avo_error(err, errlen, AVO_EINVAL,
                       "%s uses __has_include, which could probe host files; refused", what);
        goto out;
    }
    for (char *p = text; p && *p && rc == 0;) {
        line++;
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        char *s = p;
        p = nl ? nl + 1 : NULL;
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\f' || *s == '\v')
            s++;
        if (*s != '#')
            continue;
        s++;
        while (*s == ' ' || *s == '\t')
            s++;
        size_t word = 0;
        while (isalnum((unsigned char)s[word]) || s[word] == '_')
            word++;
        if (!((word == 7 && strncmp(s, "include", 7) == 0) ||
              (word == 12 && strncmp(s, "include_next", 12) == 0) ||
              (word == 6 && strncmp(s, "import", 6) == 0) ||
              (word == 5 && strncmp(s, "embed", 5) == 0)))
            continue;
        if (word != 7) {
            rc = avo_error(err, errlen, AVO_EINVAL, "%s line %d: #%.*s is not allowed", what, line,
                           (int)word, s);
            break;
        }
        s += word;
        while (*s == ' ' || *s == '\t')
            s++;
        char name[512];
        if (*s == '<') {
            char *close = strchr(s + 1, '>');
            if (!close || close - s - 1 >= (long)sizeof name) {
                rc = avo_error(err, errlen, AVO_EINVAL, "%s line %d: malformed #include", what,
                               line);
                break;
            }
            snprintf(name, sizeof name, "%.*s", (int)(close - s - 1), s + 1);
        } else if (*s == '"') {
            char *close = strchr(s + 1, '"');
            if (!close || close - s - 1 >= (long)sizeof name) {
                rc = avo_error(err, errlen, AVO_EINVAL, "%s line %d: malformed #include", what,
                               line);
                break;
            }
            snprintf(name, sizeof name, "%.*s", (int)(close - s - 1), s + 1);
        } else {
            rc = avo_error(err, errlen, AVO_EINVAL,
                           "%s line %d: computed #include is not allowed; name a header the "
                           "evaluator provides in quotes or <>",
                           what, line);
            break;
        }
        size_t k = 0;
        while (k < nallowed && strcmp(allowed[k], name) != 0)
            k++;
        if (k == nallowed) {
            char list[400] = "";
            size_t at = 0;
            for (size_t j = 0; j < nallowed && at < sizeof list - 64; j++)
                at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", j ? ", " : "",
                                       allowed[j]);
            rc = avo_error(err, errlen, AVO_EINVAL,
                           "%s line %d: #include <%s> is not a header the evaluator provides "
                           "(allowed: %s); host files are never read",
                           what, line, name, nallowed ? list : "none");
            break;
        }
        if (ret_used)
            ret_used[k] = 1;
    }
out:
    free(text);
    return rc;
}

int avo_cuda_arch_cc(const char *arch)
{
    const char *p = arch;
    if (!p)
        return -1;
    if (strncmp(p, "sm_", 3) == 0)
        p += 3;
    else if (strncmp(p, "compute_", 8) == 0)
        p += 8;
    else
        return -1;
    if (!isdigit((unsigned char)*p))
        return -1;
    char *end;
    long cc = strtol(p, &end, 10);
    if ((*end && strcmp(end, "a") != 0 && strcmp(end, "f") != 0) || cc < 30 || cc > 1000)
        return -1;
    return (int)cc;
}
