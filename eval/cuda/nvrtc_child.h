/*
 * nvrtc_child.h — the CUDA backend's compile child: NVRTC runs in a child
 * process, never in the worker itself, with a wall-clock deadline (SIGKILL
 * to its group), a CPU limit and an empty working directory, so a compiler
 * crash or hang costs only the child.  The child answers with one framed
 * JSON message (core/proto.h): "log", "lowered" names, the "cubin" in
 * base64, or "error" (the source's) or "infra" (the machine's).
 *
 * Once the worker holds a CUDA context (which a forked child must not
 * inherit) the child is a fresh `avo nvrtc-compile` process instead, given
 * its input as one message: avo_cuda_compile_main.
 */
#ifndef AVO_NVRTC_CHILD_H
#define AVO_NVRTC_CHILD_H

#include <jansson.h>
#include <stddef.h>

#define AVO_NVRTC_MAX_HEADERS 64 /* evaluator headers + toolkit headers */

/* Everything one NVRTC compile needs; strings borrowed or owned as marked. */
typedef struct avo_nvrtc_input {
    const char *what; /* "candidate" / "reference" */
    const char *source;
    const char **name_exprs; /* entry first; owned array */
    size_t nname_exprs;
    const char **options; /* owned array of borrowed or owned (arch) strings */
    size_t noptions;
    const char *headers[AVO_NVRTC_MAX_HEADERS], *header_names[AVO_NVRTC_MAX_HEADERS];
    int nheaders;
    char *owned_texts[AVO_NVRTC_MAX_HEADERS]; /* header texts read for this input, owned */
    char arch_option[64];
} avo_nvrtc_input;

/* Release what `in` owns (not the input itself). */
void avo_nvrtc_input_free(avo_nvrtc_input *in);

/*
 * Run the compile child under a deadline of `timeout_s` (a fresh `avo
 * nvrtc-compile` process once this process has initialized the driver, or
 * with AVO_NVRTC_EXEC=1).  Returns the child's message (caller owns), or
 * NULL with status and reason set on `result` (a timeout or a crash is the
 * candidate's when `is_candidate`, else an error).
 */
json_t *avo_nvrtc_compile(const avo_nvrtc_input *in, double timeout_s, int is_candidate,
                          json_t *result);

/*
 * Body of the hidden `avo nvrtc-compile` command: reads one compile input
 * message on in_fd, compiles, answers on out_fd with the compile child's
 * message.  Never returns.
 */
int avo_cuda_compile_main(int in_fd, int out_fd);

/* Decode the base64 of a compile message's cubin; the bytes (caller frees)
 * with their length in *ret_len, or NULL if malformed or out of memory. */
unsigned char *avo_nvrtc_base64_decode(const char *s, size_t *ret_len);

#endif
