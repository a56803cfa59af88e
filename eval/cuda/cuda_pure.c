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

#include "core/avo.h"
#include "eval/cuda/cuda_pure.h"
#include "eval/includes.h"

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

/* The CUDA rule: a quoted or bracketed name the evaluator provides, nothing
 * else of the #include family. */
typedef struct allowed_list {
    const char *what;
    const char *const *names;
    size_t n;
    int *used;
} allowed_list;

static int include_allowed(const avo_include *inc, void *ctx, char *err, size_t errlen)
{
    const allowed_list *a = ctx;
    if (inc->directive_len != 7)
        return avo_error(err, errlen, AVO_EINVAL, "%s line %d: #%.*s is not allowed", a->what,
                         inc->line, (int)inc->directive_len, inc->directive);
    if (!inc->delim)
        return avo_error(err, errlen, AVO_EINVAL,
                         "%s line %d: computed #include is not allowed; name a header the "
                         "evaluator provides in quotes or <>",
                         a->what, inc->line);
    char name[512];
    if (!inc->closed || inc->name_len >= sizeof name)
        return avo_error(err, errlen, AVO_EINVAL, "%s line %d: malformed #include", a->what,
                         inc->line);
    snprintf(name, sizeof name, "%.*s", (int)inc->name_len, inc->name);
    size_t k = 0;
    while (k < a->n && strcmp(a->names[k], name) != 0)
        k++;
    if (k == a->n) {
        char list[400] = "";
        size_t at = 0;
        for (size_t j = 0; j < a->n && at < sizeof list - 64; j++)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", j ? ", " : "",
                                   a->names[j]);
        return avo_error(err, errlen, AVO_EINVAL,
                         "%s line %d: #include <%s> is not a header the evaluator provides "
                         "(allowed: %s); host files are never read",
                         a->what, inc->line, name, a->n ? list : "none");
    }
    if (a->used)
        a->used[k] = 1;
    return 0;
}

int avo_cuda_check_includes(const char *source, const char *what, const char *const *allowed,
                            size_t nallowed, int *ret_used, char *err, size_t errlen)
{
    allowed_list a = {what, allowed, nallowed, ret_used};
    return avo_includes_scan(source, what, AVO_INCLUDES_REFUSE_HAS_INCLUDE, include_allowed, &a,
                             err, errlen);
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
