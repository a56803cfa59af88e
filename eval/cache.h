/*
 * cache.h — the compile cache, one for every backend: where it lives, and
 * content-addressed entries that are checked on every read and trimmed by
 * least recent use.
 *
 * Invariant: <dir>/<key><suffix> exists only complete (written to a
 * temporary name, then renamed), next to <key><suffix>.sum holding the git
 * blob id of its bytes (hash.h); an entry whose bytes do not hash to that
 * id is deleted on read, so the caller rebuilds it.  Only a worker writes
 * the cache; the candidate never sees it (docs/threat-model.md).  The key
 * is the caller's: a hash of everything that goes into the compiler.
 *
 * The CPU backend keeps shared objects (<key>.so), the CUDA backend its
 * compile child's message with the cubin (<key>.json), each in its own
 * folder, each folder bounded by AVO_CACHE_MAX_MB (default 2048).
 */
#ifndef AVO_CACHE_H
#define AVO_CACHE_H

#include <stddef.h>

#include "core/jobspec.h"

/* avo_cache_dir(), the cache folder rule, lives in core/ (jobspec.h) so a
 * job can be read without the cache; it is included here for the cache's users. */

/*
 * Open the entry at `path` if its bytes hash to the id in path.sum, and
 * mark it recently used.  Returns an O_RDONLY fd (caller closes), or -1 when
 * there is no valid entry: a missing one, or a tampered, truncated or
 * half-removed one, which is deleted and *ret_repaired set to 1.  With
 * ret_data, also the checked bytes (NUL-terminated; caller frees) and their
 * length in *ret_len.  Entries over `max` bytes count as tampered.
 */
int avo_cache_open(const char *path, size_t max, char **ret_data, size_t *ret_len,
                   int *ret_repaired);

/* Put data[0..len) into the cache as `path` (and path.sum), atomically.
 * 0 or a negative errno. */
int avo_cache_insert(const char *path, const void *data, size_t len);

/* Evict the least recently used entries <key><suffix> of `dir` (by mtime,
 * which a hit refreshes) until they take under 90% of AVO_CACHE_MAX_MB. */
void avo_cache_trim(const char *dir, const char *suffix);

#endif
