/* emu_common.c — see emu_common.h. */
#include "emu_common.h"

#include <dirent.h>
#include <elf.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int avo_emu_dir(char *buf, size_t len)
{
    const char *dir = getenv("AVO_EMU_DIR");
    if (dir && *dir) {
        snprintf(buf, len, "%s", dir);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(buf, len, "%s/avo-emu-%u", tmp && *tmp ? tmp : "/tmp", (unsigned)getuid());
    }
    if (mkdir(buf, 0700) < 0) {
        struct stat st;
        if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode))
            return -1;
    }
    return 0;
}

static const Elf64_Ehdr *elf_header(const void *image)
{
    const Elf64_Ehdr *h = image;
    if (!image || memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 || h->e_ident[EI_CLASS] != ELFCLASS64)
        return NULL;
    return h;
}

size_t avo_emu_elf_size(const void *image)
{
    const Elf64_Ehdr *h = elf_header(image);
    if (!h)
        return 0;
    size_t end = sizeof *h;
    size_t ph = h->e_phoff + (size_t)h->e_phnum * h->e_phentsize;
    size_t sh = h->e_shoff + (size_t)h->e_shnum * h->e_shentsize;
    end = ph > end ? ph : end;
    end = sh > end ? sh : end;
    const Elf64_Shdr *s = (const Elf64_Shdr *)((const char *)image + h->e_shoff);
    for (unsigned i = 0; i < h->e_shnum; i++)
        if (s[i].sh_type != SHT_NOBITS && s[i].sh_offset + s[i].sh_size > end)
            end = s[i].sh_offset + s[i].sh_size;
    return end;
}

int avo_emu_module_path(const void *cubin, size_t len, char *buf, size_t buflen)
{
    char dir[900], hex[GIT_OID_HEXSZ + 1];
    git_oid id;
    git_libgit2_init();
    int rc = git_odb_hash(&id, cubin, len, GIT_OBJECT_BLOB);
    git_libgit2_shutdown();
    if (rc < 0 || avo_emu_dir(dir, sizeof dir) < 0)
        return -1;
    git_oid_tostr(hex, sizeof hex, &id);
    snprintf(buf, buflen, "%s/%s.so", dir, hex);
    return 0;
}

int avo_emu_module_current(const char *path, const char *include_dir)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return 0;
    DIR *d = opendir(include_dir);
    if (!d)
        return 0;
    int current = 1;
    struct dirent *e;
    while (current && (e = readdir(d))) {
        char header[1200];
        struct stat hs;
        snprintf(header, sizeof header, "%s/%s", include_dir, e->d_name);
        if (e->d_name[0] != '.' && stat(header, &hs) == 0 &&
            (hs.st_mtim.tv_sec > st.st_mtim.tv_sec ||
             (hs.st_mtim.tv_sec == st.st_mtim.tv_sec && hs.st_mtim.tv_nsec >= st.st_mtim.tv_nsec)))
            current = 0;
    }
    closedir(d);
    return current;
}
