/*
 * kb.h — the knowledge base: notes, text and source files indexed for
 * ranked full-text search (SQLite FTS5), for agents and people looking for
 * optimisation techniques while they work on a kernel.
 *
 * Where it lives.  A knowledge base is a set of tables in any SQLite file:
 * a standalone KB file or a run's archive, where it sits beside the
 * archive's tables.  The tables kb_meta, kb_docs and kb_fts (with the FTS5
 * shadow tables kb_fts_*) are owned by this module alone and versioned by
 * their own row kb_meta('schema_version'), independently of the archive's
 * PRAGMA user_version, and brought up to date by the same routine as the
 * archive's tables (store/db.h, avo_db_migrate); the archive never reads or
 * migrates them.  A
 * standalone KB file holds only these tables, and the archive does not
 * count kb_ tables when it checks for a foreign database, so any KB file can
 * later take runs (`avo run --db FILE`), and the default file of the CLI,
 * avo.db, is the default archive.
 *
 * Documents.  A document is one file, keyed by its path as given (leading
 * "./" removed).  Adding the same path again replaces it; a document whose
 * content hash is unchanged is left alone.  Each document is split into
 * sections that are searched and ranked separately: markdown at its
 * headings (outside code fences), text and source files into chunks of
 * about 60 lines ending at a blank line where one is near.
 *
 * Queries.  Search takes free text from users and LLMs and never passes it
 * to FTS5 as query syntax: the text is split at white space, every word
 * becomes a quoted FTS5 string (so operators, parentheses, quotes, NEAR and
 * column filters are plain text), words without a letter or digit are
 * dropped, and a word ending in '*' is a prefix search.  Common English
 * words ("how", "the", "to", ...) are dropped too unless nothing else
 * remains.  The words are joined with OR and ranked by FTS5's bm25, with
 * section titles weighted 5x the body: sections holding more of the words,
 * rarer words, and words in their heading come first, and a query with one
 * unknown word still finds what the others match.  Stemming (porter) makes
 * "tiles" find "tiling" and "vectorise" find "vectorisation".
 *
 * Results are jansson values owned by the caller (json_decref).  An avo_kb
 * is used by one thread only; every write is one transaction that has
 * committed or rolled back before the call returns.
 */
#ifndef AVO_KB_H
#define AVO_KB_H

#include <jansson.h>

#include "core/avo.h"

#define AVO_KB_SCHEMA_VERSION 1

/* Files larger than this are skipped by avo_kb_add_dir. */
#define AVO_KB_MAX_FILE_BYTES (1024 * 1024)

typedef struct avo_kb avo_kb;
struct avo_archive;

/* What avo_kb_add_dir did. */
typedef struct avo_kb_stats {
    int added;     /* new documents */
    int replaced;  /* documents whose content changed */
    int unchanged; /* documents already indexed with the same content */
    int removed;   /* documents under the directory whose file is gone */
    int skipped;   /* files of other types, hidden, too large or binary */
    int sections;  /* sections written by this call */
} avo_kb_stats;

/*
 * Open the knowledge base in the SQLite file at `path`, creating the file
 * and the kb tables when absent (and nothing else, see above).  A KB written by a newer avo is refused (AVO_ESCHEMA);
 * a SQLite built without FTS5 is reported as such.  On success *ret owns the
 * connection (free with avo_kb_free); on failure *ret is NULL.
 */
int avo_kb_open(avo_kb **ret, const char *path, char *err, size_t errlen);

/*
 * The knowledge base in a run's archive, on the archive's own connection
 * (no second connection, one busy timeout and one migration routine); its
 * tables are created when absent.  The KB holds its own reference to the
 * connection, so it may outlive `ar`.  On failure *ret is NULL.
 */
int avo_kb_open_archive(avo_kb **ret, struct avo_archive *ar, char *err, size_t errlen);

/* Close; accepts NULL. */
void avo_kb_free(avo_kb *kb);

/*
 * Index one document under `path`.  `text` is its content, or NULL to read
 * the file at `path`.  The kind (markdown, text, source) follows the
 * extension; other extensions are indexed as text.  *ret_changed (may be
 * NULL) is 1 when the document was added or replaced, 0 when it was already
 * there with the same content.
 */
int avo_kb_add_file(avo_kb *kb, const char *path, const char *text, int *ret_changed, char *err,
                    size_t errlen);

/*
 * Index every markdown (.md), text (.txt) and source (.c .h .cu .cuh .lua
 * .py) file under `dir`, recursively, in name order, skipping hidden files
 * and directories, symbolic links to directories, and files that are too
 * large or hold NUL bytes.  Documents previously added under `dir` whose
 * file is gone are removed, so adding a directory again brings the KB in
 * line with it.  All in one transaction.  ret_stats may be NULL.
 */
int avo_kb_add_dir(avo_kb *kb, const char *dir, avo_kb_stats *ret_stats, char *err, size_t errlen);

/*
 * Search with free text (see "Queries" above); at most `limit` results
 * (1..1000; other values mean 10).  *ret is an array, best first, of
 * {doc, doc_id, section, title, line, snippet, score}: doc is the path,
 * section the 1-based index of the section in its document, line its first
 * line, snippet a short excerpt with the matched words between ** markers,
 * score the relevance (-bm25: higher is better).  A query without any word
 * gives an empty array.
 */
int avo_kb_search(avo_kb *kb, const char *query, int limit, json_t **ret, char *err, size_t errlen);

/*
 * The document `doc` — its exact path, its id, or a path suffix after a '/'
 * ("softmax.md") naming exactly one document — as {id, path, kind, title,
 * hash, sections, text}.  AVO_ENOTFOUND when none matches, AVO_EINVAL when a
 * suffix matches several (err lists them).
 */
int avo_kb_read(avo_kb *kb, const char *doc, json_t **ret, char *err, size_t errlen);

/* Every document in path order: [{id, path, kind, title, hash, bytes,
 * sections, added_at}]. */
int avo_kb_list(avo_kb *kb, json_t **ret, char *err, size_t errlen);

#endif
