/*
 * test_cpulib.c — probing a C library named as a CPU baseline (cpulib.h):
 * a library that loads answers its path, version, describe strings and
 * thread count, and its constructor sees the thread variables; a missing
 * file, symbol or describe function is AVO_ENOTFOUND naming it and the
 * install hint; a constructor that crashes or hangs is the probe's
 * failure (AVO_ECHILD, AVO_ETIMEOUT), never the caller's; a malformed spec
 * is AVO_EINVAL.  Builds its small libraries with the host compiler.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/avo.h"
#include "check.h"
#include "eval/cpu/cpulib.h"

static char dir[] = "/tmp/avo-test-cpulib-XXXXXX";

/* Compile `source` into dir/name; 0 when it worked. */
static int build(const char *name, const char *source)
{
    char src[256], cmd[1024];
    snprintf(src, sizeof src, "%s/%s.c", dir, name);
    FILE *f = fopen(src, "w");
    if (!f)
        return -1;
    fputs(source, f);
    fclose(f);
    const char *cc = getenv("CC");
    snprintf(cmd, sizeof cmd, "%s -shared -fPIC -o %s/%s %s", cc && *cc ? cc : "cc", dir, name,
             src);
    return system(cmd);
}

static json_t *spec_of(const char *file, const char *symbol)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s}", "file", path, "symbol", symbol,
                     "describe", "version", "lib_version", "core", "lib_core", "thread_count",
                     "lib_threads", "install", "apt-get install libgood");
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    /* The constructor reads OPENBLAS_NUM_THREADS as OpenBLAS's does. */
    CHECK_INT(build("libgood.so", "#include <stdlib.h>\n"
                                  "static int threads = -1;\n"
                                  "__attribute__((constructor)) static void init(void) {\n"
                                  "  const char *t = getenv(\"OPENBLAS_NUM_THREADS\");\n"
                                  "  threads = t ? atoi(t) : 0; }\n"
                                  "void f(void) {}\n"
                                  "const char *lib_version(void) { return \"Good 1.2 \"; }\n"
                                  "const char *lib_core(void) { return \"Haswell\\n\"; }\n"
                                  "int lib_threads(void) { return threads; }\n"),
              0);
    /* What OpenBLAS reads to pick its kernel, as its constructor sees it. */
    CHECK_INT(build("libcore.so", "#include <stdlib.h>\n"
                                  "static const char *core = \"detected\";\n"
                                  "static const char *verbose = \"unset\";\n"
                                  "__attribute__((constructor)) static void init(void) {\n"
                                  "  if (getenv(\"OPENBLAS_CORETYPE\")) core = \"forced\";\n"
                                  "  if (getenv(\"OPENBLAS_L2_SIZE\")) core = \"forced L2\";\n"
                                  "  if (getenv(\"OPENBLAS_VERBOSE\"))\n"
                                  "    verbose = getenv(\"OPENBLAS_VERBOSE\"); }\n"
                                  "void f(void) {}\n"
                                  "const char *lib_version(void) { return verbose; }\n"
                                  "const char *lib_core(void) { return core; }\n"
                                  "int lib_threads(void) { return 1; }\n"),
              0);
    CHECK_INT(build("libcrash.so", "#include <signal.h>\n"
                                   "__attribute__((constructor)) static void init(void) {\n"
                                   "  raise(SIGSEGV); }\nvoid f(void) {}\n"),
              0);
    CHECK_INT(build("libhang.so", "#include <unistd.h>\n"
                                  "__attribute__((constructor)) static void init(void) {\n"
                                  "  for (;;) pause(); }\nvoid f(void) {}\n"),
              0);
    char err[AVO_ERRLEN];
    json_t *info = NULL;
    /* A clean start: none of the variables the probe sets (cpulib.h). */
    const char *const vars[] = {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "GOTO_NUM_THREADS",
                                "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "OPENBLAS_CORETYPE",
                                "OPENBLAS_L2_SIZE", "OPENBLAS_BLOCK_FACTOR", "OPENBLAS_VERBOSE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);

    json_t *spec = spec_of("libgood.so", "f");
    CHECK_INT(avo_cpulib_probe(spec, 3, 10, &info, err, sizeof err), 0);
    CHECK_STR(json_string_value(json_object_get(info, "version")), "Good 1.2");
    CHECK_STR(json_string_value(json_object_get(json_object_get(info, "info"), "core")), "Haswell");
    CHECK_INT(json_integer_value(json_object_get(info, "threads")), 3);
    CHECK_INT(json_integer_value(json_object_get(info, "threads_reported")), 3);
    CHECK_STR(json_string_value(json_object_get(info, "symbol")), "f");
    const char *path = json_string_value(json_object_get(info, "path"));
    CHECK(path && strstr(path, "/libgood.so") != NULL);
    /* Nothing of the environment was replaced: nothing said. */
    CHECK(json_object_get(info, "env_overridden") == NULL);
    json_decref(info);
    /* The caller's environment is untouched: the variables were the child's. */
    CHECK(getenv("OPENBLAS_NUM_THREADS") == NULL);

    /* A user's OPENBLAS_CORETYPE, L2 size and verbosity do not reach the
     * library: it detects its core, and the probe says what it replaced. */
    setenv("OPENBLAS_CORETYPE", "Haswell", 1);
    setenv("OPENBLAS_L2_SIZE", "262144", 1);
    setenv("OPENBLAS_VERBOSE", "2", 1);
    json_t *core_spec = spec_of("libcore.so", "f");
    CHECK_INT(avo_cpulib_probe(core_spec, 1, 10, &info, err, sizeof err), 0);
    CHECK_STR(json_string_value(json_object_get(json_object_get(info, "info"), "core")),
              "detected");
    CHECK_STR(json_string_value(json_object_get(info, "version")), "0");
    json_t *over = json_object_get(info, "env_overridden");
    CHECK_STR(json_string_value(json_object_get(over, "OPENBLAS_CORETYPE")), "Haswell");
    CHECK_STR(json_string_value(json_object_get(over, "OPENBLAS_L2_SIZE")), "262144");
    CHECK_STR(json_string_value(json_object_get(over, "OPENBLAS_VERBOSE")), "2");
    CHECK(json_object_get(over, "OPENBLAS_NUM_THREADS") == NULL);
    CHECK_STR(json_string_value(json_object_get(json_object_get(info, "environment"),
                                                "OPENBLAS_NUM_THREADS")),
              "1");
    const json_t *unset = json_object_get(info, "environment_unset");
    int coretype_unset = 0;
    for (size_t i = 0; i < json_array_size(unset); i++)
        coretype_unset |= !strcmp(json_string_value(json_array_get(unset, i)), "OPENBLAS_CORETYPE");
    CHECK(coretype_unset);
    /* still the caller's own */
    CHECK_STR(getenv("OPENBLAS_CORETYPE"), "Haswell");
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv("OPENBLAS_L2_SIZE");
    unsetenv("OPENBLAS_VERBOSE");
    json_decref(core_spec);

    json_object_set_new(spec, "symbol", json_string("g"));
    CHECK_INT(avo_cpulib_probe(spec, 1, 10, &info, err, sizeof err), AVO_ENOTFOUND);
    CHECK(strstr(err, "has no symbol 'g'") != NULL);
    CHECK(strstr(err, "install it: apt-get install libgood") != NULL);
    CHECK(info == NULL);
    json_object_set_new(spec, "symbol", json_string("f"));
    json_object_set_new(json_object_get(spec, "describe"), "x", json_string("nothing_here"));
    CHECK_INT(avo_cpulib_probe(spec, 1, 10, &info, err, sizeof err), AVO_ENOTFOUND);
    CHECK(strstr(err, "has no function 'nothing_here' (describe.x)") != NULL);
    json_decref(spec);

    spec = spec_of("libmissing.so", "f");
    CHECK_INT(avo_cpulib_probe(spec, 1, 10, &info, err, sizeof err), AVO_ENOTFOUND);
    CHECK(strstr(err, "libmissing.so") != NULL);
    json_decref(spec);

    spec = spec_of("libcrash.so", "f");
    CHECK_INT(avo_cpulib_probe(spec, 1, 10, &info, err, sizeof err), AVO_ECHILD);
    CHECK(strstr(err, "killed the probe (signal 11)") != NULL);
    json_decref(spec);

    spec = spec_of("libhang.so", "f");
    CHECK_INT(avo_cpulib_probe(spec, 1, 0.5, &info, err, sizeof err), AVO_ETIMEOUT);
    CHECK(strstr(err, "did not finish within 0.5s") != NULL);
    json_decref(spec);

    spec = json_pack("{s:s}", "file", "libx.so");
    CHECK_INT(avo_cpulib_probe(spec, 1, 10, &info, err, sizeof err), AVO_EINVAL);
    json_decref(spec);
    spec = json_pack("{s:s, s:s, s:{s:i}}", "file", "libx.so", "symbol", "f", "describe", "v", 1);
    CHECK_INT(avo_cpulib_probe(spec, 1, 10, &info, err, sizeof err), AVO_EINVAL);
    CHECK(strstr(err, "describe.v must be a function's name") != NULL);
    json_decref(spec);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", dir);
    return check_finish();
}
