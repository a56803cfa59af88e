/*
 * hash.c — content addresses as git blob ids, computed by libgit2.
 *
 * libgit2 is initialised once per process on first use (its init is
 * refcounted; we take one reference and never drop it).  No state is kept
 * between calls, so the functions are safe to call from any thread.
 */
#include "core/hash.h"

#include "core/avo.h"

#include <git2.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t hash_once = PTHREAD_ONCE_INIT;
static int hash_init_rc;

static void hash_init(void)
{
    hash_init_rc = git_libgit2_init();
}

/*
 * Blob id of data[0..len) as 40 lowercase hex digits and a NUL in out.
 * data may be NULL only when len is 0.  Returns 0, AVO_EINVAL, or AVO_EIO
 * when libgit2 cannot start or hash.
 */
int avo_hash_hex(const void *data, size_t len, char out[AVO_HASH_HEXLEN + 1])
{
    if (!out || (!data && len))
        return AVO_EINVAL;
    pthread_once(&hash_once, hash_init);
    if (hash_init_rc < 0)
        return AVO_EIO;

    git_oid oid;
    if (git_odb_hash(&oid, data ? data : "", len, GIT_OBJECT_BLOB) < 0)
        return AVO_EIO;
    git_oid_tostr(out, AVO_HASH_HEXLEN + 1, &oid);
    return 0;
}

/*
 * Hash "p0\0p1\0...p(n-1)\0": each part followed by a NUL, so ("ab","c") and
 * ("a","bc") differ.  The buffer is built here and freed before returning.
 */
int avo_hash_parts(const char *const *parts, size_t n, char out[AVO_HASH_HEXLEN + 1])
{
    if (!out || (!parts && n))
        return AVO_EINVAL;

    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t part_len = parts[i] ? strlen(parts[i]) : 0;
        if (total > SIZE_MAX - part_len - 1)
            return AVO_EINVAL;
        total += part_len + 1;
    }

    char *buf = malloc(total ? total : 1);
    if (!buf)
        return AVO_ENOMEM;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t part_len = parts[i] ? strlen(parts[i]) : 0;
        if (part_len)
            memcpy(buf + at, parts[i], part_len);
        at += part_len;
        buf[at++] = '\0';
    }

    int rc = avo_hash_hex(buf, total, out);
    free(buf);
    return rc;
}
