/*
 * cpu_job.h — the CPU backend's internal view of one job and of the pipes
 * between its processes, shared by its files by role (docs/threat-model.md):
 *
 *   cpu.c        the backend entry: parse the job, compile both sources,
 *                fork the judge and turn what it reports into one result
 *   compile.c    the host C compiler, sandboxed, into the compile cache
 *   device.c     the judge's CPU device: the judge process and the
 *                candidate as it sees it (commands, stops, how it died)
 *   candidate.c  the untrusted candidate process and the argument slots
 *                both sides compute alike
 *
 * Not a public interface: the job message itself is documented in
 * docs/protocol.md; the backend is avo_backend_cpu (backend.h).
 */
#ifndef AVO_CPU_JOB_H
#define AVO_CPU_JOB_H

#include <ffi.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/jobspec.h"

#define REPORT_FD 3       /* the judge's report pipe, as seen by the judge */
#define GUARD_MIN 64      /* canary bytes at least before each buffer */
#define DATA_ALIGN 64     /* alignment of every buffer handed to a kernel */
#define REGION_MAX_MB 256 /* shared argument slots of one config, at most */
#define COMPILE_MEMORY_MB 2048
#define COMPILE_FILE_MB 32 /* a kernel's object is tens of KiB */
#define CANDIDATE_FILE_MB 64

/* The candidate's fixed fds. */
enum { CAND_CMD_FD = 3, CAND_ACK_FD = 4, CAND_REGION_FD = 5, CAND_SO_FD = 6, CAND_SETUP_FD = 7 };

/* The shared part of a job (jobspec.h) and what only this backend reads. */
typedef struct cpu_job {
    avo_jobspec spec;
    const char **cflags; /* borrowed strings, owned array */
    size_t ncflags;
    double compile_memory_mb;
    const char *scratch; /* the candidate's /tmp on the host, where the sandbox has no view */
    /* A library baseline (cpulib.h): the linker flags that make the
     * candidate (its call adapter) need the library; the reference never. */
    const char *link[2];
    char link_file[PATH_MAX + 4];
    /* The evaluator's rule for libraries the kernel loads (libraries.h):
     * NULL, "allow", "forbid" or a list of file name prefixes; borrowed. */
    const json_t *libraries;
    /* The compiled yardstick (spec.ys_source), loaded by the judge; NULL: none. */
    const char *ys_so;
} cpu_job;

/* One compiled shared object, opened. */
typedef struct cpu_build {
    char path[PATH_MAX];
    int fd; /* O_RDONLY on the object whose bytes were checked; -1 */
    int cache_hit, repaired;
} cpu_build;

/*
 * Where each argument of config `cfg` lives in a slot, computed the same way
 * by judge and candidate: the slot starts with a guard page; each buffer's
 * data is DATA_ALIGN-aligned and ends at most DATA_ALIGN - 1 bytes before a
 * page end, with at least GUARD_MIN canary bytes before it, and is followed
 * by a guard page (PROT_NONE in the candidate), so an overrun faults or
 * breaks a canary, and every byte outside the data is checked.
 */
typedef struct slot_layout {
    size_t offset[AVO_JOBSPEC_MAX_ARGS]; /* of the data within the slot */
    size_t bytes[AVO_JOBSPEC_MAX_ARGS];
    size_t slot_bytes, page;
} slot_layout;

enum { CMD_LAYOUT = 1, CMD_CALL = 2, CMD_EXIT = 3 };

/* A command from judge to candidate; the answer is nonce + 1. */
typedef struct harness_cmd {
    uint64_t nonce;
    uint32_t op;
    int32_t config;
    uint64_t nslots;
} harness_cmd;

/* Startup answers of the candidate, before any command: on CAND_SETUP_FD
 * whether the sandbox is set up (SETUP_*, written and closed before the
 * kernel is loaded, so only our code ever holds it), then on CAND_ACK_FD
 * whether the kernel loaded (HELLO_*; a constructor could forge these, and
 * each is the candidate's failure or a plain start). */
enum { SETUP_DONE = 'R', SETUP_FAILED = 'E' };
enum { HELLO_READY = 'R', HELLO_LOAD_FAILED = 'L', HELLO_NO_SYMBOL = 'S' };

/* A kernel as libffi calls it: the real signature lives in the cif. */
typedef void (*kernel_fn)(void);

/* libffi's description of the kernel's signature. */
typedef struct call_sig {
    ffi_cif cif;
    ffi_type *types[AVO_JOBSPEC_MAX_ARGS];
} call_sig;

/* ---------------------------------------------------------------- compile.c */

/*
 * First line of `$CC --version`, computed once per process.  Returns a
 * static string, or NULL with err filled when the compiler cannot be run.
 */
const char *avo_cpu_compiler_version(char *err, size_t errlen);

/*
 * Compile `source` into the cache (base flags, evaluator cflags and, when
 * with_knobs, the job's knobs) or find it there.  On success returns 0 with
 * `out` set (out->fd open, the caller closes it).  On failure fills status,
 * reason and log of `result` ("compile_error", "timeout" or "error", and for
 * the reference "invalid" or "error") and returns -1.  `flags_text` (may be
 * NULL) receives the joined flag string whenever it could be built (caller
 * frees).
 */
int avo_cpu_compile(const cpu_job *job, const char *source, int with_knobs, const char *what,
                    cpu_build *out, char **flags_text, json_t *result);

/* A private directory <parent>/tmp-<key>-XXXXXX (a compile directory, or a
 * candidate's scratch), writable by the sandbox's uid `uid`; its path into
 * dir.  0 or a negative errno. */
int avo_cpu_private_dir(const char *parent, const char *key, uid_t uid, char *dir, size_t len);

/* Remove a directory tree; what cannot be removed is left. */
void avo_cpu_remove_tree(const char *dir);

/* -------------------------------------------------------------- candidate.c */

void avo_cpu_layout_compute(const avo_jobspec *spec, const avo_config_spec *cfg, slot_layout *l);

/* The config a command names: >= 0 a timed config, < 0 check config -1 - i. */
const avo_config_spec *avo_cpu_config_at(const avo_jobspec *spec, int32_t index);
int32_t avo_cpu_config_index(const avo_jobspec *spec, const avo_config_spec *cfg);

/* libffi's description of the job's kernel signature; 0 or -1. */
int avo_cpu_call_sig_init(const avo_jobspec *spec, call_sig *sig);

/* Call `fn` with scalars of `cfg` and buffers at `ptrs`. */
void avo_cpu_call_kernel(const avo_jobspec *spec, call_sig *sig, kernel_fn fn,
                         const avo_config_spec *cfg, void **ptrs);

/* Fork the candidate process (run as `uid`) with exactly its fds; returns
 * its pid, or -1.  *ret_maps_fd: its /proc/PID/maps, opened by the child
 * itself before it drops anything (so a judge without privileges may read
 * it later: eval/libraries.h), or -1. */
pid_t avo_cpu_candidate_start(const cpu_job *job, uid_t uid, int cmd_rd, int ack_wr, int region_fd,
                              int so_fd, int setup_wr, int *ret_maps_fd);

/* -------------------------------------------------------------------- pin.c */

/*
 * Pin the calling process (the judge, before it forks its candidate) to one
 * CPU it may run on that no other judge of this user holds: the CPU, with
 * *ret_fd the held lock (closed, or the process's exit, frees the CPU); -1
 * when none is free, AVO_CPU_PIN=0 or the lock directory cannot be used
 * (then nothing changed).
 */
int avo_cpu_pin(int *ret_fd);

/* ----------------------------------------------------------------- device.c */

/*
 * The judge process, after fork: moves `log_fd` to stdout and stderr,
 * `report_fd` to REPORT_FD and the candidate's object `so_fd` above it,
 * closes everything else, starts the candidate before anything of the
 * reference `ref_so` exists, then judges config by config, reporting as it
 * goes (framed messages, cpu.c).  Never returns.
 */
_Noreturn void avo_cpu_judge_main(const cpu_job *job, int log_fd, int report_fd, int so_fd,
                                  const char *ref_so);

#endif
