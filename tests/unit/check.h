/*
 * check.h — the few assertion macros the unit tests share.  A failed check
 * prints file:line and the expression and marks the test failed; the test
 * goes on so one run shows every failure.  main() ends with
 * `return check_finish();` (0 pass, 1 fail).  Exit 77 means skipped.
 */
#ifndef AVO_CHECK_H
#define AVO_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(expr)                                                                  \
    do {                                                                             \
        if (!(expr)) {                                                               \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #expr);         \
            check_failures++;                                                        \
        }                                                                            \
    } while (0)

#define CHECK_INT(a, b)                                                              \
    do {                                                                             \
        long long va_ = (long long)(a), vb_ = (long long)(b);                        \
        if (va_ != vb_) {                                                            \
            fprintf(stderr, "FAIL %s:%d: %s == %s (%lld != %lld)\n", __FILE__, __LINE__, \
                    #a, #b, va_, vb_);                                               \
            check_failures++;                                                        \
        }                                                                            \
    } while (0)

#define CHECK_STR(a, b)                                                              \
    do {                                                                             \
        const char *sa_ = (a), *sb_ = (b);                                           \
        if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                                 \
            fprintf(stderr, "FAIL %s:%d: %s == %s (\"%s\" != \"%s\")\n", __FILE__,   \
                    __LINE__, #a, #b, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");   \
            check_failures++;                                                        \
        }                                                                            \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                  \
    do {                                                                             \
        const char *h_ = (hay), *n_ = (needle);                                      \
        if (!h_ || !strstr(h_, n_)) {                                                \
            fprintf(stderr, "FAIL %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, \
                    __LINE__, h_ ? h_ : "(null)", n_);                               \
            check_failures++;                                                        \
        }                                                                            \
    } while (0)

static inline int check_finish(void)
{
    if (check_failures)
        fprintf(stderr, "%d check(s) failed\n", check_failures);
    return check_failures ? 1 : 0;
}

#endif
