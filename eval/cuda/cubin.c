/*
 * cubin.c — read kernel resources and parameter layouts out of a cubin (an
 * ELF64 little-endian image; see cubin.h).  Every offset read from the file is
 * bounds-checked against the buffer before use.
 */
#include "eval/cuda/cubin.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"

/* The EIATTR attributes and value formats avo reads. */
enum {
    EIFMT_NVAL = 1,
    EIFMT_BVAL = 2,
    EIFMT_HVAL = 3,
    EIFMT_SVAL = 4,
    EIATTR_FRAME_SIZE = 0x11,
    EIATTR_MIN_STACK_SIZE = 0x12,
    EIATTR_KPARAM_INFO = 0x17,
    EIATTR_MAX_STACK_SIZE = 0x23,
    EIATTR_REGCOUNT = 0x2f,
};

#define SHT_SYMTAB 2
#define SHT_NOBITS 8
#define RESERVED_SHARED_BYTES 1024 /* per block, on cubins with .nv.shared.reserved.* */

typedef struct image {
    const unsigned char *p;
    size_t len;
} image;

static int in_bounds(const image *im, uint64_t off, uint64_t n)
{
    return off <= im->len && n <= im->len - off;
}

static uint16_t rd16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

typedef struct section {
    const char *name; /* into the image's section string table; NUL checked */
    uint32_t type;
    uint64_t offset, size;
    uint32_t link;
} section;

/* A NUL-terminated string at strtab[off], or NULL when it runs off the table. */
static const char *string_at(const image *im, const section *strtab, uint64_t off)
{
    if (!strtab || off >= strtab->size || !in_bounds(im, strtab->offset, strtab->size))
        return NULL;
    const char *s = (const char *)im->p + strtab->offset + off;
    if (!memchr(s, '\0', strtab->size - off))
        return NULL;
    return s;
}

static avo_cubin_kernel *find_kernel(avo_cubin_kernel *k, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(k[i].name, name) == 0)
            return &k[i];
    return NULL;
}

/* Name of symbol `index` of the symbol table, or NULL. */
static const char *symbol_name(const image *im, const section *secs, unsigned nsec,
                               const section *symtab, uint32_t index)
{
    if (!symtab || symtab->link >= nsec)
        return NULL;
    uint64_t off = (uint64_t)index * 24;
    if (off + 24 > symtab->size || !in_bounds(im, symtab->offset + off, 24))
        return NULL;
    return string_at(im, &secs[symtab->link], rd32(im->p + symtab->offset + off));
}

/* Walk the EIATTR entries of one .nv.info section.  `owner` is the kernel a
 * per-kernel section belongs to (NULL for the global .nv.info). */
static int read_info(const image *im, const section *s, const section *secs, unsigned nsec,
                     const section *symtab, avo_cubin_kernel *kernels, int nkernels,
                     avo_cubin_kernel *owner, char *err, size_t errlen)
{
    if (!in_bounds(im, s->offset, s->size))
        return avo_error(err, errlen, AVO_EINVAL, "cubin: section %s runs past the end", s->name);
    const unsigned char *p = im->p + s->offset, *end = p + s->size;
    while (end - p >= 4) {
        unsigned fmt = p[0], attr = p[1];
        size_t payload = fmt == EIFMT_SVAL ? rd16(p + 2) : 0;
        if (fmt < EIFMT_NVAL || fmt > EIFMT_SVAL)
            return avo_error(err, errlen, AVO_EINVAL, "cubin: unknown attribute format %u in %s",
                             fmt, s->name);
        if ((size_t)(end - p - 4) < payload)
            return avo_error(err, errlen, AVO_EINVAL, "cubin: truncated attribute in %s", s->name);
        const unsigned char *v = p + 4;
        if (fmt == EIFMT_SVAL && payload >= 8 &&
            (attr == EIATTR_REGCOUNT || attr == EIATTR_FRAME_SIZE ||
             attr == EIATTR_MIN_STACK_SIZE || attr == EIATTR_MAX_STACK_SIZE)) {
            const char *name = symbol_name(im, secs, nsec, symtab, rd32(v));
            avo_cubin_kernel *k = name ? find_kernel(kernels, nkernels, name) : NULL;
            uint32_t value = rd32(v + 4);
            if (k && attr == EIATTR_REGCOUNT)
                k->registers = (int)value;
            else if (k && attr == EIATTR_FRAME_SIZE)
                k->frame_bytes = value;
            else if (k && attr == EIATTR_MAX_STACK_SIZE)
                k->max_stack_bytes = value;
        } else if (fmt == EIFMT_SVAL && attr == EIATTR_KPARAM_INFO && payload >= 12 && owner) {
            /* {u32 index, u16 ordinal, u16 offset, u32 flags: size in bits 18..31} */
            unsigned ordinal = rd16(v + 4), offset = rd16(v + 6), size = rd32(v + 8) >> 18;
            if (owner->nparams < 0)
                owner->nparams = 0;
            if (ordinal >= AVO_CUBIN_MAX_PARAMS)
                return avo_error(err, errlen, AVO_EINVAL,
                                 "cubin: kernel %s has more than %d parameters", owner->name,
                                 AVO_CUBIN_MAX_PARAMS);
            owner->params[ordinal] = (avo_cubin_param){ordinal, offset, size};
            if ((int)ordinal + 1 > owner->nparams)
                owner->nparams = (int)ordinal + 1;
        }
        p += 4 + payload;
    }
    return 0;
}

int avo_cubin_parse(const void *data, size_t len, avo_cubin_kernel **ret_kernels, char *err,
                    size_t errlen)
{
    image im = {data, len};
    *ret_kernels = NULL;
    if (len < 64 || memcmp(im.p, "\x7f" "ELF", 4) != 0)
        return avo_error(err, errlen, AVO_EINVAL, "cubin: not an ELF image");
    if (im.p[4] != 2 || im.p[5] != 1)
        return avo_error(err, errlen, AVO_EINVAL, "cubin: not a 64-bit little-endian ELF image");
    uint64_t shoff = rd64(im.p + 0x28);
    unsigned shentsize = rd16(im.p + 0x3a), shnum = rd16(im.p + 0x3c), shstrndx = rd16(im.p + 0x3e);
    if (shentsize < 64 || shnum == 0 || shstrndx >= shnum ||
        !in_bounds(&im, shoff, (uint64_t)shentsize * shnum))
        return avo_error(err, errlen, AVO_EINVAL, "cubin: bad section header table");

    section *secs = calloc(shnum, sizeof *secs);
    avo_cubin_kernel *kernels = NULL;
    int nkernels = 0, rc = 0;
    if (!secs)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *h = im.p + shoff + (uint64_t)i * shentsize;
        secs[i].type = rd32(h + 4);
        secs[i].offset = rd64(h + 0x18);
        secs[i].size = rd64(h + 0x20);
        secs[i].link = rd32(h + 0x28);
        if (secs[i].type != SHT_NOBITS && !in_bounds(&im, secs[i].offset, secs[i].size)) {
            rc = avo_error(err, errlen, AVO_EINVAL, "cubin: section %u runs past the end", i);
            goto out;
        }
    }
    const section *shstr = &secs[shstrndx];
    const section *symtab = NULL;
    int has_reserved = 0;
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *h = im.p + shoff + (uint64_t)i * shentsize;
        secs[i].name = string_at(&im, shstr, rd32(h));
        if (!secs[i].name)
            secs[i].name = "";
        if (secs[i].type == SHT_SYMTAB)
            symtab = &secs[i];
        if (strncmp(secs[i].name, ".nv.shared.reserved.", 20) == 0)
            has_reserved = 1;
        if (strncmp(secs[i].name, ".nv.info.", 9) == 0 && secs[i].name[9])
            nkernels++;
    }
    if (nkernels > 0) {
        kernels = calloc((size_t)nkernels, sizeof *kernels);
        if (!kernels) {
            rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
            goto out;
        }
    }
    int k = 0;
    for (unsigned i = 0; i < shnum; i++) {
        if (strncmp(secs[i].name, ".nv.info.", 9) != 0 || !secs[i].name[9])
            continue;
        avo_cubin_kernel *kern = &kernels[k++];
        if (strlen(secs[i].name + 9) >= sizeof kern->name) {
            rc = avo_error(err, errlen, AVO_EINVAL, "cubin: kernel name too long");
            goto out;
        }
        strcpy(kern->name, secs[i].name + 9);
        kern->registers = -1;
        kern->frame_bytes = kern->max_stack_bytes = -1;
        kern->spill_store_bytes = kern->spill_load_bytes = -1;
        kern->nparams = -1;
    }
    for (unsigned i = 0; i < shnum; i++) {
        const char *name = secs[i].name;
        if (strcmp(name, ".nv.info") == 0) {
            rc = read_info(&im, &secs[i], secs, shnum, symtab, kernels, nkernels, NULL, err, errlen);
        } else if (strncmp(name, ".nv.info.", 9) == 0 && name[9]) {
            avo_cubin_kernel *owner = find_kernel(kernels, nkernels, name + 9);
            rc = read_info(&im, &secs[i], secs, shnum, symtab, kernels, nkernels, owner, err,
                           errlen);
        } else if (strncmp(name, ".nv.shared.", 11) == 0) {
            avo_cubin_kernel *owner = find_kernel(kernels, nkernels, name + 11);
            if (owner)
                owner->shared_section_bytes = (long)secs[i].size;
        }
        if (rc < 0)
            goto out;
    }
    for (int i = 0; i < nkernels; i++) {
        long s = kernels[i].shared_section_bytes - (has_reserved ? RESERVED_SHARED_BYTES : 0);
        kernels[i].static_shared_bytes = s > 0 ? s : 0;
        if (kernels[i].nparams < 0)
            kernels[i].nparams = 0; /* no KPARAM_INFO: a kernel without parameters */
    }
    *ret_kernels = kernels;
    kernels = NULL;
    rc = nkernels;
out:
    free(kernels);
    free(secs);
    return rc;
}

/* Copy the next quoted or bare name after `prefix` in `line` into buf. */
static int name_after(const char *line, const char *prefix, char *buf, size_t len)
{
    const char *p = strstr(line, prefix);
    if (!p)
        return 0;
    p += strlen(prefix);
    int quoted = *p == '\'';
    if (quoted)
        p++;
    size_t n = strcspn(p, quoted ? "'\n" : " \n");
    if (n == 0 || n >= len)
        return 0;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 1;
}

/* The decimal number that ends right before " <marker>" in line; -1 if none. */
static long number_before(const char *line, const char *marker)
{
    const char *at = strstr(line, marker);
    if (!at || at == line || at[-1] != ' ')
        return -1;
    const char *end = at - 1, *start = end;
    while (start > line && start[-1] >= '0' && start[-1] <= '9')
        start--;
    if (start == end)
        return -1;
    return strtol(start, NULL, 10);
}

void avo_cubin_merge_ptxas_log(avo_cubin_kernel *kernels, int n, const char *log)
{
    char entry[AVO_CUBIN_NAME_MAX] = "", props[AVO_CUBIN_NAME_MAX] = "";
    for (const char *line = log; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        line = nl ? nl + 1 : line + len;
        if (name_after(buf, "Compiling entry function ", entry, sizeof entry))
            continue;
        if (name_after(buf, "Function properties for ", props, sizeof props))
            continue;
        avo_cubin_kernel *k;
        long stores = number_before(buf, "bytes spill stores");
        if (stores >= 0 && props[0] && (k = find_kernel(kernels, n, props))) {
            k->spill_store_bytes = stores;
            k->spill_load_bytes = number_before(buf, "bytes spill loads");
            continue;
        }
        if (strstr(buf, "Used ") && strstr(buf, " registers") && entry[0] &&
            (k = find_kernel(kernels, n, entry))) {
            long smem = number_before(buf, "bytes smem");
            k->static_shared_bytes = smem > 0 ? smem : 0;
        }
    }
}
