/*
 * test_pcg.c — PCG32 against the reference vectors of pcg32-demo, plus the
 * properties the engine relies on: bounded range and rough uniformity,
 * [0, 1) floats, advance == repeated next, and name-derived streams.
 */
#include "core/pcg.h"

#include "check.h"

#include <stdint.h>

/* pcg32-demo: pcg32_srandom_r(&rng, 42u, 54u), first six outputs. */
static void test_reference_vectors(void)
{
    static const uint32_t expect[] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u,
                                      0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
    avo_pcg32 rng;
    avo_pcg32_seed(&rng, 42u, 54u);
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
        CHECK_INT(avo_pcg32_next(&rng), expect[i]);
}

/* Range for awkward bounds, and a loose chi-square over 10 buckets. */
static void test_bounded(void)
{
    avo_pcg32 rng;
    avo_pcg32_seed(&rng, 1234u, 5u);
    CHECK_INT(avo_pcg32_bounded(&rng, 0), 0);
    CHECK_INT(avo_pcg32_bounded(&rng, 1), 0);

    static const uint32_t bounds[] = {2u, 3u, 7u, 1000u, 0x80000001u, 0xffffffffu};
    for (size_t b = 0; b < sizeof(bounds) / sizeof(bounds[0]); b++) {
        int in_range = 1;
        for (int i = 0; i < 10000; i++)
            if (avo_pcg32_bounded(&rng, bounds[b]) >= bounds[b])
                in_range = 0;
        CHECK(in_range);
    }

    enum { BUCKETS = 10, DRAWS = 100000 };
    long counts[BUCKETS] = {0};
    for (int i = 0; i < DRAWS; i++)
        counts[avo_pcg32_bounded(&rng, BUCKETS)]++;
    double expected = (double)DRAWS / BUCKETS, chi2 = 0.0;
    for (int i = 0; i < BUCKETS; i++) {
        double d = (double)counts[i] - expected;
        chi2 += d * d / expected;
    }
    /* 9 degrees of freedom: p = 0.001 at 27.9; 40 fails only on real bias. */
    CHECK(chi2 < 40.0);
}

static void test_double_float(void)
{
    avo_pcg32 rng;
    avo_pcg32_seed(&rng, 99u, 7u);
    int ok = 1;
    double sum = 0.0;
    for (int i = 0; i < 100000; i++) {
        double d = avo_pcg32_double(&rng);
        float f = avo_pcg32_float(&rng);
        if (!(d >= 0.0 && d < 1.0) || !(f >= 0.0f && f < 1.0f))
            ok = 0;
        sum += d;
    }
    CHECK(ok);
    CHECK(sum / 100000.0 > 0.49 && sum / 100000.0 < 0.51);
}

static void test_advance(void)
{
    static const uint64_t deltas[] = {0, 1, 2, 17, 1000, 12345};
    for (size_t i = 0; i < sizeof(deltas) / sizeof(deltas[0]); i++) {
        avo_pcg32 stepped, jumped;
        avo_pcg32_seed(&stepped, 42u, 54u);
        jumped = stepped;
        for (uint64_t n = 0; n < deltas[i]; n++)
            avo_pcg32_next(&stepped);
        avo_pcg32_advance(&jumped, deltas[i]);
        CHECK(stepped.state == jumped.state);
        CHECK(stepped.inc == jumped.inc);
        CHECK_INT(avo_pcg32_next(&jumped), avo_pcg32_next(&stepped));
    }

    /* Jumping by 2^64 - k is going back k steps (the period is 2^64). */
    avo_pcg32 a, b;
    avo_pcg32_seed(&a, 7u, 3u);
    b = a;
    avo_pcg32_next(&a);
    avo_pcg32_next(&a);
    avo_pcg32_next(&a);
    avo_pcg32_advance(&a, UINT64_MAX - 2u); /* -3 mod 2^64 */
    CHECK(a.state == b.state);
}

static void test_derive(void)
{
    avo_pcg32 a, b, c, d;
    avo_pcg32_derive(&a, 2024u, "select");
    avo_pcg32_derive(&b, 2024u, "select");
    avo_pcg32_derive(&c, 2024u, "op.param_tweak");
    avo_pcg32_derive(&d, 2025u, "select");

    int same_ab = 1, same_ac = 1, same_ad = 1;
    for (int i = 0; i < 64; i++) {
        uint32_t va = avo_pcg32_next(&a);
        if (va != avo_pcg32_next(&b))
            same_ab = 0;
        if (va != avo_pcg32_next(&c))
            same_ac = 0;
        if (va != avo_pcg32_next(&d))
            same_ad = 0;
    }
    CHECK(same_ab);
    CHECK(!same_ac);
    CHECK(!same_ad);

    /* derive is seed with the FNV-1a of the name as the stream. */
    avo_pcg32 e, f;
    avo_pcg32_derive(&e, 77u, "inputs");
    avo_pcg32_seed(&f, 77u, avo_fnv1a64("inputs"));
    CHECK(e.state == f.state && e.inc == f.inc);
    CHECK(e.inc & 1u);
}

static void test_fnv1a64(void)
{
    CHECK(avo_fnv1a64("") == 0xcbf29ce484222325ULL);
    CHECK(avo_fnv1a64("a") == 0xaf63dc4c8601ec8cULL);
    CHECK(avo_fnv1a64("foobar") == 0x85944171f73967e8ULL);
}

int main(void)
{
    test_reference_vectors();
    test_bounded();
    test_double_float();
    test_advance();
    test_derive();
    test_fnv1a64();
    return check_finish();
}
