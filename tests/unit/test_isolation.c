/*
 * test_isolation.c — the parts of eval/sandbox.c that keep candidates apart
 * (issue 18): the environment allow-list a worker is exec'd with; the uid
 * leases (root only: distinct uids side by side, AVO_EBUSY when all are
 * taken, a released uid taken again with what its holder left killed, a
 * lock directory others can write refused); and the seccomp rules against
 * reaching another process, checked from inside a sandboxed child, for
 * the candidate and the compiler profile.
 */
#include "avo_config.h"
#include "eval/sandbox.h"

#include "core/avo.h"

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void test_env_allowed(void)
{
    static const char *const allowed[] = {"PATH=/usr/bin", "HOME=/root", "LC_ALL=C",
                                          "LANG=C.UTF-8", "CC=gcc", "CUDA_VISIBLE_DEVICES=0,1",
                                          "NVIDIA_VISIBLE_DEVICES=all", "AVO_CACHE=/c",
                                          "AVO_SANDBOX=weak", "AVO_CUDA_DEVICE=1",
                                          "SLURM_LOCALID=0", "TMPDIR=/tmp", NULL};
    static const char *const denied[] = {"OPENAI_API_KEY=sk-1", "AVO_LLM_API_KEY=sk-2",
                                         "ANTHROPIC_API_KEY=x", "AVO_WORKER_SECRET=abc",
                                         "AVO_WORKER_SECRET_FILE=/s", "AVO_LLM_BASE_URL=http://x",
                                         "CUDA_AUTH_TOKEN=t", "SLURM_JOB_SECRET=s",
                                         "NVIDIA_API_KEY=k", "GITHUB_TOKEN=g",
                                         "AVO_TEST_SLOW_MS=1", "RANDOM_THING=1",
                                         "PATH", "AVO_CACHE_EXTRA=1", NULL};
    for (size_t i = 0; allowed[i]; i++)
        if (!avo_sandbox_env_allowed(allowed[i])) {
            fprintf(stderr, "FAIL: %s refused\n", allowed[i]);
            check_failures++;
        }
    for (size_t i = 0; denied[i]; i++)
        if (avo_sandbox_env_allowed(denied[i])) {
            fprintf(stderr, "FAIL: %s allowed\n", denied[i]);
            check_failures++;
        }

    setenv("OPENAI_API_KEY", "sk-test-secret", 1);
    setenv("LC_TEST_SANDBOX", "kept", 1);
    char **env = avo_sandbox_env_allowlist();
    CHECK(env != NULL);
    int kept = 0, leaked = 0;
    for (size_t i = 0; env && env[i]; i++) {
        kept += !strcmp(env[i], "LC_TEST_SANDBOX=kept");
        leaked += strstr(env[i], "sk-test-secret") != NULL;
    }
    CHECK_INT(kept, 1);
    CHECK_INT(leaked, 0);
    free(env);
    unsetenv("OPENAI_API_KEY");
    unsetenv("LC_TEST_SANDBOX");
}

static void read_map(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Whether ids [id, id + n) lie inside one extent of a map's text
 * ("inside outside count" lines). */
static int map_holds(const char *map, long id, long n)
{
    long inside, outside, count;
    int used;
    while (sscanf(map, "%ld %ld %ld%n", &inside, &outside, &count, &used) == 3) {
        if (id >= inside && id + n <= inside + count)
            return 1;
        map += used;
    }
    return 0;
}

/* Two leasable uids: 310000 where this user namespace maps it (a host),
 * else two inside /proc/self/uid_map (a rootless container maps 65,536),
 * picked as the sandbox picks its range there; -1 when there are none. */
static long lease_base(void)
{
    char umap[4096], gmap[4096];
    read_map("/proc/self/uid_map", umap, sizeof umap);
    read_map("/proc/self/gid_map", gmap, sizeof gmap);
    if (map_holds(umap, 310000, 2) && map_holds(gmap, 310000, 2))
        return 310000;
    long base = -1;
    if (avo_sandbox_uid_range_pick(umap, gmap, NULL, 0, 2, &base) != 2)
        return -1;
    return base;
}

static void test_leases(void)
{
    char err[AVO_ERRLEN];
    avo_sandbox_lease a, b, c;
    if (geteuid() != 0) {
        CHECK_INT(avo_sandbox_uid_acquire(&a, err, sizeof err), 0);
        CHECK_INT(a.uid, getuid());
        CHECK_INT(a.fd, -1);
        return;
    }
    char dir[] = "/tmp/avo-test-leases-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    setenv("AVO_SANDBOX_LOCK_DIR", dir, 1);
    long base = lease_base();
    if (base < 0) {
        fprintf(stderr, "test_leases: no two free ids in /proc/self/uid_map: leases not checked\n");
        rmdir(dir);
        return;
    }
    char base_text[32];
    snprintf(base_text, sizeof base_text, "%ld", base);
    setenv("AVO_SANDBOX_UID_BASE", base_text, 1);
    setenv("AVO_SANDBOX_UID_COUNT", "2", 1);
    CHECK_INT(avo_sandbox_uid_acquire(&a, err, sizeof err), 0);
    CHECK_INT(avo_sandbox_uid_acquire(&b, err, sizeof err), 0);
    CHECK(a.uid != b.uid);
    CHECK(a.uid >= base && a.uid < base + 2 && b.uid >= base && b.uid < base + 2);
    CHECK_INT(avo_sandbox_uid_acquire(&c, err, sizeof err), AVO_EBUSY);

    /* A process left behind in a's uid dies when the uid is taken again. */
    uid_t left_uid = a.uid;
    pid_t left = fork();
    if (left == 0) {
        close(a.fd); /* a lock is held while any copy of its fd is open */
        close(b.fd);
        if (setresgid(left_uid, left_uid, left_uid) < 0 || setresuid(left_uid, left_uid, left_uid) < 0)
            _exit(1);
        pause();
        _exit(0);
    }
    usleep(100 * 1000);
    avo_sandbox_uid_release(&a);
    CHECK_INT(a.fd, -1);
    CHECK_INT(avo_sandbox_uid_acquire(&c, err, sizeof err), 0);
    CHECK_INT(c.uid, left_uid);
    int status = 0;
    CHECK_INT(waitpid(left, &status, 0), left);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    avo_sandbox_uid_release(&b);
    avo_sandbox_uid_release(&c);

    /* A fixed uid: no lock, the same for all. */
    setenv("AVO_SANDBOX_UID", "65534", 1);
    CHECK_INT(avo_sandbox_uid_acquire(&a, err, sizeof err), 0);
    CHECK_INT(a.uid, 65534);
    CHECK_INT(a.fd, -1);
    unsetenv("AVO_SANDBOX_UID");

    /* A lock directory anyone can write is refused. */
    chmod(dir, 0777);
    CHECK(avo_sandbox_uid_acquire(&a, err, sizeof err) < 0);
    CHECK(strstr(err, "only root can write") != NULL);
    unsetenv("AVO_SANDBOX_LOCK_DIR");
    unsetenv("AVO_SANDBOX_UID_BASE");
    unsetenv("AVO_SANDBOX_UID_COUNT");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_INT(system(cmd), 0);
}

/* In a child: enter a sandbox of `profile`, try each call on the parent;
 * returns a mask with bit i set when call i was NOT refused with EPERM
 * (the last two bits: calls about itself that must still work), or -1. */
static int probe(avo_sandbox_profile profile)
{
    pid_t parent = getpid();
    int out[2];
    if (pipe(out) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(out[0]);
        char err[AVO_ERRLEN];
        avo_sandbox_opts box = {.profile = profile, .nofile = 64, .threads = 1, .nproc = 8};
        if (avo_sandbox_enter(&box, err, sizeof err) < 0) {
            fprintf(stderr, "sandbox: %s\n", err);
            _exit(255);
        }
        int bad = 0, bit = 0;
        int p[2];
        if (pipe(p) < 0)
            _exit(254);
#define REFUSED(call) (bad |= ((call) == -1 && errno == EPERM ? 0 : 1) << bit++)
        REFUSED(fcntl(p[0], F_SETOWN, parent));
        REFUSED(syscall(SYS_fcntl, p[0], (1UL << 32) | F_SETOWN, parent));
        struct f_owner_ex ex = {F_OWNER_PID, parent};
        REFUSED(fcntl(p[0], F_SETOWN_EX, &ex));
        REFUSED(fcntl(p[0], F_SETSIG, SIGKILL));
        REFUSED(fcntl(p[0], F_SETFL, O_ASYNC | O_NONBLOCK));
        int id = parent, on = 1;
        REFUSED(ioctl(p[0], FIOSETOWN, &id));
        REFUSED(ioctl(p[0], FIOASYNC, &on));
        struct rlimit lim;
        REFUSED(syscall(SYS_prlimit64, parent, RLIMIT_NOFILE, NULL, &lim));
        REFUSED(syscall(SYS_pidfd_open, parent, 0));
        REFUSED(syscall(SYS_kcmp, getpid(), parent, 0, 0, 0));
        REFUSED(setpriority(PRIO_PROCESS, 0, 0));
        REFUSED(syscall(SYS_ioprio_set, 1, 0, 0));
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(0, &set);
        REFUSED(sched_setaffinity(parent, sizeof set, &set));
        /* still allowed: about itself */
        bad |= (fcntl(p[0], F_SETFL, O_NONBLOCK) == 0 ? 0 : 1) << bit++;
        bad |= (getrlimit(RLIMIT_NOFILE, &lim) == 0 && setrlimit(RLIMIT_NOFILE, &lim) == 0 ? 0 : 1)
               << bit++;
        _exit(write(out[1], &bad, sizeof bad) == sizeof bad ? 0 : 253);
    }
    close(out[1]);
    int bad = -1;
    if (read(out[0], &bad, sizeof bad) != sizeof bad)
        bad = -1;
    close(out[0]);
    waitpid(pid, NULL, 0);
    return bad;
}

int main(void)
{
    test_env_allowed();
    test_leases();
#if AVO_HAVE_SECCOMP
    setenv("AVO_SANDBOX", "weak", 1); /* the filter is under test, not the namespaces */
    int cand = probe(AVO_SANDBOX_CANDIDATE);
    int comp = probe(AVO_SANDBOX_COMPILER);
    CHECK_INT(cand, 0);
    CHECK_INT(comp, 0);
#endif
    return check_finish();
}
