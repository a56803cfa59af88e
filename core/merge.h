/*
 * merge.h — three-way merge of kernel sources (libgit2's merge_file).
 */
#ifndef AVO_MERGE_H
#define AVO_MERGE_H

#include <stddef.h>

/*
 * Merge `ours` and `theirs` against their common ancestor `base`.
 * On success returns the number of conflicted hunks (0 = clean merge) and sets
 * *ret_merged to a malloc'd NUL-terminated text owned by the caller; when
 * conflicted the text carries git's conflict markers.  Returns a negative
 * AVO_E* code and fills err on failure (*ret_merged is then NULL).
 */
int avo_merge3(const char *base, const char *ours, const char *theirs, char **ret_merged,
               char *err, size_t errlen);

#endif
