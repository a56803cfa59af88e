/*
 * includes.h — the #include gate's lexer, one for both backends: it finds
 * every directive that makes a compiler read a file as the preprocessor
 * sees it (lines spliced, comments and raw strings gone, digraphs
 * understood), and hands each to the backend's rule.  The CUDA backend
 * allows only names the evaluator provides (avo_cuda_check_includes,
 * cuda_pure.h); the CPU backend allows system and relative headers but no
 * absolute path and no "..", which name host files (eval/cpu/compile.c).
 * Pure: no I/O, no globals.
 */
#ifndef AVO_INCLUDES_H
#define AVO_INCLUDES_H

#include <stddef.h>

/* One directive of the #include family. */
typedef struct avo_include {
    int line;              /* 1-based line of the spliced source */
    const char *directive; /* its word: "include", "include_next", "import" or "embed" */
    size_t directive_len;
    char delim;       /* '"' or '<'; 0 for a computed include (#include MACRO) */
    const char *name; /* between the delimiters, or to the end of the line when unclosed */
    size_t name_len;
    int closed; /* the closing delimiter is on the line */
} avo_include;

/* A backend's rule: 0 to go on, or a negative AVO_E* code (err filled) to stop. */
typedef int (*avo_include_rule)(const avo_include *inc, void *ctx, char *err, size_t errlen);

/* How avo_includes_scan reads a source. */
enum {
    /* Refuse a source that uses __has_include (outside comments and
     * strings), which could probe host files, as "<what> uses
     * __has_include ...", before any directive. */
    AVO_INCLUDES_REFUSE_HAS_INCLUDE = 1,
    /* Also every line as written (no splicing, no comments or literals
     * understood), after the lexer's pass.  For a C compiler, whose reading
     * of raw strings R"(...)" and digit separators 1'000 depends on -std
     * (gnu17 has raw strings, c11 not; c2x has separators): a directive
     * either reading finds is checked, so a source the lexer reads one way
     * and the compiler another cannot hide one. */
    AVO_INCLUDES_RAW_LINES = 2,
};

/*
 * Call `rule` for each directive of the #include family in `source`, in
 * order, as the lexer finds them (lines spliced, comments, strings and raw
 * strings understood as C++ does), until one returns non-zero; `flags`
 * (AVO_INCLUDES_*) add to that.  `what` names the source in messages.
 * Returns 0, AVO_EINVAL for a refused __has_include, the rule's code, or
 * AVO_ENOMEM.
 */
int avo_includes_scan(const char *source, const char *what, int flags, avo_include_rule rule,
                      void *ctx, char *err, size_t errlen);

/* Whether an include name is absolute or climbs with a ".." component. */
int avo_include_name_escapes(const char *name, size_t len);

#endif
