/*
 * archive_impl.h — what the archive's own files share (not a public
 * header: callers include archive.h).
 *
 * The archive is written in layers, one file each, all on the SQL layer of
 * db.h:
 *   schema.c      the schema steps, opening (writable, read-only, a private
 *                 copy of a WAL that cannot be read in place), closing, and
 *                 the helpers below;
 *   base.c        the base reads the layers above call (run lookup, a run's
 *                 row, its baselines); it calls none of them;
 *   runs.c        run rows, run ownership (the run lock), summaries, events;
 *   candidates.c  sources, candidates and their evaluations, lineage;
 *   records.c     the side tables: LLM calls, rebench sets, agent attempts,
 *                 baselines, experiments.
 *
 * Invariants (all files):
 *   - The connection is in WAL mode with foreign keys on and synchronous =
 *     NORMAL: a killed process never loses a committed transaction (a power
 *     cut may lose the last few, never consistency).
 *   - Every public write is one transaction that has committed, or been
 *     rolled back, before the call returns; no transaction stays open between
 *     calls.  Multi-statement writes go through avo_archive_tx().
 *   - Statements of fixed text are cached by the connection (avo_db_stmt);
 *     only SQL built at run time (llm_spend) and the WAL switch at open are
 *     prepared per call.  Values always travel as bound parameters.
 *   - Reads turn rows into JSON in one place: avo_db_collect_rows() and
 *     avo_db_fetch_row() over a table of (key, kind) per column.
 */
#ifndef AVO_ARCHIVE_IMPL_H
#define AVO_ARCHIVE_IMPL_H

#include "store/archive.h"
#include "store/db.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

struct avo_archive {
    avo_db *db; /* the connection; shared with a knowledge base opened on it */
    int opened_version;
    int readonly; /* opened by avo_archive_open_read on a file it cannot write */
    int lock_fd;  /* holds the run lock of avo_archive_run_claim, or -1 */
};

/* The work of one transaction: 0 or a negative code with err filled. */
typedef int avo_archive_tx_body(avo_archive *ar, void *ctx, char *err, size_t errlen);

/*
 * Run body(ar, ctx) inside BEGIN IMMEDIATE ... COMMIT.  If the body or the
 * commit fails, the transaction is rolled back and that error returned;
 * either way no transaction is open afterwards.
 */
int avo_archive_tx(avo_archive *ar, avo_archive_tx_body *body, void *ctx, char *err, size_t errlen);

/* Fetches the object of one id (avo_archive_candidate_get's signature;
 * `flag` is its with_source). */
typedef int avo_archive_getter(avo_archive *ar, int64_t id, int flag, json_t **ret, char *err,
                               size_t errlen);

/*
 * get(id) for every id the one-column statement st yields, in order, as a
 * new array in *ret (owned by the caller); releases st.
 */
int avo_archive_objects_by_id(avo_archive *ar, sqlite3_stmt *st, avo_archive_getter *get, int flag,
                              json_t **ret, char *err, size_t errlen, const char *what);

/* run_id, or the latest run's id when run_id is 0; AVO_ENOTFOUND if no
 * runs (base.c). */
int avo_archive_resolve_run(avo_archive *ar, int64_t run_id, int64_t *ret, char *err,
                            size_t errlen);

static inline const char *opt_string(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static inline double opt_number(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : 0;
}

/* Whether v holds a value: present and not JSON null. */
static inline int has_value(const json_t *v)
{
    return v && !json_is_null(v);
}

#endif
