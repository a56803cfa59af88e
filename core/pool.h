/*
 * pool.h — the engine's side of the worker processes.
 *
 * A pool owns up to `jobs` worker processes (`avo worker`), each in its own
 * process group, started lazily and replaced when one dies.  Jobs are queued
 * FIFO and sent to idle workers; every job carries a hard deadline after which
 * the pool kills the worker's whole process group with SIGKILL and answers the
 * job with status "timeout".  A worker that dies mid-job answers it with
 * status "crashed".  Every submitted job gets exactly one result.
 *
 * The pool never blocks except inside avo_pool_wait (poll) and while writing a
 * job to an idle worker that is reading it.  Single-threaded.
 */
#ifndef AVO_POOL_H
#define AVO_POOL_H

#include <jansson.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "loop.h"

typedef struct avo_pool avo_pool;

/*
 * Create a pool that runs `worker_argv` (NULL-terminated, argv[0] the
 * executable path) for each worker.  The argv strings are copied.
 */
int avo_pool_new(avo_pool **ret, int jobs, char *const *worker_argv, char *err, size_t errlen);

/* Kill every worker and free the pool; accepts NULL.  Unanswered jobs are dropped. */
void avo_pool_free(avo_pool *pool);

/*
 * Queue `job` (the pool takes the reference) with a hard wall-clock limit of
 * `deadline_s` seconds counted from when a worker starts it.  Sets "id" in the
 * job to the ticket it returns.
 */
int avo_pool_submit(avo_pool *pool, json_t *job, double deadline_s, uint64_t *ret_ticket);

/* Number of jobs submitted and not yet returned by avo_pool_wait. */
size_t avo_pool_pending(const avo_pool *pool);
size_t avo_pool_running(const avo_pool *pool);

/*
 * Wait up to timeout_ms (-1: forever) for a result.  Returns 1 with the
 * ticket and result (caller owns), 0 when the timeout passed, AVO_ENOTFOUND
 * immediately when nothing is pending, or another negative code.
 */
int avo_pool_wait(avo_pool *pool, int timeout_ms, uint64_t *ret_ticket, json_t **ret_result,
                  char *err, size_t errlen);

/* The pool as a source of the engine's event loop (core/loop.h); valid
 * while the pool lives. */
avo_loop_source avo_pool_source(avo_pool *pool);

#endif
