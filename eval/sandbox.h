/*
 * sandbox.h — isolation for the processes that run untrusted code: the
 * candidate kernel's process and the compiler that builds it
 * (docs/threat-model.md).
 *
 * The sandbox takes the strongest mechanism the machine allows, chosen
 * once per process (avo_sandbox_select) and recorded in every result:
 *   - "namespaces": a mount view of its own (below), an empty network
 *     namespace, an IPC namespace; root builds the view then drops to a
 *     uid of the sandbox's own (avo_sandbox_uid_acquire), anyone else does it in a user
 *     namespace of its own.  Root that may not mount (a container without
 *     CAP_SYS_ADMIN) builds it in a user namespace where only that uid
 *     exists (mapped to itself by a helper that stays root outside), then
 *     drops to it.  Refused in a plain chroot ("/" is no mount point),
 *     under a seccomp profile refusing unshare, and where unprivileged user
 *     namespaces are disabled (sysctl, AppArmor).
 *   - "landlock": no namespace and no mount; Landlock confines the
 *     filesystem to the system directories (read, execute), /dev/null and
 *     the binds at their host paths (writable ones writable), and where the
 *     kernel's ABI allows, TCP, signals and abstract sockets to the process's
 *     own domain.  Root still drops to the sandbox uid.
 *   - "unisolated": nothing isolates the filesystem: the uid (when root
 *     started avo), seccomp and rlimits only.  Never chosen by itself.
 * Every mechanism adds: no capabilities, no_new_privs, not dumpable, rlimits
 * on CPU time, address space, file size, open files, processes, no core
 * dumps; a seccomp filter (profile below); a fixed minimal environment.
 * The namespace view: read-only system directories (/usr, /lib*, /bin,
 * /sbin, /etc/alternatives, /etc/ld.so.cache), /dev/null, a small private
 * tmpfs at /tmp, and the directories the caller binds; no /proc, no home,
 * no compile cache, no archive.
 *
 * AVO_SANDBOX (environment of the engine): unset or "auto" takes namespaces,
 * else landlock, and refuses to run kernels where neither works;
 * "namespaces", "landlock" or "unisolated" forces that one (an error where
 * the machine lacks it); "weak" (deprecated) is auto falling back to
 * unisolated.
 *
 * Trusted processes (worker, judge) use avo_sandbox_harden and
 * avo_sandbox_seccomp_trusted: not dumpable (an unprivileged process cannot
 * open their /proc/PID/mem), no_new_privs, and a filter against debugging
 * other processes and reconfiguring the system.
 */
#ifndef AVO_SANDBOX_H
#define AVO_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

/* What the process will run: decides the seccomp profile. */
typedef enum avo_sandbox_profile {
    AVO_SANDBOX_CANDIDATE, /* a kernel: no exec, no fork, threads only if allowed */
    AVO_SANDBOX_COMPILER,  /* a compiler driver: exec and fork allowed */
} avo_sandbox_profile;

#define AVO_SANDBOX_MAX_BINDS 8

/* A directory made visible inside the sandbox. */
typedef struct avo_sandbox_bind {
    const char *source; /* host directory */
    const char *target; /* absolute path inside the view */
    int writable;
} avo_sandbox_bind;

/* How a process is isolated, strongest first. */
typedef enum avo_sandbox_mechanism {
    AVO_SANDBOX_NAMESPACES,
    AVO_SANDBOX_LANDLOCK,
    AVO_SANDBOX_UNISOLATED,
    AVO_SANDBOX_NMECHANISMS
} avo_sandbox_mechanism;

/*
 * Paths: under namespaces a bind's source is seen at its target; the other
 * mechanisms have no view, so the process sees the source where it lies,
 * its working directory is chdir_to resolved through the binds (a target,
 * or a path below one, becomes the source), and it has no private /tmp:
 * TMPDIR and HOME are then "." when the working directory is a writable
 * bind.  A caller that needs a scratch directory binds one (writable) and
 * makes it chdir_to.  Relative paths (the compiler's "kernel.c", "-o
 * kernel.so") and $TMPDIR work the same under every mechanism.
 */
typedef struct avo_sandbox_opts {
    avo_sandbox_profile profile;
    const avo_sandbox_bind *binds;
    size_t nbinds;
    const char *chdir_to; /* a view path (see above); NULL: "/" */
    double cpu_s;         /* RLIMIT_CPU; 0: none */
    double memory_mb;     /* RLIMIT_AS; 0: none */
    double file_mb;       /* RLIMIT_FSIZE and the size of /tmp */
    int nofile;           /* RLIMIT_NOFILE */
    int threads;          /* candidate: kernel threads allowed (1: the caller's only) */
    int nproc;            /* compiler: processes allowed */
    uid_t uid;            /* root: the uid to run as (avo_sandbox_uid_acquire); 0: avo_sandbox_uid() */
} avo_sandbox_opts;

/*
 * Enter the sandbox described by `opts`, in a freshly forked child that
 * holds no fds it must not keep (the caller closes them first).  Order:
 * drop to the unprivileged uid, new namespaces, mount view, capabilities
 * dropped, rlimits, no_new_privs, not dumpable, environment replaced, seccomp.
 * Under landlock and unisolated: binds opened, uid dropped, Landlock,
 * working directory, then the same from the capabilities on.
 * Returns 0 with the process sandboxed, or a negative AVO_E* code with err
 * filled (also when no mechanism may be used: avo_sandbox_mechanism); the
 * caller must then _exit, since the process is half set up.
 */
int avo_sandbox_enter(const avo_sandbox_opts *opts, char *err, size_t errlen);

/* The uid of a sandbox without a lease: AVO_SANDBOX_UID, else 65534. */
uid_t avo_sandbox_uid(void);

/*
 * The mechanism avo_sandbox_enter uses in this process: AVO_SANDBOX, and
 * what the machine offers, probed on the first call (a throwaway child tries
 * the namespace view; Landlock's ABI is asked) and remembered.  Returns 0
 * with *ret set, or a negative AVO_E* code with err saying what is missing,
 * how to enable it and how to opt in to unisolated.
 */
int avo_sandbox_select(avo_sandbox_mechanism *ret, char *err, size_t errlen);

/* "namespaces", "landlock", "unisolated" (static strings). */
const char *avo_sandbox_mechanism_name(avo_sandbox_mechanism m);

/* NULL when the machine offers `m`, else why not (probed once; the string
 * lives as long as the process). */
const char *avo_sandbox_unavailable(avo_sandbox_mechanism m);

/* How the namespaces mechanism is entered in this process (probed with
 * it): root mounting the view, root in a user namespace of the sandbox's
 * uid (root of a container without CAP_SYS_ADMIN), or anyone else's user
 * namespace.  A static sentence. */
const char *avo_sandbox_view_way(void);

/* How to enable `m` where it is missing (a static sentence). */
const char *avo_sandbox_remedy(avo_sandbox_mechanism m);

/*
 * The choice itself, without probing (for tests): `setting` is AVO_SANDBOX
 * (NULL: unset), available[m] and why[m] what the machine offers and, where
 * not, why.  Returns 0 with *ret set, or AVO_EINVAL (a forced mechanism the
 * machine lacks, an unknown name) or AVO_EIO (nothing isolates and no
 * opt-in) with err filled.
 */
int avo_sandbox_choose(const char *setting, const int available[AVO_SANDBOX_NMECHANISMS],
                       const char *const why[AVO_SANDBOX_NMECHANISMS], avo_sandbox_mechanism *ret,
                       char *err, size_t errlen);

/* A uid held for one sandbox (its processes and the directories it writes). */
typedef struct avo_sandbox_lease {
    uid_t uid;
    int fd; /* the lock that holds it, or -1 */
} avo_sandbox_lease;

/*
 * Take a uid of its own for one sandbox, so concurrent candidates and
 * compilers cannot signal, renice or limit each other or the trusted
 * processes.  Started as root: the first free uid of AVO_SANDBOX_UID_BASE
 * (default 200000) .. + AVO_SANDBOX_UID_COUNT (default 1024), held by an
 * flock on AVO_SANDBOX_LOCK_DIR/<uid> (default /run/avo-sandbox; in a chroot without /run,
 * /var/lib/avo-sandbox or /tmp/avo-sandbox-locks; root's only) until avo_sandbox_uid_release or the holder's exit; every process
 * an earlier holder left behind in that uid is killed first, so the range
 * must be avo's alone; a range set outside the user namespace's uid map is
 * an error naming these settings, the default range outside it gives way to
 * one avo picks (avo_sandbox_uids).  With
 * AVO_SANDBOX_UID set, that one uid for all (no lock).  Not root: the
 * caller's uid (a user namespace of its own, no lock).  The holder (the
 * judge, the worker for a compile) must outlive the sandbox.  Returns 0 or
 * a negative AVO_E* code with err filled (AVO_EBUSY: every uid in use).
 */
int avo_sandbox_uid_acquire(avo_sandbox_lease *lease, char *err, size_t errlen);

/* The uids avo_sandbox_uid_acquire hands out here. */
typedef struct avo_sandbox_uid_plan {
    long base, count; /* uids [base, base + count) */
    int shared;       /* one uid every sandbox shares (no lease) */
    int picked;       /* chosen by avo: the default range is not mapped here */
    char how[256];    /* where they come from, in words */
} avo_sandbox_uid_plan;

/*
 * The plan, from the same settings and maps avo_sandbox_uid_acquire reads
 * (so `avo doctor` names the uids an evaluation uses).  Not root: the
 * caller's uid.  AVO_SANDBOX_UID: that one, shared.  AVO_SANDBOX_UID_BASE
 * or _COUNT: that range, an error where the user namespace does not map it.
 * Else the default range where it is mapped (as uids and gids); where not
 * (root of a rootless container: 65,536 ids), the highest run of up to
 * AVO_SANDBOX_UID_COUNT ids inside the maps that no account of /etc/passwd
 * or /etc/group names, avoiding 0..999 and 61184..65535 (systemd's dynamic
 * users, nobody); with fewer than 8 such ids, every sandbox shares nobody
 * (65534), saying so.  The choice depends only on the maps and the account
 * files, so every process of a run makes the same one.  Returns 0 or a
 * negative AVO_E* code with err filled.
 */
int avo_sandbox_uids(avo_sandbox_uid_plan *ret, char *err, size_t errlen);

/* The pick itself (for tests): a run of at most `want` ids mapped in both
 * maps' texts (as /proc/self/uid_map; NULL: every id) and in neither
 * `used` nor the reserved ids above, the first of `want` from the top, else
 * the longest.  Returns its length (0: none) with *ret_base its first id. */
long avo_sandbox_uid_range_pick(const char *uid_map, const char *gid_map, const long *used,
                                size_t nused, long want, long *ret_base);
void avo_sandbox_uid_release(avo_sandbox_lease *lease);


/*
 * Why this process (a sandbox, after its uid dropped) may not execute
 * `prog` (a path, or a name looked up in $PATH): the first directory on the
 * way it cannot enter, or the file it cannot execute, with its mode, owner
 * and what to change, into buf.  Returns 1 with buf filled, 0 when no such
 * cause is found.  For the message of an exec that failed with EACCES.
 */
int avo_sandbox_explain_exec(const char *prog, char *buf, size_t len);

/* Trusted processes: not dumpable, no_new_privs, no core files.  Idempotent. */
void avo_sandbox_harden(void);

/*
 * A seccomp filter for trusted processes that hold the verdict (judge) or
 * the engine channel (worker): no ptrace or cross-process memory access, no
 * mounts, namespaces, module loading, kexec, bpf or keyrings.  With
 * `no_exec`, execve and new processes are refused too (the judge, once it
 * has started its candidate).  Returns 0 or a negative code with err filled.
 */
int avo_sandbox_seccomp_trusted(int no_exec, char *err, size_t errlen);

/*
 * True when environment variable `entry` ("NAME=value") may reach worker
 * processes.  An allow-list: PATH, HOME, USER, LOGNAME, LANG, TZ, TMPDIR,
 * XDG_CACHE_HOME, CC, LD_LIBRARY_PATH, the sanitizers' options, avo's worker
 * settings by name (AVO_SANDBOX*, AVO_CACHE*, AVO_CUDA_DEVICE,
 * AVO_NVRTC_EXEC, AVO_CUBLASLT, AVO_CUDNN, AVO_DB_TIMEOUT), and LC_*, CUDA_*,
 * NVIDIA_*, SLURM_*, AVO_MOCK_*, AVO_EMU_* (the test suite's CUDA doubles)
 * unless the name holds KEY, TOKEN, SECRET, PASSWORD,
 * PASSWD, CREDENTIAL or AUTH.  Anything else (API keys, AVO_LLM_*,
 * AVO_WORKER_SECRET) never reaches a worker.
 */
int avo_sandbox_env_allowed(const char *entry);

/* The allowed part of the environment, as an execve envp: a NULL-ended
 * array (caller frees it, not its strings, which are environ's), or NULL
 * when out of memory.  Built before fork, for the exec of a worker. */
char **avo_sandbox_env_allowlist(void);

/*
 * Remove from the environment, and wipe from memory, every variable that is
 * not allowed (avo_sandbox_env_allowed): a worker does this first, so the
 * engine's credentials exist nowhere in the memory its kernels' processes
 * fork from.
 */
void avo_sandbox_scrub_environment(void);

/* A secret the process holds (a worker's transport key): cleared in each
 * judge before it forks a candidate (avo_sandbox_scrub_secrets).  At most 4;
 * the memory must stay valid. */
void avo_sandbox_register_secret(void *p, size_t n);
void avo_sandbox_scrub_secrets(void);

#endif
