#include "core/loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/avo.h"

static int take_any(const avo_loop_source *sources, size_t n, size_t *ret_source,
                    uint64_t *ret_ticket, json_t **ret_result)
{
    for (size_t i = 0; i < n; i++) {
        if (sources[i].take(sources[i].ctx, ret_ticket, ret_result) == 1) {
            *ret_source = i;
            return 1;
        }
    }
    return 0;
}

int avo_loop_wait(const avo_loop_source *sources, size_t n, int timeout_ms, size_t *ret_source,
                  uint64_t *ret_ticket, json_t **ret_result, char *err, size_t errlen)
{
    *ret_result = NULL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += sources[i].max_fds;
    struct pollfd *fds = calloc(total ? total : 1, sizeof *fds);
    size_t *counts = calloc(n ? n : 1, sizeof *counts);
    if (!fds || !counts) {
        free(fds);
        free(counts);
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    double give_up = timeout_ms < 0 ? -1 : avo_monotonic() + timeout_ms / 1000.0;
    int rc;
    for (;;) {
        if (take_any(sources, n, ret_source, ret_ticket, ret_result)) {
            rc = 1;
            break;
        }
        size_t pending = 0;
        for (size_t i = 0; i < n; i++)
            pending += sources[i].pending(sources[i].ctx);
        if (pending == 0) {
            rc = AVO_ENOTFOUND;
            break;
        }
        int wait_ms = -1;
        if (give_up >= 0) {
            double left = give_up - avo_monotonic();
            wait_ms = left > 0 ? (int)(left * 1000.0) + 1 : 0;
        }
        size_t used = 0;
        rc = 0;
        for (size_t i = 0; i < n && rc >= 0; i++) {
            rc = sources[i].prepare(sources[i].ctx, fds + used, sources[i].max_fds, &wait_ms, err,
                                    errlen);
            counts[i] = rc > 0 ? (size_t)rc : 0;
            used += counts[i];
        }
        if (rc < 0)
            break;
        if (take_any(sources, n, ret_source, ret_ticket, ret_result)) {
            rc = 1;
            break;
        }
        int ready = poll(fds, (nfds_t)used, wait_ms);
        if (ready < 0) {
            rc = errno == EINTR ? 0 : avo_error(err, errlen, AVO_EIO, "poll: %s", strerror(errno));
            break;
        }
        used = 0;
        for (size_t i = 0; i < n && rc >= 0; i++) {
            rc = sources[i].process(sources[i].ctx, fds + used, counts[i], err, errlen);
            used += counts[i];
        }
        if (rc < 0)
            break;
        if (take_any(sources, n, ret_source, ret_ticket, ret_result)) {
            rc = 1;
            break;
        }
        if (give_up >= 0 && avo_monotonic() >= give_up) {
            rc = 0;
            break;
        }
    }
    free(fds);
    free(counts);
    return rc;
}
