/*
 * libnvrtc_emu.c — the CPU emulator's NVRTC (built as libnvrtc.so.13, found
 * first when its directory leads LD_LIBRARY_PATH).
 *
 * Every call goes to the real NVRTC, so avo sees the real cubin, log,
 * lowered names and errors.  After a successful compile the program is
 * compiled once more, for the emulated driver (libcuda_emu.cpp): the source
 * with `extern __shared__` arrays rewritten into pointers at the launch's
 * dynamic shared memory, the evaluator's headers written beside it (but for
 * the toolkit headers the emulator has its own of: tests/emu/include), the -D,
 * -U and -I options of the compile, avo_emu.h force-included, and a table of
 * the name expressions' entries appended; the host C++ compiler ($AVO_EMU_CXX,
 * default c++) makes <dir>/<cubin id>.so of it (emu_common.h).  When the host
 * compile fails, so does nvrtcCompileProgram, with the host compiler's
 * messages after NVRTC's log: the kernel uses something the emulator lacks.
 *
 * The real library: $AVO_EMU_REAL_NVRTC (tests/emu/lib.sh sets it to the
 * NVRTC `avo doctor` finds), else libnvrtc.so.13/.12 under $CUDA_HOME/lib64,
 * /usr/local/cuda/lib64 and the pip wheels' nvidia/cu13/lib
 * ($AVO_CUDA_WHEELS, default /opt/avo/cuda-wheels), as avo looks for it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <link.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu_common.h"

extern char **environ;

typedef int nvrtcResult;
typedef struct real_program *real_program;

enum {
    NVRTC_SUCCESS = 0,
    NVRTC_ERROR_OUT_OF_MEMORY = 1,
    NVRTC_ERROR_INVALID_INPUT = 3,
    NVRTC_ERROR_INVALID_PROGRAM = 4,
    NVRTC_ERROR_COMPILATION = 6,
    NVRTC_ERROR_INTERNAL_ERROR = 11
};

static struct real {
    int state; /* 0 untried, 1 loaded, -1 missing */
    const char *(*GetErrorString)(nvrtcResult);
    nvrtcResult (*Version)(int *, int *);
    nvrtcResult (*GetNumSupportedArchs)(int *);
    nvrtcResult (*GetSupportedArchs)(int *);
    nvrtcResult (*CreateProgram)(real_program *, const char *, const char *, int,
                                 const char *const *, const char *const *);
    nvrtcResult (*DestroyProgram)(real_program *);
    nvrtcResult (*CompileProgram)(real_program, int, const char *const *);
    nvrtcResult (*GetCUBINSize)(real_program, size_t *);
    nvrtcResult (*GetCUBIN)(real_program, char *);
    nvrtcResult (*GetProgramLogSize)(real_program, size_t *);
    nvrtcResult (*GetProgramLog)(real_program, char *);
    nvrtcResult (*AddNameExpression)(real_program, const char *);
    nvrtcResult (*GetLoweredName)(real_program, const char *, const char **);
} R;

static int load_real(void)
{
    if (R.state)
        return R.state > 0 ? 0 : -1;
    R.state = -1;
    char path[1024];
    const char *env = getenv("AVO_EMU_REAL_NVRTC");
    const char *home = getenv("CUDA_HOME");
    const char *wheels = getenv("AVO_CUDA_WHEELS");
    char wheels_lib[900];
    snprintf(wheels_lib, sizeof wheels_lib, "%.800s/nvidia/cu13/lib",
             wheels && *wheels ? wheels : "/opt/avo/cuda-wheels");
    char home_lib[900];
    snprintf(home_lib, sizeof home_lib, "%.800s/lib64", home && *home ? home : "");
    const char *dirs[] = {home && *home ? home_lib : NULL, "/usr/local/cuda/lib64", wheels_lib};
    const char *names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    void *h = env && *env ? dlopen(env, RTLD_NOW | RTLD_LOCAL) : NULL;
    for (size_t d = 0; !h && d < 3; d++)
        for (size_t n = 0; !h && dirs[d] && n < 3; n++) {
            snprintf(path, sizeof path, "%s/%s", dirs[d], names[n]);
            h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        }
    if (!h || dlsym(h, "avo_emu_nvrtc_shim")) { /* never ourselves */
        fprintf(stderr, "avo emulator: no real libnvrtc (set AVO_EMU_REAL_NVRTC or CUDA_HOME, "
                        "or install the pip wheels: tools/install-deps --tests)\n");
        return -1;
    }
#define BIND(f)                                                                                    \
    do {                                                                                           \
        void *sym = dlsym(h, "nvrtc" #f);                                                          \
        if (!sym)                                                                                  \
            return -1;                                                                             \
        memcpy(&R.f, &sym, sizeof sym);                                                            \
    } while (0)
    BIND(GetErrorString);
    BIND(Version);
    BIND(GetNumSupportedArchs);
    BIND(GetSupportedArchs);
    BIND(CreateProgram);
    BIND(DestroyProgram);
    BIND(CompileProgram);
    BIND(GetCUBINSize);
    BIND(GetCUBIN);
    BIND(GetProgramLogSize);
    BIND(GetProgramLog);
    BIND(AddNameExpression);
    BIND(GetLoweredName);
#undef BIND
    /* The real NVRTC opens libnvrtc-builtins by name; outside the loader's
     * path (the pip wheels) only the one beside it, loaded first, answers. */
    struct link_map *map = NULL;
    int major = 0, minor = 0;
    if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && strrchr(map->l_name, '/') &&
        R.Version(&major, &minor) == NVRTC_SUCCESS) {
        snprintf(path, sizeof path, "%.*s/libnvrtc-builtins.so.%d.%d",
                 (int)(strrchr(map->l_name, '/') - map->l_name), map->l_name, major, minor);
        dlopen(path, RTLD_NOW | RTLD_LOCAL); /* kept open; missing: NVRTC says so */
    }
    R.state = 1;
    return 0;
}

/* Marks this library, so that load_real never binds it to itself. */
int avo_emu_nvrtc_shim;

struct _nvrtcProgram {
    real_program real;
    char *src, *name;
    int nheaders;
    char **headers, **header_names;
    char **exprs;
    size_t nexprs;
    char *log; /* NVRTC's log and the host compiler's, when the host compile failed */
};
typedef struct _nvrtcProgram *nvrtcProgram;

/* ------------------------------------------------------------ utilities */

typedef struct text {
    char *s;
    size_t len, cap;
    int oom;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (t->oom)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->len + n + 1) * 2;
        char *p = realloc(t->s, cap);
        if (!p) {
            t->oom = 1;
            return;
        }
        t->s = p;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static void putf(text *t, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    put(t, buf, n < (int)sizeof buf ? (size_t)n : sizeof buf - 1);
}

static int is_ident(int c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static char *dup_range(const char *a, const char *b)
{
    while (a < b && (*a == ' ' || *a == '\t' || *a == '\n'))
        a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n'))
        b--;
    char *s = malloc((size_t)(b - a) + 1);
    if (s) {
        memcpy(s, a, (size_t)(b - a));
        s[b - a] = '\0';
    }
    return s;
}

/* Removes every __align__(...) from s, in place. */
static void strip_align(char *s)
{
    char *p;
    while ((p = strstr(s, "__align__"))) {
        char *q = strchr(p, ')');
        if (!q)
            return;
        memmove(p, q + 1, strlen(q + 1) + 1);
    }
}

/*
 * One `extern __shared__ TYPE NAME[];` at p (after "extern"): appends its
 * replacement to out and returns the end of the declaration, or NULL when it
 * does not parse (then it is copied as it is).
 */
static const char *rewrite_dynamic_shared(const char *p, int depth, text *out)
{
    const char *q = skip_space(p);
    if (strncmp(q, "__shared__", 10) != 0 || is_ident(q[10]))
        return NULL;
    q += 10;
    const char *semi = strchr(q, ';');
    if (!semi)
        return NULL;
    const char *end = semi;
    while (end > q && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    if (end - q < 2 || end[-1] != ']')
        return NULL;
    const char *open = end - 1;
    while (open > q && *open != '[')
        open--;
    const char *name_end = open;
    while (name_end > q && (name_end[-1] == ' ' || name_end[-1] == '\t'))
        name_end--;
    const char *name_start = name_end;
    while (name_start > q && is_ident(name_start[-1]))
        name_start--;
    if (name_start == name_end)
        return NULL;
    char *type = dup_range(q, name_start), *name = dup_range(name_start, name_end);
    if (!type || !name) {
        free(type);
        free(name);
        return NULL;
    }
    strip_align(type);
    if (depth > 0)
        putf(out, "%s *%s = (%s *)avo_emu_current->dynamic_shared;", type, name, type);
    else
        putf(out,
             "static inline %s *avo_emu_dynamic_%s(void) "
             "{ return (%s *)avo_emu_current->dynamic_shared; }\n#define %s (avo_emu_dynamic_%s())",
             type, name, type, name, name);
    free(type);
    free(name);
    return semi + 1;
}

/* The program's source for the host compiler (see the top of the file). */
static char *host_source(const nvrtcProgram p, const char *const *lowered)
{
    text out = {0};
    const char *s = p->src;
    int depth = 0;
    putf(&out, "#line 1 \"%s\"\n", p->name);
    while (*s) {
        if (s[0] == '/' && s[1] == '/') {
            const char *e = strchr(s, '\n');
            e = e ? e : s + strlen(s);
            put(&out, s, (size_t)(e - s));
            s = e;
        } else if (s[0] == '/' && s[1] == '*') {
            const char *e = strstr(s + 2, "*/");
            e = e ? e + 2 : s + strlen(s);
            put(&out, s, (size_t)(e - s));
            s = e;
        } else if (*s == '"' || *s == '\'') {
            const char *e = s + 1;
            while (*e && *e != *s)
                e += (*e == '\\' && e[1]) ? 2 : 1;
            e = *e ? e + 1 : e;
            put(&out, s, (size_t)(e - s));
            s = e;
        } else if (strncmp(s, "extern", 6) == 0 && !is_ident(s[6]) &&
                   (s == p->src || !is_ident(s[-1]))) {
            const char *e = rewrite_dynamic_shared(s + 6, depth, &out);
            if (e) {
                s = e;
            } else {
                put(&out, s, 6);
                s += 6;
            }
        } else {
            depth += *s == '{' ? 1 : *s == '}' ? -1 : 0;
            put(&out, s, 1);
            s++;
        }
    }
    put(&out, "\n\n/* avo emulator: the module's kernels */\n", 43);
    put(&out, "extern \"C\" { avo_emu_ctx *avo_emu_current; }\n", 45);
    for (size_t i = 0; i < p->nexprs; i++)
        putf(&out, "static void avo_emu_entry_%zu(void **p) { avo_emu::invoke(%s, p); }\n", i,
             p->exprs[i]);
    putf(&out, "extern \"C\" const avo_emu_kernel avo_emu_kernels[] = {\n");
    for (size_t i = 0; i < p->nexprs; i++)
        putf(&out, "    {\"%s\", avo_emu_entry_%zu},\n", lowered[i], i);
    putf(&out, "    {0, 0}};\n");
    if (out.oom) {
        free(out.s);
        return NULL;
    }
    return out.s;
}

static int write_file(const char *path, const char *data)
{
    /* Header names may have directories (`#include "lib/tile.h"`). */
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(dir, 0700);
        *slash = '/';
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = strlen(data);
    int rc = fwrite(data, 1, n, f) == n ? 0 : -1;
    return fclose(f) == 0 ? rc : -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

/* Removes dir and everything under it (a build directory of ours). */
static void remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Runs argv with stdout and stderr into log_path; returns its exit status
 * (-1 when it could not run or died). */
static int run(char **argv, const char *log_path)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int status = 0, rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    text t = {0};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        put(&t, buf, n);
    fclose(f);
    return t.s ? t.s : strdup("");
}

/* Whether the emulator's include directory has its own header of this name
 * (mma.h, cuda_bf16.h, ...), which the host compile must use instead. */
static int emulator_provides(const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", AVO_EMU_INCLUDE, name);
    return access(path, R_OK) == 0;
}

/*
 * The host module for a program NVRTC compiled.  Returns 0, or -1 with
 * *ret_msg the reason (malloc'd).
 */
static int build_host_module(nvrtcProgram p, int nopts, const char *const *opts, char **ret_msg)
{
    char dir[900], work[1024], src[1100], so[1100], log[1100], target[1200];
    *ret_msg = NULL;
    size_t cubin_len = 0;
    char *cubin = NULL;
    const char **lowered = calloc(p->nexprs + 1, sizeof *lowered);
    char **argv = calloc((size_t)nopts * 2 + 24, sizeof *argv);
    char *source = NULL;
    int rc = -1;
    work[0] = '\0';
    if (!lowered || !argv || avo_emu_dir(dir, sizeof dir) < 0) {
        *ret_msg = strdup("avo emulator: cannot create its module directory ($AVO_EMU_DIR)");
        goto done;
    }
    if (R.GetCUBINSize(p->real, &cubin_len) != NVRTC_SUCCESS || !(cubin = malloc(cubin_len)) ||
        R.GetCUBIN(p->real, cubin) != NVRTC_SUCCESS) {
        *ret_msg = strdup("avo emulator: NVRTC produced no cubin (compile with -arch=sm_XX)");
        goto done;
    }
    size_t elf = avo_emu_elf_size(cubin);
    if (elf == 0 || elf > cubin_len || avo_emu_module_path(cubin, elf, target, sizeof target) < 0) {
        *ret_msg = strdup("avo emulator: the cubin is not an ELF image");
        goto done;
    }
    for (size_t i = 0; i < p->nexprs; i++)
        if (R.GetLoweredName(p->real, p->exprs[i], &lowered[i]) != NVRTC_SUCCESS || !lowered[i])
            lowered[i] = p->exprs[i];
    /* Built before for the same cubin (hence the same source and options),
     * and after the emulator's headers, which it also depends on. */
    if (avo_emu_module_current(target, AVO_EMU_INCLUDE)) {
        rc = 0;
        goto done;
    }
    snprintf(work, sizeof work, "%s/build.XXXXXX", dir);
    if (!mkdtemp(work) || !(source = host_source(p, lowered))) {
        work[0] = '\0';
        *ret_msg = strdup("avo emulator: cannot prepare the host compile");
        goto done;
    }
    snprintf(src, sizeof src, "%s/%s", work, "kernel.cu");
    snprintf(so, sizeof so, "%s/module.so", work);
    snprintf(log, sizeof log, "%s/log", work);
    for (int i = 0; i < p->nheaders; i++) {
        char path[2048];
        if (emulator_provides(p->header_names[i]))
            continue; /* the toolkit's mma.h, say: `#include "mma.h"` gets ours */
        snprintf(path, sizeof path, "%s/%s", work, p->header_names[i]);
        if (write_file(path, p->headers[i]) < 0) {
            *ret_msg = strdup("avo emulator: cannot write a header for the host compile");
            goto done;
        }
    }
    if (write_file(src, source) < 0) {
        *ret_msg = strdup("avo emulator: cannot write the host source");
        goto done;
    }
    const char *cxx = getenv("AVO_EMU_CXX");
    int n = 0;
    argv[n++] = (char *)(cxx && *cxx ? cxx : "c++");
    const char *fixed[] = {"-std=c++17",
                           "-O2",
                           "-g",
                           "-fPIC",
                           "-shared",
                           "-w",
                           "-fno-strict-aliasing",
                           "-include",
                           "avo_emu.h",
                           "-I" AVO_EMU_INCLUDE};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        argv[n++] = (char *)fixed[i];
    char inc[1100];
    snprintf(inc, sizeof inc, "-I%s", work);
    argv[n++] = inc;
    for (int i = 0; i < nopts; i++) {
        const char *o = opts[i];
        if (!strncmp(o, "-D", 2) || !strncmp(o, "-U", 2) || !strncmp(o, "-I", 2)) {
            argv[n++] = (char *)o;
            if (o[2] == '\0' && i + 1 < nopts)
                argv[n++] = (char *)opts[++i];
        } else if (!strncmp(o, "--define-macro=", 15)) {
            argv[n++] = "-D";
            argv[n++] = (char *)o + 15;
        } else if (!strncmp(o, "--undefine-macro=", 17)) {
            argv[n++] = "-U";
            argv[n++] = (char *)o + 17;
        } else if (!strncmp(o, "--include-path=", 15)) {
            argv[n++] = "-I";
            argv[n++] = (char *)o + 15;
        }
    }
    argv[n++] = "-x";
    argv[n++] = "c++";
    argv[n++] = src;
    argv[n++] = "-o";
    argv[n++] = so;
    argv[n] = NULL;
    int status = run(argv, log);
    if (status != 0) {
        char *out = read_file(log);
        text t = {0};
        putf(&t, "avo emulator: the host compile (%s) failed%s:\n", argv[0],
             status < 0 ? " to run" : "");
        put(&t, out, strlen(out));
        free(out);
        *ret_msg = t.s;
        goto done;
    }
    if (rename(so, target) < 0) {
        *ret_msg = strdup("avo emulator: cannot move the host module into place");
        goto done;
    }
    rc = 0;
done:
    if (work[0])
        remove_tree(work);
    free(source);
    free(cubin);
    free(lowered);
    free(argv);
    return rc;
}

/* ------------------------------------------------------------- the API */

const char *nvrtcGetErrorString(nvrtcResult rc)
{
    return load_real() == 0 ? R.GetErrorString(rc) : "NVRTC_ERROR_INTERNAL_ERROR";
}

nvrtcResult nvrtcVersion(int *major, int *minor)
{
    return load_real() == 0 ? R.Version(major, minor) : NVRTC_ERROR_INTERNAL_ERROR;
}

nvrtcResult nvrtcGetNumSupportedArchs(int *n)
{
    return load_real() == 0 ? R.GetNumSupportedArchs(n) : NVRTC_ERROR_INTERNAL_ERROR;
}

nvrtcResult nvrtcGetSupportedArchs(int *archs)
{
    return load_real() == 0 ? R.GetSupportedArchs(archs) : NVRTC_ERROR_INTERNAL_ERROR;
}

static void program_free(nvrtcProgram p)
{
    if (!p)
        return;
    for (int i = 0; i < p->nheaders; i++) {
        free(p->headers[i]);
        free(p->header_names[i]);
    }
    for (size_t i = 0; i < p->nexprs; i++)
        free(p->exprs[i]);
    free(p->headers);
    free(p->header_names);
    free(p->exprs);
    free(p->src);
    free(p->name);
    free(p->log);
    free(p);
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram *out, const char *src, const char *name, int nheaders,
                               const char *const *headers, const char *const *header_names)
{
    if (load_real() < 0)
        return NVRTC_ERROR_INTERNAL_ERROR;
    if (!out || !src || nheaders < 0)
        return NVRTC_ERROR_INVALID_INPUT;
    nvrtcProgram p = calloc(1, sizeof *p);
    if (!p)
        return NVRTC_ERROR_OUT_OF_MEMORY;
    p->src = strdup(src);
    p->name = strdup(name ? name : "default_program");
    p->headers = calloc((size_t)nheaders + 1, sizeof *p->headers);
    p->header_names = calloc((size_t)nheaders + 1, sizeof *p->header_names);
    int oom = !p->src || !p->name || !p->headers || !p->header_names;
    for (int i = 0; !oom && i < nheaders; i++) {
        p->nheaders = i + 1;
        p->headers[i] = strdup(headers[i]);
        p->header_names[i] = strdup(header_names[i]);
        oom = !p->headers[i] || !p->header_names[i];
    }
    nvrtcResult rc = oom ? NVRTC_ERROR_OUT_OF_MEMORY
                         : R.CreateProgram(&p->real, src, name, nheaders, headers, header_names);
    if (rc != NVRTC_SUCCESS) {
        program_free(p);
        return rc;
    }
    *out = p;
    return NVRTC_SUCCESS;
}

nvrtcResult nvrtcDestroyProgram(nvrtcProgram *p)
{
    if (!p || !*p)
        return NVRTC_ERROR_INVALID_PROGRAM;
    nvrtcResult rc = R.DestroyProgram(&(*p)->real);
    program_free(*p);
    *p = NULL;
    return rc;
}

nvrtcResult nvrtcAddNameExpression(nvrtcProgram p, const char *expr)
{
    if (!p || !expr)
        return NVRTC_ERROR_INVALID_PROGRAM;
    char **exprs = realloc(p->exprs, (p->nexprs + 1) * sizeof *exprs);
    if (!exprs)
        return NVRTC_ERROR_OUT_OF_MEMORY;
    p->exprs = exprs;
    if (!(p->exprs[p->nexprs] = strdup(expr)))
        return NVRTC_ERROR_OUT_OF_MEMORY;
    p->nexprs++;
    return R.AddNameExpression(p->real, expr);
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram p, int nopts, const char *const *opts)
{
    if (!p)
        return NVRTC_ERROR_INVALID_PROGRAM;
    nvrtcResult rc = R.CompileProgram(p->real, nopts, opts);
    if (rc != NVRTC_SUCCESS)
        return rc;
    char *msg = NULL;
    if (build_host_module(p, nopts, opts, &msg) == 0)
        return NVRTC_SUCCESS;
    size_t len = 0;
    char *real_log = NULL;
    if (R.GetProgramLogSize(p->real, &len) == NVRTC_SUCCESS && len > 0 &&
        (real_log = malloc(len)) && R.GetProgramLog(p->real, real_log) == NVRTC_SUCCESS)
        real_log[len - 1] = '\0';
    text t = {0};
    if (real_log)
        put(&t, real_log, strlen(real_log));
    const char *why = msg ? msg : "avo emulator: out of memory";
    put(&t, why, strlen(why));
    free(real_log);
    free(msg);
    free(p->log);
    p->log = t.s;
    return NVRTC_ERROR_COMPILATION;
}

nvrtcResult nvrtcGetCUBINSize(nvrtcProgram p, size_t *size)
{
    return p ? R.GetCUBINSize(p->real, size) : NVRTC_ERROR_INVALID_PROGRAM;
}

nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char *cubin)
{
    return p ? R.GetCUBIN(p->real, cubin) : NVRTC_ERROR_INVALID_PROGRAM;
}

nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram p, size_t *size)
{
    if (!p)
        return NVRTC_ERROR_INVALID_PROGRAM;
    if (!p->log)
        return R.GetProgramLogSize(p->real, size);
    *size = strlen(p->log) + 1;
    return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetProgramLog(nvrtcProgram p, char *log)
{
    if (!p)
        return NVRTC_ERROR_INVALID_PROGRAM;
    if (!p->log)
        return R.GetProgramLog(p->real, log);
    memcpy(log, p->log, strlen(p->log) + 1);
    return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetLoweredName(nvrtcProgram p, const char *expr, const char **lowered)
{
    return p ? R.GetLoweredName(p->real, expr, lowered) : NVRTC_ERROR_INVALID_PROGRAM;
}
