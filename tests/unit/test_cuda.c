/*
 * test_cuda.c — the CUDA backend's GPU-free parts: bf16/fp16 conversion,
 * launch-spec parsing and validation (non-integer grid, block larger than the
 * device allows, too much shared memory), argument packing (wrong count,
 * wrong size, alignment), the #include gate, and the cubin resource parser
 * (a synthetic ELF image, malformed images, ptxas log merging).  With libnvrtc
 * present it also compiles real kernels in process and through the backend
 * in compile-only mode (syntax error with log, host include refused,
 * argument count checked against the cubin); without it those parts are
 * skipped, the rest still runs.
 */
#include "core/avo.h"
#include "core/backend.h"
#include "eval/cuda/cubin.h"
#include "eval/cuda/cuda_pure.h"
#include "eval/cuda/cuda_api.h"

#include "check.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_dtypes(void)
{
    avo_dtype t;
    CHECK(avo_dtype_parse("bf16", &t) == 0 && t == AVO_DT_BF16);
    CHECK(avo_dtype_parse("f16", &t) == 0 && t == AVO_DT_F16);
    CHECK(avo_dtype_parse("f8", &t) < 0);
    CHECK_INT(avo_dtype_size(AVO_DT_BF16), 2);
    CHECK_INT(avo_dtype_size(AVO_DT_I64), 8);
    CHECK_INT(avo_f32_to_bf16(1.0f), 0x3f80);
    CHECK_INT(avo_f32_to_bf16(-2.0f), 0xc000);
    CHECK_INT(avo_f32_to_f16(1.0f), 0x3c00);
    CHECK_INT(avo_f32_to_f16(-2.0f), 0xc000);
    CHECK_INT(avo_f32_to_f16(65504.0f), 0x7bff);
    CHECK_INT(avo_f32_to_f16(1e6f), 0x7c00);
    CHECK_INT(avo_f32_to_f16(5.9604645e-8f), 0x0001); /* smallest subnormal */
    CHECK(avo_bf16_to_f32(0x3f80) == 1.0f);
    CHECK(avo_f16_to_f32(0x3555) > 0.333f && avo_f16_to_f32(0x3555) < 0.3334f);
    /* Round to nearest even: 1 + 2^-8 is halfway between two bf16 values. */
    CHECK_INT(avo_f32_to_bf16(1.00390625f), 0x3f80);
    CHECK_INT(avo_f32_to_bf16(1.01171875f), 0x3f82);
    /* Every f16 value survives the round trip. */
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
            continue; /* NaN payloads */
        if (avo_f32_to_f16(avo_f16_to_f32((uint16_t)h)) != h)
            bad++;
    }
    CHECK_INT(bad, 0);
}

static int parse(const char *json_text, avo_cuda_launch *l, char *err, size_t len)
{
    json_t *j = json_loads(json_text, JSON_DECODE_ANY, NULL);
    int rc = avo_cuda_launch_parse(j, l, err, len);
    json_decref(j);
    return rc;
}

static void test_launch(void)
{
    char err[512];
    avo_cuda_launch l;
    CHECK(parse("{\"grid\": [4, 2], \"block\": 256}", &l, err, sizeof err) == 0);
    CHECK(l.grid[0] == 4 && l.grid[1] == 2 && l.grid[2] == 1);
    CHECK(l.block[0] == 256 && l.block[1] == 1 && l.shared_bytes == 0);
    CHECK(parse("{\"grid\": [4.0, 2], \"block\": [16, 16], \"shared_bytes\": 1024}", &l, err,
                sizeof err) == 0);
    CHECK(l.shared_bytes == 1024);

    /* non-integer grid */
    CHECK(parse("{\"grid\": [4, 12.5], \"block\": 256}", &l, err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "grid[2] must be a positive integer, got 12.5");
    CHECK(parse("{\"grid\": 0, \"block\": 256}", &l, err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "grid must be a positive integer");
    CHECK(parse("{\"grid\": 1}", &l, err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "block");
    CHECK(parse("{\"grid\": 1, \"block\": [1, 2, 3, 4]}", &l, err, sizeof err) == AVO_EINVAL);
    CHECK(parse("{\"grid\": 1, \"block\": 32, \"shared_bytes\": -1}", &l, err, sizeof err) ==
          AVO_EINVAL);
    CHECK_CONTAINS(err, "shared_bytes");

    avo_cuda_limits lim;
    avo_cuda_limits_for_arch(90, &lim);
    CHECK_INT(lim.max_shared_optin, 227 * 1024);
    int optin = -1;
    CHECK(parse("{\"grid\": [132, 1], \"block\": [32, 32]}", &l, err, sizeof err) == 0);
    CHECK(avo_cuda_launch_check(&l, 0, &lim, &optin, err, sizeof err) == 0 && optin == 0);

    /* block larger than the device allows */
    CHECK(parse("{\"grid\": 1, \"block\": [64, 32]}", &l, err, sizeof err) == 0);
    CHECK(avo_cuda_launch_check(&l, 0, &lim, &optin, err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "2048 threads is larger than the device allows (1024)");
    CHECK(parse("{\"grid\": 1, \"block\": [1, 1, 65]}", &l, err, sizeof err) == 0);
    CHECK(avo_cuda_launch_check(&l, 0, &lim, &optin, err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "block.z = 65");
    CHECK(parse("{\"grid\": [1, 70000], \"block\": 32}", &l, err, sizeof err) == 0);
    CHECK(avo_cuda_launch_check(&l, 0, &lim, &optin, err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "grid.y = 70000");

    /* shared memory: opt-in above 48 KiB, refused above the maximum */
    CHECK(parse("{\"grid\": 1, \"block\": 128, \"shared_bytes\": 65536}", &l, err, sizeof err) == 0);
    CHECK(avo_cuda_launch_check(&l, 0, &lim, &optin, err, sizeof err) == 0 && optin == 1);
    CHECK(parse("{\"grid\": 1, \"block\": 128, \"shared_bytes\": 230000}", &l, err, sizeof err) == 0);
    CHECK(avo_cuda_launch_check(&l, 4096, &lim, &optin, err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "too much shared memory: 4096 bytes static + 230000 dynamic");
    avo_cuda_limits_for_arch(86, &lim);
    CHECK(parse("{\"grid\": 1, \"block\": 128, \"shared_bytes\": 110000}", &l, err, sizeof err) == 0);
    CHECK(avo_cuda_launch_check(&l, 0, &lim, &optin, err, sizeof err) == AVO_EINVAL);

    CHECK_INT(avo_cuda_arch_cc("sm_90a"), 90);
    CHECK_INT(avo_cuda_arch_cc("sm_80"), 80);
    CHECK_INT(avo_cuda_arch_cc("compute_120"), 120);
    CHECK_INT(avo_cuda_arch_cc("sm90"), -1);
    CHECK_INT(avo_cuda_arch_cc("sm_90x"), -1);
}

static void test_pack(void)
{
    char err[512];
    unsigned char buf[256];
    void *params[8];
    avo_cuda_arg args[5] = {
        {.name = "n", .type = AVO_DT_I32, .v.i32 = 7},
        {.name = "x", .is_pointer = 1, .type = AVO_DT_F32, .v.ptr = 0x1234567800ull},
        {.name = "alpha", .type = AVO_DT_F32, .v.f32 = 2.5f},
        {.name = "big", .type = AVO_DT_I64, .v.i64 = -3},
        {.name = "h", .type = AVO_DT_BF16, .v.bits16 = 0x3f80},
    };
    int used = avo_cuda_pack_args(args, 5, NULL, buf, sizeof buf, params, err, sizeof err);
    CHECK_INT(used, 34);
    CHECK(params[0] == buf && params[1] == buf + 8 && params[2] == buf + 16 &&
          params[3] == buf + 24 && params[4] == buf + 32);
    int32_t n;
    uint64_t p;
    float a;
    int64_t big;
    uint16_t h;
    memcpy(&n, params[0], 4);
    memcpy(&p, params[1], 8);
    memcpy(&a, params[2], 4);
    memcpy(&big, params[3], 8);
    memcpy(&h, params[4], 2);
    CHECK(n == 7 && p == 0x1234567800ull && a == 2.5f && big == -3 && h == 0x3f80);

    /* against the kernel's parameter list from its cubin */
    avo_cubin_kernel k = {.name = "axpy", .nparams = 4};
    unsigned sizes[4] = {4, 8, 4, 8};
    for (int i = 0; i < 4; i++)
        k.params[i] = (avo_cubin_param){(unsigned)i, 0, sizes[i]};
    CHECK(avo_cuda_pack_args(args, 4, &k, buf, sizeof buf, params, err, sizeof err) == 32);
    CHECK(avo_cuda_pack_args(args, 5, &k, buf, sizeof buf, params, err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "kernel axpy takes 4 parameters, the evaluator gives 5");
    CHECK(avo_cuda_pack_args(args, 3, &k, buf, sizeof buf, params, err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "takes 4 parameters, the evaluator gives 3");
    k.params[2].size = 8;
    CHECK(avo_cuda_pack_args(args, 4, &k, buf, sizeof buf, params, err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "parameter 3 of kernel axpy is 8 bytes, but argument 'alpha' is f32");
    CHECK(avo_cuda_pack_args(args, 5, NULL, buf, 20, params, err, sizeof err) == AVO_EINVAL);
}

static int includes_ok(const char *src, char *err, size_t len)
{
    static const char *const allowed[] = {"util.h", "cuda_bf16.h"};
    return avo_cuda_check_includes(src, "kernel", allowed, 2, NULL, err, len);
}

static void test_includes(void)
{
    char err[512];
    CHECK(includes_ok("#include \"util.h\"\n#include <cuda_bf16.h>\nint x;\n", err, sizeof err) == 0);
    CHECK(includes_ok("  #  include <util.h>\n", err, sizeof err) == 0);
    CHECK(includes_ok("// #include </etc/passwd>\n/* #include </etc/passwd> */\n", err,
                      sizeof err) == 0);
    CHECK(includes_ok("const char *s = \"#include </etc/passwd>\";\n", err, sizeof err) == 0);

    CHECK(includes_ok("int x;\n#include </etc/passwd>\n", err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "kernel line 2: #include </etc/passwd> is not a header the evaluator "
                        "provides (allowed: util.h, cuda_bf16.h)");
    CHECK(includes_ok("#include \"../x.h\"\n", err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "#include <../x.h>");
    CHECK(includes_ok("#include <stdio.h>\n", err, sizeof err) == AVO_EINVAL);
    /* a comment before the directive is no hiding place */
    CHECK(includes_ok("/* x */ #include </etc/passwd>\n", err, sizeof err) == AVO_EINVAL);
    CHECK(includes_ok("/*\n*/#include </etc/shadow>\n", err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "line 2");
    /* nor a line continuation */
    CHECK(includes_ok("#\\\ninclude </etc/passwd>\n", err, sizeof err) == AVO_EINVAL);
    CHECK(includes_ok("#inc\\\nlude </etc/passwd>\n", err, sizeof err) == AVO_EINVAL);
    /* a raw string or a digit separator cannot open a fake comment */
    CHECK(includes_ok("auto s = R\"x(/*)x\";\n#include </etc/passwd>\n// */\n", err, sizeof err) ==
          AVO_EINVAL);
    CHECK(includes_ok("int n = 1'000; char c = '/'; /* '\n#include </etc/passwd>\n", err,
                      sizeof err) == 0); /* inside a real block comment: harmless */
    CHECK(includes_ok("int n = 1'2 + '/*';\n#include </etc/passwd>\n", err, sizeof err) ==
          AVO_EINVAL);
    CHECK(includes_ok("const char *s = \"/*\";\n#include </etc/passwd>\n", err, sizeof err) ==
          AVO_EINVAL);
    CHECK(includes_ok("#define H </etc/passwd>\n#include H\n", err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "computed #include");
    CHECK(includes_ok("#include_next <util.h>\n", err, sizeof err) == AVO_EINVAL);
    CHECK(includes_ok("#if __has_include(</etc/passwd>)\n#endif\n", err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "__has_include");
}

/* ---------------------------------------------------------- cubin parser */

typedef struct elf_builder {
    unsigned char data[8192];
    size_t len;
} elf_builder;

static size_t append(elf_builder *b, const void *p, size_t n)
{
    while (b->len % 8)
        b->data[b->len++] = 0;
    size_t at = b->len;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return at;
}

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
    put16(p, v & 0xffff);
    put16(p + 2, v >> 16);
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

/* One EIATTR SVAL entry {fmt 4, attr, size} + payload words. */
static size_t eiattr(unsigned char *p, unsigned attr, const uint32_t *words, unsigned n)
{
    p[0] = 4;
    p[1] = (unsigned char)attr;
    put16(p + 2, 4 * n);
    for (unsigned i = 0; i < n; i++)
        put32(p + 4 + 4 * i, words[i]);
    return 4 + 4 * n;
}

/*
 * A minimal cubin-shaped ELF: kernel "kern" with 40 registers, a 16-byte
 * frame, two parameters (8 and 4 bytes), 4096 + 1024 reserved bytes of
 * static shared memory.
 */
static size_t build_cubin(elf_builder *b)
{
    memset(b, 0, sizeof *b);
    b->len = 64;
    static const char shstr[] = "\0.shstrtab\0.strtab\0.symtab\0.nv.info\0.nv.info.kern\0"
                                ".nv.shared.kern\0.nv.shared.reserved.0";
    /* offsets of the names above */
    enum { N_SHSTR = 1, N_STR = 11, N_SYM = 19, N_INFO = 27, N_INFO_K = 36, N_SHARED = 50,
           N_RESERVED = 66 };
    static const char str[] = "\0kern";
    unsigned char sym[48] = {0};
    put32(sym + 24, 1); /* symbol 1: "kern" */
    sym[24 + 4] = 0x12; /* FUNC GLOBAL */
    unsigned char info[64], info_k[64];
    uint32_t reg[2] = {1, 40}, frame[2] = {1, 16};
    size_t ni = eiattr(info, 0x2f, reg, 2);
    ni += eiattr(info + ni, 0x11, frame, 2);
    uint32_t p0[3] = {0, 0 | 0u << 16, 8u << 18}, p1[3] = {0, 1 | 8u << 16, 4u << 18};
    size_t nk = eiattr(info_k, 0x17, p1, 3); /* out of order on purpose */
    nk += eiattr(info_k + nk, 0x17, p0, 3);
    info_k[nk] = 1; /* an NVAL entry */
    info_k[nk + 1] = 0x35;
    nk += 4;

    size_t o_shstr = append(b, shstr, sizeof shstr);
    size_t o_str = append(b, str, sizeof str);
    size_t o_sym = append(b, sym, sizeof sym);
    size_t o_info = append(b, info, ni);
    size_t o_info_k = append(b, info_k, nk);
    while (b->len % 8)
        b->data[b->len++] = 0;
    size_t shoff = b->len;
    struct {
        unsigned name, type;
        size_t off, size;
        unsigned link;
    } sh[8] = {
        {0, 0, 0, 0, 0},
        {N_SHSTR, 3, o_shstr, sizeof shstr, 0},
        {N_STR, 3, o_str, sizeof str, 0},
        {N_SYM, 2, o_sym, sizeof sym, 2},
        {N_INFO, 0x70000000, o_info, ni, 3},
        {N_INFO_K, 0x70000000, o_info_k, nk, 3},
        {N_SHARED, 8, 0, 4096 + 1024, 0},
        {N_RESERVED, 8, 0, 0, 0},
    };
    for (int i = 0; i < 8; i++) {
        unsigned char *h = b->data + b->len;
        memset(h, 0, 64);
        put32(h, sh[i].name);
        put32(h + 4, sh[i].type);
        put64(h + 0x18, sh[i].off);
        put64(h + 0x20, sh[i].size);
        put32(h + 0x28, sh[i].link);
        b->len += 64;
    }
    unsigned char *e = b->data;
    memcpy(e, "\x7f" "ELF", 4);
    e[4] = 2; /* 64-bit */
    e[5] = 1; /* little-endian */
    put64(e + 0x28, shoff);
    put16(e + 0x3a, 64);
    put16(e + 0x3c, 8);
    put16(e + 0x3e, 1);
    return b->len;
}

static void test_cubin(void)
{
    char err[512];
    static elf_builder b;
    size_t len = build_cubin(&b);
    avo_cubin_kernel *k = NULL;
    int n = avo_cubin_parse(b.data, len, &k, err, sizeof err);
    CHECK_INT(n, 1);
    if (n == 1) {
        CHECK_STR(k[0].name, "kern");
        CHECK_INT(k[0].registers, 40);
        CHECK_INT(k[0].frame_bytes, 16);
        CHECK_INT(k[0].nparams, 2);
        CHECK_INT(k[0].params[0].size, 8);
        CHECK_INT(k[0].params[1].size, 4);
        CHECK_INT(k[0].params[1].offset, 8);
        CHECK_INT(k[0].shared_section_bytes, 5120);
        CHECK_INT(k[0].static_shared_bytes, 4096);
        CHECK_INT(k[0].spill_store_bytes, -1);
        avo_cubin_merge_ptxas_log(
            k, n,
            "ptxas info    : Compiling entry function 'kern' for 'sm_90a'\n"
            "ptxas info    : Function properties for kern\n"
            "ptxas         .     24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
            "ptxas info    : Used 40 registers, used 1 barriers, 4000 bytes smem\n"
            "ptxas info    : Function properties for other\n"
            "ptxas         .     0 bytes stack frame, 99 bytes spill stores, 99 bytes spill loads\n");
        CHECK_INT(k[0].spill_store_bytes, 8);
        CHECK_INT(k[0].spill_load_bytes, 12);
        CHECK_INT(k[0].static_shared_bytes, 4000);
    }
    free(k);

    /* Every truncation fails cleanly (or parses what is there), never reads past. */
    for (size_t cut = 0; cut < len; cut += 7) {
        unsigned char *copy = malloc(cut ? cut : 1);
        memcpy(copy, b.data, cut);
        k = NULL;
        int rc = avo_cubin_parse(copy, cut, &k, err, sizeof err);
        CHECK(rc == AVO_EINVAL || rc >= 0);
        free(k);
        free(copy);
    }
    CHECK(avo_cubin_parse("not an elf at all, just some text padding it out to 64 bytes.....",
                          64, &k, err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "not an ELF image");
    /* A section offset pointing past the end. */
    static elf_builder bad;
    len = build_cubin(&bad);
    size_t shoff = len - 8 * 64;
    put64(bad.data + shoff + 4 * 64 + 0x18, 1u << 30);
    CHECK(avo_cubin_parse(bad.data, len, &k, err, sizeof err) == AVO_EINVAL);
    /* An attribute claiming more payload than its section holds. */
    len = build_cubin(&bad);
    size_t o_info = 0;
    memcpy(&o_info, bad.data + shoff + 4 * 64 + 0x18, 4);
    put16(bad.data + o_info + 2, 4000);
    CHECK(avo_cubin_parse(bad.data, len, &k, err, sizeof err) == AVO_EINVAL);
    CHECK_CONTAINS(err, "truncated attribute");
}

/* ------------------------------------------------- with NVRTC, if present */

static const char real_kernel[] =
    "extern \"C\" __global__ void stage(float *out, const float *in, int n)\n"
    "{\n"
    "    __shared__ float tile[1024];\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    tile[threadIdx.x] = i < n ? in[i] : 0.0f;\n"
    "    __syncthreads();\n"
    "    if (i < n) out[i] = tile[blockDim.x - 1 - threadIdx.x];\n"
    "}\n";

static json_t *compile_job(const char *source, const char *entry, const char *arch, int nargs)
{
    json_t *args = json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}]", "name", "out",
                             "kind", "out", "type", "f32", "name", "in", "kind", "in", "type",
                             "f32", "name", "n", "kind", "scalar", "type", "i32");
    if (nargs == 4)
        json_array_append_new(args, json_pack("{s:s, s:s, s:s}", "name", "extra", "kind", "scalar",
                                              "type", "i32"));
    json_t *scalars = json_pack("{s:i, s:i}", "n", 1000, "extra", 1);
    return json_pack("{s:i, s:s, s:s, s:s, s:s, s:b, s:o, s:[{s:s, s:o, s:{s:i, s:i}, "
                     "s:{s:i, s:i}}], s:s}",
                     "id", 1, "backend", "cuda", "source", source, "entry", entry, "arch", arch,
                     "compile_only", 1, "args", args, "configs", "name", "c1", "scalars", scalars,
                     "lengths", "out", 1000, "in", 1000, "launch", "grid", 4, "block", 256,
                     "cache_dir", "/tmp/avo-test-cuda-cache");
}

static void test_nvrtc(void)
{
    char err[AVO_ERRLEN];
    const avo_nvrtc_api *nvrtc = avo_cuda_nvrtc(err, sizeof err);
    if (!nvrtc) {
        printf("skip NVRTC checks: %s\n", err);
        return;
    }
    json_t *r = avo_backend_cuda.run_job(compile_job(real_kernel, "stage", "sm_80", 3));
    CHECK_STR(json_string_value(json_object_get(r, "status")), "ok");
    json_t *k = json_array_get(json_object_get(json_object_get(r, "compile"), "kernels"), 0);
    CHECK_STR(json_string_value(json_object_get(k, "name")), "stage");
    CHECK_INT(json_integer_value(json_object_get(k, "static_shared_bytes")), 4096);
    CHECK(json_integer_value(json_object_get(k, "registers")) > 0);
    CHECK_INT(json_integer_value(json_object_get(k, "spill_store_bytes")), 0);
    CHECK_INT(json_array_size(json_object_get(k, "params")), 3);
    json_decref(r);

    /* sm_90a: the ELF's shared section includes 1 KiB the driver reserves */
    r = avo_backend_cuda.run_job(compile_job(real_kernel, "stage", "sm_90a", 3));
    k = json_array_get(json_object_get(json_object_get(r, "compile"), "kernels"), 0);
    CHECK_INT(json_integer_value(json_object_get(k, "static_shared_bytes")), 4096);
    json_decref(r);

    /* wrong argument count: the cubin has 3 parameters */
    r = avo_backend_cuda.run_job(compile_job(real_kernel, "stage", "sm_80", 4));
    CHECK_STR(json_string_value(json_object_get(r, "status")), "invalid");
    CHECK_CONTAINS(json_string_value(json_object_get(r, "reason")),
                   "kernel stage takes 3 parameters, the evaluator gives 4");
    json_decref(r);

    r = avo_backend_cuda.run_job(compile_job("extern \"C\" __global__ void stage(float *o, const "
                                             "float *i, int n) { o[0] = i[0] }\n",
                                             "stage", "sm_80", 3));
    CHECK_STR(json_string_value(json_object_get(r, "status")), "compile_error");
    CHECK_CONTAINS(json_string_value(json_object_get(r, "log")), "error");
    json_decref(r);

    r = avo_backend_cuda.run_job(compile_job("#include </etc/passwd>\n", "stage", "sm_80", 3));
    CHECK_STR(json_string_value(json_object_get(r, "status")), "compile_error");
    CHECK_CONTAINS(json_string_value(json_object_get(r, "reason")), "/etc/passwd");
    json_decref(r);

    r = avo_backend_cuda.run_job(compile_job(real_kernel, "nope", "sm_80", 3));
    CHECK_STR(json_string_value(json_object_get(r, "status")), "invalid");
    json_decref(r);

    /* templated kernels through name expressions */
    r = avo_backend_cuda.run_job(compile_job(
        "template <int N> __global__ void stage(float *o, const float *i, int n) { o[0] = N; }\n",
        "stage<3>", "sm_90a", 3));
    CHECK_STR(json_string_value(json_object_get(r, "status")), "ok");
    k = json_array_get(json_object_get(json_object_get(r, "compile"), "kernels"), 0);
    CHECK_CONTAINS(json_string_value(json_object_get(k, "name")), "stageILi3E");
    json_decref(r);

    /* the launch is checked against the target's limits in compile-only mode */
    json_t *job = compile_job(real_kernel, "stage", "sm_80", 3);
    json_object_set_new(json_array_get(json_object_get(job, "configs"), 0), "launch",
                        json_pack("{s:i, s:[i, i]}", "grid", 4, "block", 64, 32));
    r = avo_backend_cuda.run_job(job);
    CHECK_STR(json_string_value(json_object_get(r, "status")), "invalid");
    CHECK_CONTAINS(json_string_value(json_object_get(r, "reason")), "larger than the device allows");
    json_decref(r);
    json_decref(job);
}

int main(void)
{
    test_dtypes();
    test_launch();
    test_pack();
    test_includes();
    test_cubin();
    test_nvrtc();
    return check_finish();
}
