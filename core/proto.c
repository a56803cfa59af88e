#include "core/proto.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/avo.h"

int avo_proto_send(int fd, const json_t *msg, char *err, size_t errlen)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        return avo_error(err, errlen, AVO_ENOMEM, "cannot serialise message");
    size_t len = strlen(text);
    unsigned char head[4] = {len & 0xff, (len >> 8) & 0xff, (len >> 16) & 0xff, (len >> 24) & 0xff};
    int rc = avo_write_all(fd, head, 4);
    if (rc == 0)
        rc = avo_write_all(fd, text, len);
    free(text);
    if (rc < 0)
        return avo_error(err, errlen, AVO_EIO, "write to pipe: %s", strerror(-rc));
    return 0;
}

int avo_proto_recv(int fd, json_t **ret_msg, char *err, size_t errlen)
{
    *ret_msg = NULL;
    unsigned char head[4];
    ssize_t n = avo_read_all(fd, head, 4);
    if (n < 0)
        return avo_error(err, errlen, AVO_EIO, "read from pipe: %s", strerror((int)-n));
    if (n == 0)
        return avo_error(err, errlen, AVO_EIO, "closed");
    if (n < 4)
        return avo_error(err, errlen, AVO_EPROTO, "truncated message header");
    uint32_t len = (uint32_t)head[0] | (uint32_t)head[1] << 8 | (uint32_t)head[2] << 16 |
                   (uint32_t)head[3] << 24;
    if (len > AVO_PROTO_MAX)
        return avo_error(err, errlen, AVO_EPROTO, "message of %u bytes exceeds the limit", len);
    char *buf = malloc(len + 1);
    if (!buf)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory for a %u-byte message", len);
    n = avo_read_all(fd, buf, len);
    if (n != (ssize_t)len) {
        free(buf);
        return avo_error(err, errlen, AVO_EPROTO, "truncated message (%zd of %u bytes)", n, len);
    }
    json_error_t jerr;
    json_t *msg = json_loadb(buf, len, 0, &jerr);
    free(buf);
    if (!msg || !json_is_object(msg)) {
        json_decref(msg);
        return avo_error(err, errlen, AVO_EPROTO, "malformed message: %s", jerr.text);
    }
    *ret_msg = msg;
    return 0;
}

int avo_proto_drain(int fd, avo_proto_buf *b)
{
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : 1;
        if (n == 0)
            return 1;
        if (b->len + (size_t)n > b->cap) {
            size_t cap = b->cap ? b->cap * 2 : 65536;
            while (cap < b->len + (size_t)n)
                cap *= 2;
            if (cap > AVO_PROTO_MAX)
                return 1;
            char *grown = realloc(b->data, cap);
            if (!grown)
                return 1;
            b->data = grown;
            b->cap = cap;
        }
        memcpy(b->data + b->len, chunk, (size_t)n);
        b->len += (size_t)n;
    }
}

json_t *avo_proto_decode(const avo_proto_buf *b, size_t *at)
{
    if (*at > b->len || b->len - *at < 4)
        return NULL;
    const unsigned char *h = (const unsigned char *)b->data + *at;
    size_t len = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
    if (len > b->len - *at - 4)
        return NULL;
    json_t *msg = json_loadb(b->data + *at + 4, len, 0, NULL);
    *at += 4 + len;
    return msg;
}
