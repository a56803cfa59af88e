/*
 * candidate.c — the CPU backend's candidate process: untrusted, an
 * unprivileged process in its own namespaces (eval/sandbox.h) that loads the
 * kernel and, on each command from the judge, calls it on argument slots of
 * a shared memory region.  It holds nothing but that region, the command
 * and acknowledgement pipes, and its log.  It answers each command with the
 * command's nonce + 1, so an acknowledgement written ahead of time or forged
 * is a protocol violation (device.c checks it).
 *
 * Also the slot layout, which judge and candidate compute alike.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/avo.h"
#include "eval/cpu/cpu_job.h"
#include "eval/cpu/cpulib.h"
#include "eval/sandbox.h"
#include "eval/supervise.h"

/* ------------------------------------------------------------------------ */
/* Argument slots in shared memory                                          */

void avo_cpu_layout_compute(const avo_jobspec *spec, const avo_config_spec *cfg, slot_layout *l)
{
    memset(l, 0, sizeof *l);
    l->page = (size_t)sysconf(_SC_PAGESIZE);
    size_t at = l->page;
    for (size_t i = 0; i < spec->nargs; i++) {
        if (spec->args[i].kind == AVO_ARG_SCALAR)
            continue;
        size_t bytes = cfg->lengths[i] * avo_dtype_size(spec->args[i].type);
        size_t data = (bytes + DATA_ALIGN - 1) / DATA_ALIGN * DATA_ALIGN;
        if (data == 0)
            data = DATA_ALIGN;
        size_t pages = (data + GUARD_MIN + l->page - 1) / l->page;
        l->bytes[i] = bytes;
        l->offset[i] = at + pages * l->page - data;
        at += (pages + 1) * l->page;
    }
    l->slot_bytes = at;
}

const avo_config_spec *avo_cpu_config_at(const avo_jobspec *spec, int32_t index)
{
    if (index >= 0)
        return (size_t)index < spec->nconfigs ? &spec->configs[index] : NULL;
    size_t i = (size_t)(-1 - (int64_t)index);
    return i < spec->ncheck_configs ? &spec->check_configs[i] : NULL;
}

int32_t avo_cpu_config_index(const avo_jobspec *spec, const avo_config_spec *cfg)
{
    if (cfg >= spec->configs && cfg < spec->configs + spec->nconfigs)
        return (int32_t)(cfg - spec->configs);
    return (int32_t)(-1 - (cfg - spec->check_configs));
}

/* ------------------------------------------------------------------------ */
/* The candidate process                                                    */

int avo_cpu_call_sig_init(const avo_jobspec *spec, call_sig *sig)
{
    for (size_t i = 0; i < spec->nargs; i++) {
        const avo_arg_spec *arg = &spec->args[i];
        if (arg->kind != AVO_ARG_SCALAR)
            sig->types[i] = &ffi_type_pointer;
        else if (arg->type == AVO_DT_F32)
            sig->types[i] = &ffi_type_float;
        else if (arg->type == AVO_DT_F64)
            sig->types[i] = &ffi_type_double;
        else if (arg->type == AVO_DT_I32)
            sig->types[i] = &ffi_type_sint32;
        else
            sig->types[i] = &ffi_type_sint64;
    }
    return ffi_prep_cif(&sig->cif, FFI_DEFAULT_ABI, (unsigned)spec->nargs, &ffi_type_void,
                        sig->types) == FFI_OK
               ? 0
               : -1;
}

void avo_cpu_call_kernel(const avo_jobspec *spec, call_sig *sig, kernel_fn fn,
                         const avo_config_spec *cfg, void **ptrs)
{
    void *values[AVO_JOBSPEC_MAX_ARGS];
    for (size_t i = 0; i < spec->nargs; i++)
        values[i] = spec->args[i].kind == AVO_ARG_SCALAR ? (void *)&cfg->scalars[i] : &ptrs[i];
    ffi_call(&sig->cif, fn, NULL, values);
}

/* Copy the object behind CAND_SO_FD into the sandbox's temporary directory
 * ($TMPDIR: /tmp of the view, or "." for a scratch without one) and load it. */
static void *candidate_load(void)
{
    size_t len = 0;
    char *data = avo_read_fd(CAND_SO_FD, (size_t)COMPILE_FILE_MB << 20, &len);
    close(CAND_SO_FD);
    const char *tmp = getenv("TMPDIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/kernel.so", tmp ? tmp : "/tmp");
    if (!data || avo_write_file(path, data, len, 0700) < 0) {
        dprintf(2, "cannot stage the kernel: %s\n", strerror(errno));
        free(data);
        return NULL;
    }
    free(data);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *e = dlerror();
        dprintf(2, "%s\n", e ? e : "dlopen failed");
    }
    return handle;
}

/*
 * The candidate process, after fork from the judge: fds are 0 (/dev/null),
 * 1 and 2 (the log), CAND_CMD_FD, CAND_ACK_FD, CAND_REGION_FD, CAND_SO_FD
 * and CAND_SETUP_FD.  Sandboxes itself as `uid` (when root) before the
 * kernel is loaded (so a constructor runs sandboxed too), says so on
 * CAND_SETUP_FD and closes it, then serves commands.  Never returns.
 */
static _Noreturn void candidate_main(const cpu_job *job, uid_t uid)
{
    const avo_jobspec *spec = &job->spec;
    char hello = HELLO_LOAD_FAILED;
    avo_sandbox_bind scratch = {.source = job->scratch, .target = "/tmp", .writable = 1};
    avo_sandbox_opts box = {.profile = AVO_SANDBOX_CANDIDATE,
                            .binds = &scratch,
                            .nbinds = job->scratch ? 1 : 0,
                            .chdir_to = job->scratch ? "/tmp" : NULL,
                            .cpu_s = spec->cpu_s,
                            .memory_mb = spec->memory_mb,
                            .file_mb = CANDIDATE_FILE_MB,
                            .nofile = 16,
                            .threads = spec->threads,
                            .uid = uid};
    char why[AVO_ERRLEN];
    if (avo_sandbox_enter(&box, why, sizeof why) < 0) {
        /* Still our own code: the reason travels to the judge. */
        char msg[AVO_ERRLEN + 1];
        msg[0] = SETUP_FAILED;
        size_t n = strlen(why);
        memcpy(msg + 1, why, n);
        avo_write_all(CAND_SETUP_FD, msg, n + 1);
        _exit(126);
    }
    char done = SETUP_DONE;
    avo_write_all(CAND_SETUP_FD, &done, 1);
    close(CAND_SETUP_FD); /* before any code of the kernel, constructors included */
    /* A BLAS or OpenMP library the kernel links starts no more threads than
     * it may (its constructor reads these; seccomp refuses the rest). */
    avo_cpulib_thread_env(spec->threads);
    void *handle = candidate_load();
    void *sym = handle ? dlsym(handle, spec->entry) : NULL;
    if (handle && !sym)
        hello = HELLO_NO_SYMBOL;
    if (sym)
        hello = HELLO_READY;
    avo_write_all(CAND_ACK_FD, &hello, 1);
    if (!sym)
        _exit(3);
    kernel_fn fn;
    memcpy(&fn, &sym, sizeof fn); /* object to function pointer, as POSIX allows */
    call_sig sig;
    if (avo_cpu_call_sig_init(spec, &sig) < 0)
        _exit(4);

    unsigned char *region = NULL;
    size_t region_bytes = 0;
    slot_layout l;
    const avo_config_spec *cfg = NULL;
    for (;;) {
        harness_cmd cmd;
        if (avo_read_all(CAND_CMD_FD, &cmd, sizeof cmd) != (ssize_t)sizeof cmd)
            _exit(0);
        if (cmd.op == CMD_EXIT)
            _exit(0);
        cfg = avo_cpu_config_at(spec, cmd.config);
        if (!cfg)
            _exit(5);
        if (cmd.op == CMD_LAYOUT) {
            avo_cpu_layout_compute(spec, cfg, &l);
            if (region)
                munmap(region, region_bytes);
            region_bytes = l.slot_bytes * cmd.nslots;
            region =
                mmap(NULL, region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, CAND_REGION_FD, 0);
            if (region == MAP_FAILED)
                _exit(6);
            for (uint64_t s = 0; s < cmd.nslots; s++) {
                unsigned char *slot = region + s * l.slot_bytes;
                mprotect(slot, l.page, PROT_NONE);
                for (size_t i = 0; i < spec->nargs; i++)
                    if (spec->args[i].kind != AVO_ARG_SCALAR) {
                        size_t end = (l.offset[i] + l.bytes[i] + l.page - 1) / l.page * l.page;
                        if (l.bytes[i] == 0)
                            end = (l.offset[i] + 1 + l.page - 1) / l.page * l.page;
                        mprotect(slot + end, l.page, PROT_NONE);
                    }
            }
        } else if (cmd.op == CMD_CALL && region) {
            for (uint64_t s = 0; s < cmd.nslots; s++) {
                void *ptrs[AVO_JOBSPEC_MAX_ARGS];
                for (size_t i = 0; i < spec->nargs; i++)
                    ptrs[i] = region + s * l.slot_bytes + l.offset[i];
                avo_cpu_call_kernel(spec, &sig, fn, cfg, ptrs);
            }
        }
        uint64_t ack = cmd.nonce + 1;
        if (avo_write_all(CAND_ACK_FD, &ack, sizeof ack) < 0)
            _exit(0);
    }
}

/*
 * The child's half of the maps hand-over: open /proc/self/maps while this
 * process is still the judge's fork (its own mappings: always allowed) and
 * send the descriptor over `sock`, or an empty message without one.  The
 * kernel's permission check happens at open, so the judge can read it
 * after the candidate changed uid and became non-dumpable.
 */
static void send_own_maps(int sock)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    char byte = 0;
    avo_supervise_send_fd(sock, &byte, 1, fd);
    if (fd >= 0)
        close(fd);
}

/* The judge's half: the descriptor the child sent, or -1. */
static int receive_maps(int sock)
{
    char byte;
    int fd;
    return avo_supervise_recv_fd(sock, &byte, 1, &fd) > 0 ? fd : -1;
}

pid_t avo_cpu_candidate_start(const cpu_job *job, uid_t uid, int cmd_rd, int ack_wr, int region_fd,
                              int so_fd, int setup_wr, int *ret_maps_fd)
{
    *ret_maps_fd = -1;
    int sv[2];
    int have_sv = socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0;
    pid_t pid = avo_supervise_fork(0);
    if (pid != 0) {
        if (have_sv) {
            close(sv[1]);
            if (pid > 0)
                *ret_maps_fd = receive_maps(sv[0]);
            close(sv[0]);
        }
        return pid;
    }
    if (have_sv) {
        close(sv[0]);
        send_own_maps(sv[1]);
        close(sv[1]);
    }
    int fds[5] = {cmd_rd, ack_wr, region_fd, so_fd, setup_wr};
    int moved[5];
    for (int i = 0; i < 5; i++) /* above every target first, then into place */
        moved[i] = fcntl(fds[i], F_DUPFD, 100);
    for (int i = 0; i < 5; i++)
        if (moved[i] < 0 || dup2(moved[i], CAND_CMD_FD + i) < 0)
            _exit(127);
    close_range(CAND_SETUP_FD + 1, ~0u, 0);
    candidate_main(job, uid);
}
