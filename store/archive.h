/*
 * archive.h — the run archive: one SQLite file holding everything a run
 * decided or measured.
 *
 * The file is opened in WAL mode with foreign keys on; every table is STRICT.
 * The schema version lives in PRAGMA user_version and is migrated forward on
 * open, one step per version, each step in its own transaction; a file whose
 * version is newer than this build knows is refused (AVO_ESCHEMA) untouched.
 *
 * Writes are short transactions that commit before the call returns, so a
 * process killed at any instant leaves a consistent file that holds every
 * evaluation whose avo_archive_candidate_finish() returned.
 *
 * Query functions return jansson objects owned by the caller (json_decref).
 * Their shapes are documented in docs/archive.md and are what the CLI prints
 * for --json and what Lua sees.
 *
 * An avo_archive is used by one thread only.  It is written in layers, one
 * file each under store/ (archive_impl.h names them), on the SQL layer of
 * store/db.h.
 */
#ifndef AVO_ARCHIVE_H
#define AVO_ARCHIVE_H

#include <jansson.h>
#include <stdint.h>

#include "core/avo.h"

#define AVO_ARCHIVE_SCHEMA_VERSION 9

typedef struct avo_archive avo_archive;

/* What a run records about itself when it starts. Strings may be NULL. */
typedef struct avo_run_info {
    const char *script_path;
    const char *script_source;
    const char *config_json; /* JSON object: CLI options, budgets, jobs */
    uint64_t seed;
    const char *engine_version;
    const char *compiler;    /* e.g. "cc (Debian 12.2.0-14) 12.2.0" */
    const char *host;        /* hostname, cores, cpu model */
} avo_run_info;

/* A candidate at the moment it is submitted for evaluation. */
typedef struct avo_parent_edge {
    int64_t parent_id;
    const char *role; /* "parent", "ours", "theirs", "base", "inspiration", ... */
} avo_parent_edge;

typedef struct avo_candidate_info {
    int64_t run_id;
    int generation;
    const char *operator_name; /* "seed", "param_tweak", "crossover", ... */
    const char *source;        /* full kernel text */
    const char *knobs_json;    /* JSON object of knob values, "{}" when none */
    const char *note;          /* may be NULL */
    const char *key;           /* dedupe key (hash of source + knobs + evaluator); may be NULL */
    const char *evaluator;     /* the evaluator's name (its baselines are its own); may be NULL */
    const avo_parent_edge *parents;
    size_t n_parents;
} avo_candidate_info;

/*
 * Open or create the archive at `path` and migrate it to the current schema.
 * An existing file that fails PRAGMA quick_check is refused (AVO_ESQL,
 * naming it) before anything writes.  On success *ret owns the connection
 * (free with avo_archive_free).
 */
int avo_archive_open(avo_archive **ret, const char *path, char *err, size_t errlen);

/*
 * Open an existing archive for reading: as avo_archive_open when this
 * process can write the file and its directory (a file that is not yet an
 * archive is refused, AVO_EINVAL, never given a schema), else read-only
 * (an older schema migrated in a copy in memory, the file untouched,
 * nothing made beside it; WAL data without a -shm read from a private copy
 * under $TMPDIR); writes then fail.  The read commands use it, so a
 * finished experiment on a read-only mount stays readable.
 */
int avo_archive_open_read(avo_archive **ret, const char *path, char *err, size_t errlen);

/*
 * Open an existing archive to watch it while another process writes it
 * (`avo serve`): never for writing, even a file this process could write.
 * The connection is read-only with PRAGMA query_only and the busy timeout;
 * a writable file (and its live WAL) is read in place, so each new read
 * transaction sees the writer's latest commit and the writer never waits
 * on this reader (WAL); SQLite may make the -wal and -shm a writer makes
 * beside such a file.  A file this process cannot write is opened as
 * avo_archive_open_read opens it (nothing made beside it).
 */
int avo_archive_open_watch(avo_archive **ret, const char *path, char *err, size_t errlen);

/*
 * PRAGMA quick_check(1) of the archive: 1 when it answers "ok", 0 when the
 * file is damaged, with quick_check's first problem (or SQLite's error when
 * the check itself cannot run) on one line in the caller's `problem`;
 * AVO_EINVAL for a missing argument.  Reads every page: as long as the
 * file is large.
 */
int avo_archive_quick_check(avo_archive *ar, char *problem, size_t problem_len);

/* Whether the archive was opened read-only by avo_archive_open_read. */
int avo_archive_readonly(const avo_archive *ar);

/* Close; accepts NULL.  Releases a run claimed through this handle. */
void avo_archive_free(avo_archive *ar);

/* Schema version found on disk when opened (before migration). */
int avo_archive_opened_version(const avo_archive *ar);

/* The archive's SQLite connection (store/db.h), borrowed: for the modules
 * of store/ that keep their tables in the same file (kb.c's
 * avo_kb_open_archive takes its own reference). */
struct avo_db *avo_archive_db(avo_archive *ar);

int avo_archive_run_begin(avo_archive *ar, const avo_run_info *info, int64_t *ret_run_id,
                          char *err, size_t errlen);

/* Mark a run finished with status "done", "stopped", "interrupted" or
 * "failed". */
int avo_archive_run_end(avo_archive *ar, int64_t run_id, const char *status, char *err,
                        size_t errlen);

/* As avo_archive_run_end, only while the run is still "running" (the
 * watchdog's record, which must not overwrite an end already recorded).
 * Returns 1 when recorded, 0 when the run had already ended, or a negative
 * AVO_E* code. */
int avo_archive_run_end_running(avo_archive *ar, int64_t run_id, const char *status, char *err,
                                size_t errlen);

/*
 * Claim run_id for this process for as long as the handle is open: one
 * process drives a run.  AVO_EBUSY, err naming the owner (pid, host, since),
 * when another process holds it, or when it is still `running` under an
 * owner on another host and `takeover` is 0.  A stale owner on this host (its
 * process is gone) is replaced and returned in *ret_previous (caller frees;
 * NULL otherwise).  In-memory archives always succeed.
 */
int avo_archive_run_claim(avo_archive *ar, int64_t run_id, int takeover, json_t **ret_previous,
                          char *err, size_t errlen);

/* Put back a run's status, ended_at (<= 0: NULL) and owner (JSON or NULL)
 * and delete its events after event id last_event: the undo of a refused
 * resume. */
int avo_archive_run_restore(avo_archive *ar, int64_t run_id, const char *status, double ended_at,
                            const char *owner_json, int64_t last_event, char *err, size_t errlen);

/* 1 when a process on this machine holds run_id's claim, else 0. */
int avo_archive_run_live(avo_archive *ar, int64_t run_id);

/* Store a source by content (idempotent); writes its git blob id into ret_hash. */
int avo_archive_put_source(avo_archive *ar, const char *text, char ret_hash[41], char *err,
                           size_t errlen);

/* Insert a pending candidate, its source and its parent edges in one
 * transaction.  The id is assigned here, so submission order fixes ids. */
int avo_archive_candidate_add(avo_archive *ar, const avo_candidate_info *info, int64_t *ret_id,
                              char *err, size_t errlen);

/*
 * Record the outcome of evaluating candidate `id` in one transaction.
 * `result` is the worker's result object (status, reason, log, compile and
 * run metadata, and "configs": [{name, correct, max_error, median_s, spread,
 * samples, gflops, gbs, reason}]); `score` is the aggregate the evaluator
 * computed from it (0 for failed candidates).
 */
int avo_archive_candidate_finish(avo_archive *ar, int64_t id, const json_t *result, double score,
                                 char *err, size_t errlen);

/* Append an event (kind, JSON payload text or NULL) to the run's log. */
int avo_archive_event(avo_archive *ar, int64_t run_id, const char *kind, const char *data_json,
                      char *err, size_t errlen);

/* The candidate with this id: object with id, run_id, generation, operator,
 * status, reason, log, score, source_hash, knobs (object), note, key,
 * created_at, evaluated_at, parents ([{id, role}]), children ([ids]),
 * configs ([...]) and, if with_source, source. *ret NULL and AVO_ENOTFOUND if
 * absent. */
int avo_archive_candidate_get(avo_archive *ar, int64_t id, int with_source, json_t **ret,
                              char *err, size_t errlen);

/* Finished candidate with this dedupe key in any run, or AVO_ENOTFOUND. */
int avo_archive_candidate_by_key(avo_archive *ar, const char *key, json_t **ret, char *err,
                                 size_t errlen);

/* Best finished candidate (highest score, then lowest id) of run_id, or of
 * the latest run when run_id is 0. */
int avo_archive_best(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen);

/* Ancestors of `id` including itself, as an array of {id, parents:[{id,role}],
 * operator, generation, status, score}, nearest first (breadth-first). */
int avo_archive_lineage(avo_archive *ar, int64_t id, json_t **ret, char *err, size_t errlen);

/* Nearest common ancestor of a and b (either may be an ancestor of the other);
 * *ret_id = 0 when they share none. */
int avo_archive_common_ancestor(avo_archive *ar, int64_t a, int64_t b, int64_t *ret_id,
                                char *err, size_t errlen);

/* The run row as an object; run_id 0 = the latest run. */
int avo_archive_run_get(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen);

/* Source text by hash (caller frees), or AVO_ENOTFOUND. */
int avo_archive_source_get(avo_archive *ar, const char *hash, char **ret_text, char *err,
                           size_t errlen);

/* The run_get object of run_id (0: the latest run) plus its summary:
 * candidates, ok, failed (finished, not ok), best_id and best_score (null
 * without an ok candidate), attempts ({explored, committed, outcomes}, the
 * agent's attempts; re-timings count in outcomes only), unit (of the
 * scores, from the run's evaluator event; null when not recorded) and
 * baselines (avo_archive_baselines of the run). */
int avo_archive_run_summary(avo_archive *ar, int64_t run_id, json_t **ret, char *err,
                            size_t errlen);

/* Every run, oldest first, each as avo_archive_run_summary() gives it. */
int avo_archive_runs(avo_archive *ar, json_t **ret, char *err, size_t errlen);

/* Every candidate of run_id (0: all runs) in id order, each as candidate_get
 * returns it (with source if with_source).  AVO_ENOTFOUND for an unknown run. */
int avo_archive_candidates(avo_archive *ar, int64_t run_id, int with_source, json_t **ret,
                           char *err, size_t errlen);

/* Every candidate of run_id (0: all runs) in id order, brief: only what a
 * run's page reads of every candidate (cli/report.h) -- id, generation,
 * operator, status, reason, score, created_at, evaluated_at, result and
 * configs, each config with only its name, gflops and gbs -- with the
 * values avo_archive_candidates gives.  Without the log, knobs, note, key,
 * source hash, evaluator, parents and children (and the rest of each
 * config), a run of 100,000 reads in half the memory.  AVO_ENOTFOUND for an
 * unknown run; *ret owned by the caller. */
int avo_archive_candidates_brief(avo_archive *ar, int64_t run_id, json_t **ret, char *err,
                                 size_t errlen);

/* LLM spend of run_id (0: all runs): {"calls": n} plus the sums of whichever
 * of input_tokens, output_tokens, tokens, cost, cost_usd, latency_s the
 * llm_calls table has.  {"calls": 0} when the archive has no such table. */
int avo_archive_llm_spend(avo_archive *ar, int64_t run_id, json_t **ret, char *err,
                          size_t errlen);

/* Events of a run, oldest first, optionally of one kind: [{id, t, kind, data}]. */
int avo_archive_events(avo_archive *ar, int64_t run_id, const char *kind, json_t **ret,
                       char *err, size_t errlen);

/* A rebench evaluation set of a run (avo rebench), and its per-round results. */
int avo_archive_rebench_begin(avo_archive *ar, int64_t run_id, const char *config_json,
                              int64_t *ret_id, char *err, size_t errlen);
int avo_archive_rebench_add(avo_archive *ar, int64_t set_id, int64_t candidate_id, int round,
                            double score, const char *result_json, char *err, size_t errlen);

/*
 * Record one LLM call.  `call` (borrowed) is an object with provider, model,
 * request_hash, request (any JSON, stored as compact text), response (any
 * JSON or null), status ("ok", "error"), error, input_tokens, output_tokens,
 * cost_usd, latency_s, attempts; missing numbers are 0.  run_id 0: no run.
 * The caller guarantees the request holds no credentials.
 */
int avo_archive_llm_call_add(avo_archive *ar, int64_t run_id, const json_t *call,
                             int64_t *ret_id, char *err, size_t errlen);

/* LLM calls of run_id (0: all runs), oldest first, each an object with the
 * columns of llm_calls; request and response parsed. */
int avo_archive_llm_calls(avo_archive *ar, int64_t run_id, json_t **ret, char *err,
                          size_t errlen);

/*
 * Record one agent attempt (an evaluation an agent made, schema step 4).
 * `attempt` (borrowed): step (integer), lineage, source (text, stored in
 * sources), knobs (object), status, score (number or null), outcome
 * ("evaluated", "committed", "rejected_slower", ...), reason, candidate_id
 * (integer or null), configs (any JSON, stored as text).
 */
int avo_archive_attempt_add(avo_archive *ar, int64_t run_id, const json_t *attempt,
                            int64_t *ret_id, char *err, size_t errlen);

/* Set attempt `id`'s outcome; reason (NULL) and candidate_id (0) are left
 * unchanged when not given.  AVO_ENOTFOUND for an unknown id. */
int avo_archive_attempt_update(avo_archive *ar, int64_t id, const char *outcome,
                               const char *reason, int64_t candidate_id, char *err, size_t errlen);

/* Attempts of run_id (0: all runs), oldest first, each an object with the
 * columns of attempts; knobs and configs parsed. */
int avo_archive_attempts(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen);

/*
 * Record one baseline measurement (schema step 6): `baseline` (borrowed) has
 * name, device ("cpu", "cuda:N"), status (strings, required), device_name,
 * reason, library, version, path (strings or null), result (any JSON: the
 * worker's result, stored as text) and score (number, or null when the
 * baseline has no aggregate score).  One row per (run, device, name): a
 * second put replaces the first.
 */
int avo_archive_baseline_put(avo_archive *ar, int64_t run_id, const json_t *baseline,
                             int64_t *ret_id, char *err, size_t errlen);

/* Baselines of run_id (0: all runs) ordered by run, name and device, each an
 * object with the columns of baselines; result parsed.  [] when none. */
int avo_archive_baselines(avo_archive *ar, int64_t run_id, json_t **ret, char *err, size_t errlen);

/* Set a run back to "running" (used by resume). */
int avo_archive_run_reopen(avo_archive *ar, int64_t run_id, char *err, size_t errlen);

/* ------------------------------------------------------------ experiments */

/* A new experiment (avo experiment FILE.lua); strings borrowed. */
typedef struct avo_experiment_info {
    const char *name, *path, *source, *hash;
    const char *plan_json;      /* the planned cells, JSON */
    const char *machine_json;   /* the machine description, JSON, or NULL */
    const char *engine_version; /* or NULL */
} avo_experiment_info;

int avo_archive_experiment_add(avo_archive *ar, const avo_experiment_info *info, int64_t *ret_id,
                               char *err, size_t errlen);
int avo_archive_experiments(avo_archive *ar, json_t **ret, char *err, size_t errlen);
int avo_archive_experiment_cell_put(avo_archive *ar, int64_t experiment_id, const char *cell,
                                    int64_t run_id, const char *status, const char *reason,
                                    int exit_code, char *err, size_t errlen);
int avo_archive_experiment_cells(avo_archive *ar, int64_t experiment_id, json_t **ret, char *err,
                                 size_t errlen);

#endif
