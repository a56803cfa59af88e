/*
 * loop.h — the engine's single event loop.
 *
 * Everything that answers asynchronously (the worker pool; later the LLM
 * client) is an avo_loop_source: a small vtable through which the loop asks
 * for file descriptors to poll and a deadline, hands back poll's verdict, and
 * takes finished results.  One poll() over all sources serves them all, so N
 * evaluations and M LLM requests are in flight on one thread.
 *
 * Tickets are per source; a result is identified by (source index, ticket).
 */
#ifndef AVO_LOOP_H
#define AVO_LOOP_H

#include <jansson.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>

typedef struct avo_loop_source {
    void *ctx;
    /* Work not yet answered (queued or running).  0 means nothing to wait for. */
    size_t (*pending)(void *ctx);
    /* Fill at most `max` pollfds; lower *timeout_ms (-1 = none) to the
     * source's next deadline.  May complete work (for example expire a
     * deadline) without any fd.  Returns the number of fds or a negative code. */
    int (*prepare)(void *ctx, struct pollfd *fds, size_t max, int *timeout_ms, char *err,
                   size_t errlen);
    /* Act on poll's results for the fds this source filled. */
    int (*process)(void *ctx, const struct pollfd *fds, size_t n, char *err, size_t errlen);
    /* Pop one finished result: 1 and the ticket/result (caller owns), or 0. */
    int (*take)(void *ctx, uint64_t *ret_ticket, json_t **ret_result);
    size_t max_fds;
} avo_loop_source;

/*
 * Wait up to timeout_ms (-1: forever) for one result from any source.
 * Returns 1 with *ret_source (index into sources), ticket and result; 0 when
 * the timeout passed (or a signal interrupted the wait); AVO_ENOTFOUND when no
 * source has pending work; another negative code on failure.
 */
int avo_loop_wait(const avo_loop_source *sources, size_t n, int timeout_ms, size_t *ret_source,
                  uint64_t *ret_ticket, json_t **ret_result, char *err, size_t errlen);

#endif
