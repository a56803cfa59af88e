/*
 * ATTACK patch_reference — rewrite the reference in memory. The runner
 * loads the trusted reference into the candidate's own process before the
 * candidate (eval/cpu/cpu.c: runner_main, load_kernel). From its constructor the
 * kernel finds every shared object in /proc/self/maps that defines the
 * evaluator's reference entry ("mm_ref", reopened with RTLD_NOLOAD), makes
 * its code writable and overwrites the entry with a jump to a function of
 * its own that writes zeros; the kernel writes zeros too. Reference and
 * candidate then agree at every config, at memset speed.
 * Stopped by: the reference running only in the judge's process (issue 10,
 * item 1).
 * integrity: expect=fail
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void zeros(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    (void)K, (void)A, (void)B;
    memset(C, 0, sizeof(float) * (size_t)M * (size_t)N);
}

/* Overwrite the code at `fn` with movabs rax, zeros; jmp rax. */
static int redirect(void *fn)
{
#if defined(__x86_64__)
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)fn & ~(uintptr_t)(page - 1);
    if (mprotect((void *)start, (size_t)page * 2, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return -1;
    unsigned char jump[12] = {0x48, 0xb8};
    uint64_t target = (uint64_t)(uintptr_t)zeros;
    memcpy(jump + 2, &target, 8);
    jump[10] = 0xff, jump[11] = 0xe0;
    memcpy(fn, jump, sizeof jump);
    return 0;
#else
    (void)fn;
    return -1;
#endif
}

static void patch_everything(void)
{
    static int done;
    if (done++)
        return;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (!path || !strstr(path, ".so"))
            continue;
        path[strcspn(path, "\n")] = '\0';
        void *handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        void *fn = handle ? dlsym(handle, "mm_ref") : NULL;
        if (fn && fn != (void *)zeros && redirect(fn) == 0)
            fprintf(stderr, "patched mm_ref in %s\n", path);
        if (handle)
            dlclose(handle);
    }
    if (maps)
        fclose(maps);
}

__attribute__((constructor)) static void at_load(void)
{
    patch_everything();
}

void mm(int32_t M, int32_t N, int32_t K, const float *A, const float *B, float *C)
{
    patch_everything();
    zeros(M, N, K, A, B, C);
}
