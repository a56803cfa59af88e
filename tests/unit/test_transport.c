/*
 * test_transport — the TCP transport's pieces (core/transport.h): address
 * parsing, the secret's sources and their refusals, and the HMAC handshake
 * from both ends over a socket pair: a welcome, a wrong secret, another run,
 * another version, an unknown fingerprint, a refusal reaching the worker,
 * and an engine that cannot prove the secret.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "avo.h"
#include "check.h"
#include "proto.h"
#include "transport.h"

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

/* What the engine does with the hello the worker sends. */
typedef enum { ENGINE_CHECK, ENGINE_BAD_WELCOME } engine_mode;

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
        int rc = avo_transport_worker_handshake(sv[1], &ws, &worker, 5.0, err, sizeof err);
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
    char name[256], fp[129];
    int device = -2, rc = avo_proto_recv(sv[0], &hello, err_engine, AVO_ERRLEN);
    if (rc == 0)
        rc = avo_transport_check_hello(hello, nonce, &es, &engine, allow_abc, NULL, &welcome, name,
                                       sizeof name, &device, fp, sizeof fp, err_engine, AVO_ERRLEN);
    if (rc == 0 && mode == ENGINE_BAD_WELCOME)
        json_object_set_new(welcome, "mac", json_string("00"));
    json_t *reply = rc == 0 ? json_incref(welcome)
                            : json_pack("{s:s, s:s}", "type", "refused", "reason", err_engine);
    avo_transport_send(sv[0], reply, 5.0, NULL, 0);
    json_decref(reply);
    json_decref(welcome);
    json_decref(hello);
    int status;
    waitpid(pid, &status, 0);
    *ret_worker_rc = WIFEXITED(status) ? -WEXITSTATUS(status) : -99;
    ssize_t n = read(report[0], err_worker, AVO_ERRLEN - 1);
    err_worker[n > 0 ? n : 0] = '\0';
    close(report[0]);
    close(sv[0]);
    return rc;
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

    /* Nobody listening: a clear error naming the address. */
    int fd;
    CHECK_INT(avo_transport_connect("127.0.0.1:1", 2.0, &fd, err, sizeof err), AVO_EIO);
    CHECK(strstr(err, "cannot reach the engine at 127.0.0.1:1") != NULL);

    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    CHECK_INT(system(path), 0);
    return check_finish();
}
