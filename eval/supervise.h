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

/*
 * How a child ended, named once for every caller: for wait status `status`,
 * the signal's name (avo_supervise_signal_name) when a signal killed it,
 * else "status N" (N = -1 when it neither exited nor was killed).  Returns
 * the signal's number, 0 when it exited.
 */
int avo_supervise_death(int status, char *buf, size_t len);

/* What avo_supervise_fork sets up in the child, besides dying with its parent. */
enum {
    AVO_CHILD_OWN_GROUP = 1,     /* a process group of its own (the deadline kills the group) */
    AVO_CHILD_CRASH_DEFAULT = 2, /* crash signals back to SIG_DFL, so a crash ends the child by
                                    its own signal even under an inherited handler (ASan's) */
    AVO_CHILD_TERM_WITH_PARENT = 4, /* SIGTERM, not SIGKILL, when the parent dies: a child that
                                       is avo itself (an experiment's cell) ends cleanly */
};

/*
 * fork() with the child-side set-up every supervised child needs, written
 * once: in the child, PR_SET_PDEATHSIG SIGKILL (SIGTERM with
 * AVO_CHILD_TERM_WITH_PARENT; a child never outlives its
 * parent, so a killed engine leaves nothing running) and _exit(127) if the
 * parent died before that took effect, plus what `flags` asks.  With
 * AVO_CHILD_OWN_GROUP the parent also makes the group (setpgid on both
 * sides, so it exists before any kill).  Returns as fork(): the child's pid
 * in the parent, 0 in the child, -1 with errno set.
 */
pid_t avo_supervise_fork(int flags);

/* One message of `len` bytes on a SOCK_SEQPACKET socket, with the
 * descriptor `fd` passed along unless it is -1; retries on EINTR. Returns
 * the bytes sent, or -1. */
ssize_t avo_supervise_send_fd(int sock, const void *buf, size_t len, int fd);

/* Receive one such message into buf (at most len bytes); *ret_fd is the
 * descriptor it carried (close-on-exec), or -1. Returns the bytes received,
 * 0 at end of stream, or -1. */
ssize_t avo_supervise_recv_fd(int sock, void *buf, size_t len, int *ret_fd);

#endif
