/*
 * export.h — the archive in other formats: CSV (one row per candidate and
 * config), JSON (runs and full candidates) and a git repository whose
 * commits are the candidates and whose merge commits are their crossovers.
 *
 * run_id 0 exports every run.  Nothing here prints; errors come back as
 * AVO_E* codes with one line in the caller's err buffer.
 */
#ifndef AVO_EXPORT_H
#define AVO_EXPORT_H

#include <stdint.h>

#include "store/archive.h"
#include "core/strbuf.h"

/* Append one CSV field per RFC 4180: quoted (with quotes doubled) when it
 * holds a comma, quote, CR or LF, or starts or ends with a space; NULL is
 * the empty field. */
int avo_export_csv_field(avo_strbuf *out, const char *field);

/*
 * Append the CSV of run_id's candidates to out: a header line, then one
 * CRLF-terminated row per (candidate, config) in id then config order; a
 * candidate without configs (failed to compile, pending) gets one row with
 * the config columns empty.  Columns: id, run_id, generation, operator,
 * status, reason, score, parents ("id:role;id:role"), knobs (JSON), note,
 * source_hash, created_at, config, correct, max_error, median_s, spread,
 * samples, gflops, gbs, config_reason.  Reals are written with 17 digits so
 * they read back exactly.
 */
int avo_export_csv(avo_archive *ar, int64_t run_id, avo_strbuf *out, char *err, size_t errlen);

/*
 * Append the CSV of run_id's baselines (the archive's baselines table) to
 * out: a header line, then one CRLF-terminated row per (baseline row,
 * config of its result); a baseline without configs (it failed before any
 * ran) gets one row with the config columns empty.  Columns: run_id,
 * device, device_name, baseline, status, reason, library, version, path,
 * score (empty when it has none: never 0 for a baseline that did not
 * measure), created_at, config, correct, unavailable (the reason a library
 * could not serve the config), max_error, median_s, spread, samples,
 * gflops, gbs, config_reason.  AVO_ENOTFOUND for a run_id naming no run.
 */
int avo_export_csv_baselines(avo_archive *ar, int64_t run_id, avo_strbuf *out, char *err,
                             size_t errlen);

/* Append {"runs": [run objects], "candidates": [candidate objects with
 * source], "baselines": [baseline rows]} (docs/archive.md shapes) as
 * indented JSON to out. */
int avo_export_json(avo_archive *ar, int64_t run_id, avo_strbuf *out, char *err, size_t errlen);

/*
 * Create a git repository at dir (which must not exist or be an empty
 * directory; AVO_EINVAL otherwise) holding one commit per candidate in id
 * order: tree kernel.c + knobs.json + scores.json, parents the commits of
 * its lineage parents (two for a crossover: a merge commit), message
 * "#<id> <operator> (gen <g>): score <s>" and details, author and committer
 * time its created_at.  Branch `main` points at the last candidate, `best`
 * at the best ok one, and lightweight tag c<id> at each; HEAD is main, and
 * its tree is checked out.  *ret_commits (may be NULL) gets the commit count.
 * The repository is built under a temporary name (DIR.tmp.XXXXXX beside a
 * new DIR; a hidden .avo-export.tmp.XXXXXX inside an existing empty one)
 * and appears under dir only when whole; on failure nothing is left.
 */
int avo_export_git(avo_archive *ar, int64_t run_id, const char *dir, size_t *ret_commits,
                   char *err, size_t errlen);

/*
 * Write len bytes to path.  A regular file (or a name that does not exist
 * yet) is written to a temporary file beside it, synced and renamed into
 * place, so a failed export never leaves a truncated file.  Anything else
 * is written through, as a shell's `>` would: a character device, a FIFO,
 * a socket's /proc/self/fd link, and any symlink (followed to its target,
 * which is then truncated and written in place, not atomically).  "-" is
 * standard output.  A directory is an error.
 */
int avo_export_save(const char *path, const char *data, size_t len, char *err, size_t errlen);

/*
 * Write n files whole or not at all (`avo experiment report`'s three): each
 * data[i] (len[i] bytes) goes to a temporary beside paths[i], synced and
 * closed with every step checked (a full disk fails there), and only when
 * all are written are they renamed into place; on a failure the temporaries
 * are removed and the files not yet renamed are as they were.  Each path is
 * replaced by a rename (a directory is an error).  AVO_EIO with "cannot
 * write PATH: reason".
 */
int avo_export_save_all(size_t n, const char *const *paths, const char *const *data,
                        const size_t *len, char *err, size_t errlen);

#endif
