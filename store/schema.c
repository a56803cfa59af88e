/*
 * schema.c — the archive's schema and opening: the migration steps, the
 * checks before anything writes (a newer avo's file, a foreign database, a
 * damaged file), the connection's pragmas, read-only opening, and closing;
 * plus the helpers the archive's other files share (archive_impl.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/archive_impl.h"

/*
 * Schema migrations.  migrations[v] brings an archive from version v - 1 to
 * version v; index 0 is unused.  Each step runs in its own transaction
 * together with the user_version bump, so a file is always at exactly one
 * version.  Steps are append-only: once released a step is never edited —
 * a change to the schema is a new step at the end, and
 * AVO_ARCHIVE_SCHEMA_VERSION moves with it.
 */
static const char *const migrations[] = {
    [1] = "CREATE TABLE runs ("
          "  id INTEGER PRIMARY KEY,"
          "  script_path TEXT,"
          "  script_source TEXT,"
          "  config TEXT,"
          "  seed INTEGER NOT NULL,"
          "  engine_version TEXT,"
          "  compiler TEXT,"
          "  host TEXT,"
          "  started_at REAL NOT NULL,"
          "  ended_at REAL,"
          "  status TEXT NOT NULL DEFAULT 'running'"
          ") STRICT;"
          "CREATE TABLE sources ("
          "  hash TEXT PRIMARY KEY,"
          "  text TEXT NOT NULL"
          ") STRICT;"
          "CREATE TABLE candidates ("
          "  id INTEGER PRIMARY KEY,"
          "  run_id INTEGER NOT NULL REFERENCES runs(id),"
          "  generation INTEGER NOT NULL,"
          "  operator TEXT NOT NULL,"
          "  status TEXT NOT NULL DEFAULT 'pending',"
          "  reason TEXT,"
          "  log TEXT,"
          "  score REAL,"
          "  source_hash TEXT NOT NULL REFERENCES sources(hash),"
          "  knobs TEXT NOT NULL DEFAULT '{}',"
          "  note TEXT,"
          "  \"key\" TEXT,"
          "  result TEXT,"
          "  created_at REAL NOT NULL,"
          "  evaluated_at REAL"
          ") STRICT;"
          "CREATE INDEX candidates_key ON candidates(\"key\");"
          "CREATE INDEX candidates_run_score ON candidates(run_id, score);"
          "CREATE TABLE edges ("
          "  child INTEGER NOT NULL REFERENCES candidates(id),"
          "  parent INTEGER NOT NULL REFERENCES candidates(id),"
          "  role TEXT NOT NULL,"
          "  PRIMARY KEY (child, parent, role)"
          ") STRICT;"
          "CREATE INDEX edges_parent ON edges(parent);"
          "CREATE TABLE evaluations ("
          "  candidate_id INTEGER NOT NULL REFERENCES candidates(id),"
          "  config TEXT NOT NULL,"
          "  correct INTEGER NOT NULL,"
          "  max_error REAL,"
          "  median_s REAL,"
          "  spread REAL,"
          "  samples INTEGER,"
          "  gflops REAL,"
          "  gbs REAL,"
          "  reason TEXT,"
          "  PRIMARY KEY (candidate_id, config)"
          ") STRICT;"
          "CREATE TABLE events ("
          "  id INTEGER PRIMARY KEY,"
          "  run_id INTEGER REFERENCES runs(id),"
          "  t REAL NOT NULL,"
          "  kind TEXT NOT NULL,"
          "  data TEXT"
          ") STRICT;",
    /* 2: rebench evaluation sets (avo rebench). */
    [2] = "CREATE TABLE rebench_sets ("
          "  id INTEGER PRIMARY KEY,"
          "  run_id INTEGER NOT NULL REFERENCES runs(id),"
          "  t REAL NOT NULL,"
          "  config TEXT"
          ") STRICT;"
          "CREATE TABLE rebench_results ("
          "  set_id INTEGER NOT NULL REFERENCES rebench_sets(id),"
          "  candidate_id INTEGER NOT NULL REFERENCES candidates(id),"
          "  round INTEGER NOT NULL,"
          "  score REAL NOT NULL,"
          "  result TEXT,"
          "  PRIMARY KEY (set_id, candidate_id, round)"
          ") STRICT;",
    /* 3: every LLM request and answer (core/llm.c, lua/avo/llm.lua); the
     * request is stored without credentials, request_hash keys replay. */
    [3] = "CREATE TABLE llm_calls ("
          "  id INTEGER PRIMARY KEY,"
          "  run_id INTEGER REFERENCES runs(id),"
          "  t REAL NOT NULL,"
          "  provider TEXT NOT NULL,"
          "  model TEXT,"
          "  request_hash TEXT NOT NULL,"
          "  request TEXT NOT NULL,"
          "  response TEXT,"
          "  status TEXT NOT NULL,"
          "  error TEXT,"
          "  input_tokens INTEGER NOT NULL DEFAULT 0,"
          "  output_tokens INTEGER NOT NULL DEFAULT 0,"
          "  cost_usd REAL NOT NULL DEFAULT 0,"
          "  latency_s REAL,"
          "  attempts INTEGER NOT NULL DEFAULT 1"
          ") STRICT;"
          "CREATE INDEX llm_calls_hash ON llm_calls(request_hash);"
          "CREATE INDEX llm_calls_run ON llm_calls(run_id);",
    /* 4: every evaluation an agent makes (operators/agent.lua), committed or
     * not, so directions explored can be set against versions committed. */
    [4] = "CREATE TABLE attempts ("
          "  id INTEGER PRIMARY KEY,"
          "  run_id INTEGER NOT NULL REFERENCES runs(id),"
          "  step INTEGER NOT NULL,"
          "  lineage TEXT NOT NULL,"
          "  t REAL NOT NULL,"
          "  source_hash TEXT NOT NULL REFERENCES sources(hash),"
          "  knobs TEXT NOT NULL DEFAULT '{}',"
          "  status TEXT NOT NULL,"
          "  score REAL,"
          "  outcome TEXT NOT NULL,"
          "  reason TEXT,"
          "  candidate_id INTEGER REFERENCES candidates(id),"
          "  configs TEXT"
          ") STRICT;"
          "CREATE INDEX attempts_run ON attempts(run_id, lineage, step);",
    /* 5: the process that drives a run ({pid, host, since}), written when it
     * claims the run (avo_archive_run_claim), for refusals to name it. */
    [5] = "ALTER TABLE runs ADD COLUMN owner TEXT;",
    /* 6: the evaluator's baselines (vendor libraries, reference kernels)
     * measured once per run and device (lua/avo/baselines.lua). */
    [6] = "CREATE TABLE baselines ("
          "  id INTEGER PRIMARY KEY,"
          "  run_id INTEGER NOT NULL REFERENCES runs(id),"
          "  device TEXT NOT NULL,"
          "  device_name TEXT,"
          "  name TEXT NOT NULL,"
          "  status TEXT NOT NULL,"
          "  reason TEXT,"
          "  library TEXT,"
          "  version TEXT,"
          "  path TEXT,"
          "  result TEXT,"
          "  score REAL,"
          "  created_at REAL NOT NULL,"
          "  UNIQUE (run_id, device, name)"
          ") STRICT;",
    /* 7: experiments (lua/avo/experiment.lua): a grid of runs declared by one
     * Lua file, stored with its text, hash, planned cells and the machine;
     * each cell's run and how it ended. */
    [7] = "CREATE TABLE experiments ("
          "  id INTEGER PRIMARY KEY,"
          "  name TEXT NOT NULL,"
          "  path TEXT,"
          "  source TEXT NOT NULL,"
          "  hash TEXT NOT NULL,"
          "  plan TEXT NOT NULL,"
          "  machine TEXT,"
          "  engine_version TEXT,"
          "  created_at REAL NOT NULL"
          ") STRICT;"
          "CREATE TABLE experiment_cells ("
          "  experiment_id INTEGER NOT NULL REFERENCES experiments(id),"
          "  cell TEXT NOT NULL,"
          "  run_id INTEGER REFERENCES runs(id),"
          "  status TEXT NOT NULL,"
          "  reason TEXT,"
          "  exit_code INTEGER,"
          "  updated_at REAL NOT NULL,"
          "  PRIMARY KEY (experiment_id, cell)"
          ") STRICT;",
    /* 8: the evaluator (its name) of each candidate and baseline, so a
     * candidate is compared only with its own evaluator's baselines.  Old
     * rows: a run with one evaluator gives it to all its candidates; a
     * baseline "name@ev" is ev's, a plain one the run's first evaluator's
     * (lua/avo/baselines.lua named them so); candidates of a run with several
     * stay NULL (unknown), compared only with baselines of unknown evaluator. */
    [8] = "ALTER TABLE candidates ADD COLUMN evaluator TEXT;"
          "ALTER TABLE baselines ADD COLUMN evaluator TEXT;"
          "UPDATE candidates SET evaluator = (SELECT min(json_extract(e.data, '$.name'))"
          "  FROM events e WHERE e.run_id = candidates.run_id AND e.kind = 'evaluator')"
          " WHERE (SELECT count(DISTINCT json_extract(e.data, '$.name')) FROM events e"
          "  WHERE e.run_id = candidates.run_id AND e.kind = 'evaluator') = 1;"
          "UPDATE baselines SET evaluator = CASE WHEN instr(name, '@') > 0"
          "  THEN substr(name, instr(name, '@') + 1)"
          "  ELSE (SELECT json_extract(e.data, '$.name') FROM events e"
          "   WHERE e.run_id = baselines.run_id AND e.kind = 'evaluator' ORDER BY e.id LIMIT 1)"
          "  END;",
    /* 9: a config's paired figures where the judge timed a yardstick beside
     * the candidate (timing.yardstick): the yardstick's median time and the
     * median ratio of its time to the candidate's; NULL for the others. */
    [9] = "ALTER TABLE evaluations ADD COLUMN yardstick_s REAL;"
          "ALTER TABLE evaluations ADD COLUMN vs_yardstick REAL;",
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) - 1 == AVO_ARCHIVE_SCHEMA_VERSION,
               "one migration step per schema version");

/* How long a write waits for another process's lock before failing, unless
 * AVO_DB_TIMEOUT (seconds) says otherwise; SQLite's busy handler backs off
 * from 1 ms to 100 ms between tries. */

/* ---------------------------------------------------------------- opening */

/*
 * Read the schema version and the number of schema objects that are not
 * the knowledge base's in one statement, hence one snapshot: read
 * separately, another process's migration could commit in between and make
 * a fresh file look like a foreign database.  Objects of the KB module
 * (kb.c: tables named kb_..., their FTS5 shadow tables and indexes) and
 * SQLite's own (sqlite_...) do not count, so a file that holds only a
 * knowledge base can still become an archive.  ret_objects may be NULL.
 */
static int read_version(avo_db *db, int *ret_version, int *ret_objects, char *err, size_t errlen)
{
    char what[512];
    snprintf(what, sizeof what, "cannot read archive '%s'", db->path);
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(db,
                         "SELECT (SELECT user_version FROM pragma_user_version),"
                         " (SELECT count(*) FROM sqlite_schema"
                         "  WHERE tbl_name NOT LIKE 'kb\\_%' ESCAPE '\\'"
                         "  AND tbl_name NOT LIKE 'sqlite\\_%' ESCAPE '\\')",
                         &st, err, errlen, what);
    if (rc < 0)
        return rc;
    rc = avo_db_step_row(db, st, err, errlen, what);
    if (rc == 1) {
        *ret_version = sqlite3_column_int(st, 0);
        if (ret_objects)
            *ret_objects = sqlite3_column_int(st, 1);
        rc = 0;
    }
    avo_db_release(st);
    return rc;
}

/* The archive's version alone (avo_db_schema.read). */
static int read_user_version(avo_db *db, int *ret_version, char *err, size_t errlen)
{
    return read_version(db, ret_version, NULL, err, errlen);
}

/* Record `version` in PRAGMA user_version (avo_db_schema.write).  PRAGMA
 * takes no parameters; `version` is our own integer. */
static int write_user_version(avo_db *db, int version, char *err, size_t errlen)
{
    char bump[64];
    snprintf(bump, sizeof bump, "PRAGMA user_version = %d", version);
    return avo_db_exec_script(db, bump, err, errlen, "set schema version");
}

static const avo_db_schema archive_schema = {
    .name = "archive",
    .in_file = "archive",
    .steps = migrations,
    .version = AVO_ARCHIVE_SCHEMA_VERSION,
    .read = read_user_version,
    .write = write_user_version,
};

/*
 * Switch to WAL and set the per-connection pragmas.  Done only after the
 * version check, because switching to WAL rewrites the file header.  The
 * switch needs an exclusive lock and SQLite answers SQLITE_BUSY at once,
 * without the busy handler, when other openers of a fresh file hold shared
 * locks (waiting could deadlock), so it is retried here for up to the
 * busy timeout.
 */
static int configure_connection(avo_archive *ar, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db->sql, "PRAGMA journal_mode = WAL", -1, &st, NULL);
    for (int waited = 0; rc == SQLITE_OK || rc == SQLITE_BUSY; waited += 10) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_BUSY || waited >= ar->db->busy_ms)
            break;
        sqlite3_reset(st);
        sqlite3_sleep(10);
    }
    if (rc != SQLITE_ROW) {
        int out = avo_db_error(ar->db, rc, err, errlen, "enable WAL");
        sqlite3_finalize(st);
        return out;
    }
    const char *mode = (const char *)sqlite3_column_text(st, 0);
    int ok = mode && (strcmp(mode, "wal") == 0 || strcmp(mode, "memory") == 0);
    if (!ok)
        avo_error(err, errlen, AVO_ESQL, "archive '%s' cannot use WAL (journal mode is %s)",
                  ar->db->path, mode ? mode : "unknown");
    sqlite3_finalize(st);
    if (!ok)
        return AVO_ESQL;

    return avo_db_exec_script(ar->db, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;", err,
                              errlen, "set pragmas");
}

/*
 * Open the SQLite connection of `ar` (flags as sqlite3_open_v2; `uri` names
 * the file instead of ar->db->path when not NULL), set the busy timeout and read
 * the version: a file from a newer avo, or a foreign database, is refused
 * before anything writes.  Fills ar->opened_version.
 */
static int open_connection(avo_archive *ar, int flags, const char *uri, char *err, size_t errlen)
{
    int rc = avo_db_connect(ar->db, flags, uri, "archive", err, errlen);
    if (rc < 0)
        return rc;
    int version = 0, objects = 0;
    rc = read_version(ar->db, &version, &objects, err, errlen);
    if (rc < 0)
        return rc;
    if (version > AVO_ARCHIVE_SCHEMA_VERSION)
        return avo_db_schema_newer(ar->db, &archive_schema, version, err, errlen);
    if (version == 0 && objects > 0)
        return avo_error(err, errlen, AVO_EINVAL,
                         "'%s' is not an avo archive (it has tables but no schema version)",
                         ar->db->path);
    ar->opened_version = version;
    return 0;
}

/* A fresh, closed archive handle for path, or NULL (out of memory). */
static avo_archive *archive_new(const char *path)
{
    avo_archive *ar = calloc(1, sizeof *ar);
    if (!ar)
        return NULL;
    ar->lock_fd = -1;
    ar->db = avo_db_new(path);
    if (!ar->db) {
        free(ar);
        return NULL;
    }
    return ar;
}

/* Whether this process can write `path` and create files beside it (the
 * WAL and shared-memory files SQLite needs to write). */
static int writable(const char *path)
{
    if (access(path, W_OK) != 0)
        return 0;
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    return access(dirname(copy), W_OK) == 0;
}

int avo_archive_quick_check(avo_archive *ar, char *problem, size_t problem_len)
{
    if (!ar || !problem || !problem_len)
        return AVO_EINVAL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(ar->db->sql, "PRAGMA quick_check(1)", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    const char *answer = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    int whole = answer && strcmp(answer, "ok") == 0;
    /* the first problem on one line */
    snprintf(problem, problem_len, "%s", answer ? answer : sqlite3_errmsg(ar->db->sql));
    for (char *c = problem; *c; c++)
        if (*c == '\n')
            *c = ' ';
    sqlite3_finalize(st);
    return whole;
}

/*
 * PRAGMA quick_check on an archive about to be written: writing a run into
 * a damaged file buries the damage under new rows (and can spread it), so
 * the caller is refused before anything writes, told which file and how to
 * recover what it holds.
 */
static int check_whole(avo_archive *ar, char *err, size_t errlen)
{
    char first[256];
    if (avo_archive_quick_check(ar, first, sizeof first) == 1)
        return 0;
    return avo_error(err, errlen, AVO_ESQL,
                     "archive %s is damaged (PRAGMA quick_check: %s); nothing was written to it."
                     " Run into a new archive (--db another file); what this one holds may"
                     " still be shown by the read commands, or copied into a new file to read"
                     " (README, \"A damaged archive\")",
                     ar->db->path, first);
}

/* How open_writable was asked to open: for a command that writes (creates
 * a missing file, checks an existing one) or for one that only reads. */
enum open_purpose { OPEN_TO_WRITE, OPEN_TO_READ };

/*
 * Open path read-write and bring it to the current schema.  The version is
 * checked before anything writes, so a file from a newer avo (or a foreign
 * database) is closed exactly as found.  To write, a missing file is
 * created and an existing one must pass check_whole(); to read, the file
 * must already be an avo archive (an empty file, or one holding only a
 * knowledge base, is refused rather than given a schema).  On failure *ret
 * is NULL and err says why.
 */
static int open_writable(avo_archive **ret, const char *path, enum open_purpose purpose, char *err,
                         size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "no place to return the archive");
    *ret = NULL;
    if (!path || !*path)
        return avo_error(err, errlen, AVO_EINVAL, "no archive path");

    struct stat st;
    int existed = stat(path, &st) == 0;
    if (existed && !writable(path))
        return avo_error(err, errlen, AVO_EIO,
                         "archive %s is read-only (%s): commands that write need a writable"
                         " archive; the read commands can read it",
                         path, strerror(errno));
    avo_archive *ar = archive_new(path);
    if (!ar)
        return avo_db_oom(err, errlen);
    int flags = SQLITE_OPEN_READWRITE | (purpose == OPEN_TO_WRITE ? SQLITE_OPEN_CREATE : 0);
    int rc = open_connection(ar, flags, NULL, err, errlen);
    if (rc < 0)
        goto fail;
    if (purpose == OPEN_TO_READ && ar->opened_version == 0) {
        rc = avo_error(err, errlen, AVO_EINVAL, "'%s' is not an avo archive (%s)", path,
                       existed && st.st_size == 0 ? "it is an empty file" : "it has no avo schema");
        goto fail;
    }
    if (purpose == OPEN_TO_WRITE && existed && st.st_size > 0) {
        rc = check_whole(ar, err, errlen);
        if (rc < 0)
            goto fail;
    }
    rc = configure_connection(ar, err, errlen);
    if (rc < 0)
        goto fail;
    rc = avo_db_migrate(ar->db, &archive_schema, err, errlen);
    if (rc < 0)
        goto fail;

    *ret = ar;
    return 0;

fail:
    avo_archive_free(ar);
    return rc;
}

int avo_archive_open(avo_archive **ret, const char *path, char *err, size_t errlen)
{
    return open_writable(ret, path, OPEN_TO_WRITE, err, errlen);
}

/* Copy the file src to dst (created, mode 0600); 0 or an errno value. */
static int copy_file(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return errno;
    int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
        int e = errno;
        close(in);
        return e;
    }
    int e = 0;
    char buf[65536];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            e = n < 0 ? errno : 0;
            break;
        }
        for (ssize_t done = 0; done < n && !e;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w < 0 && errno != EINTR)
                e = errno;
            else if (w > 0)
                done += w;
        }
        if (e)
            break;
    }
    close(in);
    if (close(out) != 0 && !e)
        e = errno;
    return e;
}

/*
 * Read an archive whose newest data sits in its -wal while no -shm exists
 * and none may be made beside it (a read-only mount or directory, a file
 * this process may not write): SQLite cannot read that WAL in place, and
 * opening it immutable would ignore the WAL (an empty archive).  The file
 * and its WAL are copied into a private directory under $TMPDIR (or /tmp),
 * opened there (SQLite rebuilds the index from the WAL), copied into memory
 * and the private copies removed.  On success ar->db holds the memory copy.
 */
static int read_private_copy(avo_archive *ar, char *err, size_t errlen)
{
    const char *tmpdir = getenv("TMPDIR");
    char dir[PATH_MAX], db[PATH_MAX + 16], wal[PATH_MAX + 16], shm[PATH_MAX + 16],
        from[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/avo-read-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(dir))
        return avo_error(err, errlen, AVO_EIO,
                         "archive %s has its data in %s-wal, which cannot be read in place"
                         " (no -shm beside it, and none may be made); copying it to read it"
                         " failed: cannot make a directory in %s: %s",
                         ar->db->path, ar->db->path, tmpdir && *tmpdir ? tmpdir : "/tmp",
                         strerror(errno));
    snprintf(db, sizeof db, "%s/a.db", dir);
    snprintf(wal, sizeof wal, "%s/a.db-wal", dir);
    snprintf(shm, sizeof shm, "%s/a.db-shm", dir);
    snprintf(from, sizeof from, "%s-wal", ar->db->path);
    int e = copy_file(ar->db->path, db);
    if (!e)
        e = copy_file(from, wal);
    int rc = 0;
    if (e)
        rc = avo_error(err, errlen, AVO_EIO,
                       "archive %s has its data in %s-wal, which cannot be read in place"
                       " (no -shm beside it, and none may be made); copying it to %s failed: %s",
                       ar->db->path, ar->db->path, dir, strerror(e));
    if (rc == 0)
        rc = open_connection(ar, SQLITE_OPEN_READWRITE, db, err, errlen);
    if (rc == 0)
        rc = avo_db_copy_to_memory(ar->db, err, errlen);
    if (rc < 0)
        avo_db_disconnect(ar->db);
    unlink(shm);
    unlink(wal);
    unlink(db);
    rmdir(dir);
    return rc;
}

/* The size of path + suffix, or -1 when it does not exist. */
static off_t side_file_size(const char *path, const char *suffix)
{
    char name[PATH_MAX + 8];
    snprintf(name, sizeof name, "%s%s", path, suffix);
    struct stat st;
    return stat(name, &st) == 0 ? st.st_size : -1;
}

static int open_readonly(avo_archive **ret, const char *path, int live, char *err, size_t errlen);

/*
 * Open an existing archive for reading.  A file this process can write is
 * opened as avo_archive_open does (and migrated), but only if it already is
 * an avo archive: a read never gives an empty or foreign file a schema.  A
 * file it cannot write (a read-only mount, another user's experiment, the
 * owner's own file after chmod a-w) is opened read-only without creating
 * anything beside it: SQLite would make a -wal and -shm with the archive's
 * own mode (0444 files that later make the owner's writes fail).  So:
 *   - with a -wal and a -shm (a live or killed writer left them), read it
 *     as is, WAL included;
 *   - else, with a non-empty -wal, read a private copy (read_private_copy):
 *     SQLite cannot read that WAL in place;
 *   - else (no WAL data), read the file immutable (no locks, no side files).
 * An older schema is then migrated in a copy in memory.  Writes to such an
 * archive fail with SQLite's "attempt to write a readonly database".
 */
int avo_archive_open_read(avo_archive **ret, const char *path, char *err, size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "no place to return the archive");
    *ret = NULL;
    if (!path || !*path)
        return avo_error(err, errlen, AVO_EINVAL, "no archive path");
    if (access(path, R_OK) != 0)
        return avo_error(err, errlen, AVO_EIO, "cannot open archive %s: %s", path, strerror(errno));
    if (writable(path))
        return open_writable(ret, path, OPEN_TO_READ, err, errlen);
    return open_readonly(ret, path, 0, err, errlen);
}

/*
 * Open an existing archive read-only; see avo_archive_open_read (the part
 * for files it cannot write) and avo_archive_open_watch (`live`: a file
 * this process could write is read in place, WAL included, through a
 * read-only connection).
 */
static int open_readonly(avo_archive **ret, const char *path, int live, char *err, size_t errlen)
{
    avo_archive *ar = archive_new(path);
    if (!ar)
        return avo_db_oom(err, errlen);
    ar->readonly = 1;
    int rc = -1;
    off_t wal = side_file_size(path, "-wal");
    if ((live && writable(path)) || (wal >= 0 && side_file_size(path, "-shm") >= 0)) {
        rc = open_connection(ar, SQLITE_OPEN_READONLY, NULL, err, errlen);
        if (rc < 0)
            avo_db_disconnect(ar->db);
    }
    if (rc < 0 && wal > 0) {
        rc = read_private_copy(ar, err, errlen);
    } else if (rc < 0) {
        /* Characters with a meaning in URIs are percent-encoded. */
        char encoded[3 * PATH_MAX + 32];
        size_t k = 0;
        k += (size_t)snprintf(encoded, sizeof encoded, "file:");
        for (const unsigned char *c = (const unsigned char *)path; *c && k + 4 < sizeof encoded;
             c++) {
            if (*c == '%' || *c == '?' || *c == '#' || *c <= ' ' || *c >= 0x7f)
                k += (size_t)snprintf(encoded + k, sizeof encoded - k, "%%%02X", *c);
            else
                encoded[k++] = (char)*c;
        }
        snprintf(encoded + k, sizeof encoded - k, "?immutable=1");
        rc = open_connection(ar, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, encoded, err, errlen);
    }
    if (rc < 0)
        goto fail;
    if (ar->opened_version == 0) {
        struct stat st;
        rc = avo_error(err, errlen, AVO_EINVAL, "'%s' is not an avo archive (%s)", path,
                       stat(path, &st) == 0 && st.st_size == 0 ? "it is an empty file"
                                                               : "it has no avo schema");
        goto fail;
    }
    if (ar->opened_version < AVO_ARCHIVE_SCHEMA_VERSION) {
        rc = avo_db_copy_to_memory(ar->db, err, errlen);
        if (rc == 0)
            rc = avo_db_migrate(ar->db, &archive_schema, err, errlen);
        if (rc < 0)
            goto fail;
    }
    rc = avo_db_exec_script(ar->db, "PRAGMA foreign_keys = ON; PRAGMA query_only = ON;", err,
                            errlen, "set pragmas");
    if (rc < 0)
        goto fail;
    *ret = ar;
    return 0;

fail:
    avo_archive_free(ar);
    return rc;
}

int avo_archive_open_watch(avo_archive **ret, const char *path, char *err, size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "no place to return the archive");
    *ret = NULL;
    if (!path || !*path)
        return avo_error(err, errlen, AVO_EINVAL, "no archive path");
    if (access(path, R_OK) != 0)
        return avo_error(err, errlen, AVO_EIO, "cannot open archive %s: %s", path, strerror(errno));
    return open_readonly(ret, path, 1, err, errlen);
}

int avo_archive_readonly(const avo_archive *ar)
{
    return ar ? ar->readonly : 0;
}

/* Drop the archive's hold on the connection (closed unless a knowledge
 * base still shares it); accepts NULL and an archive whose open failed half
 * way.  Closing releases the run lock. */
void avo_archive_free(avo_archive *ar)
{
    if (!ar)
        return;
    avo_db_unref(ar->db);
    if (ar->lock_fd >= 0)
        close(ar->lock_fd);
    free(ar);
}

int avo_archive_opened_version(const avo_archive *ar)
{
    return ar ? ar->opened_version : 0;
}

struct avo_db *avo_archive_db(avo_archive *ar)
{
    return ar ? ar->db : NULL;
}

/* ------------------------------------------------------- shared helpers */

int avo_archive_tx(avo_archive *ar, avo_archive_tx_body *body, void *ctx, char *err, size_t errlen)
{
    int rc = avo_db_begin(ar->db, err, errlen);
    if (rc < 0)
        return rc;
    return avo_db_end(ar->db, body(ar, ctx, err, errlen), err, errlen);
}

int avo_archive_objects_by_id(avo_archive *ar, sqlite3_stmt *st, avo_archive_getter *get, int flag,
                              json_t **ret, char *err, size_t errlen, const char *what)
{
    json_t *ids = NULL, *all = NULL;
    int rc = avo_db_collect_rows(ar->db, st, avo_db_row_first, NULL, &ids, err, errlen, what);
    if (rc == 0 && !(all = json_array()))
        rc = avo_db_oom(err, errlen);
    for (size_t i = 0; rc == 0 && i < json_array_size(ids); i++) {
        json_t *obj = NULL;
        rc = get(ar, json_integer_value(json_array_get(ids, i)), flag, &obj, err, errlen);
        if (rc == 0 && json_array_append_new(all, obj) != 0)
            rc = avo_db_oom(err, errlen);
    }
    json_decref(ids);
    if (rc < 0) {
        json_decref(all);
        return rc;
    }
    *ret = all;
    return 0;
}
