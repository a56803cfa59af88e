/*
 * nvrtc_child.c — the CUDA backend's compile child (see nvrtc_child.h).
 */
#include "eval/cuda/nvrtc_child.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/avo.h"
#include "core/backend.h"
#include "eval/cuda/cuda_api.h"
#include "eval/cuda/cuda_job.h"
#include "core/proto.h"
#include "eval/supervise.h"

void avo_nvrtc_input_free(avo_nvrtc_input *in)
{
    free(in->name_exprs);
    free(in->options);
    for (int i = 0; i < AVO_NVRTC_MAX_HEADERS; i++)
        free(in->owned_texts[i]);
}

/* ------------------------------------------------------------------------ */
/* Base64, the cubin's form in a compile message                            */

static const char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Base64 of data[0..n) (caller frees); NULL when out of memory. */
static char *base64_encode(const unsigned char *data, size_t n)
{
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16 | (i + 1 < n ? (uint32_t)data[i + 1] << 8 : 0) |
                     (i + 2 < n ? data[i + 2] : 0);
        *o++ = b64_chars[v >> 18 & 63];
        *o++ = b64_chars[v >> 12 & 63];
        *o++ = i + 1 < n ? b64_chars[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? b64_chars[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

unsigned char *avo_nvrtc_base64_decode(const char *s, size_t *ret_len)
{
    size_t n = strlen(s);
    if (n % 4)
        return NULL;
    unsigned char *out = malloc(n / 4 * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        uint32_t v = 0;
        int pad = 0;
        for (int j = 0; j < 4; j++) {
            const char *c = s[i + j] == '=' ? NULL : strchr(b64_chars, s[i + j]);
            if (s[i + j] == '=' && i + 4 == n && j >= 2) {
                pad++;
                v <<= 6;
                continue;
            }
            if (!c || !s[i + j] || pad) {
                free(out);
                return NULL;
            }
            v = v << 6 | (uint32_t)(c - b64_chars);
        }
        out[o++] = (unsigned char)(v >> 16);
        if (pad < 2)
            out[o++] = (unsigned char)(v >> 8);
        if (pad < 1)
            out[o++] = (unsigned char)v;
    }
    *ret_len = o;
    return out;
}

/* ------------------------------------------------------------------------ */
/* The child                                                                */

/* The compile child: run NVRTC, send one framed message on fd, exit. */
static _Noreturn void compile_child(const avo_nvrtc_input *in, int fd, double timeout_s)
{
    char err[AVO_ERRLEN];
    rlim_t cpu = (rlim_t)ceil(timeout_s) + 1;
    struct rlimit lim = {cpu, cpu + 1};
    setrlimit(RLIMIT_CPU, &lim);
    lim = (struct rlimit){0, 0};
    setrlimit(RLIMIT_CORE, &lim);
    /* An empty working directory: nothing relative to resolve against. */
    char dir[] = "/tmp/avo-nvrtc-XXXXXX";
    if (mkdtemp(dir) && chdir(dir) == 0)
        rmdir(dir);
    else if (chdir("/") < 0)
        _exit(3);

    json_t *msg = json_object();
    const avo_nvrtc_api *nvrtc = avo_cuda_nvrtc(err, sizeof err);
    if (!nvrtc) {
        json_object_set_new(msg, "infra", json_string(err));
        goto send;
    }
    nvrtcProgram prog = NULL;
    char name[64];
    snprintf(name, sizeof name, "%s.cu", in->what);
    nvrtcResult rc =
        nvrtc->CreateProgram(&prog, in->source, name, in->nheaders, in->headers, in->header_names);
    if (rc != AVO_NVRTC_SUCCESS) {
        json_object_set_new(msg, "infra", json_string(avo_cuda_nvrtc_error(rc, err, sizeof err)));
        goto send;
    }
    for (size_t i = 0; i < in->nname_exprs; i++)
        nvrtc->AddNameExpression(prog, in->name_exprs[i]);
    rc = nvrtc->CompileProgram(prog, (int)in->noptions, in->options);
    size_t log_size = 0;
    if (nvrtc->GetProgramLogSize(prog, &log_size) == AVO_NVRTC_SUCCESS && log_size > 0) {
        char *log = malloc(log_size + 1);
        if (log && nvrtc->GetProgramLog(prog, log) == AVO_NVRTC_SUCCESS) {
            log[log_size] = '\0';
            json_object_set_new(msg, "log", avo_result_text(log, strlen(log)));
        }
        free(log);
    }
    if (rc != AVO_NVRTC_SUCCESS) {
        json_object_set_new(msg, "error", json_string(avo_cuda_nvrtc_error(rc, err, sizeof err)));
        goto send;
    }
    json_t *lowered = json_object();
    for (size_t i = 0; i < in->nname_exprs; i++) {
        const char *low = NULL;
        if (nvrtc->GetLoweredName(prog, in->name_exprs[i], &low) == AVO_NVRTC_SUCCESS && low)
            json_object_set_new(lowered, in->name_exprs[i], json_string(low));
    }
    json_object_set_new(msg, "lowered", lowered);
    size_t cubin_size = 0;
    rc = nvrtc->GetCUBINSize(prog, &cubin_size);
    unsigned char *cubin = rc == AVO_NVRTC_SUCCESS && cubin_size ? malloc(cubin_size) : NULL;
    if (!cubin || nvrtc->GetCUBIN(prog, (char *)cubin) != AVO_NVRTC_SUCCESS) {
        json_object_set_new(msg, "infra",
                            json_string("NVRTC produced no cubin (was a compute_XX "
                                        "virtual architecture requested?)"));
        goto send;
    }
    char *b64 = base64_encode(cubin, cubin_size);
    json_object_set_new(msg, "cubin", b64 ? json_string(b64) : json_null());
    free(b64);
    free(cubin);
send:
    avo_proto_send(fd, msg, NULL, 0);
    _exit(0);
}

/* The compile input as one message for `avo nvrtc-compile` (new reference). */
static json_t *input_message(const avo_nvrtc_input *in, double timeout_s)
{
    json_t *msg =
        json_pack("{s:s, s:s, s:f, s:[], s:[], s:[]}", "what", in->what, "source", in->source,
                  "timeout_s", timeout_s, "options", "name_expressions", "headers");
    if (!msg)
        return NULL;
    for (size_t i = 0; i < in->noptions; i++)
        json_array_append_new(json_object_get(msg, "options"), json_string(in->options[i]));
    for (size_t i = 0; i < in->nname_exprs; i++)
        json_array_append_new(json_object_get(msg, "name_expressions"),
                              json_string(in->name_exprs[i]));
    for (int i = 0; i < in->nheaders; i++)
        json_array_append_new(json_object_get(msg, "headers"),
                              json_pack("[s, s]", in->header_names[i], in->headers[i]));
    return msg;
}

/*
 * `avo nvrtc-compile`: read one compile input message on in_fd, compile,
 * answer on out_fd (the compile child's message).  Used instead of a plain
 * fork once the worker holds a CUDA context, which a forked child must not
 * inherit.  Never returns.
 */
int avo_cuda_compile_main(int in_fd, int out_fd)
{
    json_t *msg = NULL;
    avo_nvrtc_input in;
    memset(&in, 0, sizeof in);
    if (avo_proto_recv(in_fd, &msg, NULL, 0) < 0)
        _exit(2);
    in.what = json_string_value(json_object_get(msg, "what"));
    in.source = json_string_value(json_object_get(msg, "source"));
    const json_t *opts = json_object_get(msg, "options"),
                 *names = json_object_get(msg, "name_expressions");
    const json_t *headers = json_object_get(msg, "headers");
    in.options = calloc(json_array_size(opts) + 1, sizeof *in.options);
    in.name_exprs = calloc(json_array_size(names) + 1, sizeof *in.name_exprs);
    if (!in.what || !in.source || !in.options || !in.name_exprs ||
        json_array_size(headers) > AVO_NVRTC_MAX_HEADERS)
        _exit(2);
    for (size_t i = 0; i < json_array_size(opts); i++)
        if ((in.options[in.noptions] = json_string_value(json_array_get(opts, i))))
            in.noptions++;
    for (size_t i = 0; i < json_array_size(names); i++)
        if ((in.name_exprs[in.nname_exprs] = json_string_value(json_array_get(names, i))))
            in.nname_exprs++;
    for (size_t i = 0; i < json_array_size(headers); i++) {
        const json_t *h = json_array_get(headers, i);
        in.header_names[in.nheaders] = json_string_value(json_array_get(h, 0));
        in.headers[in.nheaders] = json_string_value(json_array_get(h, 1));
        if (in.header_names[in.nheaders] && in.headers[in.nheaders])
            in.nheaders++;
    }
    compile_child(&in, out_fd, json_number_value(json_object_get(msg, "timeout_s")));
}

/* Whether compiles must exec a fresh process: once this process has
 * initialized the driver — to read the GPU's architecture, or for its
 * context — since a forked child must not touch it (or when
 * AVO_NVRTC_EXEC=1, for tests). */
static int compile_needs_exec(void)
{
    const char *force = getenv("AVO_NVRTC_EXEC");
    return avo_cuda_driver_initialized() || avo_cuda_device_active() ||
           (force && strcmp(force, "1") == 0);
}

static int proto_sink(int fd, void *ctx)
{
    return avo_proto_drain(fd, ctx);
}

/*
 * Run compile_child under a deadline (a fresh `avo nvrtc-compile` process
 * when compile_needs_exec).  Returns the child's message (caller owns) or
 * NULL with status and reason set on `result`.
 */
json_t *avo_nvrtc_compile(const avo_nvrtc_input *in, double timeout_s, int is_candidate,
                          json_t *result)
{
    int fds[2], in_fds[2] = {-1, -1};
    int use_exec = compile_needs_exec();
    json_t *input = use_exec ? input_message(in, timeout_s) : NULL;
    if (use_exec && (!input || pipe2(in_fds, O_CLOEXEC) < 0)) {
        json_decref(input);
        avo_result_fail(result, "error", "cannot prepare the compile process");
        return NULL;
    }
    if (pipe2(fds, O_CLOEXEC) < 0) {
        avo_result_fail(result, "error", "pipe: %s", strerror(errno));
        json_decref(input);
        if (use_exec)
            close(in_fds[0]), close(in_fds[1]);
        return NULL;
    }
    double deadline = avo_monotonic() + timeout_s;
    /* Killed as a group at the deadline; a compile never outlives its worker. */
    pid_t pid = avo_supervise_fork(AVO_CHILD_OWN_GROUP);
    if (pid == 0) {
        close(fds[0]);
        if (use_exec) {
            /* A fresh image: no CUDA state inherited from this worker. */
            if (dup2(in_fds[0], 0) < 0 || dup2(fds[1], 1) < 0)
                _exit(127);
            char *argv[] = {"avo", "nvrtc-compile", NULL};
            execv("/proc/self/exe", argv);
            if (avo_self_exe()) /* no /proc (a plain chroot) */
                execv(avo_self_exe(), argv);
            _exit(127);
        }
        compile_child(in, fds[1], timeout_s);
    }
    int fork_errno = errno;
    close(fds[1]);
    if (use_exec) {
        close(in_fds[0]);
        if (pid > 0)
            avo_proto_send(in_fds[1], input, NULL, 0); /* the child reads it all first */
        close(in_fds[1]);
        json_decref(input);
    }
    if (pid < 0) {
        close(fds[0]);
        avo_result_fail(result, "error", "fork: %s", strerror(fork_errno));
        return NULL;
    }
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    avo_proto_buf buf = {0};
    avo_supervise_sink sink = {fds[0], proto_sink, &buf};
    avo_supervise_result r;
    avo_supervise_wait(pid, deadline, &sink, 1, &r);
    close(fds[0]);
    int timed_out = r.timed_out, status = r.status;

    size_t at = 0;
    json_t *msg = timed_out ? NULL : avo_proto_decode(&buf, &at);
    free(buf.data);
    if (timed_out) {
        avo_result_fail(result, is_candidate ? "timeout" : "error",
                        "%scompile timed out after %gs (NVRTC cancelled)",
                        is_candidate ? "" : "reference: ", timeout_s);
        return NULL;
    }
    if (!msg) {
        char how[128];
        if (avo_supervise_death(status, how, sizeof how))
            avo_result_fail(result, is_candidate ? "compile_error" : "error",
                            "%sNVRTC died with %s", is_candidate ? "" : "reference: ", how);
        else
            avo_result_fail(result, "error", "the NVRTC compile child sent no result");
        return NULL;
    }
    return msg;
}
