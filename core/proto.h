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

#endif
