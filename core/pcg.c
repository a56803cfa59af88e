/*
 * pcg.c — PCG32 (XSH-RR 64/32), bit-compatible with pcg-c-basic.
 *
 * Invariants: rng->inc is always odd (set only by avo_pcg32_seed); the state
 * advances by one LCG step per 32-bit output.  Nothing here allocates.
 */
#include "core/pcg.h"

#define PCG_MULT 6364136223846793005ULL

#define FNV1A64_OFFSET 0xcbf29ce484222325ULL
#define FNV1A64_PRIME 0x100000001b3ULL

/* One LCG step: state = state * MULT + inc (mod 2^64). */
static void pcg_step(avo_pcg32 *rng)
{
    rng->state = rng->state * PCG_MULT + rng->inc;
}

/*
 * As pcg32_srandom_r: zero the state, pick the stream, step, mix in the
 * initial state, step again, so nearby seeds do not give nearby outputs.
 */
void avo_pcg32_seed(avo_pcg32 *rng, uint64_t initstate, uint64_t initseq)
{
    rng->state = 0u;
    rng->inc = (initseq << 1u) | 1u;
    pcg_step(rng);
    rng->state += initstate;
    pcg_step(rng);
}

void avo_pcg32_derive(avo_pcg32 *rng, uint64_t run_seed, const char *name)
{
    avo_pcg32_seed(rng, run_seed, avo_fnv1a64(name));
}

/*
 * As pcg32_random_r: output is an xorshift of the old state, rotated by its
 * top five bits; the state steps after the old value is read.
 */
uint32_t avo_pcg32_next(avo_pcg32 *rng)
{
    uint64_t oldstate = rng->state;
    pcg_step(rng);
    uint32_t xorshifted = (uint32_t)(((oldstate >> 18u) ^ oldstate) >> 27u);
    uint32_t rot = (uint32_t)(oldstate >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

/*
 * The reference's threshold rejection (pcg32_boundedrand_r): reject draws
 * below 2^32 mod bound, so the accepted range is a multiple of bound and
 * `r % bound` is unbiased.  At most half the draws are rejected for any bound,
 * and the sequence consumed matches the reference exactly.
 */
uint32_t avo_pcg32_bounded(avo_pcg32 *rng, uint32_t bound)
{
    if (bound == 0)
        return 0;
    uint32_t threshold = (uint32_t)(-bound) % bound;
    for (;;) {
        uint32_t r = avo_pcg32_next(rng);
        if (r >= threshold)
            return r % bound;
    }
}

/* 27 high bits of the first draw and 26 of the second form a 53-bit integer,
 * scaled by 2^-53: exactly representable, so the result is < 1. */
double avo_pcg32_double(avo_pcg32 *rng)
{
    uint64_t a = avo_pcg32_next(rng) >> 5;
    uint64_t b = avo_pcg32_next(rng) >> 6;
    return (double)((a << 26) | b) * (1.0 / 9007199254740992.0);
}

/* The high 24 bits of one draw, scaled by 2^-24. */
float avo_pcg32_float(avo_pcg32 *rng)
{
    return (float)(avo_pcg32_next(rng) >> 8) * (1.0f / 16777216.0f);
}

/*
 * pcg_advance_lcg_64 (Brown, "Random Number Generation with Arbitrary
 * Strides", 1994): compose the affine map x -> x*MULT + inc with itself by
 * repeated squaring, applying it for each set bit of delta.
 */
void avo_pcg32_advance(avo_pcg32 *rng, uint64_t delta)
{
    uint64_t cur_mult = PCG_MULT;
    uint64_t cur_plus = rng->inc;
    uint64_t acc_mult = 1u;
    uint64_t acc_plus = 0u;
    while (delta > 0) {
        if (delta & 1u) {
            acc_mult *= cur_mult;
            acc_plus = acc_plus * cur_mult + cur_plus;
        }
        cur_plus = (cur_mult + 1u) * cur_plus;
        cur_mult *= cur_mult;
        delta >>= 1;
    }
    rng->state = acc_mult * rng->state + acc_plus;
}

uint64_t avo_fnv1a64(const char *s)
{
    uint64_t h = FNV1A64_OFFSET;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= FNV1A64_PRIME;
    }
    return h;
}
