/*
 * hash.h — content addresses.
 *
 * A source's address is its git blob id (SHA-1 of "blob <len>\0<bytes>",
 * computed by libgit2), so the sources in the archive and the objects of a git
 * export of the lineage share names.  Compound keys (compile cache, dedupe)
 * hash a canonical concatenation of their parts.
 */
#ifndef AVO_HASH_H
#define AVO_HASH_H

#include <stddef.h>

#define AVO_HASH_HEXLEN 40

/* Write the 40-hex git blob id of data[0..len) and a NUL into out.
 * Returns 0 or a negative AVO_E* code. */
int avo_hash_hex(const void *data, size_t len, char out[AVO_HASH_HEXLEN + 1]);

/* Hash of the NUL-separated concatenation of `n` strings (NULL counts as ""). */
int avo_hash_parts(const char *const *parts, size_t n, char out[AVO_HASH_HEXLEN + 1]);

#endif
