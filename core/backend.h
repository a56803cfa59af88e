/*
 * backend.h — the seam between the worker and the code that compiles, runs,
 * verifies and times one candidate on one kind of device.
 *
 * A backend's run_job executes inside a worker process (never in the engine)
 * and turns one job message into one result message (docs/protocol.md).  It
 * must not exit or crash on a bad candidate: untrusted code is run where a
 * crash cannot take the backend down (the CPU backend forks a runner per job;
 * a GPU backend owns a context in its worker and reports sticky errors by
 * asking the worker to be replaced).
 */
#ifndef AVO_BACKEND_H
#define AVO_BACKEND_H

#include <jansson.h>

#include "core/jobspec.h"

typedef struct avo_backend {
    const char *name; /* value of the job's "backend" field */
    /* Returns a new result object (caller owns); never NULL. */
    json_t *(*run_job)(const json_t *job);
    /* What the backend accepts in the shared part of a job, and its defaults. */
    const avo_jobspec_rules *rules;
} avo_backend;

/* Backend for a job's "backend" name, or NULL if none is built in. */
const avo_backend *avo_backend_find(const char *name);

/* Built-in backends. */
extern const avo_backend avo_backend_cpu;
extern const avo_backend avo_backend_cuda; /* cuda.c; NVRTC and the driver load at run time */

/* Build a minimal result {id, status, reason} for a job (caller owns). */
json_t *avo_result_new(const json_t *job, const char *status, const char *reason);

/* Helpers every backend uses to fill a result; none of them prints. */

/* A JSON string of arbitrary bytes s[0..n) (compiler or kernel output): bytes
 * that are not valid UTF-8 become '?'.  New reference (caller owns), NULL
 * when out of memory. */
json_t *avo_result_text(const char *s, size_t n);

/* Set status and a printf-formatted reason (at most 1023 bytes) on a result. */
void avo_result_fail(json_t *result, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Set the result's "log" to the last `max` bytes of log[0..n). */
void avo_result_set_log(json_t *result, const char *log, size_t n, size_t max);

/*
 * The first line of a compiler log that contains one of `markers` (a
 * NULL-terminated list, e.g. {"error:", NULL}), else the log's first line,
 * copied into buf (at most 400 bytes of it).  An empty pick gives
 * `fallback` ("the compiler failed without a message").
 */
void avo_result_error_line(const char *log, size_t n, const char *const *markers,
                           const char *fallback, char *buf, size_t len);

/* A config entry with the fields every entry carries: {name, correct: false,
 * max_error: null, median_s: 0, spread: 0, samples: 0, gflops: 0, gbs: 0,
 * reason: null}.  Caller owns; NULL when out of memory. */
json_t *avo_result_config_new(const char *name);

/*
 * Check a worker's result against its job before anything believes it:
 * a known status, a text reason, config entries (and check entries) that
 * name the job's configs once each with finite non-negative numbers, rates
 * (gflops, tflops, gbs) equal to the job config's flops or bytes over the
 * entry's median_s (0 without a time; relative tolerance 1e-6), and
 * "ok" only with every config correct.  A baseline job's result (the job
 * names "baseline") may also be "unavailable", and its entries may say
 * "unavailable" (then claiming no correctness, time or TFLOPS); its "ok"
 * names the baseline and has every config correct or unavailable, at least
 * one correct.  Returns 0, or AVO_EPROTO with what
 * is wrong in err; the engine then fails that candidate, never the run.
 */
int avo_result_validate(const json_t *job, const json_t *result, char *err, size_t errlen);

#endif
