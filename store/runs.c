/*
 * runs.c — runs in the archive: their rows (begin, end, reopen, restore),
 * their ownership (the run lock of avo_archive_run_claim), their event log,
 * and what the read commands show of them (run_summary, runs; a run's
 * row is base.c's run_get).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/archive_impl.h"

/* Run ownership: an open-file-description lock on one byte of the archive
 * file at RUN_LOCK_BASE + run id, far above the bytes SQLite locks (from
 * 1 GiB to 1 GiB + 512), held while the process lives. */
#define RUN_LOCK_BASE ((off_t)0x60000000)

/* ------------------------------------------------------------------- runs */

int avo_archive_run_begin(avo_archive *ar, const avo_run_info *info, int64_t *ret_run_id, char *err,
                          size_t errlen)
{
    if (!ar || !info || !ret_run_id)
        return avo_error(err, errlen, AVO_EINVAL, "run_begin: missing argument");
    sqlite3_stmt *st = NULL;
    int rc =
        avo_db_stmt(ar->db,
                    "INSERT INTO runs (script_path, script_source, config, seed, engine_version,"
                    " compiler, host, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    &st, err, errlen, "insert run");
    if (rc < 0)
        return rc;
    avo_db_bind_text(st, 1, info->script_path);
    avo_db_bind_text(st, 2, info->script_source);
    avo_db_bind_text(st, 3, info->config_json);
    /* INTEGER is signed 64-bit: seeds >= 2^63 are stored two's-complement. */
    sqlite3_bind_int64(st, 4, (sqlite3_int64)info->seed);
    avo_db_bind_text(st, 5, info->engine_version);
    avo_db_bind_text(st, 6, info->compiler);
    avo_db_bind_text(st, 7, info->host);
    sqlite3_bind_double(st, 8, avo_now());
    rc = avo_db_step_done(ar->db, st, err, errlen, "insert run");
    if (rc < 0)
        return rc;
    *ret_run_id = avo_db_last_id(ar->db);
    return 0;
}

/* Step `sql`, an UPDATE of runs taking (status, ended_at = now, id). */
static int end_run(avo_archive *ar, const char *sql, int64_t run_id, const char *status, char *err,
                   size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db, sql, &st, err, errlen, "end run");
    if (rc < 0)
        return rc;
    avo_db_bind_text(st, 1, status);
    sqlite3_bind_double(st, 2, avo_now());
    sqlite3_bind_int64(st, 3, run_id);
    return avo_db_step_done(ar->db, st, err, errlen, "end run");
}

int avo_archive_run_end(avo_archive *ar, int64_t run_id, const char *status, char *err,
                        size_t errlen)
{
    if (!ar || !status)
        return avo_error(err, errlen, AVO_EINVAL, "run_end: missing argument");
    if (strcmp(status, "done") != 0 && strcmp(status, "stopped") != 0 &&
        strcmp(status, "failed") != 0 && strcmp(status, "interrupted") != 0)
        return avo_error(err, errlen, AVO_EINVAL,
                         "run status '%s' is not one of done, stopped, interrupted, failed",
                         status);
    int rc = end_run(ar, "UPDATE runs SET status = ?, ended_at = ? WHERE id = ?", run_id, status,
                     err, errlen);
    return rc < 0 ? rc : avo_db_require_changed(ar->db, "run", run_id, err, errlen);
}

int avo_archive_run_end_running(avo_archive *ar, int64_t run_id, const char *status, char *err,
                                size_t errlen)
{
    if (!ar || !status || (strcmp(status, "failed") != 0 && strcmp(status, "interrupted") != 0))
        return avo_error(err, errlen, AVO_EINVAL, "run_end_running: bad argument");
    int rc =
        end_run(ar, "UPDATE runs SET status = ?, ended_at = ? WHERE id = ? AND status = 'running'",
                run_id, status, err, errlen);
    return rc < 0 ? rc : sqlite3_changes(ar->db->sql) > 0;
}

/*
 * Reopen a finished or interrupted run for resumption: status back to
 * "running", ended_at cleared.
 */
int avo_archive_run_reopen(avo_archive *ar, int64_t run_id, char *err, size_t errlen)
{
    if (!ar)
        return avo_error(err, errlen, AVO_EINVAL, "run_reopen: missing argument");
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db, "UPDATE runs SET status = 'running', ended_at = NULL WHERE id = ?",
                         &st, err, errlen, "reopen run");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    rc = avo_db_step_done(ar->db, st, err, errlen, "reopen run");
    return rc < 0 ? rc : avo_db_require_changed(ar->db, "run", run_id, err, errlen);
}

/* -------------------------------------------------------------- ownership */

/* This machine's name, for owner records ("unknown" when it has none). */
static void host_name(char *buf, size_t len)
{
    if (gethostname(buf, len) != 0 || !buf[0])
        snprintf(buf, len, "unknown");
    buf[len - 1] = '\0';
}

/* The run's owner record and status (both NULL-able; caller frees owner). */
static int run_owner(avo_archive *ar, int64_t run_id, json_t **ret_owner, char *status,
                     size_t status_len, char *err, size_t errlen)
{
    *ret_owner = NULL;
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db, "SELECT owner, status FROM runs WHERE id = ?", &st, err, errlen,
                         "read run owner");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    rc = avo_db_step_row(ar->db, st, err, errlen, "read run owner");
    if (rc == 1) {
        if (sqlite3_column_type(st, 0) != SQLITE_NULL)
            *ret_owner = avo_db_column_parsed(st, 0);
        const unsigned char *s = sqlite3_column_text(st, 1);
        snprintf(status, status_len, "%s", s ? (const char *)s : "");
        rc = 0;
    } else if (rc == 0) {
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no run %lld", (long long)run_id);
    }
    avo_db_release(st);
    return rc;
}

/* "pid 123 on host h since 2026-12-02 22:40:29 UTC" into buf. */
static void describe_owner(const json_t *owner, char *buf, size_t len)
{
    const char *host = json_string_value(json_object_get(owner, "host"));
    json_int_t pid = json_integer_value(json_object_get(owner, "pid"));
    double since = json_number_value(json_object_get(owner, "since"));
    char when[64] = "an unknown time";
    time_t t = (time_t)since;
    struct tm tm;
    if (since > 0 && gmtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    snprintf(buf, len, "process %lld on host %s since %s", (long long)pid, host ? host : "?", when);
}

/*
 * Take the lock of run `run_id` on a new descriptor of the archive file
 * (*ret_fd, closed by the caller on a later failure).  *ret_no_locks = 1
 * when the file system has no locks (ENOLCK, ...): the descriptor is kept
 * and the owner record decides (claim_refusal).  AVO_EBUSY naming `who`
 * when another process holds the lock.
 */
static int lock_run(avo_archive *ar, int64_t run_id, const char *who, int *ret_fd,
                    int *ret_no_locks, char *err, size_t errlen)
{
    *ret_fd = -1;
    *ret_no_locks = 0;
    int fd = open(sqlite3_db_filename(ar->db->sql, "main"), O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return avo_error(err, errlen, AVO_EIO, "cannot open '%s' to lock run %lld: %s",
                         ar->db->path, (long long)run_id, strerror(errno));
    struct flock lock = {.l_type = F_WRLCK,
                         .l_whence = SEEK_SET,
                         .l_start = RUN_LOCK_BASE + (off_t)run_id,
                         .l_len = 1};
    if (fcntl(fd, F_OFD_SETLK, &lock) == 0) {
        *ret_fd = fd;
        return 0;
    }
    int e = errno;
    if (e == ENOLCK || e == EINVAL || e == EOPNOTSUPP || e == ENOSYS) {
        *ret_fd = fd;
        *ret_no_locks = 1;
        return 0;
    }
    close(fd);
    if (e == EAGAIN || e == EACCES)
        return avo_error(err, errlen, AVO_EBUSY, "run %lld in %s is live: driven by %s",
                         (long long)run_id, ar->db->path, who);
    return avo_error(err, errlen, AVO_EIO, "cannot lock run %lld in %s: %s", (long long)run_id,
                     ar->db->path, strerror(e));
}

/*
 * Whether the run's owner record forbids the claim once the lock is ours
 * (or cannot be had): a `running` owner that may still be live is
 * AVO_EBUSY unless `takeover`.  It may be live when it runs on another host
 * (a lock does not reach across machines) or, without locks, when it runs
 * on this host and its process still exists.
 */
static int claim_refusal(avo_archive *ar, int64_t run_id, const json_t *owner, const char *status,
                         const char *who, int no_locks, int takeover, char *err, size_t errlen)
{
    const char *owner_host = json_string_value(json_object_get(owner, "host"));
    if (takeover || !owner_host || strcmp(status, "running") != 0)
        return 0;
    char host[256];
    host_name(host, sizeof host);
    if (strcmp(owner_host, host) != 0)
        return avo_error(err, errlen, AVO_EBUSY,
                         "run %lld in %s is still marked running by %s, which this machine (%s)"
                         " cannot check; if that process is gone, resume with --takeover",
                         (long long)run_id, ar->db->path, who, host);
    json_int_t pid = json_integer_value(json_object_get(owner, "pid"));
    int alive = pid > 0 && pid != getpid() && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
    if (no_locks && alive)
        return avo_error(err, errlen, AVO_EBUSY,
                         "run %lld in %s may be live: driven by %s, which still exists"
                         " (this file system has no locks; --takeover if it is not avo)",
                         (long long)run_id, ar->db->path, who);
    return 0;
}

/* Record this process ({pid, host, since}) as the run's owner. */
static int record_owner(avo_archive *ar, int64_t run_id, char *err, size_t errlen)
{
    char host[256];
    host_name(host, sizeof host);
    json_t *me =
        json_pack("{s:I, s:s, s:f}", "pid", (json_int_t)getpid(), "host", host, "since", avo_now());
    char *text = me ? avo_db_json_text(me) : NULL;
    json_decref(me);
    if (!text)
        return avo_db_oom(err, errlen);
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db, "UPDATE runs SET owner = ? WHERE id = ?", &st, err, errlen,
                         "record run owner");
    if (rc == 0) {
        avo_db_bind_text(st, 1, text);
        sqlite3_bind_int64(st, 2, run_id);
        rc = avo_db_step_done(ar->db, st, err, errlen, "record run owner");
    }
    free(text);
    return rc;
}

/*
 * Claim run `run_id` for this process: take its lock (an open file
 * description lock on the archive file, so it is released when the process
 * ends, by kill -9 too, and no other close in this process can drop it) and
 * record {pid, host, since} as the run's owner.
 *
 * AVO_EBUSY with err naming the owner when another process holds the lock,
 * or when the lock is free but the run is still `running` under an owner
 * on another host (a lock does not reach across machines): that may be a
 * live process, so only `takeover` claims it.  An owner on this host whose
 * lock is free is gone (stale) and is replaced; *ret_previous (may be NULL)
 * then receives its record (caller frees), else NULL.  An in-memory archive
 * has nothing to lock: the claim only succeeds.  One claim per handle.
 * On a file system without locks (ENOLCK, ...) the owner record decides: a
 * `running` owner on this host whose pid still exists refuses the claim.
 */
int avo_archive_run_claim(avo_archive *ar, int64_t run_id, int takeover, json_t **ret_previous,
                          char *err, size_t errlen)
{
    if (ret_previous)
        *ret_previous = NULL;
    if (!ar || run_id < 1)
        return avo_error(err, errlen, AVO_EINVAL, "run_claim: missing argument");
    if (ar->lock_fd >= 0)
        return avo_error(err, errlen, AVO_EINVAL, "this archive handle already owns a run");
    const char *file = sqlite3_db_filename(ar->db->sql, "main");
    if (!file || !*file)
        return 0; /* in memory */
    if (ar->readonly)
        return avo_error(err, errlen, AVO_EIO, "archive '%s' is read-only", ar->db->path);

    json_t *owner = NULL;
    char status[32] = "", who[512] = "another process";
    int rc = run_owner(ar, run_id, &owner, status, sizeof status, err, errlen);
    if (rc < 0)
        return rc;
    if (owner)
        describe_owner(owner, who, sizeof who);
    int fd = -1, no_locks = 0;
    rc = lock_run(ar, run_id, who, &fd, &no_locks, err, errlen);
    if (rc == 0)
        rc = claim_refusal(ar, run_id, owner, status, who, no_locks, takeover, err, errlen);
    if (rc == 0)
        rc = record_owner(ar, run_id, err, errlen);
    if (rc == 0) {
        ar->lock_fd = fd;
        fd = -1;
        if (ret_previous && owner && strcmp(status, "running") == 0) {
            *ret_previous = owner;
            owner = NULL;
        }
    }
    if (fd >= 0)
        close(fd);
    json_decref(owner);
    return rc;
}

/*
 * Whether run `run_id` is claimed by a live process on this machine: 1 when
 * its lock is held (by another handle or process), 0 when free.
 */
int avo_archive_run_live(avo_archive *ar, int64_t run_id)
{
    const char *file = ar ? sqlite3_db_filename(ar->db->sql, "main") : NULL;
    if (!file || !*file)
        return 0;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct flock lock = {.l_type = F_WRLCK,
                         .l_whence = SEEK_SET,
                         .l_start = RUN_LOCK_BASE + (off_t)run_id,
                         .l_len = 1};
    int live = fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
    close(fd);
    return live;
}

typedef struct run_restore_ctx {
    int64_t run_id;
    const char *status;
    double ended_at; /* <= 0: NULL */
    const char *owner_json;
    int64_t last_event;
} run_restore_ctx;

static int restore_body(avo_archive *ar, void *ctx, char *err, size_t errlen)
{
    const run_restore_ctx *c = ctx;
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db, "UPDATE runs SET status = ?, ended_at = ?, owner = ? WHERE id = ?",
                         &st, err, errlen, "restore run");
    if (rc < 0)
        return rc;
    avo_db_bind_text(st, 1, c->status);
    if (c->ended_at > 0)
        sqlite3_bind_double(st, 2, c->ended_at);
    else
        sqlite3_bind_null(st, 2);
    avo_db_bind_text(st, 3, c->owner_json);
    sqlite3_bind_int64(st, 4, c->run_id);
    rc = avo_db_step_done(ar->db, st, err, errlen, "restore run");
    if (rc < 0)
        return rc;
    rc = avo_db_require_changed(ar->db, "run", c->run_id, err, errlen);
    if (rc < 0)
        return rc;
    rc = avo_db_stmt(ar->db, "DELETE FROM events WHERE run_id = ? AND id > ?", &st, err, errlen,
                     "restore run events");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, c->run_id);
    sqlite3_bind_int64(st, 2, c->last_event);
    return avo_db_step_done(ar->db, st, err, errlen, "restore run events");
}

/*
 * Undo a resume that was refused after it reopened the run: status,
 * ended_at (<= 0: NULL) and owner (JSON text or NULL) back to what they
 * were, and the run's events after `last_event` deleted, in one
 * transaction.  The refusal happens before the resumed run wrote any
 * candidate of its own (avo.recorded), so the run is as it was.
 */
int avo_archive_run_restore(avo_archive *ar, int64_t run_id, const char *status, double ended_at,
                            const char *owner_json, int64_t last_event, char *err, size_t errlen)
{
    if (!ar || !status)
        return avo_error(err, errlen, AVO_EINVAL, "run_restore: missing argument");
    run_restore_ctx c = {run_id, status, ended_at, owner_json, last_event};
    return avo_archive_tx(ar, restore_body, &c, err, errlen);
}
/* ----------------------------------------------------------------- events */

int avo_archive_event(avo_archive *ar, int64_t run_id, const char *kind, const char *data_json,
                      char *err, size_t errlen)
{
    if (!ar || !kind)
        return avo_error(err, errlen, AVO_EINVAL, "event: missing argument");
    if (data_json) {
        json_error_t jerr;
        json_t *v = json_loads(data_json, JSON_DECODE_ANY, &jerr);
        if (!v)
            return avo_error(err, errlen, AVO_EINVAL, "event '%s' data is not JSON: %s", kind,
                             jerr.text);
        json_decref(v);
    }
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db, "INSERT INTO events (run_id, t, kind, data) VALUES (?, ?, ?, ?)",
                         &st, err, errlen, "insert event");
    if (rc < 0)
        return rc;
    avo_db_bind_id(st, 1, run_id); /* run_id 0: an event of the engine, not of a run */
    sqlite3_bind_double(st, 2, avo_now());
    avo_db_bind_text(st, 3, kind);
    avo_db_bind_text(st, 4, data_json);
    return avo_db_step_done(ar->db, st, err, errlen, "insert event");
}

/*
 * Events of run_id of the given kind (NULL: every kind), oldest first, as
 * [{id, t, kind, data}] with data parsed back from JSON.
 */
int avo_archive_events(avo_archive *ar, int64_t run_id, const char *kind, json_t **ret, char *err,
                       size_t errlen)
{
    static const avo_db_column columns[] = {
        {"id", AVO_DB_VALUE}, {"t", AVO_DB_VALUE}, {"kind", AVO_DB_VALUE}, {"data", AVO_DB_JSON}};
    static const avo_db_shape shape = {columns, COUNT_OF(columns)};
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "events: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db,
                         "SELECT id, t, kind, data FROM events WHERE run_id = ?1"
                         " AND (?2 IS NULL OR kind = ?2) ORDER BY id",
                         &st, err, errlen, "read events");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, run_id);
    avo_db_bind_text(st, 2, kind);
    return avo_db_collect_rows(ar->db, st, avo_db_row_object, &shape, ret, err, errlen,
                               "read events");
}
/* -------------------------------------------------------------- reading */



/*
 * Add the candidate summary of run `id` to its object: candidates, ok,
 * failed (finished but not ok), pending (not evaluated yet), and best_id and best_score as
 * avo_archive_best() chooses (null when the run has no ok candidate).
 */
static int run_add_candidates(avo_archive *ar, json_t *run, int64_t id, char *err, size_t errlen)
{
    static const avo_db_column count_columns[] = {{"candidates", AVO_DB_VALUE},
                                                  {"ok", AVO_DB_VALUE},
                                                  {"failed", AVO_DB_VALUE},
                                                  {"pending", AVO_DB_VALUE}};
    static const avo_db_shape count_shape = {count_columns, COUNT_OF(count_columns)};
    static const avo_db_column best_columns[] = {
        {"best_id", AVO_DB_VALUE}, {"best_score", AVO_DB_VALUE}, {"best_evaluator", AVO_DB_VALUE}};
    static const avo_db_shape best_shape = {best_columns, COUNT_OF(best_columns)};
    json_t *counts = NULL, *best = NULL;
    int rc = avo_db_row_by_id(ar->db,
                              "SELECT count(*), count(*) FILTER (WHERE status = 'ok'),"
                              " count(*) FILTER (WHERE status NOT IN ('ok', 'pending')),"
                              " count(*) FILTER (WHERE status = 'pending')"
                              " FROM candidates WHERE run_id = ?",
                              id, &count_shape, &counts, err, errlen, "count candidates");
    if (rc == 0)
        rc = avo_db_row_by_id(ar->db,
                              "SELECT id, score, evaluator FROM candidates WHERE run_id = ?"
                              " AND status = 'ok'"
                              " ORDER BY score DESC, id ASC LIMIT 1",
                              id, &best_shape, &best, err, errlen, "find best candidate");
    if (rc == 0 && !best)
        best = json_pack("{snsnsn}", "best_id", "best_score", "best_evaluator");
    if (rc == 0 && (json_object_update(run, counts) != 0 || json_object_update(run, best) != 0))
        rc = avo_db_oom(err, errlen);
    json_decref(counts);
    json_decref(best);
    return rc;
}

/*
 * Add the agent attempts of run `id` (operators/agent.lua) to its object:
 * attempts = {explored, committed, outcomes: {outcome: count}}.  A
 * re-timing (outcome "retime") measures a recorded version again and
 * explores nothing, so it counts in outcomes only.  Zeros and {} for a run
 * without attempts.
 */
static int run_add_attempts(avo_archive *ar, json_t *run, int64_t id, char *err, size_t errlen)
{
    static const avo_db_column columns[] = {{"outcome", AVO_DB_VALUE}, {"count", AVO_DB_VALUE}};
    static const avo_db_shape shape = {columns, COUNT_OF(columns)};
    json_t *rows = NULL;
    int rc = avo_db_rows_by_id(ar->db,
                               "SELECT outcome, count(*) FROM attempts WHERE run_id = ?"
                               " GROUP BY outcome ORDER BY outcome",
                               id, avo_db_row_object, &shape, &rows, err, errlen, "count attempts");
    if (rc < 0)
        return rc;
    json_int_t explored = 0, committed = 0;
    json_t *outcomes = json_object();
    int bad = !outcomes;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const char *outcome = opt_string(row, "outcome");
        json_int_t n = json_integer_value(json_object_get(row, "count"));
        if (!outcome || bad)
            continue;
        explored += strcmp(outcome, "retime") != 0 ? n : 0;
        committed += strcmp(outcome, "committed") == 0 ? n : 0;
        bad |= avo_db_put(outcomes, outcome, json_integer(n));
    }
    json_decref(rows);
    json_t *summary = bad ? NULL
                          : json_pack("{sIsIsO}", "explored", explored, "committed", committed,
                                      "outcomes", outcomes);
    json_decref(outcomes);
    return avo_db_put(run, "attempts", summary) ? avo_db_oom(err, errlen) : 0;
}

/*
 * Add the unit of the run's scores ("GFLOP/s", "GB/s", ...) to its object:
 * from the latest "evaluator" event that names one (lua/avo/init.lua);
 * null for runs that recorded none.
 */
static int run_add_unit(avo_archive *ar, json_t *run, int64_t id, char *err, size_t errlen)
{
    static const avo_db_column columns[] = {{"data", AVO_DB_JSON}};
    static const avo_db_shape shape = {columns, COUNT_OF(columns)};
    json_t *rows = NULL;
    int rc = avo_db_rows_by_id(ar->db,
                               "SELECT data FROM events WHERE run_id = ? AND kind = 'evaluator'"
                               " ORDER BY id DESC",
                               id, avo_db_row_object, &shape, &rows, err, errlen,
                               "read evaluator events");
    if (rc < 0)
        return rc;
    json_t *unit = NULL;
    for (size_t i = 0; !unit && i < json_array_size(rows); i++) {
        json_t *v = json_object_get(json_object_get(json_array_get(rows, i), "data"), "unit");
        unit = json_is_string(v) ? v : NULL;
    }
    rc = avo_db_put(run, "unit", unit ? json_incref(unit) : json_null()) ? avo_db_oom(err, errlen)
                                                                         : 0;
    json_decref(rows);
    return rc;
}

/*
 * The run object (avo_archive_run_get) plus its summary: candidate counts
 * and best (run_add_candidates), agent attempts (run_add_attempts) and the
 * score unit (run_add_unit).
 */
int avo_archive_run_summary(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen)
{
    json_t *run = NULL;
    int rc = avo_archive_run_get(ar, run_id, &run, err, errlen);
    if (rc < 0)
        return rc;
    int64_t id = json_integer_value(json_object_get(run, "id"));
    rc = run_add_candidates(ar, run, id, err, errlen);
    if (rc == 0)
        rc = run_add_attempts(ar, run, id, err, errlen);
    if (rc == 0)
        rc = run_add_unit(ar, run, id, err, errlen);
    if (rc == 0) {
        json_t *baselines = NULL;
        rc = avo_archive_baselines(ar, id, &baselines, err, errlen);
        if (rc == 0 && avo_db_put(run, "baselines", baselines))
            rc = avo_db_oom(err, errlen);
    }
    if (rc < 0) {
        json_decref(run);
        return rc;
    }
    *ret = run;
    return 0;
}

/* avo_archive_run_summary() as an object_getter. */
static int run_summary_of(avo_archive *ar, int64_t id, int unused, json_t **ret, char *err,
                          size_t errlen)
{
    (void)unused;
    return avo_archive_run_summary(ar, id, ret, err, errlen);
}

/* Every run, oldest first, each as avo_archive_run_summary() gives it.  An
 * archive without runs gives []. */
int avo_archive_runs(avo_archive *ar, json_t **ret, char *err, size_t errlen)
{
    if (!ar || !ret)
        return avo_error(err, errlen, AVO_EINVAL, "runs: missing argument");
    *ret = NULL;
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(ar->db, "SELECT id FROM runs ORDER BY id", &st, err, errlen, "list runs");
    if (rc < 0)
        return rc;
    return avo_archive_objects_by_id(ar, st, run_summary_of, 0, ret, err, errlen, "list runs");
}

/*
 * Every candidate of run_id (0: of every run) in id order, each the full
 * avo_archive_candidate_get() object.  A run_id that names no run is
 * AVO_ENOTFOUND; a run without candidates gives [].
 */
