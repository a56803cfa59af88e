/*
 * transport.c — TCP sockets, the per-run secret, the HMAC handshake between
 * the engine and a remote worker, and the encrypted channel after it
 * (transport.h).
 *
 * HMAC-SHA256, randomness and constant-time comparison come from OpenSSL's
 * libcrypto; the channel is libsodium's crypto_secretstream_xchacha20poly1305
 * keyed through crypto_generichash.  Nothing cryptographic is written here.
 */
#include "scale/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <poll.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/avo.h"
#include "avo_config.h"
#include "avo_git.h"
#include "core/proto.h"

const char *avo_transport_version(void)
{
    return "avo " AVO_VERSION " (git " AVO_GIT_COMMIT ")";
}

static void to_hex(const unsigned char *bytes, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

static int secret_check(const avo_transport_secret *s, const char *where, char *err, size_t errlen)
{
    if (s->len < AVO_TRANSPORT_SECRET_MIN)
        return avo_error(err, errlen, AVO_EINVAL,
                         "the worker secret from %s is %zu bytes; it needs at least %d", where,
                         s->len, AVO_TRANSPORT_SECRET_MIN);
    return 0;
}

int avo_transport_secret_from_file(avo_transport_secret *ret, const char *path, char *err,
                                   size_t errlen)
{
    ret->len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return avo_error(err, errlen, errno == ENOENT ? AVO_ENOTFOUND : AVO_EIO,
                         "cannot open the worker secret file %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return avo_error(err, errlen, AVO_EINVAL, "the worker secret file %s is not a regular file",
                         path);
    }
    if (st.st_mode & 077) {
        close(fd);
        return avo_error(err, errlen, AVO_EINVAL,
                         "the worker secret file %s has mode %04o; it must be readable by its "
                         "owner only (chmod 600 %s)",
                         path, (unsigned)(st.st_mode & 07777), path);
    }
    ssize_t n;
    while ((n = read(fd, ret->bytes + ret->len, sizeof ret->bytes - ret->len)) > 0) {
        ret->len += (size_t)n;
        if (ret->len == sizeof ret->bytes)
            break;
    }
    int e = errno;
    close(fd);
    if (n < 0)
        return avo_error(err, errlen, AVO_EIO, "cannot read the worker secret file %s: %s", path,
                         strerror(e));
    if (ret->len == sizeof ret->bytes)
        return avo_error(err, errlen, AVO_EINVAL,
                         "the worker secret file %s is longer than %d bytes", path,
                         AVO_TRANSPORT_SECRET_MAX - 1);
    if (ret->len > 0 && ret->bytes[ret->len - 1] == '\n')
        ret->len--;
    char where[600];
    snprintf(where, sizeof where, "file %.500s", path);
    return secret_check(ret, where, err, errlen);
}

int avo_transport_secret_from_env(avo_transport_secret *ret, char *err, size_t errlen)
{
    ret->len = 0;
    const char *text = getenv("AVO_WORKER_SECRET");
    if (text && *text) {
        size_t len = strlen(text);
        if (len >= sizeof ret->bytes)
            return avo_error(err, errlen, AVO_EINVAL, "AVO_WORKER_SECRET is longer than %d bytes",
                             AVO_TRANSPORT_SECRET_MAX - 1);
        memcpy(ret->bytes, text, len);
        ret->len = len;
        return secret_check(ret, "AVO_WORKER_SECRET", err, errlen);
    }
    const char *path = getenv("AVO_WORKER_SECRET_FILE");
    if (path && *path)
        return avo_transport_secret_from_file(ret, path, err, errlen);
    return avo_error(err, errlen, AVO_ENOTFOUND,
                     "no worker secret: set AVO_WORKER_SECRET or AVO_WORKER_SECRET_FILE "
                     "(a file of mode 0600)");
}

int avo_transport_secret_generate(avo_transport_secret *ret, char hex[65], char *err, size_t errlen)
{
    unsigned char raw[32];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return avo_error(err, errlen, AVO_EIO, "no randomness for a worker secret");
    to_hex(raw, sizeof raw, hex);
    memcpy(ret->bytes, hex, 64);
    ret->len = 64;
    return 0;
}

int avo_transport_split(const char *address, char *host, size_t hostlen, char *port, size_t portlen,
                        char *err, size_t errlen)
{
    const char *colon = strrchr(address, ':');
    if (!colon || colon == address || !colon[1])
        return avo_error(err, errlen, AVO_EINVAL, "address '%s' is not HOST:PORT", address);
    const char *h = address;
    size_t hl = (size_t)(colon - address);
    if (h[0] == '[' && hl >= 2 && h[hl - 1] == ']')
        h++, hl -= 2;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p < 0 || p > 65535)
        return avo_error(err, errlen, AVO_EINVAL, "address '%s' has no valid port (0 to 65535)",
                         address);
    if (hl + 1 > hostlen || strlen(colon + 1) + 1 > portlen)
        return avo_error(err, errlen, AVO_EINVAL, "address '%s' is too long", address);
    memcpy(host, h, hl);
    host[hl] = '\0';
    snprintf(port, portlen, "%s", colon + 1);
    return 0;
}

int avo_transport_listen(const char *address, int *ret_fd, int *ret_port, char *err, size_t errlen)
{
    char host[256], port[16];
    int rc = avo_transport_split(address, host, sizeof host, port, sizeof port, err, errlen);
    if (rc < 0)
        return rc;
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE},
                    *res;
    int g = getaddrinfo(strcmp(host, "*") && *host ? host : NULL, port, &hints, &res);
    if (g)
        return avo_error(err, errlen, AVO_EIO, "cannot listen on %s: %s", address, gai_strerror(g));
    int fd = -1, e = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) < 0 || listen(fd, 64) < 0) {
            e = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        return avo_error(err, errlen, AVO_EIO, "cannot listen on %s: %s", address, strerror(e));
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *ret_port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                         : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    *ret_fd = fd;
    return 0;
}

void avo_transport_keepalive(int fd)
{
    int one = 1, idle = 10, interval = 5, count = 3;
    unsigned user_timeout_ms = 30000;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Wait until fd is ready for `events` or timeout_s passes: 1, 0 (timeout) or -errno. */
static int wait_fd(int fd, short events, double timeout_s)
{
    double end = avo_monotonic() + timeout_s;
    for (;;) {
        double left = end - avo_monotonic();
        if (left <= 0)
            return 0;
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, (int)(left * 1000) + 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n > 0)
            return 1;
    }
}

int avo_transport_connect(const char *address, double timeout_s, int *ret_fd, char *err,
                          size_t errlen)
{
    char host[256], port[16];
    int rc = avo_transport_split(address, host, sizeof host, port, sizeof port, err, errlen);
    if (rc < 0)
        return rc;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int g = getaddrinfo(host, port, &hints, &res);
    if (g)
        return avo_error(err, errlen, AVO_EIO, "cannot reach the engine at %s: %s", address,
                         gai_strerror(g));
    int fd = -1;
    const char *why = "no address";
    char whybuf[128];
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            why = strerror(errno);
            continue;
        }
        int c = connect(fd, a->ai_addr, a->ai_addrlen);
        if (c < 0 && errno == EINPROGRESS) {
            int w = wait_fd(fd, POLLOUT, timeout_s);
            int so = 0;
            socklen_t sl = sizeof so;
            if (w <= 0) {
                so = w == 0 ? ETIMEDOUT : -w;
            } else {
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl);
            }
            c = so ? -1 : 0;
            errno = so;
        }
        if (c < 0) {
            snprintf(whybuf, sizeof whybuf, "%s", strerror(errno));
            why = whybuf;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        return avo_error(err, errlen, AVO_EIO, "cannot reach the engine at %s: %s", address, why);
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    avo_transport_keepalive(fd);
    *ret_fd = fd;
    return 0;
}

int avo_transport_accept(int listen_fd, int *ret_fd, char *peer, size_t peerlen)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int fd = accept4(listen_fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED
                   ? 1
                   : AVO_EIO;
    char h[NI_MAXHOST], s[NI_MAXSERV];
    if (getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, s, sizeof s,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        snprintf(peer, peerlen, "%s:%s", h, s);
    else
        snprintf(peer, peerlen, "unknown peer");
    avo_transport_keepalive(fd);
    *ret_fd = fd;
    return 0;
}

/* Write len bytes to fd (which may be non-blocking) within timeout_s:
 * 0, AVO_ETIMEOUT or AVO_EIO. */
static int send_bytes(int fd, const unsigned char *bytes, size_t len, double timeout_s, char *err,
                      size_t errlen)
{
    double end = avo_monotonic() + timeout_s;
    size_t done = 0;
    while (done < len) {
        ssize_t n = send(fd, bytes + done, len - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int w = wait_fd(fd, POLLOUT, end - avo_monotonic());
            if (w == 0)
                return avo_error(err, errlen, AVO_ETIMEOUT, "the peer took no data for %.0f s",
                                 timeout_s);
            if (w > 0)
                continue;
        }
        return avo_error(err, errlen, AVO_EIO, "send: %s", strerror(errno));
    }
    return 0;
}

int avo_transport_send(int fd, const json_t *msg, double timeout_s, char *err, size_t errlen)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        return avo_error(err, errlen, AVO_ENOMEM, "cannot serialise message");
    size_t len = strlen(text), total = len + 4;
    unsigned char *frame = malloc(total);
    if (!frame) {
        free(text);
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    frame[0] = (unsigned char)(len & 0xff), frame[1] = (unsigned char)((len >> 8) & 0xff);
    frame[2] = (unsigned char)((len >> 16) & 0xff), frame[3] = (unsigned char)((len >> 24) & 0xff);
    memcpy(frame + 4, text, len);
    free(text);
    int rc = send_bytes(fd, frame, total, timeout_s, err, errlen);
    free(frame);
    return rc;
}

/* HMAC-SHA256 of text under the secret, as 64 hex digits. */
static int mac_hex(const avo_transport_secret *secret, const char *text, char out[65])
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), secret->bytes, (int)secret->len, (const unsigned char *)text,
              strlen(text), mac, &len) ||
        len != 32)
        return -1;
    to_hex(mac, 32, out);
    return 0;
}

/* The texts the two MACs cover; fields are separated by newlines, which no
 * field may contain (checked by the caller through json strings' content).
 * The hello's covers every field the hello claims. */
static char *hello_text(const char *nonce_e, const char *nonce_w, const char *run,
                        const char *version, const char *fingerprint, const char *host,
                        long long pid, long long device)
{
    size_t n = strlen(nonce_e) + strlen(nonce_w) + strlen(run) + strlen(version) +
               strlen(fingerprint) + strlen(host) + 96;
    char *t = malloc(n);
    if (t)
        snprintf(t, n, "avo-hello-2\n%s\n%s\n%s\n%s\n%s\n%s\n%lld\n%lld", nonce_e, nonce_w, run,
                 version, fingerprint, host, pid, device);
    return t;
}

static int welcome_mac(const avo_transport_secret *secret, const char *nonce_e, const char *nonce_w,
                       char out[65])
{
    char text[16 + 2 * AVO_TRANSPORT_NONCE_HEX + 8];
    snprintf(text, sizeof text, "avo-welcome\n%s\n%s", nonce_w, nonce_e);
    return mac_hex(secret, text, out);
}

static int new_nonce(char out[AVO_TRANSPORT_NONCE_HEX + 1])
{
    unsigned char raw[AVO_TRANSPORT_NONCE_HEX / 2];
    if (RAND_bytes(raw, sizeof raw) != 1)
        return -1;
    to_hex(raw, sizeof raw, out);
    return 0;
}

json_t *avo_transport_challenge(const avo_transport_identity *engine,
                                char nonce_hex[AVO_TRANSPORT_NONCE_HEX + 1])
{
    if (new_nonce(nonce_hex) < 0)
        return NULL;
    return json_pack("{s:s, s:i, s:s, s:s, s:s}", "type", "challenge", "protocol",
                     AVO_TRANSPORT_PROTOCOL, "nonce", nonce_hex, "run", engine->run, "version",
                     engine->version);
}

/* A string field of at most max bytes without newlines, or NULL. */
static const char *field(const json_t *msg, const char *key, size_t max)
{
    const char *s = json_string_value(json_object_get(msg, key));
    if (!s || strlen(s) > max || strchr(s, '\n'))
        return NULL;
    return s;
}

int avo_transport_check_hello(const json_t *hello, const char *nonce_hex,
                              const avo_transport_secret *secret,
                              const avo_transport_identity *engine,
                              int (*allowed)(const char *fingerprint, void *ctx), void *ctx,
                              json_t **ret_welcome, char *worker_name, size_t namelen,
                              int *ret_device, char *fingerprint, size_t fplen,
                              avo_transport_channel **ret_channel, char *err, size_t errlen)
{
    *ret_welcome = NULL;
    *ret_channel = NULL;
    const char *type = field(hello, "type", 32);
    if (!type || strcmp(type, "hello"))
        return avo_error(err, errlen, AVO_EINVAL,
                         "not an avo worker (expected a hello message; wrong port?)");
    if (json_integer_value(json_object_get(hello, "protocol")) != AVO_TRANSPORT_PROTOCOL)
        return avo_error(err, errlen, AVO_EINVAL,
                         "worker speaks transport protocol %lld, the engine %d",
                         (long long)json_integer_value(json_object_get(hello, "protocol")),
                         AVO_TRANSPORT_PROTOCOL);
    const char *nonce_w = field(hello, "nonce", AVO_TRANSPORT_NONCE_HEX);
    const char *run = field(hello, "run", 256);
    const char *version = field(hello, "version", 256);
    const char *fp = field(hello, "fingerprint", 128);
    const char *mac = field(hello, "mac", 64);
    const char *host = field(hello, "host", 200);
    const json_t *pid = json_object_get(hello, "pid"), *device = json_object_get(hello, "device");
    if (!nonce_w || strlen(nonce_w) != AVO_TRANSPORT_NONCE_HEX || !run || !version || !fp || !mac ||
        !host || !json_is_integer(pid) || !json_is_integer(device))
        return avo_error(err, errlen, AVO_EINVAL, "malformed hello (missing or bad fields)");
    char *text =
        hello_text(nonce_hex, nonce_w, run, version, fp, host, (long long)json_integer_value(pid),
                   (long long)json_integer_value(device));
    char expect[65];
    int ok = text && mac_hex(secret, text, expect) == 0;
    free(text);
    if (!ok)
        return avo_error(err, errlen, AVO_ENOMEM, "cannot compute the handshake MAC");
    if (strlen(mac) != 64 || CRYPTO_memcmp(mac, expect, 64) != 0)
        return avo_error(err, errlen, AVO_EINVAL,
                         "authentication failed: the worker does not know this run's secret");
    if (*run && strcmp(run, engine->run))
        return avo_error(err, errlen, AVO_EINVAL,
                         "worker belongs to run '%s', this engine serves run '%s'", run,
                         engine->run);
    if (strcmp(version, engine->version))
        return avo_error(err, errlen, AVO_EINVAL, "worker runs %s, the engine %s", version,
                         engine->version);
    if (*fp && allowed && !allowed(fp, ctx))
        return avo_error(err, errlen, AVO_EINVAL,
                         "worker serves evaluator fingerprint %.12s, which is not one of this "
                         "run's evaluators",
                         fp);
    char wmac[65];
    if (welcome_mac(secret, nonce_hex, nonce_w, wmac) < 0)
        return avo_error(err, errlen, AVO_ENOMEM, "cannot compute the handshake MAC");
    int rc = avo_transport_channel_new(secret, nonce_hex, nonce_w, 1, ret_channel, err, errlen);
    if (rc < 0)
        return rc;
    *ret_welcome = json_pack("{s:s, s:s}", "type", "welcome", "mac", wmac);
    if (!*ret_welcome) {
        avo_transport_channel_free(*ret_channel);
        *ret_channel = NULL;
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    snprintf(worker_name, namelen, "%s/%lld", host, (long long)json_integer_value(pid));
    snprintf(fingerprint, fplen, "%s", fp);
    *ret_device = json_is_integer(device) && json_integer_value(device) >= 0 &&
                          json_integer_value(device) < 1024
                      ? (int)json_integer_value(device)
                      : -1;
    return 0;
}

/* Read one handshake message of at most AVO_TRANSPORT_HELLO_MAX bytes within timeout_s. */
static int read_small(int fd, double timeout_s, json_t **ret, char *err, size_t errlen)
{
    *ret = NULL;
    unsigned char buf[AVO_TRANSPORT_HELLO_MAX + 4];
    size_t got = 0, want = 4;
    double end = avo_monotonic() + timeout_s;
    while (got < want) {
        int w = wait_fd(fd, POLLIN, end - avo_monotonic());
        if (w <= 0)
            return avo_error(err, errlen, AVO_EIO, "the engine did not answer the handshake");
        ssize_t n = read(fd, buf + got, want - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return avo_error(err, errlen, AVO_EIO,
                             "the engine closed the connection during the "
                             "handshake");
        got += (size_t)n;
        if (got == 4) {
            size_t len =
                (size_t)buf[0] | (size_t)buf[1] << 8 | (size_t)buf[2] << 16 | (size_t)buf[3] << 24;
            if (len > AVO_TRANSPORT_HELLO_MAX)
                return avo_error(err, errlen, AVO_EPROTO,
                                 "the peer is not an avo engine (oversized handshake)");
            want = 4 + len;
        }
    }
    json_t *msg = json_loadb((const char *)buf + 4, want - 4, 0, NULL);
    if (!json_is_object(msg)) {
        json_decref(msg);
        return avo_error(err, errlen, AVO_EPROTO, "the peer is not an avo engine");
    }
    *ret = msg;
    return 0;
}

int avo_transport_worker_handshake(int fd, const avo_transport_secret *secret,
                                   const avo_transport_identity *worker, double timeout_s,
                                   avo_transport_channel **ret_channel, char *err, size_t errlen)
{
    *ret_channel = NULL;
    json_t *challenge = NULL, *verdict = NULL, *hello = NULL;
    char *text = NULL;
    int rc = read_small(fd, timeout_s, &challenge, err, errlen);
    if (rc < 0)
        goto out;
    const char *nonce_e = field(challenge, "nonce", AVO_TRANSPORT_NONCE_HEX);
    const char *type = field(challenge, "type", 32);
    if (!type || strcmp(type, "challenge") || !nonce_e ||
        strlen(nonce_e) != AVO_TRANSPORT_NONCE_HEX) {
        rc = avo_error(err, errlen, AVO_EPROTO, "the peer is not an avo engine (no challenge)");
        goto out;
    }
    char nonce_w[AVO_TRANSPORT_NONCE_HEX + 1], mac[65], host[200];
    if (new_nonce(nonce_w) < 0) {
        rc = avo_error(err, errlen, AVO_EIO, "no randomness for the handshake");
        goto out;
    }
    if (gethostname(host, sizeof host) < 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    host[strcspn(host, "\n")] = '\0';
    const char *device_env = getenv("AVO_CUDA_DEVICE");
    int device = device_env ? atoi(device_env) : -1;
    text = hello_text(nonce_e, nonce_w, worker->run, worker->version, worker->fingerprint, host,
                      (long long)getpid(), device);
    if (!text || mac_hex(secret, text, mac) < 0) {
        rc = avo_error(err, errlen, AVO_ENOMEM, "cannot compute the handshake MAC");
        goto out;
    }
    hello = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:I, s:i, s:s}", "type", "hello",
                      "protocol", AVO_TRANSPORT_PROTOCOL, "nonce", nonce_w, "run", worker->run,
                      "version", worker->version, "fingerprint", worker->fingerprint, "host", host,
                      "pid", (json_int_t)getpid(), "device", device, "mac", mac);
    if (!hello) {
        rc = avo_error(err, errlen, AVO_ENOMEM, "out of memory");
        goto out;
    }
    rc = avo_proto_send(fd, hello, err, errlen);
    if (rc < 0)
        goto out;
    rc = read_small(fd, timeout_s, &verdict, err, errlen);
    if (rc < 0)
        goto out;
    type = field(verdict, "type", 32);
    if (type && !strcmp(type, "refused")) {
        const char *reason = json_string_value(json_object_get(verdict, "reason"));
        rc = avo_error(err, errlen, AVO_EINVAL, "refused by the engine: %.900s",
                       reason ? reason : "no reason given");
        goto out;
    }
    const char *got = field(verdict, "mac", 64);
    char expect[65];
    if (!type || strcmp(type, "welcome") || !got || strlen(got) != 64 ||
        welcome_mac(secret, nonce_e, nonce_w, expect) < 0 || CRYPTO_memcmp(got, expect, 64)) {
        rc = avo_error(err, errlen, AVO_EINVAL,
                       "the engine failed to prove it knows the run's secret; not serving it");
        goto out;
    }
    rc = avo_transport_channel_new(secret, nonce_e, nonce_w, 0, ret_channel, err, errlen);
out:
    free(text);
    json_decref(challenge);
    json_decref(verdict);
    json_decref(hello);
    return rc;
}

/* One direction of a channel: a secretstream state and whether it began. */
typedef struct stream {
    crypto_secretstream_xchacha20poly1305_state state;
    int started; /* push: header sent; pull: header read */
    int ended;   /* a TAG_FINAL message went or came */
} stream;

struct avo_transport_channel {
    stream push, pull;
    unsigned char push_key[crypto_secretstream_xchacha20poly1305_KEYBYTES];
    unsigned char pull_key[crypto_secretstream_xchacha20poly1305_KEYBYTES];
};

#define FRAME_MAX ((size_t)AVO_PROTO_MAX + crypto_secretstream_xchacha20poly1305_ABYTES)

/* Kdir = BLAKE2b-256(key K, label "\n" NE "\n" NW); 0 or -1. */
static int derive(const unsigned char k[32], const char *label, const char *nonce_e,
                  const char *nonce_w, unsigned char out[32])
{
    char text[64 + 2 * AVO_TRANSPORT_NONCE_HEX + 8];
    int n = snprintf(text, sizeof text, "%s\n%s\n%s", label, nonce_e, nonce_w);
    if (n < 0 || (size_t)n >= sizeof text)
        return -1;
    return crypto_generichash(out, 32, (const unsigned char *)text, (size_t)n, k, 32);
}

int avo_transport_channel_new(const avo_transport_secret *secret, const char *nonce_e,
                              const char *nonce_w, int is_engine, avo_transport_channel **ret,
                              char *err, size_t errlen)
{
    *ret = NULL;
    if (sodium_init() < 0)
        return avo_error(err, errlen, AVO_EIO, "libsodium failed to initialise");
    avo_transport_channel *ch = sodium_malloc(sizeof *ch);
    if (!ch)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    memset(ch, 0, sizeof *ch);
    unsigned char k[32], ew[32], we[32];
    int rc = crypto_generichash(k, sizeof k, secret->bytes, secret->len, NULL, 0);
    if (rc == 0)
        rc = derive(k, "avo-transport-2 engine->worker", nonce_e, nonce_w, ew);
    if (rc == 0)
        rc = derive(k, "avo-transport-2 worker->engine", nonce_e, nonce_w, we);
    memcpy(ch->push_key, is_engine ? ew : we, sizeof ch->push_key);
    memcpy(ch->pull_key, is_engine ? we : ew, sizeof ch->pull_key);
    sodium_memzero(k, sizeof k);
    sodium_memzero(ew, sizeof ew);
    sodium_memzero(we, sizeof we);
    if (rc != 0) {
        avo_transport_channel_free(ch);
        return avo_error(err, errlen, AVO_EIO, "cannot derive the channel keys");
    }
    *ret = ch;
    return 0;
}

void avo_transport_channel_free(avo_transport_channel *ch)
{
    if (ch)
        sodium_free(ch); /* zeroes the memory */
}

/*
 * The size a message of len bytes is padded to before sealing: the next
 * power of two above it (room for the padding's 0x80 marker), at least
 * AVO_TRANSPORT_PAD_MIN.  A frame's length then says only which of a few
 * size classes its message is in, so a man in the middle cannot pick out
 * one candidate's job (their lengths differ by a few bytes) to cut it.
 */
static size_t padded_size(size_t len)
{
    size_t size = AVO_TRANSPORT_PAD_MIN;
    while (size <= len)
        size *= 2;
    return size;
}

int avo_transport_channel_seal(avo_transport_channel *ch, const json_t *msg, int final,
                               unsigned char **ret_bytes, size_t *ret_len, char *err, size_t errlen)
{
    *ret_bytes = NULL;
    *ret_len = 0;
    if (ch->push.ended)
        return avo_error(err, errlen, AVO_EINVAL, "the channel was already ended");
    char *text = json_dumps(msg, JSON_COMPACT);
    if (!text)
        return avo_error(err, errlen, AVO_ENOMEM, "cannot serialise message");
    size_t len = strlen(text);
    if (len >= AVO_PROTO_MAX) { /* its padding must fit the limit too */
        free(text);
        return avo_error(err, errlen, AVO_EINVAL, "message of %zu bytes exceeds the limit", len);
    }
    size_t size = padded_size(len), plen = 0;
    unsigned char *plain = malloc(size);
    if (!plain) {
        free(text);
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    memcpy(plain, text, len);
    free(text);
    /* ISO/IEC 7816-4 padding (0x80, then zeros) up to one block of `size`. */
    sodium_pad(&plen, plain, len, size, size);
    size_t header = ch->push.started ? 0 : crypto_secretstream_xchacha20poly1305_HEADERBYTES;
    size_t clen = plen + crypto_secretstream_xchacha20poly1305_ABYTES;
    unsigned char *out = malloc(header + 4 + clen);
    if (!out) {
        free(plain);
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory");
    }
    if (header)
        crypto_secretstream_xchacha20poly1305_init_push(&ch->push.state, out, ch->push_key);
    unsigned char *frame = out + header;
    frame[0] = (unsigned char)(clen & 0xff), frame[1] = (unsigned char)((clen >> 8) & 0xff);
    frame[2] = (unsigned char)((clen >> 16) & 0xff),
    frame[3] = (unsigned char)((clen >> 24) & 0xff);
    /* The length is additional data: changing it fails the message. */
    crypto_secretstream_xchacha20poly1305_push(
        &ch->push.state, frame + 4, NULL, plain, plen, frame, 4,
        final ? crypto_secretstream_xchacha20poly1305_TAG_FINAL
              : crypto_secretstream_xchacha20poly1305_TAG_MESSAGE);
    sodium_memzero(plain, size);
    free(plain);
    ch->push.started = 1;
    ch->push.ended = final != 0;
    *ret_bytes = out;
    *ret_len = header + 4 + clen;
    return 0;
}

int avo_transport_channel_send(avo_transport_channel *ch, int fd, const json_t *msg, int final,
                               double timeout_s, char *err, size_t errlen)
{
    unsigned char *bytes;
    size_t len;
    int rc = avo_transport_channel_seal(ch, msg, final, &bytes, &len, err, errlen);
    if (rc < 0)
        return rc;
    rc = send_bytes(fd, bytes, len, timeout_s, err, errlen);
    free(bytes);
    return rc;
}

int avo_transport_channel_open(avo_transport_channel *ch, const unsigned char *data, size_t len,
                               size_t *at, json_t **ret_msg, int *ret_final, char *err,
                               size_t errlen)
{
    *ret_msg = NULL;
    *ret_final = 0;
    size_t pos = *at;
    if (ch->pull.ended) {
        if (pos < len)
            return avo_error(err, errlen, AVO_EPROTO, "stream goes on after its final message");
        return 0;
    }
    if (!ch->pull.started) {
        if (len - pos < crypto_secretstream_xchacha20poly1305_HEADERBYTES)
            return 0;
        if (crypto_secretstream_xchacha20poly1305_init_pull(&ch->pull.state, data + pos,
                                                            ch->pull_key) != 0)
            return avo_error(err, errlen, AVO_EPROTO, "stream header is invalid");
        ch->pull.started = 1;
        pos += crypto_secretstream_xchacha20poly1305_HEADERBYTES;
        *at = pos;
    }
    if (len - pos < 4)
        return 0;
    const unsigned char *frame = data + pos;
    size_t clen =
        (size_t)frame[0] | (size_t)frame[1] << 8 | (size_t)frame[2] << 16 | (size_t)frame[3] << 24;
    if (clen < crypto_secretstream_xchacha20poly1305_ABYTES || clen > FRAME_MAX)
        return avo_error(err, errlen, AVO_EPROTO,
                         "stream failed authentication (a frame of %zu bytes)", clen);
    if (len - pos - 4 < clen)
        return 0;
    size_t mlen = clen - crypto_secretstream_xchacha20poly1305_ABYTES;
    unsigned char *plain = malloc(mlen + 1);
    if (!plain)
        return avo_error(err, errlen, AVO_ENOMEM, "out of memory for a %zu-byte message", mlen);
    unsigned char tag = 0;
    unsigned long long got = 0;
    if (crypto_secretstream_xchacha20poly1305_pull(&ch->pull.state, plain, &got, &tag, frame + 4,
                                                   clen, frame, 4) != 0) {
        free(plain);
        return avo_error(err, errlen, AVO_EPROTO,
                         "stream failed authentication (a forged, replayed, reordered, "
                         "dropped or injected message)");
    }
    if (tag != crypto_secretstream_xchacha20poly1305_TAG_MESSAGE &&
        tag != crypto_secretstream_xchacha20poly1305_TAG_FINAL) {
        free(plain);
        return avo_error(err, errlen, AVO_EPROTO, "stream carried a message with tag %u", tag);
    }
    /* Padded to its size class (padded_size): anything else is not our peer's. */
    size_t unpadded = 0;
    if (got < AVO_TRANSPORT_PAD_MIN || (got & (got - 1)) != 0 ||
        sodium_unpad(&unpadded, plain, (size_t)got, (size_t)got) != 0) {
        free(plain);
        return avo_error(err, errlen, AVO_EPROTO,
                         "stream carried a message that is not padded to its size class");
    }
    json_t *msg = json_loadb((const char *)plain, unpadded, 0, NULL);
    free(plain);
    if (!json_is_object(msg)) {
        json_decref(msg);
        return avo_error(err, errlen, AVO_EPROTO, "stream carried a message that is not JSON");
    }
    *at = pos + 4 + clen;
    ch->pull.ended = tag == crypto_secretstream_xchacha20poly1305_TAG_FINAL;
    *ret_final = ch->pull.ended;
    *ret_msg = msg;
    return 1;
}
