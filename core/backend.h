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

typedef struct avo_backend {
    const char *name; /* value of the job's "backend" field */
    /* Returns a new result object (caller owns); never NULL. */
    json_t *(*run_job)(const json_t *job);
} avo_backend;

/* Backend for a job's "backend" name, or NULL if none is built in. */
const avo_backend *avo_backend_find(const char *name);

/* Built-in backends. */
extern const avo_backend avo_backend_cpu;
extern const avo_backend avo_backend_cuda; /* cuda.c; NVRTC and the driver load at run time */

/* Build a minimal result {id, status, reason} for a job (caller owns). */
json_t *avo_result_new(const json_t *job, const char *status, const char *reason);

#endif
