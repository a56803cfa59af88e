/*
 * test_merge.c — three-way merges of a small kernel: disjoint edits combine,
 * overlapping edits conflict with git's markers, identical edits and
 * one-sided edits merge cleanly.
 */
#include "core/merge.h"

#include "core/avo.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static const char BASE[] =
    "__global__ void saxpy(int n, float a, const float *x, float *y)\n" /* 1 */
    "{\n"                                                               /* 2 */
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"              /* 3 */
    "    int stride = blockDim.x * gridDim.x;\n"                        /* 4 */
    "    // grid-stride loop\n"                                         /* 5 */
    "    for (; i < n; i += stride) {\n"                                /* 6 */
    "        float xi = x[i];\n"                                        /* 7 */
    "        float yi = y[i];\n"                                        /* 8 */
    "        // fused multiply-add\n"                                   /* 9 */
    "        y[i] = a * xi + yi;\n"                                     /* 10 */
    "    }\n"                                                           /* 11 */
    "}\n"                                                               /* 12 */
    "\n"                                                                /* 13 */
    "// launch: saxpy<<<blocks, 256>>>(n, a, x, y);\n"                  /* 14 */
    "// end of kernel\n";                                               /* 15 */

/* Copy BASE with the line holding `from` replaced by `to` (line-level edit). */
static char *edit(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at)
        return NULL;
    size_t head = (size_t)(at - text), from_len = strlen(from), to_len = strlen(to);
    size_t tail = strlen(at + from_len);
    char *out = malloc(head + to_len + tail + 1);
    if (!out)
        return NULL;
    memcpy(out, text, head);
    memcpy(out + head, to, to_len);
    memcpy(out + head + to_len, at + from_len, tail + 1);
    return out;
}

static void test_clean(void)
{
    char *ours = edit(BASE, "{\n", "{ // ours: opening brace\n");
    char *theirs = edit(BASE, "y[i] = a * xi + yi;", "y[i] = fmaf(a, xi, yi);");
    char err[AVO_ERRLEN] = "";
    char *merged = NULL;
    CHECK(ours && theirs);
    CHECK_INT(avo_merge3(BASE, ours, theirs, &merged, err, sizeof(err)), 0);
    CHECK_CONTAINS(merged, "{ // ours: opening brace\n");
    CHECK_CONTAINS(merged, "y[i] = fmaf(a, xi, yi);");
    CHECK(merged && !strstr(merged, "<<<<<<<"));
    CHECK(merged && !strstr(merged, "a * xi + yi"));
    free(merged);
    free(ours);
    free(theirs);
}

static void test_conflict(void)
{
    char *ours = edit(BASE, "y[i] = a * xi + yi;", "y[i] = fmaf(a, xi, yi);");
    char *theirs = edit(BASE, "y[i] = a * xi + yi;", "y[i] = __fmaf_rn(a, xi, yi);");
    char err[AVO_ERRLEN] = "";
    char *merged = NULL;
    int rc = avo_merge3(BASE, ours, theirs, &merged, err, sizeof(err));
    CHECK_INT(rc, 1);
    CHECK_CONTAINS(merged, "<<<<<<<");
    CHECK_CONTAINS(merged, "<<<<<<< ours");
    CHECK_CONTAINS(merged, ">>>>>>> theirs");
    CHECK_CONTAINS(merged, "fmaf(a, xi, yi);");
    CHECK_CONTAINS(merged, "__fmaf_rn(a, xi, yi);");
    free(merged);
    free(ours);
    free(theirs);

    /* Two separate overlapping edits are two hunks. */
    char *o1 = edit(BASE, "{\n", "{ // A\n");
    char *o2 = o1 ? edit(o1, "// end of kernel", "// end A") : NULL;
    char *t1 = edit(BASE, "{\n", "{ // B\n");
    char *t2 = t1 ? edit(t1, "// end of kernel", "// end B") : NULL;
    merged = NULL;
    CHECK_INT(avo_merge3(BASE, o2, t2, &merged, err, sizeof(err)), 2);
    free(merged);
    free(o1);
    free(o2);
    free(t1);
    free(t2);
}

static void test_identical_and_one_sided(void)
{
    char *both = edit(BASE, "// grid-stride loop", "// grid-stride loop, coalesced");
    char err[AVO_ERRLEN] = "";
    char *merged = NULL;
    CHECK_INT(avo_merge3(BASE, both, both, &merged, err, sizeof(err)), 0);
    CHECK_STR(merged, both);
    free(merged);

    merged = NULL;
    CHECK_INT(avo_merge3(BASE, BASE, both, &merged, err, sizeof(err)), 0);
    CHECK_STR(merged, both);
    free(merged);

    merged = NULL;
    CHECK_INT(avo_merge3(BASE, both, BASE, &merged, err, sizeof(err)), 0);
    CHECK_STR(merged, both);
    free(merged);
    free(both);
}

static void test_bad_args(void)
{
    char err[AVO_ERRLEN] = "";
    char *merged = (char *)"sentinel";
    CHECK_INT(avo_merge3(NULL, BASE, BASE, &merged, err, sizeof(err)), AVO_EINVAL);
    CHECK(merged == NULL);
    CHECK(err[0] != '\0');
    CHECK_INT(avo_merge3(BASE, BASE, BASE, NULL, err, sizeof(err)), AVO_EINVAL);
}

int main(void)
{
    test_clean();
    test_conflict();
    test_identical_and_one_sided();
    test_bad_args();
    return check_finish();
}
