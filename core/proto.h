/*
 * proto.h — messages between the engine and its worker processes.
 *
 * A message is one JSON object framed as a 4-byte little-endian length
 * followed by that many bytes of UTF-8 JSON text.  A job and its result are
 * each one self-contained message (see docs/protocol.md), so a worker can as
 * well run on another machine behind a scheduler.
 */
#ifndef AVO_PROTO_H
#define AVO_PROTO_H

#include <jansson.h>
#include <stddef.h>

#define AVO_PROTO_MAX (256u << 20) /* largest accepted message, bytes */

/* Write `msg` to fd, retrying on EINTR and short writes.  Blocking. */
int avo_proto_send(int fd, const json_t *msg, char *err, size_t errlen);

/* Read one message.  Blocking.  Returns 0 and *ret_msg (caller owns),
 * AVO_EIO with *ret_msg NULL on EOF before any byte ("closed"), or another
 * negative code on a short or malformed message. */
int avo_proto_recv(int fd, json_t **ret_msg, char *err, size_t errlen);

/* Messages collected from a non-blocking pipe (a child's report): data is
 * owned (free it); a zeroed buffer is empty and valid. */
typedef struct avo_proto_buf {
    char *data;
    size_t len, cap;
} avo_proto_buf;

/*
 * Append what is available on the non-blocking fd to b, growing it up to
 * AVO_PROTO_MAX bytes.  Returns 1 when the stream has ended (end of file, a
 * read error, a sender flooding past the limit, out of memory), 0 when the
 * fd has no more for now.
 */
int avo_proto_drain(int fd, avo_proto_buf *b);

/*
 * The message framed at b->data + *at, or NULL when no complete frame starts
 * there or its text is not JSON.  *at advances past a complete frame.
 * New reference (caller owns).
 */
json_t *avo_proto_decode(const avo_proto_buf *b, size_t *at);

#endif
