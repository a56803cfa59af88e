/*
 * cache.c — the compile cache shared by the backends (see cache.h).
 */
#include "eval/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/avo.h"
#include "core/hash.h"

#define CACHE_MAX_MB 2048 /* default bound of each cache folder (AVO_CACHE_MAX_MB) */
#define SUM_SUFFIX ".sum"

int avo_cache_open(const char *path, size_t max, char **ret_data, size_t *ret_len,
                   int *ret_repaired)
{
    if (ret_data)
        *ret_data = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    char sum_path[PATH_MAX + 8], expect[AVO_HASH_HEXLEN + 2] = "", got[AVO_HASH_HEXLEN + 1];
    snprintf(sum_path, sizeof sum_path, "%s" SUM_SUFFIX, path);
    int sfd = open(sum_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = sfd >= 0 ? read(sfd, expect, AVO_HASH_HEXLEN) : -1;
    if (sfd >= 0)
        close(sfd);
    size_t len = 0;
    char *data = avo_read_fd(fd, max, &len);
    int ok = n == AVO_HASH_HEXLEN && data && avo_hash_hex(data, len, got) == 0 &&
             memcmp(got, expect, AVO_HASH_HEXLEN) == 0;
    if (!ok) {
        free(data);
        close(fd);
        unlink(path);
        unlink(sum_path);
        *ret_repaired = 1;
        return -1;
    }
    utimensat(AT_FDCWD, path, NULL, 0); /* recently used */
    if (ret_data) {
        *ret_data = data;
        *ret_len = len;
    } else {
        free(data);
    }
    return fd;
}

int avo_cache_insert(const char *path, const void *data, size_t len)
{
    char hex[AVO_HASH_HEXLEN + 1], tmp[PATH_MAX + 32], sum_path[PATH_MAX + 8];
    if (avo_hash_hex(data, len, hex) < 0)
        return -EIO;
    snprintf(sum_path, sizeof sum_path, "%s" SUM_SUFFIX, path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    /* The sum first: an entry never stands without the sum that checks it. */
    int rc = avo_write_file(tmp, hex, AVO_HASH_HEXLEN, 0644);
    if (rc == 0 && rename(tmp, sum_path) < 0)
        rc = -errno;
    if (rc == 0)
        rc = avo_write_file(tmp, data, len, 0644);
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0)
        unlink(tmp);
    return rc;
}

/* One entry of a folder, as the trim sees it. */
typedef struct cache_entry {
    char name[256];
    time_t mtime;
    off_t size;
} cache_entry;

/* The entries named *<suffix> of the open folder `d` into a new array
 * (caller frees), their count in *ret_n and bytes in *ret_total. */
static cache_entry *list_entries(DIR *d, const char *suffix, size_t *ret_n, double *ret_total)
{
    cache_entry *list = NULL;
    size_t n = 0, cap = 0, slen = strlen(suffix);
    double total = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len <= slen || strcmp(de->d_name + len - slen, suffix) != 0 || len >= 256)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            cache_entry *grown = realloc(list, cap * sizeof *list);
            if (!grown)
                break;
            list = grown;
        }
        snprintf(list[n].name, sizeof list[n].name, "%s", de->d_name);
        list[n].mtime = st.st_mtime;
        list[n].size = st.st_size;
        total += (double)st.st_size;
        n++;
    }
    *ret_n = n;
    *ret_total = total;
    return list;
}

void avo_cache_trim(const char *dir, const char *suffix)
{
    const char *env = getenv("AVO_CACHE_MAX_MB");
    double max_mb = env && *env ? strtod(env, NULL) : CACHE_MAX_MB;
    if (!(max_mb > 0))
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t n = 0;
    double total = 0;
    cache_entry *list = list_entries(d, suffix, &n, &total);
    double limit = max_mb * 1024 * 1024;
    while (total > limit * 0.9 && n > 0) {
        size_t oldest = 0;
        for (size_t i = 1; i < n; i++)
            if (list[i].mtime < list[oldest].mtime)
                oldest = i;
        char sum[300];
        snprintf(sum, sizeof sum, "%s" SUM_SUFFIX, list[oldest].name);
        unlinkat(dirfd(d), list[oldest].name, 0);
        unlinkat(dirfd(d), sum, 0);
        total -= (double)list[oldest].size;
        list[oldest] = list[--n];
    }
    free(list);
    closedir(d);
}
