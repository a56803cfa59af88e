/*
 * test_hash.c — content addresses equal `git hash-object` blob ids, and
 * compound keys keep their part boundaries.
 */
#include "core/hash.h"

#include "core/avo.h"
#include "check.h"

#include <string.h>

static void test_blob_ids(void)
{
    char hex[AVO_HASH_HEXLEN + 1];

    /* printf 'hello\n' | git hash-object --stdin */
    CHECK_INT(avo_hash_hex("hello\n", 6, hex), 0);
    CHECK_STR(hex, "ce013625030ba8dba906f756967f9e9ca394464a");

    /* git hash-object /dev/null */
    CHECK_INT(avo_hash_hex("", 0, hex), 0);
    CHECK_STR(hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    CHECK_INT(avo_hash_hex(NULL, 0, hex), 0);
    CHECK_STR(hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");

    CHECK_INT(avo_hash_hex(NULL, 3, hex), AVO_EINVAL);
}

static void test_parts(void)
{
    char ab_c[AVO_HASH_HEXLEN + 1], a_bc[AVO_HASH_HEXLEN + 1], joined[AVO_HASH_HEXLEN + 1];
    const char *const p1[] = {"ab", "c"};
    const char *const p2[] = {"a", "bc"};
    CHECK_INT(avo_hash_parts(p1, 2, ab_c), 0);
    CHECK_INT(avo_hash_parts(p2, 2, a_bc), 0);
    CHECK(strcmp(ab_c, a_bc) != 0);
    CHECK_INT((int)strlen(ab_c), AVO_HASH_HEXLEN);

    /* The canonical form is each part followed by a NUL. */
    CHECK_INT(avo_hash_hex("ab\0c\0", 5, joined), 0);
    CHECK_STR(ab_c, joined);

    /* NULL counts as "". */
    char with_null[AVO_HASH_HEXLEN + 1], with_empty[AVO_HASH_HEXLEN + 1];
    const char *const p3[] = {"x", NULL, "y"};
    const char *const p4[] = {"x", "", "y"};
    CHECK_INT(avo_hash_parts(p3, 3, with_null), 0);
    CHECK_INT(avo_hash_parts(p4, 3, with_empty), 0);
    CHECK_STR(with_null, with_empty);

    /* No parts hashes the empty blob. */
    CHECK_INT(avo_hash_parts(NULL, 0, joined), 0);
    CHECK_STR(joined, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

int main(void)
{
    test_blob_ids();
    test_parts();
    return check_finish();
}
