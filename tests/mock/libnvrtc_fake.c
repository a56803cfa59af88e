/*
 * libnvrtc_fake.c — a stand-in for libnvrtc that only says who it is, for
 * the test of where avo looks for NVRTC (tests/e2e/nvrtc_discovery.sh).
 * The test copies it to each place avo searches under the name
 * libnvrtc.so.13 and reads back, from `avo doctor`, which copy was taken.
 * nvrtcVersion answers 99.1 (no real NVRTC has it), or fails with
 * NVRTC_ERROR_INTERNAL_ERROR when AVO_FAKE_NVRTC_BROKEN is set (a library
 * with NVRTC's symbols that does not work); the architecture list is sm_90;
 * everything that would compile fails.  Signatures follow nvrtc.h.
 */
#include <stddef.h>
#include <stdlib.h>

typedef int nvrtcResult;
typedef struct fake_program *nvrtcProgram;

enum { FAKE_SUCCESS = 0, FAKE_INVALID_INPUT = 3, FAKE_INTERNAL_ERROR = 11 };

const char *nvrtcGetErrorString(nvrtcResult rc)
{
    return rc ? "fake NVRTC: not a compiler" : "NVRTC_SUCCESS";
}

nvrtcResult nvrtcVersion(int *major, int *minor)
{
    if (getenv("AVO_FAKE_NVRTC_BROKEN"))
        return FAKE_INTERNAL_ERROR;
    *major = 99;
    *minor = 1;
    return FAKE_SUCCESS;
}

nvrtcResult nvrtcGetNumSupportedArchs(int *n)
{
    *n = 1;
    return FAKE_SUCCESS;
}

nvrtcResult nvrtcGetSupportedArchs(int *archs)
{
    archs[0] = 90;
    return FAKE_SUCCESS;
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                               int num_headers, const char *const *headers,
                               const char *const *include_names)
{
    (void)src, (void)name, (void)num_headers, (void)headers, (void)include_names;
    *prog = NULL;
    return FAKE_INVALID_INPUT;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog)
{
    *prog = NULL;
    return FAKE_SUCCESS;
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int num_options, const char *const *options)
{
    (void)prog, (void)num_options, (void)options;
    return FAKE_INVALID_INPUT;
}

nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t *size)
{
    (void)prog;
    *size = 0;
    return FAKE_INVALID_INPUT;
}

nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *cubin)
{
    (void)prog, (void)cubin;
    return FAKE_INVALID_INPUT;
}

nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *size)
{
    (void)prog;
    *size = 1;
    return FAKE_SUCCESS;
}

nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log)
{
    (void)prog;
    log[0] = '\0';
    return FAKE_SUCCESS;
}

nvrtcResult nvrtcAddNameExpression(nvrtcProgram prog, const char *name_expression)
{
    (void)prog, (void)name_expression;
    return FAKE_INVALID_INPUT;
}

nvrtcResult nvrtcGetLoweredName(nvrtcProgram prog, const char *name_expression,
                                const char **lowered_name)
{
    (void)prog, (void)name_expression;
    *lowered_name = NULL;
    return FAKE_INVALID_INPUT;
}
