/*
 * merge.c — three-way merge of kernel sources through libgit2's
 * git_merge_file (the same xdiff merge `git merge-file` uses).
 *
 * libgit2 is initialised once per process on first use and never shut down.
 * Conflict markers are labelled "ours" / "theirs" (and "base" for diff3
 * style), so the text a conflict leaves is stable across runs.
 */
#include "core/merge.h"

#include "core/avo.h"

#include <git2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t merge_once = PTHREAD_ONCE_INIT;
static int merge_init_rc;

static void merge_init(void)
{
    merge_init_rc = git_libgit2_init();
}

/*
 * Translate a failed libgit2 call into an AVO_E* code and one line in err.
 * Out-of-memory maps to AVO_ENOMEM; everything else to AVO_EIO.
 */
static int merge_git_error(int git_rc, const char *what, char *err, size_t errlen)
{
    const git_error *e = git_error_last();
    int code = (e && e->klass == GIT_ERROR_NOMEMORY) ? AVO_ENOMEM : AVO_EIO;
    if (e && e->message)
        return avo_error(err, errlen, code, "%s: %s", what, e->message);
    return avo_error(err, errlen, code, "%s: libgit2 error %d", what, git_rc);
}

/* Point a merge input at a NUL-terminated text.  The init function (not the
 * INIT macro, which trips -Wmissing-field-initializers) sets the version. */
static void merge_input(git_merge_file_input *in, const char *text, const char *path)
{
    git_merge_file_input_init(in, GIT_MERGE_FILE_INPUT_VERSION);
    in->ptr = text;
    in->size = strlen(text);
    in->path = path;
    in->mode = 0100644;
}

/* Number of lines of text[0..len) that open a conflict ("<<<<<<< "). */
static int merge_count_conflicts(const char *text, size_t len)
{
    static const char marker[] = "<<<<<<< ";
    const size_t marker_len = sizeof(marker) - 1;
    int count = 0;
    size_t i = 0;
    while (i < len) {
        if (len - i >= marker_len && memcmp(text + i, marker, marker_len) == 0)
            count++;
        const char *nl = memchr(text + i, '\n', len - i);
        if (!nl)
            break;
        i = (size_t)(nl - text) + 1;
    }
    return count;
}

/*
 * See merge.h.  Before: base, ours, theirs are NUL-terminated (none NULL).
 * After: on success *ret_merged is a malloc'd copy of libgit2's result, owned
 * by the caller, and the return is the conflict-hunk count (at least 1 when
 * libgit2 reports the result not automergeable).  On failure *ret_merged is
 * NULL and err holds the reason.
 */
int avo_merge3(const char *base, const char *ours, const char *theirs, char **ret_merged, char *err,
               size_t errlen)
{
    if (!ret_merged)
        return avo_error(err, errlen, AVO_EINVAL, "merge: no result pointer");
    *ret_merged = NULL;
    if (!base || !ours || !theirs)
        return avo_error(err, errlen, AVO_EINVAL, "merge: NULL input text");

    pthread_once(&merge_once, merge_init);
    if (merge_init_rc < 0)
        return merge_git_error(merge_init_rc, "merge: libgit2 init", err, errlen);

    git_merge_file_input in_base, in_ours, in_theirs;
    merge_input(&in_base, base, "kernel");
    merge_input(&in_ours, ours, "kernel");
    merge_input(&in_theirs, theirs, "kernel");

    git_merge_file_options opts;
    git_merge_file_options_init(&opts, GIT_MERGE_FILE_OPTIONS_VERSION);
    opts.ancestor_label = "base";
    opts.our_label = "ours";
    opts.their_label = "theirs";
    opts.favor = GIT_MERGE_FILE_FAVOR_NORMAL;
    opts.flags = GIT_MERGE_FILE_DEFAULT;

    git_merge_file_result result;
    memset(&result, 0, sizeof(result));
    int git_rc = git_merge_file(&result, &in_base, &in_ours, &in_theirs, &opts);
    if (git_rc < 0)
        return merge_git_error(git_rc, "merge", err, errlen);

    int conflicts = 0;
    if (!result.automergeable) {
        conflicts = merge_count_conflicts(result.ptr, result.len);
        if (conflicts < 1)
            conflicts = 1;
    }

    char *merged = malloc(result.len + 1);
    if (!merged) {
        git_merge_file_result_free(&result);
        return avo_error(err, errlen, AVO_ENOMEM, "merge: out of memory");
    }
    if (result.len)
        memcpy(merged, result.ptr, result.len);
    merged[result.len] = '\0';
    git_merge_file_result_free(&result);

    *ret_merged = merged;
    return conflicts;
}
