/*
 * worker.h — the body of the hidden `avo worker` subcommand.
 *
 * A worker is started by the engine's pool (scale/pool.c) in its own process
 * group, reads jobs from in_fd and answers each with exactly one result on
 * out_fd (docs/protocol.md).  Untrusted candidate code never runs in the
 * worker itself: a backend forks a runner for that.  Nothing but protocol
 * messages is ever written to out_fd.
 */
#ifndef AVO_WORKER_H
#define AVO_WORKER_H

/* avo_worker_main's returns besides 0 (end of file) and 1 (error). */
#define AVO_WORKER_RETIRED 3 /* sent a "retire" result: this process must go */
#define AVO_WORKER_BYE 4     /* the engine said the run is over ({"type":"bye"}) */

/*
 * Serve jobs until in_fd reaches end of file.  Returns 0 on a clean end,
 * AVO_WORKER_BYE after a bye message, AVO_WORKER_RETIRED after a retiring
 * result, and 1 on a protocol error (malformed message, failed write) or when
 * the engine is already gone at start.  Installs process-wide settings for a worker
 * (parent-death signal, rlimits, SIGPIPE ignored); call it only in a process
 * that is nothing but a worker.
 */
int avo_worker_main(int in_fd, int out_fd);

#endif
