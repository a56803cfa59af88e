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

/*
 * Call `rule` for each directive of the #include family in `source`, in
 * order, until one returns non-zero.  With `refuse_has_include`, a source
 * that uses __has_include (outside comments and strings), which could probe
 * host files, is refused first, as "<what> uses __has_include ...".
 * Returns 0, AVO_EINVAL for that refusal, the rule's code, or AVO_ENOMEM.
 */
int avo_includes_scan(const char *source, const char *what, int refuse_has_include,
                      avo_include_rule rule, void *ctx, char *err, size_t errlen);

/* Whether an include name is absolute or climbs with a ".." component. */
int avo_include_name_escapes(const char *name, size_t len);

#endif
