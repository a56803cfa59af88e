/*
 * test_transport — the TCP transport's pieces (scale/transport.h): address
 * parsing, the secret's sources and their refusals, and the HMAC handshake
 * from both ends over a socket pair: a welcome, a wrong secret, another run,
 * another version, an unknown fingerprint, a refusal reaching the worker,
 * an engine that cannot prove the secret, and a hello whose host, pid or
 * device changed on the way; then the encrypted channel after it: both
 * ends' keys agree, and a flipped byte, a replayed, reordered, dropped or
 * injected message, a changed length, another connection's keys and bytes
 * after the final message all fail to open.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/avo.h"
#include "check.h"
#include "core/proto.h"
#include "scale/transport.h"

static avo_transport_secret secret_of(const char *text)
{
    avo_transport_secret s;
    s.len = strlen(text);
    memcpy(s.bytes, text, s.len);
    return s;
}

static int allow_abc(const char *fp, void *ctx)
{
    (void)ctx;
    return strcmp(fp, "abc") == 0;
}

/* What the engine does with the hello the worker sends: check it as sent,
 * send a welcome with a bad MAC, or check it after a man in the middle
 * changed one of the fields it claims. */
typedef enum {
    ENGINE_CHECK,
    ENGINE_BAD_WELCOME,
    ENGINE_OTHER_HOST,
    ENGINE_OTHER_PID,
    ENGINE_OTHER_DEVICE
} engine_mode;

/*
 * Run a handshake: a forked worker with (worker_secret, worker identity)
 * against this process as the engine.  Returns the engine's check result
 * (err_engine) and the worker's return code (*ret_worker_rc, err_worker read
 * back through a pipe).
 */
static int handshake(const char *engine_secret, const char *worker_secret,
                     avo_transport_identity worker, engine_mode mode, int *ret_worker_rc,
                     char *err_engine, char *err_worker)
{
    int sv[2], report[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || pipe(report) < 0)
        return -100;
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        close(report[0]);
        avo_transport_secret ws = secret_of(worker_secret);
        char err[AVO_ERRLEN] = "";
        avo_transport_channel *ch = NULL;
        int rc = avo_transport_worker_handshake(sv[1], &ws, &worker, 5.0, &ch, err, sizeof err);
        /* Welcomed: the first message of the worker's stream. */
        json_t *beat = json_pack("{s:s, s:i}", "type", "alive", "got", 0);
        if (rc == 0 && avo_transport_channel_send(ch, sv[1], beat, 0, 5.0, err, sizeof err) < 0)
            rc = -50;
        json_decref(beat);
        avo_transport_channel_free(ch);
        if (write(report[1], err, strlen(err) + 1) < 0)
            _exit(100);
        _exit(-rc);
    }
    close(sv[1]);
    close(report[1]);
    avo_transport_secret es = secret_of(engine_secret);
    avo_transport_identity engine = {"run-1", "avo 9 (git x)", ""};
    char nonce[AVO_TRANSPORT_NONCE_HEX + 1];
    json_t *challenge = avo_transport_challenge(&engine, nonce);
    avo_transport_send(sv[0], challenge, 5.0, NULL, 0);
    json_decref(challenge);
    json_t *hello = NULL, *welcome = NULL;
    avo_transport_channel *ch = NULL;
    char name[256], fp[129];
    int device = -2, rc = avo_proto_recv(sv[0], &hello, err_engine, AVO_ERRLEN);
    if (rc == 0 && mode == ENGINE_OTHER_HOST)
        json_object_set_new(hello, "host", json_string("elsewhere"));
    if (rc == 0 && mode == ENGINE_OTHER_PID)
        json_object_set_new(hello, "pid", json_integer(1));
    if (rc == 0 && mode == ENGINE_OTHER_DEVICE)
        json_object_set_new(hello, "device", json_integer(7));
    if (rc == 0)
        rc = avo_transport_check_hello(hello, nonce, &es, &engine, allow_abc, NULL, &welcome, name,
                                       sizeof name, &device, fp, sizeof fp, &ch, err_engine,
                                       AVO_ERRLEN);
    if (rc == 0 && mode == ENGINE_BAD_WELCOME)
        json_object_set_new(welcome, "mac", json_string("00"));
    json_t *reply = rc == 0 ? json_incref(welcome)
                            : json_pack("{s:s, s:s}", "type", "refused", "reason", err_engine);
    avo_transport_send(sv[0], reply, 5.0, NULL, 0);
    json_decref(reply);
    json_decref(welcome);
    json_decref(hello);
    if (rc == 0 && mode == ENGINE_CHECK) {
        /* The worker's first message opens with the engine's end of the channel. */
        unsigned char buf[4096];
        size_t got = 0, at = 0;
        json_t *msg = NULL;
        int final = 0, orc = 0;
        while (orc == 0) {
            ssize_t n = read(sv[0], buf + got, sizeof buf - got);
            if (n <= 0)
                break;
            got += (size_t)n;
            orc =
                avo_transport_channel_open(ch, buf, got, &at, &msg, &final, err_engine, AVO_ERRLEN);
        }
        CHECK_INT(orc, 1);
        CHECK_INT(final, 0);
        CHECK_STR(json_string_value(json_object_get(msg, "type")), "alive");
        json_decref(msg);
    }
    avo_transport_channel_free(ch);
    int status;
    waitpid(pid, &status, 0);
    *ret_worker_rc = WIFEXITED(status) ? -WEXITSTATUS(status) : -99;
    ssize_t n = read(report[0], err_worker, AVO_ERRLEN - 1);
    err_worker[n > 0 ? n : 0] = '\0';
    close(report[0]);
    close(sv[0]);
    return rc;
}

/* Seal msg text on ch into a fresh buffer; *len its size. */
static unsigned char *seal(avo_transport_channel *ch, const char *text, int final, size_t *len)
{
    json_t *msg = json_loads(text, 0, NULL);
    unsigned char *bytes = NULL;
    char err[AVO_ERRLEN];
    CHECK_INT(avo_transport_channel_seal(ch, msg, final, &bytes, len, err, sizeof err), 0);
    json_decref(msg);
    return bytes;
}

/* Open everything in (data, len) on ch: the count of messages opened, or
 * the negative code of the first that failed (err says why); the last
 * message's "n" in *ret_n, its final flag in *ret_final. */
static int open_all(avo_transport_channel *ch, const unsigned char *data, size_t len, int *ret_n,
                    int *ret_final, char *err)
{
    size_t at = 0;
    int count = 0;
    for (;;) {
        json_t *msg = NULL;
        int final = 0;
        int rc = avo_transport_channel_open(ch, data, len, &at, &msg, &final, err, AVO_ERRLEN);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return count;
        *ret_final = final;
        *ret_n = (int)json_integer_value(json_object_get(msg, "n"));
        json_decref(msg);
        count++;
    }
}

/* A fresh pair of channel ends (engine, worker) for the given nonces. */
static void pair(const char *key, const char *ne, const char *nw, avo_transport_channel **engine,
                 avo_transport_channel **worker)
{
    avo_transport_secret s = secret_of(key);
    char err[AVO_ERRLEN];
    CHECK_INT(avo_transport_channel_new(&s, ne, nw, 1, engine, err, sizeof err), 0);
    CHECK_INT(avo_transport_channel_new(&s, ne, nw, 0, worker, err, sizeof err), 0);
}

/*
 * The channel: what the engine seals the worker opens, in order, and every
 * manipulation a man in the middle can make without the keys fails.
 */
static void test_channel(void)
{
    const char *key = "the-run-secret-0123456789";
    char ne[65], nw[65], err[AVO_ERRLEN];
    memset(ne, 'a', 64), memset(nw, 'b', 64);
    ne[64] = nw[64] = '\0';
    avo_transport_channel *e, *w;
    int n = -1, final = -1;

    /* Three messages, the header on the first: all open, in order. */
    pair(key, ne, nw, &e, &w);
    size_t l1, l2, l3;
    unsigned char *m1 = seal(e, "{\"n\": 1}", 0, &l1), *m2 = seal(e, "{\"n\": 2}", 0, &l2),
                  *m3 = seal(e, "{\"n\": 3, \"type\": \"bye\"}", 1, &l3);
    /* header, length, {"n":1} padded to 256 bytes, MAC and tag */
    CHECK_INT(l1, 24 + 4 + AVO_TRANSPORT_PAD_MIN + 17);
    CHECK_INT(l2, 4 + AVO_TRANSPORT_PAD_MIN + 17);
    unsigned char all[2048];
    memcpy(all, m1, l1), memcpy(all + l1, m2, l2), memcpy(all + l1 + l2, m3, l3);
    CHECK_INT(open_all(w, all, l1 + l2 + l3, &n, &final, err), 3);
    CHECK_INT(n, 3);
    CHECK_INT(final, 1);
    /* After the final message: nothing more to seal, nothing more to open. */
    json_t *more = json_pack("{s:i}", "n", 4);
    unsigned char *bytes;
    size_t len;
    CHECK_INT(avo_transport_channel_seal(e, more, 0, &bytes, &len, err, sizeof err), AVO_EINVAL);
    json_decref(more);
    size_t at = l1 + l2 + l3;
    json_t *msg = NULL;
    memcpy(all + at, m2, l2);
    CHECK_INT(avo_transport_channel_open(w, all, at + l2, &at, &msg, &final, err, sizeof err),
              AVO_EPROTO);
    CHECK_STR(err, "stream goes on after its final message");
    /* The worker's key is not the engine's: its own stream does not open as ours. */
    size_t lw;
    unsigned char *mw = seal(w, "{\"n\": 9}", 0, &lw);
    avo_transport_channel *e2, *w2;
    pair(key, ne, nw, &e2, &w2);
    CHECK_INT(open_all(w2, mw, lw, &n, &final, err), AVO_EPROTO);
    CHECK_INT(open_all(e2, mw, lw, &n, &final, err), 1);
    CHECK_INT(n, 9);
    avo_transport_channel_free(e2), avo_transport_channel_free(w2);
    free(mw);
    avo_transport_channel_free(w);

    /* Each manipulation, on a fresh receiver. */
    struct {
        const char *what;
        unsigned char data[2048];
        size_t len;
        int opened; /* messages that open before the failure */
    } cases[10];
    int nc = 0;
    /* a flipped bit in the first ciphertext */
    cases[nc].what = "flip";
    memcpy(cases[nc].data, all, l1 + l2);
    cases[nc].data[24 + 4 + 3] ^= 1;
    cases[nc].len = l1 + l2, cases[nc].opened = 0, nc++;
    /* message 2's length one less (the length is additional data) */
    cases[nc].what = "length";
    memcpy(cases[nc].data, all, l1 + l2);
    cases[nc].data[l1]--;
    cases[nc].len = l1 + l2, cases[nc].opened = 1, nc++;
    /* an absurd length */
    cases[nc].what = "huge";
    memcpy(cases[nc].data, all, l1 + l2);
    cases[nc].data[l1 + 3] = 0x7f;
    cases[nc].len = l1 + l2, cases[nc].opened = 1, nc++;
    /* message 1 replayed after itself */
    cases[nc].what = "replay";
    memcpy(cases[nc].data, m1, l1), memcpy(cases[nc].data + l1, m1 + 24, l1 - 24);
    cases[nc].len = 2 * l1 - 24, cases[nc].opened = 1, nc++;
    /* messages 2 and 1 swapped */
    cases[nc].what = "reorder";
    memcpy(cases[nc].data, m1, 24), memcpy(cases[nc].data + 24, m2, l2);
    memcpy(cases[nc].data + 24 + l2, m1 + 24, l1 - 24);
    cases[nc].len = l1 + l2, cases[nc].opened = 0, nc++;
    /* message 2 dropped */
    cases[nc].what = "drop";
    memcpy(cases[nc].data, m1, l1), memcpy(cases[nc].data + l1, m3, l3);
    cases[nc].len = l1 + l3, cases[nc].opened = 1, nc++;
    /* bytes injected between two messages, framed like one */
    cases[nc].what = "inject";
    memcpy(cases[nc].data, m1, l1);
    unsigned char fake[4 + 30] = {30, 0, 0, 0};
    memset(fake + 4, 'x', 30);
    memcpy(cases[nc].data + l1, fake, sizeof fake);
    cases[nc].len = l1 + sizeof fake, cases[nc].opened = 1, nc++;
    /* a header of another stream */
    cases[nc].what = "header";
    memcpy(cases[nc].data, m1, l1);
    cases[nc].data[5] ^= 0x80;
    cases[nc].len = l1, cases[nc].opened = 0, nc++;
    for (int i = 0; i < nc; i++) {
        avo_transport_channel *r, *unused;
        pair(key, ne, nw, &unused, &r);
        n = 0;
        int got = open_all(r, cases[i].data, cases[i].len, &n, &final, err);
        if (got != AVO_EPROTO)
            fprintf(stderr, "channel case %s: %d\n", cases[i].what, got);
        CHECK_INT(got, AVO_EPROTO);
        CHECK_INT(n, cases[i].opened); /* the last one that opened was number `opened` */
        avo_transport_channel_free(r), avo_transport_channel_free(unused);
    }
    /* A truncated stream opens what is complete and waits for the rest:
     * the caller sees the end of the connection without a final message. */
    avo_transport_channel *r, *unused;
    pair(key, ne, nw, &unused, &r);
    CHECK_INT(open_all(r, all, l1 + l2 - 5, &n, &final, err), 1);
    CHECK_INT(final, 0);
    avo_transport_channel_free(r), avo_transport_channel_free(unused);
    /* Another connection (other nonces) has other keys: an old session
     * cannot be replayed into a new one. */
    nw[0] = 'c';
    pair(key, ne, nw, &unused, &r);
    CHECK_INT(open_all(r, all, l1, &n, &final, err), AVO_EPROTO);
    CHECK_CONTAINS(err, "failed authentication");
    avo_transport_channel_free(r), avo_transport_channel_free(unused);
    /* ...and so has another secret. */
    nw[0] = 'b';
    pair("another-secret-0123456789", ne, nw, &unused, &r);
    CHECK_INT(open_all(r, all, l1, &n, &final, err), AVO_EPROTO);
    avo_transport_channel_free(r), avo_transport_channel_free(unused);
    avo_transport_channel_free(e);
    free(m1), free(m2), free(m3);
}

/*
 * Padding (issue 33): jobs whose texts differ by a few bytes (a man in the
 * middle saw 18275 to 18286) seal to frames of one length, a power of two
 * plus tag; each opens back to its own text; and sizes across the range
 * each land on the next power of two above them.
 */
static void test_padding(void)
{
    const char *key = "the-run-secret-0123456789";
    char ne[65], nw[65], err[AVO_ERRLEN];
    memset(ne, 'a', 64), memset(nw, 'b', 64);
    ne[64] = nw[64] = '\0';
    avo_transport_channel *e, *w;
    pair(key, ne, nw, &e, &w);
    size_t first = 0;
    for (size_t size = 18270; size <= 18290; size++) {
        char *text = malloc(size + 1);
        memset(text, 'x', size);
        text[size] = '\0';
        json_t *msg = json_pack("{s:s}", "source", text);
        unsigned char *bytes = NULL;
        size_t len = 0;
        CHECK_INT(avo_transport_channel_seal(e, msg, 0, &bytes, &len, err, sizeof err), 0);
        size_t frame = len - (size == 18270 ? 24 : 0) - 4;
        CHECK_INT(frame, 32768 + 17);
        if (!first)
            first = frame;
        CHECK_INT(frame, first);
        size_t at = 0;
        json_t *back = NULL;
        int final = 0;
        CHECK_INT(avo_transport_channel_open(w, bytes, len, &at, &back, &final, err, sizeof err),
                  1);
        CHECK(json_equal(back, msg));
        CHECK_INT(at, len);
        json_decref(back), json_decref(msg);
        free(bytes), free(text);
    }
    for (size_t size = 1; size < 100000; size = size * 3 + 1) {
        char *text = malloc(size + 1);
        memset(text, 'y', size);
        text[size] = '\0';
        json_t *msg = json_pack("{s:s}", "k", text);
        char *dumped = json_dumps(msg, JSON_COMPACT);
        size_t plain = strlen(dumped), want = AVO_TRANSPORT_PAD_MIN;
        while (want <= plain)
            want *= 2;
        unsigned char *bytes = NULL;
        size_t len = 0;
        CHECK_INT(avo_transport_channel_seal(e, msg, 0, &bytes, &len, err, sizeof err), 0);
        CHECK_INT(len - 4, want + 17);
        size_t at = 0;
        json_t *back = NULL;
        int final = 0;
        CHECK_INT(avo_transport_channel_open(w, bytes, len, &at, &back, &final, err, sizeof err),
                  1);
        CHECK(json_equal(back, msg));
        json_decref(back), json_decref(msg);
        free(bytes), free(text), free(dumped);
    }
    avo_transport_channel_free(e), avo_transport_channel_free(w);
}

int main(void)
{
    char host[256], port[16], err[AVO_ERRLEN], werr[AVO_ERRLEN];

    CHECK_INT(
        avo_transport_split("node7:7070", host, sizeof host, port, sizeof port, err, sizeof err),
        0);
    CHECK_STR(host, "node7");
    CHECK_STR(port, "7070");
    CHECK_INT(
        avo_transport_split("[::1]:80", host, sizeof host, port, sizeof port, err, sizeof err), 0);
    CHECK_STR(host, "::1");
    CHECK_INT(avo_transport_split("nohost", host, sizeof host, port, sizeof port, err, sizeof err),
              AVO_EINVAL);
    CHECK_STR(err, "address 'nohost' is not HOST:PORT");
    CHECK_INT(avo_transport_split("h:70000", host, sizeof host, port, sizeof port, err, sizeof err),
              AVO_EINVAL);

    /* The secret: from the environment, from a 0600 file, refusals. */
    char dir[] = "/tmp/avo-test-transport-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/secret", dir);
    FILE *f = fopen(path, "w");
    fputs("0123456789abcdefXYZ\n", f);
    fclose(f);
    avo_transport_secret s;
    chmod(path, 0600);
    CHECK_INT(avo_transport_secret_from_file(&s, path, err, sizeof err), 0);
    CHECK_INT(s.len, 19); /* the trailing newline is not part of it */
    chmod(path, 0640);
    CHECK_INT(avo_transport_secret_from_file(&s, path, err, sizeof err), AVO_EINVAL);
    CHECK(strstr(err, "has mode 0640; it must be readable by its owner only") != NULL);
    f = fopen(path, "w");
    fputs("short", f);
    fclose(f);
    chmod(path, 0600);
    CHECK_INT(avo_transport_secret_from_file(&s, path, err, sizeof err), AVO_EINVAL);
    CHECK(strstr(err, "needs at least 16") != NULL);
    snprintf(path, sizeof path, "%s/missing", dir);
    CHECK_INT(avo_transport_secret_from_file(&s, path, err, sizeof err), AVO_ENOTFOUND);
    unsetenv("AVO_WORKER_SECRET_FILE");
    unsetenv("AVO_WORKER_SECRET");
    CHECK_INT(avo_transport_secret_from_env(&s, err, sizeof err), AVO_ENOTFOUND);
    setenv("AVO_WORKER_SECRET", "from-the-environment", 1);
    CHECK_INT(avo_transport_secret_from_env(&s, err, sizeof err), 0);
    CHECK_INT(s.len, 20);
    char hex[65];
    CHECK_INT(avo_transport_secret_generate(&s, hex, err, sizeof err), 0);
    CHECK_INT(strlen(hex), 64);

    /* Handshakes. */
    const char *key = "the-run-secret-0123456789";
    int wrc;
    avo_transport_identity good = {"run-1", "avo 9 (git x)", ""};
    CHECK_INT(handshake(key, key, good, ENGINE_CHECK, &wrc, err, werr), 0);
    CHECK_INT(wrc, 0);

    avo_transport_identity any_run = {"", "avo 9 (git x)", "abc"};
    CHECK_INT(handshake(key, key, any_run, ENGINE_CHECK, &wrc, err, werr), 0);
    CHECK_INT(wrc, 0);

    CHECK_INT(handshake(key, "another-secret-0123456789", good, ENGINE_CHECK, &wrc, err, werr),
              AVO_EINVAL);
    CHECK_STR(err, "authentication failed: the worker does not know this run's secret");
    CHECK_INT(wrc, AVO_EINVAL);
    CHECK_STR(werr, "refused by the engine: authentication failed: the worker does not know this "
                    "run's secret");

    avo_transport_identity other_run = {"run-2", "avo 9 (git x)", ""};
    CHECK_INT(handshake(key, key, other_run, ENGINE_CHECK, &wrc, err, werr), AVO_EINVAL);
    CHECK_STR(err, "worker belongs to run 'run-2', this engine serves run 'run-1'");

    avo_transport_identity other_version = {"run-1", "avo 8 (git y)", ""};
    CHECK_INT(handshake(key, key, other_version, ENGINE_CHECK, &wrc, err, werr), AVO_EINVAL);
    CHECK_STR(err, "worker runs avo 8 (git y), the engine avo 9 (git x)");

    avo_transport_identity other_fp = {"run-1", "avo 9 (git x)", "def"};
    CHECK_INT(handshake(key, key, other_fp, ENGINE_CHECK, &wrc, err, werr), AVO_EINVAL);
    CHECK(strstr(err, "evaluator fingerprint def, which is not one of this run's") != NULL);

    /* The worker does not serve an engine that cannot prove the secret. */
    CHECK_INT(handshake(key, key, good, ENGINE_BAD_WELCOME, &wrc, err, werr), 0);
    CHECK_INT(wrc, AVO_EINVAL);
    CHECK_STR(werr, "the engine failed to prove it knows the run's secret; not serving it");

    /* The hello's MAC covers the host, pid and device it claims. */
    engine_mode changed[] = {ENGINE_OTHER_HOST, ENGINE_OTHER_PID, ENGINE_OTHER_DEVICE};
    for (size_t i = 0; i < sizeof changed / sizeof changed[0]; i++) {
        CHECK_INT(handshake(key, key, good, changed[i], &wrc, err, werr), AVO_EINVAL);
        CHECK_STR(err, "authentication failed: the worker does not know this run's secret");
    }

    test_channel();
    test_padding();

    /* Nobody listening: a clear error naming the address. */
    int fd;
    CHECK_INT(avo_transport_connect("127.0.0.1:1", 2.0, &fd, err, sizeof err), AVO_EIO);
    CHECK(strstr(err, "cannot reach the engine at 127.0.0.1:1") != NULL);

    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    CHECK_INT(system(path), 0);
    return check_finish();
}
