/*
 * supervise.h — watching a child process that runs something untrusted or
 * slow (a compiler, a judge with its candidate): drain its pipes while it
 * runs, kill its whole process group at a deadline, always reap it.
 *
 * One implementation for every backend, so deadlines, draining and the
 * naming of how a child died cannot drift between them.
 */
#ifndef AVO_SUPERVISE_H
#define AVO_SUPERVISE_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#define AVO_TAIL_MAX 8192 /* bytes of a child's output kept */

/* The last AVO_TAIL_MAX bytes of a stream. */
typedef struct avo_tail {
    char data[AVO_TAIL_MAX];
    size_t len;
} avo_tail;

void avo_tail_append(avo_tail *t, const char *p, size_t n);

/* Read what is available on a non-blocking fd into the tail (ctx is an
 * avo_tail).  Returns 1 at end of file or on an error that ends the stream,
 * 0 when the fd has no more for now. */
int avo_tail_drain(int fd, void *ctx);

/* A pipe from the child and what to do with its bytes. */
typedef struct avo_supervise_sink {
    int fd;                          /* non-blocking read end; -1: none */
    int (*drain)(int fd, void *ctx); /* 1 at end of stream, as avo_tail_drain */
    void *ctx;
} avo_supervise_sink;

typedef struct avo_supervise_result {
    int status;    /* wait status */
    int timed_out; /* the deadline struck and the group was killed */
    struct rusage usage;
} avo_supervise_result;

/*
 * Wait for child `pid`, the leader of its own process group, until it is
 * reaped or the monotonic `deadline` passes (then SIGKILL to the group),
 * draining every sink meanwhile and once more at the end.  Leftovers of the
 * group are killed after the reap.  The sinks' fds stay open (caller closes).
 */
void avo_supervise_wait(pid_t pid, double deadline, avo_supervise_sink *sinks, size_t n,
                        avo_supervise_result *ret);

/* "SIGSEGV (Segmentation fault)" or "signal 42 (...)" into buf. */
void avo_supervise_signal_name(int sig, char *buf, size_t len);

#endif
