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
 * Workers come in three kinds (docs/protocol.md):
 *   - CPU slots: the `jobs` local workers; CPU jobs and CUDA compile-only jobs.
 *   - Device slots: one local worker per CUDA device (AVO_CUDA_DEVICE set to
 *     its ordinal), created when the first CUDA timing job arrives (the
 *     devices are counted in a short-lived child, never in the engine) or
 *     named by avo_pool_set_devices.  Only they take CUDA timing jobs, so two
 *     timing loops never share a GPU; without any device, CUDA jobs go to the
 *     CPU slots (whose workers then report the missing driver).  With both
 *     kinds, a CUDA timing job is first compiled (compile-only) on a CPU
 *     slot, so the device worker finds the cubin in the on-disk cache and a
 *     GPU never waits for a compile; a failed compile answers the job.
 *   - Remote slots: workers that connected over TCP (avo_pool_listen) and
 *     proved the run's secret (scale/transport.h); every message then goes
 *     through the connection's encrypted channel.  They take any job.  A
 *     remote worker whose connection closes, goes silent (no heartbeat for
 *     10 s while it runs a job), fails authentication or never received its
 *     job is dropped and the job queued again without counting against it:
 *     nothing the network does is a candidate's fault.  A job is answered
 *     "timeout" only on a worker that still answers at its deadline,
 *     "crashed" with "worker_lost" only when the worker itself says (on the
 *     authenticated channel) that its serving process died running it, and
 *     "error" with "connection_lost" once its connection was lost
 *     AVO_POOL_MAX_CUTS times (the environment's AVO_POOL_MAX_CUTS).  A
 *     result counts only when it answers the job in flight on that
 *     connection and passes avo_result_validate (else the loss counts:
 *     AVO_POOL_MAX_ATTEMPTS), so every job is answered once.
 * A CUDA timing job with "device": N runs only on a worker of device N.
 * Every result gets a "worker" object: transport, name, device ordinal.
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

#include "core/loop.h"

typedef struct avo_pool avo_pool;

#define AVO_POOL_MAX_ATTEMPTS 3 /* misbehaving remote workers before a job is "crashed" */
/* Lost connections before a job is an "error" (never charged); the
 * environment's AVO_POOL_MAX_CUTS (1 to 10000) overrides it. */
#define AVO_POOL_MAX_CUTS 8

/*
 * Create a pool that runs `worker_argv` (NULL-terminated, argv[0] the
 * executable path) for each worker, with `jobs` CPU slots (0 only for a pool
 * that will serve remote workers alone).  The argv strings are copied.
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

/*
 * Use exactly these CUDA device ordinals for timing workers, one worker each
 * (an ordinal named twice gets two workers: the user asked for it); n = 0
 * means no device workers at all.  Without this call the pool counts the
 * visible devices when the first CUDA timing job arrives.  Ordinals count
 * within CUDA_VISIBLE_DEVICES, as the driver does.
 */
int avo_pool_set_devices(avo_pool *pool, const int *ordinals, int n, char *err, size_t errlen);

/* The number of CUDA devices visible (0 without a driver), counted in a
 * short-lived child process so the caller never initialises CUDA. */
int avo_pool_count_devices(void);

/* The device ordinals in use (after the probe): count, and up to max of them. */
int avo_pool_devices(const avo_pool *pool, int *ordinals, int max);

/* Accept remote workers on `address` ("HOST:PORT", port 0: any free one) that
 * prove `secret` and match the engine's identity (run, version; the
 * fingerprint field is ignored: see avo_pool_allow_fingerprint).  Returns the
 * port bound (> 0) or a negative code.  Strings are copied. */
struct avo_transport_secret;
struct avo_transport_identity;
int avo_pool_listen(avo_pool *pool, const char *address, const struct avo_transport_secret *secret,
                    const struct avo_transport_identity *engine, char *err, size_t errlen);

/* An evaluator fingerprint this run serves: a worker that declares one must
 * declare one of these, and gets only jobs whose "fingerprint" matches. */
int avo_pool_allow_fingerprint(avo_pool *pool, const char *fingerprint);

/* Connected remote workers, and connections still in their handshake. */
size_t avo_pool_remote(const avo_pool *pool, size_t *ret_handshaking);

/*
 * Declare that no remote worker will come back (the launcher ended) when
 * `reason` is non-NULL; with no local slot and no connected remote worker,
 * the pool is then "gone": every queued and later job is answered "error"
 * with the reason.  grace_s (> 0) also declares it gone after that long with
 * no worker connected once one had been (NULL reason keeps it).
 */
void avo_pool_launcher_ended(avo_pool *pool, const char *reason);
void avo_pool_set_grace(avo_pool *pool, double grace_s);

/* Why the pool has no workers for good, or NULL. */
const char *avo_pool_gone(const avo_pool *pool);

/* Pop one line worth telling the user (a refused worker, a lost one, a
 * requeued job): 1 with the text copied into buf, 0 when none. */
int avo_pool_take_event(avo_pool *pool, char *buf, size_t len);

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
