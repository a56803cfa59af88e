/*
 * worker.h — the body of the hidden `avo worker` subcommand.
 *
 * A worker is started by the engine's pool (core/pool.c) in its own process
 * group, reads jobs from in_fd and answers each with exactly one result on
 * out_fd (docs/protocol.md).  Untrusted candidate code never runs in the
 * worker itself: a backend forks a runner for that.  Nothing but protocol
 * messages is ever written to out_fd.
 */
#ifndef AVO_WORKER_H
#define AVO_WORKER_H

/*
 * Serve jobs until in_fd reaches end of file.  Returns 0 on a clean end and
 * 1 on a protocol error (malformed message, failed write) or when the engine
 * is already gone at start.  Installs process-wide settings for a worker
 * (parent-death signal, rlimits, SIGPIPE ignored); call it only in a process
 * that is nothing but a worker.
 */
int avo_worker_main(int in_fd, int out_fd);

#endif
