/*
 * kb.c — the knowledge base on SQLite FTS5 (see kb.h for the model).
 *
 * Invariants:
 *   - kb_docs holds one row per document with its full text; kb_fts holds
 *     one row per section (title, body, and the unindexed doc_id, section
 *     ordinal and first line).  A document's sections are always replaced
 *     together with its row, inside one transaction.
 *   - SQL goes through the layer of db.h: statements are cached by the
 *     connection and released after each use, no transaction stays open
 *     between calls, and rows become JSON with its text fallback (a Latin-1
 *     file is indexed, listed, searched and read, its non-ASCII bytes shown
 *     as '?').
 *   - Opened on a run's archive (avo_kb_open_archive), the KB shares the
 *     archive's connection; its tables are versioned by kb_meta through the
 *     same migration routine as the archive's (avo_db_migrate).
 *   - Text from users reaches SQL only as bound parameters, and reaches FTS5
 *     only through build_match(), which emits quoted strings and operators of
 *     its own; nothing a user types can be FTS5 syntax.
 */
#include "store/kb.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "store/archive.h"
#include "store/db.h"
#include "core/hash.h"
#include "core/strbuf.h"

/* Source and text files are cut into sections of about this many lines. */
#define CHUNK_LINES 60
/* A markdown section longer than this is cut like a text file. */
#define LONG_SECTION_LINES 120
/* At most this many words of a query are used. */
#define MAX_QUERY_TERMS 32
#define MAX_LIMIT 1000
#define DEFAULT_LIMIT 10

/*
 * Schema steps of the kb tables.  kb_steps[v] brings them from version v - 1
 * to v; append-only like the archive's migrations.  The version row lives in
 * kb_meta, which write_kb_version creates with the first step.
 */
static const char *const kb_steps[] = {
    [1] = "CREATE TABLE kb_docs ("
          "  id INTEGER PRIMARY KEY,"
          "  path TEXT NOT NULL UNIQUE,"
          "  kind TEXT NOT NULL,"
          "  title TEXT NOT NULL,"
          "  hash TEXT NOT NULL,"
          "  text TEXT NOT NULL,"
          "  sections INTEGER NOT NULL,"
          "  added_at REAL NOT NULL"
          ") STRICT;"
          "CREATE VIRTUAL TABLE kb_fts USING fts5("
          "  title, body, doc_id UNINDEXED, section UNINDEXED, line UNINDEXED,"
          "  tokenize = 'porter unicode61 remove_diacritics 2');",
};

_Static_assert(sizeof(kb_steps) / sizeof(kb_steps[0]) - 1 == AVO_KB_SCHEMA_VERSION,
               "one schema step per kb schema version");

struct avo_kb {
    avo_db *db; /* its own connection, or a reference to the archive's */
};

/* ---------------------------------------------------------------- opening */

/* The kb schema version recorded in the file (avo_db_schema.read); 0 when
 * there is none yet (no kb_meta: a file the KB has never touched). */
static int read_kb_version(avo_db *db, int *ret_version, char *err, size_t errlen)
{
    static const char *const what = "read knowledge base version";
    *ret_version = 0;
    sqlite3_stmt *st = NULL;
    int64_t has_meta = 0;
    int rc = avo_db_stmt(db,
                         "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"
                         " AND name = 'kb_meta'",
                         &st, err, errlen, what);
    if (rc == 0)
        rc = avo_db_single_id(db, st, &has_meta, err, errlen, what);
    if (rc < 0 || !has_meta)
        return rc;
    int64_t version = 0;
    rc = avo_db_stmt(db, "SELECT value FROM kb_meta WHERE key = 'schema_version'", &st, err, errlen,
                     what);
    if (rc == 0)
        rc = avo_db_single_id(db, st, &version, err, errlen, what);
    *ret_version = (int)version;
    return rc;
}

/* Record `version` in kb_meta, creating the table (avo_db_schema.write). */
static int write_kb_version(avo_db *db, int version, char *err, size_t errlen)
{
    static const char *const what = "record knowledge base version";
    int rc = avo_db_exec_script(db,
                                "CREATE TABLE IF NOT EXISTS kb_meta ("
                                "  key TEXT PRIMARY KEY,"
                                "  value INTEGER NOT NULL"
                                ") STRICT",
                                err, errlen, "create knowledge base tables");
    sqlite3_stmt *st = NULL;
    if (rc == 0)
        rc = avo_db_stmt(db,
                         "INSERT OR REPLACE INTO kb_meta (key, value) VALUES ('schema_version', ?)",
                         &st, err, errlen, what);
    if (rc < 0)
        return rc;
    sqlite3_bind_int(st, 1, version);
    return avo_db_step_done(db, st, err, errlen, what);
}

static const avo_db_schema kb_schema = {
    .name = "knowledge base",
    .in_file = "knowledge base in",
    .steps = kb_steps,
    .version = AVO_KB_SCHEMA_VERSION,
    .read = read_kb_version,
    .write = write_kb_version,
};

/*
 * A KB on the connection db (the reference is the KB's from here on, freed
 * on failure too), its tables brought to AVO_KB_SCHEMA_VERSION; the write
 * lock is taken only when they need creating.
 */
static int kb_on(avo_kb **ret, avo_db *db, char *err, size_t errlen)
{
    avo_kb *kb = calloc(1, sizeof *kb);
    if (!kb) {
        avo_db_unref(db);
        return avo_db_oom(err, errlen);
    }
    kb->db = db;
    int rc = avo_db_migrate(db, &kb_schema, err, errlen);
    if (rc < 0) {
        avo_kb_free(kb);
        return rc;
    }
    *ret = kb;
    return 0;
}

/*
 * Open the KB in `path`, creating its tables if needed.  A file of its own
 * holds only kb_ tables, which the archive does not count as foreign
 * (schema.c, read_version), so a run can later use the same file.
 */
int avo_kb_open(avo_kb **ret, const char *path, char *err, size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "no place to return the knowledge base");
    *ret = NULL;
    if (!path || !*path)
        return avo_error(err, errlen, AVO_EINVAL, "no knowledge base path");
    avo_db *db = avo_db_new(path);
    if (!db)
        return avo_db_oom(err, errlen);
    int rc = avo_db_connect(db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL, "knowledge base",
                            err, errlen);
    if (rc < 0) {
        avo_db_unref(db);
        return rc;
    }
    return kb_on(ret, db, err, errlen);
}

int avo_kb_open_archive(avo_kb **ret, avo_archive *ar, char *err, size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "no place to return the knowledge base");
    *ret = NULL;
    if (!ar)
        return avo_error(err, errlen, AVO_EINVAL, "no archive to hold the knowledge base");
    return kb_on(ret, avo_db_ref(avo_archive_db(ar)), err, errlen);
}

void avo_kb_free(avo_kb *kb)
{
    if (!kb)
        return;
    avo_db_unref(kb->db);
    free(kb);
}

/* -------------------------------------------------------------- sections */

typedef struct section {
    char *title;  /* owned */
    size_t start; /* byte range of the document's text */
    size_t end;
    int line; /* 1-based first line */
} section;

typedef struct section_list {
    section *items;
    size_t n, cap;
} section_list;

static void sections_free(section_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].title);
    free(l->items);
    *l = (section_list){0};
}

/* Append a section; takes ownership of title (freed on failure). */
static int sections_push(section_list *l, char *title, size_t start, size_t end, int line)
{
    if (!title)
        return AVO_ENOMEM;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        section *items = realloc(l->items, cap * sizeof *items);
        if (!items) {
            free(title);
            return AVO_ENOMEM;
        }
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = (section){title, start, end, line};
    return 0;
}

/* printf into a malloc'ed string (caller frees), or NULL. */
static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *str_printf(const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : s;
}

/* End of the line starting at p (offset of its '\n', or len). */
static size_t line_end(const char *text, size_t len, size_t p)
{
    const char *nl = memchr(text + p, '\n', len - p);
    return nl ? (size_t)(nl - text) : len;
}

static int blank_line(const char *text, size_t start, size_t end)
{
    for (size_t i = start; i < end; i++)
        if (!isspace((unsigned char)text[i]))
            return 0;
    return 1;
}

/*
 * Cut [start, end) into chunks of about CHUNK_LINES lines, each ending after
 * the last blank line among its final third when there is one, and a short
 * tail (under a sixth of a chunk) joined to the chunk before.  Titles are
 * "<base> lines A-B".
 */
static int chunk_lines(section_list *out, const char *text, size_t start, size_t end,
                       int first_line, const char *base)
{
    size_t p = start;
    int line = first_line;
    while (p < end) {
        size_t q = p, cut = 0;
        int n = 0, cut_lines = 0;
        while (q < end && n < CHUNK_LINES) {
            size_t e = line_end(text, end, q);
            size_t next = e < end ? e + 1 : end;
            n++;
            if (n >= CHUNK_LINES * 2 / 3 && blank_line(text, q, e)) {
                cut = next;
                cut_lines = n;
            }
            q = next;
        }
        if (q < end && cut) {
            q = cut;
            n = cut_lines;
        }
        /* Join a short remainder to this chunk. */
        size_t r = q;
        int rest = 0;
        while (r < end && rest <= CHUNK_LINES / 6) {
            size_t e = line_end(text, end, r);
            r = e < end ? e + 1 : end;
            rest++;
        }
        if (r >= end && rest <= CHUNK_LINES / 6) {
            q = end;
            n += rest;
        }
        if (!blank_line(text, p, q)) {
            int rc = sections_push(out, str_printf("%s lines %d-%d", base, line, line + n - 1), p,
                                   q, line);
            if (rc < 0)
                return rc;
        }
        line += n;
        p = q;
    }
    return 0;
}

/* A markdown fence line (``` or ~~~ after at most three spaces). */
static int fence_line(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && i < 3 && s[i] == ' ')
        i++;
    return n - i >= 3 && (!strncmp(s + i, "```", 3) || !strncmp(s + i, "~~~", 3));
}

/* Heading level (1-6) of a markdown line, its text in [*ret_from, *ret_to); 0 if none. */
static int heading_level(const char *s, size_t n, size_t *ret_from, size_t *ret_to)
{
    size_t i = 0;
    while (i < n && s[i] == '#')
        i++;
    if (i == 0 || i > 6 || (i < n && s[i] != ' ' && s[i] != '\t'))
        return 0;
    size_t from = i, to = n;
    while (from < to && isspace((unsigned char)s[from]))
        from++;
    while (to > from && (isspace((unsigned char)s[to - 1]) || s[to - 1] == '#'))
        to--;
    if (from == to)
        return 0;
    *ret_from = from;
    *ret_to = to;
    return (int)i;
}

/* Title of a markdown section: its heading path below the document title
 * ("Pipelining > cp.async"), or the level-1 heading itself. */
static char *heading_title(char *const stack[7], int level)
{
    avo_strbuf b = {0};
    int from = level == 1 ? 1 : 2;
    for (int l = from; l <= level; l++) {
        if (!stack[l])
            continue;
        if (b.len)
            avo_strbuf_puts(&b, " > ");
        avo_strbuf_puts(&b, stack[l]);
    }
    return avo_strbuf_steal(&b);
}

/* Add one markdown section, cut into chunks when very long. */
static int push_md_section(section_list *out, const char *text, size_t start, size_t end, int line,
                           char *title)
{
    if (blank_line(text, start, end)) {
        free(title);
        return 0;
    }
    int lines = 0;
    for (size_t i = start; i < end; i++)
        lines += text[i] == '\n';
    if (lines <= LONG_SECTION_LINES)
        return sections_push(out, title, start, end, line);
    int rc = title ? chunk_lines(out, text, start, end, line, title) : AVO_ENOMEM;
    free(title);
    return rc;
}

/*
 * Split markdown at headings outside code fences.  Text before the first
 * heading is a section titled `preamble_title`.  *ret_doc_title (owned by
 * the caller; may stay NULL) gets the first heading of level 1, or else the
 * first heading.
 */
static int split_markdown(section_list *out, const char *text, size_t len,
                          const char *preamble_title, char **ret_doc_title)
{
    char *stack[7] = {0};
    int in_fence = 0, have_h1 = 0, line = 1, start_line = 1, rc = 0;
    size_t start = 0;
    char *title = strdup(preamble_title);
    for (size_t p = 0; p < len && rc == 0;) {
        size_t e = line_end(text, len, p);
        size_t from, to;
        int level;
        if (fence_line(text + p, e - p)) {
            in_fence = !in_fence;
        } else if (!in_fence && (level = heading_level(text + p, e - p, &from, &to))) {
            rc = push_md_section(out, text, start, p, start_line, title);
            title = NULL;
            for (int l = level; l <= 6; l++) {
                free(stack[l]);
                stack[l] = NULL;
            }
            stack[level] = strndup(text + p + from, to - from);
            if (!stack[level])
                rc = AVO_ENOMEM;
            /* The document's title: its first level-1 heading, else its first heading. */
            if (rc == 0 && (!*ret_doc_title || (level == 1 && !have_h1))) {
                free(*ret_doc_title);
                *ret_doc_title = strdup(stack[level]);
                have_h1 |= level == 1;
            }
            title = heading_title(stack, level);
            start = p;
            start_line = line;
        }
        p = e < len ? e + 1 : len;
        line++;
    }
    if (rc == 0)
        rc = push_md_section(out, text, start, len, start_line, title);
    else
        free(title);
    for (int l = 0; l <= 6; l++)
        free(stack[l]);
    return rc;
}

/* ------------------------------------------------------------- documents */

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* "markdown", "text", "source", or NULL for a type add_dir skips. */
static const char *kind_of(const char *path)
{
    static const struct {
        const char *ext, *kind;
    } kinds[] = {
        {".md", "markdown"}, {".markdown", "markdown"}, {".txt", "text"},
        {".c", "source"},    {".h", "source"},          {".cu", "source"},
        {".cuh", "source"},  {".lua", "source"},        {".py", "source"},
    };
    const char *dot = strrchr(base_name(path), '.');
    if (!dot)
        return NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(dot, kinds[i].ext))
            return kinds[i].kind;
    return NULL;
}

/* `path` without leading "./" (a pointer into it). */
static const char *clean_path(const char *path)
{
    while (path[0] == '.' && path[1] == '/') {
        path += 2;
        while (*path == '/')
            path++;
    }
    return path;
}

/* Read a whole file into a NUL-terminated malloc'ed buffer (caller frees). */
static int read_file(const char *path, char **ret, size_t *ret_len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return avo_error(err, errlen, errno == ENOENT ? AVO_ENOTFOUND : AVO_EIO,
                         "cannot read '%s': %s", path, strerror(errno));
    avo_strbuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        avo_strbuf_append(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        avo_strbuf_free(&b);
        return avo_error(err, errlen, AVO_EIO, "cannot read '%s'", path);
    }
    if (!b.data)
        avo_strbuf_puts(&b, "");
    *ret_len = b.len;
    *ret = avo_strbuf_steal(&b);
    return *ret ? 0 : avo_error(err, errlen, AVO_ENOMEM, "out of memory");
}

/* Delete a document's sections (not its row). */
static int delete_sections(avo_kb *kb, int64_t doc_id, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(kb->db, "DELETE FROM kb_fts WHERE doc_id = ?", &st, err, errlen,
                         "delete document sections");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, doc_id);
    return avo_db_step_done(kb->db, st, err, errlen, "delete document sections");
}

static int delete_doc(avo_kb *kb, int64_t doc_id, char *err, size_t errlen)
{
    int rc = delete_sections(kb, doc_id, err, errlen);
    sqlite3_stmt *st = NULL;
    if (rc == 0)
        rc = avo_db_stmt(kb->db, "DELETE FROM kb_docs WHERE id = ?", &st, err, errlen,
                         "delete document");
    if (rc < 0)
        return rc;
    sqlite3_bind_int64(st, 1, doc_id);
    return avo_db_step_done(kb->db, st, err, errlen, "delete document");
}

enum { DOC_UNCHANGED, DOC_ADDED, DOC_REPLACED };

/*
 * Write one document and its sections; the caller holds a transaction.
 * *ret_status is DOC_UNCHANGED, DOC_ADDED or DOC_REPLACED; *ret_sections the
 * number of sections written.  A replaced document keeps its id.
 */
static int put_doc(avo_kb *kb, const char *path, const char *text, size_t len, int *ret_status,
                   int *ret_sections, char *err, size_t errlen)
{
    *ret_status = DOC_UNCHANGED;
    *ret_sections = 0;
    if (memchr(text, '\0', len))
        return avo_error(err, errlen, AVO_EINVAL, "'%s' is not text (it holds NUL bytes)", path);
    char hash[AVO_HASH_HEXLEN + 1];
    if (avo_hash_hex(text, len, hash) < 0)
        return avo_error(err, errlen, AVO_ENOMEM, "cannot hash '%s'", path);

    sqlite3_stmt *st = NULL;
    int64_t doc_id = 0;
    int same = 0;
    int rc = avo_db_stmt(kb->db, "SELECT id, hash FROM kb_docs WHERE path = ?", &st, err, errlen,
                         "look up document");
    if (rc < 0)
        return rc;
    avo_db_bind_text(st, 1, path);
    rc = avo_db_step_row(kb->db, st, err, errlen, "look up document");
    if (rc == 1) {
        doc_id = sqlite3_column_int64(st, 0);
        same = !strcmp((const char *)sqlite3_column_text(st, 1), hash);
        rc = 0;
    }
    avo_db_release(st);
    if (rc < 0 || same)
        return rc;

    int existed = doc_id != 0;
    const char *kind = kind_of(path);
    if (!kind)
        kind = "text";
    section_list secs = {0};
    char *doc_title = NULL;
    const char *base = base_name(path);
    if (!strcmp(kind, "markdown"))
        rc = split_markdown(&secs, text, len, base, &doc_title);
    else
        rc = chunk_lines(&secs, text, 0, len, 1, base);
    if (rc < 0) {
        rc = avo_error(err, errlen, rc, "cannot split '%s' into sections: out of memory", path);
        goto out;
    }

    if (existed) {
        rc = delete_sections(kb, doc_id, err, errlen);
        if (rc < 0)
            goto out;
        rc = avo_db_stmt(kb->db,
                         "UPDATE kb_docs SET kind = ?2, title = ?3, hash = ?4, text = ?5,"
                         " sections = ?6, added_at = ?7 WHERE id = ?1",
                         &st, err, errlen, "write document");
        if (rc < 0)
            goto out;
        sqlite3_bind_int64(st, 1, doc_id);
    } else {
        rc = avo_db_stmt(kb->db,
                         "INSERT INTO kb_docs (path, kind, title, hash, text, sections, added_at)"
                         " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                         &st, err, errlen, "write document");
        if (rc < 0)
            goto out;
        sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    }
    sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, doc_title ? doc_title : base, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, text, (int)len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)secs.n);
    sqlite3_bind_double(st, 7, avo_now());
    rc = avo_db_step_done(kb->db, st, err, errlen, "write document");
    if (rc < 0)
        goto out;
    if (!doc_id)
        doc_id = avo_db_last_id(kb->db);

    rc = avo_db_stmt(
        kb->db, "INSERT INTO kb_fts (title, body, doc_id, section, line) VALUES (?, ?, ?, ?, ?)",
        &st, err, errlen, "index section");
    for (size_t i = 0; rc == 0 && i < secs.n; i++) {
        const section *s = &secs.items[i];
        sqlite3_bind_text(st, 1, s->title, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, text + s->start, (int)(s->end - s->start), SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, doc_id);
        sqlite3_bind_int64(st, 4, (sqlite3_int64)i + 1);
        sqlite3_bind_int(st, 5, s->line);
        rc = avo_db_step_done(kb->db, st, err, errlen, "index section");
    }
    if (rc == 0) {
        *ret_status = existed ? DOC_REPLACED : DOC_ADDED;
        *ret_sections = (int)secs.n;
    }
out:
    sections_free(&secs);
    free(doc_title);
    return rc;
}

int avo_kb_add_file(avo_kb *kb, const char *path, const char *text, int *ret_changed, char *err,
                    size_t errlen)
{
    if (ret_changed)
        *ret_changed = 0;
    if (!kb || !path || !*path)
        return avo_error(err, errlen, AVO_EINVAL, "add_file: missing argument");
    char *owned = NULL;
    size_t len = 0;
    if (text) {
        len = strlen(text);
    } else {
        int rc = read_file(path, &owned, &len, err, errlen);
        if (rc < 0)
            return rc;
        text = owned;
    }
    int rc = avo_db_begin(kb->db, err, errlen);
    int status = DOC_UNCHANGED, sections = 0;
    if (rc == 0)
        rc = avo_db_end(kb->db,
                        put_doc(kb, clean_path(path), text, len, &status, &sections, err, errlen),
                        err, errlen);
    free(owned);
    if (rc == 0 && ret_changed)
        *ret_changed = status != DOC_UNCHANGED;
    return rc;
}

/* --------------------------------------------------------------- folders */

/* Whether document `path` lies under directory `dir` (as cleaned by add_dir). */
static int path_under(const char *dir, const char *path)
{
    if (!strcmp(dir, "."))
        return path[0] != '/' && strncmp(path, "../", 3) != 0;
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return !strncmp(path, dir, n) && path[n] == '/';
}

typedef struct walk {
    avo_kb *kb;
    avo_kb_stats stats;
    json_t *seen; /* set of document paths found on disk */
    int depth;
} walk;

static int walk_dir(walk *w, const char *dir, char *err, size_t errlen);

/* Index one directory entry found by walk_dir. */
static int walk_entry(walk *w, const char *path, char *err, size_t errlen)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return avo_error(err, errlen, AVO_EIO, "cannot read '%s': %s", path, strerror(errno));
    if (S_ISLNK(sb.st_mode)) {
        /* Follow links to files; never links to directories (loops). */
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            w->stats.skipped++;
            return 0;
        }
    }
    if (S_ISDIR(sb.st_mode))
        return walk_dir(w, path, err, errlen);
    if (!S_ISREG(sb.st_mode) || !kind_of(path) || sb.st_size > AVO_KB_MAX_FILE_BYTES) {
        w->stats.skipped++;
        return 0;
    }
    char *text = NULL;
    size_t len = 0;
    int rc = read_file(path, &text, &len, err, errlen);
    if (rc < 0)
        return rc;
    if (memchr(text, '\0', len)) {
        free(text);
        w->stats.skipped++;
        return 0;
    }
    const char *doc = clean_path(path);
    int status, sections;
    rc = put_doc(w->kb, doc, text, len, &status, &sections, err, errlen);
    free(text);
    if (rc < 0)
        return rc;
    /* Unchecked: a file name need not be UTF-8, and must still be seen. */
    json_object_set_new_nocheck(w->seen, doc, json_true());
    if (status == DOC_UNCHANGED)
        w->stats.unchanged++;
    else if (status == DOC_REPLACED)
        w->stats.replaced++;
    else
        w->stats.added++;
    w->stats.sections += sections;
    return 0;
}

/* Index the entries of `dir` in name order, skipping hidden ones. */
static int walk_dir(walk *w, const char *dir, char *err, size_t errlen)
{
    if (w->depth >= 64)
        return avo_error(err, errlen, AVO_EINVAL, "'%s': directories nested too deep", dir);
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort);
    if (n < 0)
        return avo_error(err, errlen, errno == ENOENT ? AVO_ENOTFOUND : AVO_EIO,
                         "cannot read directory '%s': %s", dir, strerror(errno));
    int rc = 0;
    w->depth++;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        if (rc == 0 && name[0] != '.') {
            char *path = strcmp(dir, ".") ? str_printf("%s%s%s", dir,
                                                       dir[strlen(dir) - 1] == '/' ? "" : "/", name)
                                          : strdup(name);
            rc = path ? walk_entry(w, path, err, errlen)
                      : avo_error(err, errlen, AVO_ENOMEM, "out of memory");
            free(path);
        }
        free(names[i]);
    }
    free(names);
    w->depth--;
    return rc;
}

/* Remove documents under `dir` that the walk did not find. */
static int prune(walk *w, const char *dir, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(w->kb->db, "SELECT id, path FROM kb_docs ORDER BY id", &st, err, errlen,
                         "list documents");
    if (rc < 0)
        return rc;
    json_t *gone = json_array();
    if (!gone)
        rc = avo_db_oom(err, errlen);
    while (rc == 0 && (rc = avo_db_step_row(w->kb->db, st, err, errlen, "list documents")) == 1) {
        const char *path = (const char *)sqlite3_column_text(st, 1);
        rc = 0;
        if (path_under(dir, path) && !json_object_get(w->seen, path) &&
            json_array_append_new(gone, json_integer(sqlite3_column_int64(st, 0))) != 0)
            rc = avo_db_oom(err, errlen);
    }
    avo_db_release(st);
    size_t i;
    json_t *id;
    json_array_foreach(gone, i, id)
    {
        if (rc == 0)
            rc = delete_doc(w->kb, json_integer_value(id), err, errlen);
        if (rc == 0)
            w->stats.removed++;
    }
    json_decref(gone);
    return rc;
}

int avo_kb_add_dir(avo_kb *kb, const char *dir, avo_kb_stats *ret_stats, char *err, size_t errlen)
{
    if (ret_stats)
        *ret_stats = (avo_kb_stats){0};
    if (!kb || !dir || !*dir)
        return avo_error(err, errlen, AVO_EINVAL, "add_dir: missing argument");
    /* "./a/b/" -> "a/b"; "./" -> "." */
    char *clean = strdup(*clean_path(dir) ? clean_path(dir) : ".");
    if (!clean)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    for (size_t n = strlen(clean); n > 1 && clean[n - 1] == '/'; n--)
        clean[n - 1] = '\0';

    struct stat sb;
    int rc = 0;
    if (stat(clean, &sb) != 0)
        rc = avo_error(err, errlen, errno == ENOENT ? AVO_ENOTFOUND : AVO_EIO,
                       "cannot read directory '%s': %s", dir, strerror(errno));
    else if (!S_ISDIR(sb.st_mode))
        rc = avo_error(err, errlen, AVO_EINVAL, "'%s' is not a directory", dir);
    if (rc < 0) {
        free(clean);
        return rc;
    }

    walk w = {.kb = kb, .seen = json_object()};
    rc = w.seen ? avo_db_begin(kb->db, err, errlen) : avo_db_oom(err, errlen);
    if (rc == 0) {
        int body = walk_dir(&w, clean, err, errlen);
        if (body == 0)
            body = prune(&w, clean, err, errlen);
        rc = avo_db_end(kb->db, body, err, errlen);
    }
    json_decref(w.seen);
    free(clean);
    if (rc == 0 && ret_stats)
        *ret_stats = w.stats;
    return rc;
}

/* ---------------------------------------------------------------- search */

/* Words too common to narrow a search; dropped unless nothing else remains. */
static int stop_word(const char *w)
{
    static const char *const words[] = {
        "a",   "an",  "and", "are",  "as",   "at",   "be",  "by",   "can", "do",
        "for", "how", "i",   "in",   "is",   "it",   "of",  "on",   "or",  "that",
        "the", "to",  "use", "what", "when", "with", "why", "does", "my",  "we",
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcasecmp(w, words[i]))
            return 1;
    return 0;
}

typedef struct term {
    char *text; /* without quotes or trailing '*' */
    int prefix;
} term;

/*
 * Split free text into at most MAX_QUERY_TERMS distinct words (see kb.h).
 * Returns the count; terms[i].text are malloc'ed.  -1 when out of memory.
 */
static int split_terms(const char *query, term *terms)
{
    int n = 0;
    const char *p = query;
    while (*p && n < MAX_QUERY_TERMS) {
        while (*p && isspace((unsigned char)*p))
            p++;
        const char *q = p;
        while (*q && !isspace((unsigned char)*q))
            q++;
        if (q == p)
            break;
        char *w = malloc((size_t)(q - p) + 1);
        if (!w) {
            while (n > 0)
                free(terms[--n].text);
            return -1;
        }
        size_t len = 0;
        int wordy = 0;
        for (const char *c = p; c < q; c++) {
            if (*c == '"')
                continue; /* the one character a quoted FTS5 string cannot hold as is */
            w[len++] = *c;
            wordy |= isalnum((unsigned char)*c) || (unsigned char)*c >= 0x80;
        }
        int prefix = 0;
        while (len > 0 && w[len - 1] == '*') {
            len--;
            prefix = 1;
        }
        w[len] = '\0';
        p = q;
        int dup = 0;
        for (int i = 0; i < n && !dup; i++)
            dup = !strcasecmp(terms[i].text, w) && terms[i].prefix == prefix;
        /* A word needs a letter or digit before the '*', or FTS5 sees an empty phrase. */
        if (!wordy || dup || len == 0 ||
            (prefix && !isalnum((unsigned char)w[len - 1]) && (unsigned char)w[len - 1] < 0x80)) {
            free(w);
            continue;
        }
        terms[n++] = (term){w, prefix};
    }
    /* Drop common words unless only they remain. */
    int keep = 0;
    for (int i = 0; i < n; i++)
        keep += !stop_word(terms[i].text);
    if (keep > 0 && keep < n) {
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (stop_word(terms[i].text))
                free(terms[i].text);
            else
                terms[k++] = terms[i];
        }
        n = k;
    }
    return n;
}

/* An FTS5 expression joining every term, quoted, with `op`. */
static char *build_match(const term *terms, int n, const char *op)
{
    avo_strbuf b = {0};
    for (int i = 0; i < n; i++) {
        if (i)
            avo_strbuf_puts(&b, op);
        avo_strbuf_puts(&b, "\"");
        avo_strbuf_puts(&b, terms[i].text);
        avo_strbuf_puts(&b, terms[i].prefix ? "\"*" : "\"");
    }
    return avo_strbuf_steal(&b);
}

/* The best `limit` sections for the FTS5 expression `match`, as a new
 * array in *ret. */
static int run_match(avo_kb *kb, const char *match, int limit, json_t **ret, char *err,
                     size_t errlen)
{
    static const avo_db_column columns[] = {
        {"doc", AVO_DB_VALUE},   {"doc_id", AVO_DB_VALUE}, {"section", AVO_DB_VALUE},
        {"title", AVO_DB_VALUE}, {"line", AVO_DB_VALUE},   {"snippet", AVO_DB_VALUE},
        {"score", AVO_DB_VALUE},
    };
    static const avo_db_shape shape = {columns, sizeof columns / sizeof columns[0]};
    sqlite3_stmt *st = NULL;
    /* The auxiliary functions need the FTS table alone in its query, hence
     * the subquery; the rowid makes the order of equal scores stable; the
     * score is -bm25, higher is better. */
    int rc = avo_db_stmt(kb->db,
                         "SELECT d.path, s.doc_id, s.section, s.title, s.line, s.snip, -s.r"
                         " FROM (SELECT rowid AS rid, doc_id, section, title, line,"
                         "         snippet(kb_fts, 1, '**', '**', '...', 24) AS snip,"
                         "         bm25(kb_fts, 5.0, 1.0) AS r"
                         "       FROM kb_fts WHERE kb_fts MATCH ?1 ORDER BY r, rowid LIMIT ?2) AS s"
                         " JOIN kb_docs AS d ON d.id = s.doc_id ORDER BY s.r, s.rid",
                         &st, err, errlen, "search the knowledge base");
    if (rc < 0)
        return rc;
    avo_db_bind_text(st, 1, match);
    sqlite3_bind_int(st, 2, limit);
    return avo_db_collect_rows(kb->db, st, avo_db_row_object, &shape, ret, err, errlen,
                               "search the knowledge base");
}

int avo_kb_search(avo_kb *kb, const char *query, int limit, json_t **ret, char *err, size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "search: no place to return results");
    *ret = NULL;
    if (!kb || !query)
        return avo_error(err, errlen, AVO_EINVAL, "search: missing argument");
    if (limit < 1 || limit > MAX_LIMIT)
        limit = DEFAULT_LIMIT;
    term terms[MAX_QUERY_TERMS];
    int n = split_terms(query, terms);
    if (n < 0)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    json_t *out = NULL;
    int rc = 0;
    /* Any word; bm25 ranks sections holding more (and rarer) words higher. */
    if (n > 0) {
        char *match = build_match(terms, n, " OR ");
        rc = match ? run_match(kb, match, limit, &out, err, errlen) : avo_db_oom(err, errlen);
        free(match);
    } else if (!(out = json_array())) {
        rc = avo_db_oom(err, errlen);
    }
    for (int i = 0; i < n; i++)
        free(terms[i].text);
    if (rc < 0) {
        json_decref(out);
        return rc;
    }
    *ret = out;
    return 0;
}

/* ------------------------------------------------------------------ read */

#define DOC_COLUMNS "id, path, kind, title, hash, sections, text"

/*
 * Collect the documents matching `sql` with one text or integer parameter
 * into *matches (an array it creates); at most 6.
 */
static int find_docs(avo_kb *kb, const char *sql, const char *text, int64_t id, json_t **matches,
                     char *err, size_t errlen)
{
    static const avo_db_column columns[] = {
        {"id", AVO_DB_VALUE},    {"path", AVO_DB_VALUE}, {"kind", AVO_DB_VALUE},
        {"title", AVO_DB_VALUE}, {"hash", AVO_DB_VALUE}, {"sections", AVO_DB_VALUE},
        {"text", AVO_DB_VALUE},
    };
    static const avo_db_shape shape = {columns, sizeof columns / sizeof columns[0]};
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(kb->db, sql, &st, err, errlen, "read document");
    if (rc < 0)
        return rc;
    if (text)
        avo_db_bind_text(st, 1, text);
    else
        sqlite3_bind_int64(st, 1, id);
    *matches = json_array();
    if (!*matches)
        rc = avo_db_oom(err, errlen);
    while (rc == 0 && json_array_size(*matches) < 6 &&
           (rc = avo_db_step_row(kb->db, st, err, errlen, "read document")) == 1)
        rc = json_array_append_new(*matches, avo_db_row_object(st, &shape)) == 0
                 ? 0
                 : avo_db_oom(err, errlen);
    avo_db_release(st);
    return rc;
}

static int all_digits(const char *s)
{
    if (!*s || strlen(s) > 18)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

int avo_kb_read(avo_kb *kb, const char *doc, json_t **ret, char *err, size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "read: no place to return the document");
    *ret = NULL;
    if (!kb || !doc)
        return avo_error(err, errlen, AVO_EINVAL, "read: missing argument");
    const char *path = clean_path(doc);
    json_t *m = NULL;
    int rc = find_docs(kb, "SELECT " DOC_COLUMNS " FROM kb_docs WHERE path = ?", path, 0, &m, err,
                       errlen);
    if (rc == 0 && json_array_size(m) == 0 && all_digits(doc)) {
        json_decref(m);
        rc = find_docs(kb, "SELECT " DOC_COLUMNS " FROM kb_docs WHERE id = ?", NULL,
                       strtoll(doc, NULL, 10), &m, err, errlen);
    }
    if (rc == 0 && json_array_size(m) == 0 && *path) {
        json_decref(m);
        rc = find_docs(kb,
                       "SELECT " DOC_COLUMNS " FROM kb_docs"
                       " WHERE substr(path, -length(?1) - 1) = '/' || ?1 ORDER BY path",
                       path, 0, &m, err, errlen);
    }
    if (rc < 0) {
        json_decref(m);
        return rc;
    }
    size_t n = json_array_size(m);
    if (n == 1) {
        *ret = json_incref(json_array_get(m, 0));
    } else if (n == 0) {
        rc = avo_error(err, errlen, AVO_ENOTFOUND, "no document '%s' in the knowledge base", doc);
    } else {
        avo_strbuf b = {0};
        size_t i;
        json_t *d;
        json_array_foreach(m, i, d)
        {
            avo_strbuf_puts(&b, i ? ", " : "");
            avo_strbuf_puts(&b, i < 5 ? json_string_value(json_object_get(d, "path")) : "...");
        }
        rc = avo_error(err, errlen, AVO_EINVAL, "document '%s' is ambiguous: %s", doc,
                       avo_strbuf_text(&b));
        avo_strbuf_free(&b);
    }
    json_decref(m);
    return rc;
}

int avo_kb_list(avo_kb *kb, json_t **ret, char *err, size_t errlen)
{
    if (!ret)
        return avo_error(err, errlen, AVO_EINVAL, "list: no place to return documents");
    *ret = NULL;
    if (!kb)
        return avo_error(err, errlen, AVO_EINVAL, "list: missing argument");
    static const avo_db_column columns[] = {
        {"id", AVO_DB_VALUE},       {"path", AVO_DB_VALUE},     {"kind", AVO_DB_VALUE},
        {"title", AVO_DB_VALUE},    {"hash", AVO_DB_VALUE},     {"bytes", AVO_DB_VALUE},
        {"sections", AVO_DB_VALUE}, {"added_at", AVO_DB_VALUE},
    };
    static const avo_db_shape shape = {columns, sizeof columns / sizeof columns[0]};
    sqlite3_stmt *st = NULL;
    int rc = avo_db_stmt(kb->db,
                         "SELECT id, path, kind, title, hash, length(CAST(text AS BLOB)), sections,"
                         " added_at FROM kb_docs ORDER BY path",
                         &st, err, errlen, "list documents");
    if (rc < 0)
        return rc;
    return avo_db_collect_rows(kb->db, st, avo_db_row_object, &shape, ret, err, errlen,
                               "list documents");
}
