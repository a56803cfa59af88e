/*
 * transport.h — the worker protocol over TCP, and how both ends of a
 * connection prove who they are and keep the rest of it private and intact
 * (docs/protocol.md, "TCP transport").
 *
 * Before the first job the two ends run a challenge-response handshake in
 * clear, keyed by a per-run secret (HMAC-SHA256, OpenSSL's libcrypto):
 *
 *   engine -> worker  {"type":"challenge", "protocol":3, "nonce":NE, "run":R, "version":V}
 *   worker -> engine  {"type":"hello", "protocol":3, "nonce":NW, "run":R', "version":V',
 *                      "fingerprint":F, "host":H, "pid":P, "device":D, "mac":HMAC(hello text)}
 *   engine -> worker  {"type":"welcome", "mac":HMAC(welcome text)} | {"type":"refused",
 * "reason":...}
 *
 * Both MACs cover both nonces, so neither side can replay an old handshake,
 * and the worker's covers everything it claims (run, version, fingerprint,
 * host, pid, device).  The secret never crosses the wire.
 *
 * After the welcome every message travels in a channel (avo_transport_channel):
 * one libsodium crypto_secretstream_xchacha20poly1305 stream per direction,
 * keyed by BLAKE2b (crypto_generichash) of the secret and both nonces, so
 * each connection has keys of its own.  Each side's first bytes are its
 * stream header; each message is then [u32 LE length][ciphertext] with the
 * length as additional data.  A forged, replayed, reordered or dropped
 * message fails to open; TAG_FINAL marks a clean end.  Every message is
 * padded (ISO/IEC 7816-4, libsodium's sodium_pad) to a power of two of at
 * least AVO_TRANSPORT_PAD_MIN bytes before sealing, so a frame's length
 * tells only its size class, never which candidate a job is.
 *
 * Invariant: the engine reads at most AVO_TRANSPORT_HELLO_MAX bytes from a
 * peer that has not authenticated.
 */
#ifndef AVO_TRANSPORT_H
#define AVO_TRANSPORT_H

#include <jansson.h>
#include <stddef.h>

#define AVO_TRANSPORT_PROTOCOL 3 /* 2: encrypted channel, hello binds host/pid/device; 3: padded   \
                                  */
#define AVO_TRANSPORT_HELLO_MAX 4096 /* bytes an unauthenticated peer may send */
#define AVO_TRANSPORT_SECRET_MIN 16  /* bytes */
#define AVO_TRANSPORT_SECRET_MAX 512
#define AVO_TRANSPORT_NONCE_HEX 64
#define AVO_TRANSPORT_PAD_MIN 256     /* messages are padded to a power of two, at least this */
#define AVO_TRANSPORT_HEARTBEAT_S 1.0 /* a remote worker says "alive" this often */
#define AVO_TRANSPORT_SILENCE_S 30.0  /* a worker silent this long is lost */
#define AVO_TRANSPORT_ACK_S 10.0 /* ...and one that has not opened a message sent this long ago */

/* One connection's encrypted channel (both directions); opaque. */
typedef struct avo_transport_channel avo_transport_channel;

/* A per-run secret: raw bytes, not a C string. */
typedef struct avo_transport_secret {
    unsigned char bytes[AVO_TRANSPORT_SECRET_MAX];
    size_t len;
} avo_transport_secret;

/*
 * Load the secret from the environment: AVO_WORKER_SECRET (the text itself)
 * or AVO_WORKER_SECRET_FILE (a regular file of mode 0600 or stricter; one
 * trailing newline is dropped).  Returns 0, AVO_ENOTFOUND when neither is set
 * (err says so), or AVO_EINVAL for a file readable by others, a secret
 * shorter than AVO_TRANSPORT_SECRET_MIN bytes or another bad secret.
 */
int avo_transport_secret_from_env(avo_transport_secret *ret, char *err, size_t errlen);

/* Read a secret file with the same rules as AVO_WORKER_SECRET_FILE. */
int avo_transport_secret_from_file(avo_transport_secret *ret, const char *path, char *err,
                                   size_t errlen);

/* A fresh random secret, written as hex text (so it can travel in the
 * environment) into hex[2 * 32 + 1]; *ret holds that text as its bytes. */
int avo_transport_secret_generate(avo_transport_secret *ret, char hex[65], char *err,
                                  size_t errlen);

/* Split "HOST:PORT" ("[v6]:PORT" too) into host and port.  Returns 0 or
 * AVO_EINVAL naming what is wrong. */
int avo_transport_split(const char *address, char *host, size_t hostlen, char *port, size_t portlen,
                        char *err, size_t errlen);

/*
 * Listen on address ("HOST:PORT"; port 0 picks a free one).  Returns 0 with a
 * non-blocking, close-on-exec listening socket in *ret_fd and the port bound in
 * *ret_port, or AVO_EIO.
 */
int avo_transport_listen(const char *address, int *ret_fd, int *ret_port, char *err, size_t errlen);

/*
 * Connect to address within timeout_s.  Returns 0 with a blocking,
 * close-on-exec socket (keepalive on), or AVO_EIO naming the address and why
 * ("connection refused", "no such host", "timed out").
 */
int avo_transport_connect(const char *address, double timeout_s, int *ret_fd, char *err,
                          size_t errlen);

/* Accept one pending connection on a listening socket: 0 with a non-blocking
 * close-on-exec socket and the peer as "ip:port" in peer, 1 when none is
 * pending, or AVO_EIO. */
int avo_transport_accept(int listen_fd, int *ret_fd, char *peer, size_t peerlen);

/* Keepalive and user timeout on a connected socket, so that a lost node shows
 * up as an error within about half a minute.  Failures are ignored. */
void avo_transport_keepalive(int fd);

/* What one end says about itself in the handshake. */
typedef struct avo_transport_identity {
    const char *run;         /* run token; "" on a worker: any run */
    const char *version;     /* "avo 0.1.0 (git abc)" */
    const char *fingerprint; /* evaluator fingerprint a worker serves; "" any */
} avo_transport_identity;

/* The engine's challenge for a new connection; nonce_hex receives the
 * nonce it carries.  New reference or NULL when out of memory or without
 * randomness. */
json_t *avo_transport_challenge(const avo_transport_identity *engine,
                                char nonce_hex[AVO_TRANSPORT_NONCE_HEX + 1]);

/*
 * Engine side: check a worker's hello against the challenge's nonce, the
 * secret and the engine's identity; allowed(fp, ctx) says whether an
 * evaluator fingerprint is one this run serves (NULL: any).  Returns 0 with
 * *ret_welcome (caller owns) to send, or AVO_EINVAL with the reason in err
 * (to log and to send in a "refused" message).  On success the worker's
 * name ("host/pid"), CUDA device (-1: none named) and fingerprint are
 * copied out, and *ret_channel (caller frees with avo_transport_channel_free)
 * is the engine's end of the connection's channel.
 */
int avo_transport_check_hello(const json_t *hello, const char *nonce_hex,
                              const avo_transport_secret *secret,
                              const avo_transport_identity *engine,
                              int (*allowed)(const char *fingerprint, void *ctx), void *ctx,
                              json_t **ret_welcome, char *worker_name, size_t namelen,
                              int *ret_device, char *fingerprint, size_t fplen,
                              avo_transport_channel **ret_channel, char *err, size_t errlen);

/*
 * Worker side, blocking on a connected socket: read the challenge, send the
 * hello, read the verdict, check the engine's MAC.  Every read is bounded
 * by timeout_s.  Returns 0 once welcomed, with the worker's end of the
 * channel in *ret_channel (caller frees); AVO_EINVAL when refused (err holds
 * the engine's reason) or the engine failed to prove the secret; AVO_EIO or
 * AVO_EPROTO when the connection failed or spoke something else.
 */
int avo_transport_worker_handshake(int fd, const avo_transport_secret *secret,
                                   const avo_transport_identity *worker, double timeout_s,
                                   avo_transport_channel **ret_channel, char *err, size_t errlen);

/*
 * Both ends' channel for a connection whose handshake used nonces nonce_e
 * (the engine's) and nonce_w (the worker's), as hex text.  The keys are
 *   K   = BLAKE2b-256(secret)
 *   Kew = BLAKE2b-256(key K, "avo-transport-2 engine->worker\n" NE "\n" NW)
 *   Kwe = BLAKE2b-256(key K, "avo-transport-2 worker->engine\n" NE "\n" NW)
 * (libsodium's crypto_generichash); the engine pushes with Kew and pulls
 * with Kwe, the worker the other way round.  Returns 0 with *ret (caller
 * frees), AVO_ENOMEM, or AVO_EIO when libsodium cannot start.
 */
int avo_transport_channel_new(const avo_transport_secret *secret, const char *nonce_e,
                              const char *nonce_w, int is_engine, avo_transport_channel **ret,
                              char *err, size_t errlen);

/* Wipe the keys and free; accepts NULL. */
void avo_transport_channel_free(avo_transport_channel *ch);

/*
 * Encrypt msg as the channel's next message (TAG_FINAL when final: the
 * sender's last), preceded by the stream header the first time.  Returns 0
 * with *ret_bytes (caller frees) of *ret_len bytes to write, AVO_EINVAL
 * after a final message, or AVO_ENOMEM.
 */
int avo_transport_channel_seal(avo_transport_channel *ch, const json_t *msg, int final,
                               unsigned char **ret_bytes, size_t *ret_len, char *err,
                               size_t errlen);

/*
 * avo_transport_channel_seal, then write the bytes to fd (which may be
 * non-blocking) within timeout_s.  Returns 0, AVO_ETIMEOUT, AVO_EIO, or
 * what sealing returned.
 */
int avo_transport_channel_send(avo_transport_channel *ch, int fd, const json_t *msg, int final,
                               double timeout_s, char *err, size_t errlen);

/*
 * Open the next message of the peer's stream from the bytes in b at *at
 * (the peer's header first, consumed on the way).  Returns 1 with *ret_msg
 * (caller owns) and *ret_final (1: the peer's clean end) and *at advanced,
 * 0 when b holds no complete message yet, or AVO_EPROTO when the stream
 * failed authentication (a forged, replayed, reordered, dropped or injected
 * message), carries a bad tag, is not JSON or goes on after its final
 * message: the connection must be dropped.
 */
int avo_transport_channel_open(avo_transport_channel *ch, const unsigned char *data, size_t len,
                               size_t *at, json_t **ret_msg, int *ret_final, char *err,
                               size_t errlen);

/*
 * Send msg framed (core/proto.h) on a socket that may be non-blocking,
 * waiting at most timeout_s for the peer to take it.  Returns 0, AVO_ETIMEOUT
 * or AVO_EIO.
 */
int avo_transport_send(int fd, const json_t *msg, double timeout_s, char *err, size_t errlen);

/* The engine version as both ends compare it: "avo X (git Y)". */
const char *avo_transport_version(void);

#endif
