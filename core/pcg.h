/*
 * pcg.h — PCG32 (XSH-RR 64/32, O'Neill 2014) with selectable streams.
 *
 * The generator is a plain value type: copy it to fork a sequence, store its
 * two words to persist it.  Outputs match the reference implementation
 * (pcg32_srandom_r / pcg32_random_r of pcg-c-basic) bit for bit.
 *
 * Every consumer in a run draws from its own stream derived from the run seed
 * and a stable name ("select", "op.param_tweak", "inputs"), so adding draws in
 * one consumer never shifts another's sequence.
 */
#ifndef AVO_PCG_H
#define AVO_PCG_H

#include <stdint.h>

typedef struct avo_pcg32 {
    uint64_t state;
    uint64_t inc; /* always odd: (stream << 1) | 1 */
} avo_pcg32;

/* Seed as pcg32_srandom_r(rng, initstate, initseq). */
void avo_pcg32_seed(avo_pcg32 *rng, uint64_t initstate, uint64_t initseq);

/* Seed the stream named `name` of run seed `run_seed`: the stream selector is
 * a 64-bit FNV-1a hash of the name. */
void avo_pcg32_derive(avo_pcg32 *rng, uint64_t run_seed, const char *name);

uint32_t avo_pcg32_next(avo_pcg32 *rng);

/* Uniform integer in [0, bound) without modulo bias; bound 0 returns 0. */
uint32_t avo_pcg32_bounded(avo_pcg32 *rng, uint32_t bound);

/* Uniform double in [0, 1) with 53 random bits (two draws). */
double avo_pcg32_double(avo_pcg32 *rng);

/* Uniform float in [0, 1) with 24 random bits (one draw). */
float avo_pcg32_float(avo_pcg32 *rng);

/* Jump ahead by `delta` steps in O(log delta). */
void avo_pcg32_advance(avo_pcg32 *rng, uint64_t delta);

/* 64-bit FNV-1a of a NUL-terminated string. */
uint64_t avo_fnv1a64(const char *s);

#endif
