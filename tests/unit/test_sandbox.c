/*
 * test_sandbox.c — the sandbox's choice of mechanism and what each one
 * confines.
 *
 * The choice (avo_sandbox_choose) is tested on every combination of what a
 * machine offers and what AVO_SANDBOX says.  Then a child enters each
 * mechanism this machine offers with a writable and a read-only bind, and
 * reports what it could do: under landlock it writes only its writable
 * bind, reads the read-only one and the system directories, and can read
 * neither a world-readable file outside its binds (a stand-in for the
 * archive) nor /etc/passwd; its working directory is the writable bind
 * resolved to its host path, and TMPDIR is ".".  Under unisolated the same
 * file outside is readable (which is why it is never chosen by itself).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/avo.h"
#include "check.h"
#include "eval/sandbox.h"

static void test_choose(void)
{
    char err[AVO_ERRLEN];
    avo_sandbox_mechanism m;
    const int all[3] = {1, 1, 1}, no_ns[3] = {0, 1, 1}, none[3] = {0, 0, 1};
    const char *why_all[3] = {NULL, NULL, NULL};
    const char *why_no_ns[3] = {"unsharing namespaces failed: EPERM", NULL, NULL};
    const char *why_none[3] = {"unsharing namespaces failed: EPERM", "no Landlock here", NULL};

    /* unset and auto: the strongest */
    CHECK_INT(avo_sandbox_choose(NULL, all, why_all, &m, err, sizeof err), 0);
    CHECK_INT(m, AVO_SANDBOX_NAMESPACES);
    CHECK_INT(avo_sandbox_choose("", no_ns, why_no_ns, &m, err, sizeof err), 0);
    CHECK_INT(m, AVO_SANDBOX_LANDLOCK);
    CHECK_INT(avo_sandbox_choose("auto", no_ns, why_no_ns, &m, err, sizeof err), 0);
    CHECK_INT(m, AVO_SANDBOX_LANDLOCK);

    /* nothing isolates: refused, saying what is missing and how to opt in */
    m = AVO_SANDBOX_NMECHANISMS;
    CHECK_INT(avo_sandbox_choose(NULL, none, why_none, &m, err, sizeof err), AVO_EIO);
    CHECK_INT(m, AVO_SANDBOX_NMECHANISMS);
    CHECK_CONTAINS(err, "refusing to run untrusted kernels");
    CHECK_CONTAINS(err, "unsharing namespaces failed: EPERM");
    CHECK_CONTAINS(err, "no Landlock here");
    CHECK_CONTAINS(err, "AVO_SANDBOX=unisolated");
    CHECK_CONTAINS(err, "user.max_user_namespaces");
    CHECK_INT(avo_sandbox_choose("auto", none, why_none, &m, err, sizeof err), AVO_EIO);

    /* the opt-in, and weak: its deprecated alias that still prefers isolation */
    CHECK_INT(avo_sandbox_choose("unisolated", none, why_none, &m, err, sizeof err), 0);
    CHECK_INT(m, AVO_SANDBOX_UNISOLATED);
    CHECK_INT(avo_sandbox_choose("weak", none, why_none, &m, err, sizeof err), 0);
    CHECK_INT(m, AVO_SANDBOX_UNISOLATED);
    CHECK_INT(avo_sandbox_choose("weak", no_ns, why_no_ns, &m, err, sizeof err), 0);
    CHECK_INT(m, AVO_SANDBOX_LANDLOCK);
    CHECK_INT(avo_sandbox_choose("weak", all, why_all, &m, err, sizeof err), 0);
    CHECK_INT(m, AVO_SANDBOX_NAMESPACES);

    /* forced: exactly that one, even when a stronger one exists */
    CHECK_INT(avo_sandbox_choose("landlock", all, why_all, &m, err, sizeof err), 0);
    CHECK_INT(m, AVO_SANDBOX_LANDLOCK);
    CHECK_INT(avo_sandbox_choose("unisolated", all, why_all, &m, err, sizeof err), 0);
    CHECK_INT(m, AVO_SANDBOX_UNISOLATED);
    CHECK_INT(avo_sandbox_choose("namespaces", all, why_all, &m, err, sizeof err), 0);
    CHECK_INT(m, AVO_SANDBOX_NAMESPACES);

    /* forced but missing: an error naming it, why, and how to enable it */
    CHECK_INT(avo_sandbox_choose("namespaces", no_ns, why_no_ns, &m, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "AVO_SANDBOX=namespaces, but this machine does not offer it");
    CHECK_CONTAINS(err, "unsharing namespaces failed: EPERM");
    CHECK_CONTAINS(err, "to enable it");
    CHECK_INT(avo_sandbox_choose("landlock", none, why_none, &m, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "no Landlock here");
    CHECK_CONTAINS(err, "CONFIG_SECURITY_LANDLOCK");

    /* not a mechanism */
    CHECK_INT(avo_sandbox_choose("strict", all, why_all, &m, err, sizeof err), AVO_EINVAL);
    CHECK_CONTAINS(err, "AVO_SANDBOX=strict is not a sandbox mechanism");

    CHECK_STR(avo_sandbox_mechanism_name(AVO_SANDBOX_NAMESPACES), "namespaces");
    CHECK_STR(avo_sandbox_mechanism_name(AVO_SANDBOX_LANDLOCK), "landlock");
    CHECK_STR(avo_sandbox_mechanism_name(AVO_SANDBOX_UNISOLATED), "unisolated");
}

/* The machine's answers: unisolated is always there; the probe is asked
 * once, so a second question gives the very same answer. */
static void test_probe(void)
{
    CHECK(avo_sandbox_unavailable(AVO_SANDBOX_UNISOLATED) == NULL);
    for (int m = 0; m < AVO_SANDBOX_UNISOLATED; m++) {
        const char *why = avo_sandbox_unavailable((avo_sandbox_mechanism)m);
        CHECK(avo_sandbox_unavailable((avo_sandbox_mechanism)m) == why);
        printf("probe: %s %s%s\n", avo_sandbox_mechanism_name((avo_sandbox_mechanism)m),
               why ? "missing: " : "available", why ? why : "");
    }
    char err[AVO_ERRLEN];
    avo_sandbox_mechanism m;
    setenv("AVO_SANDBOX", "unisolated", 1);
    CHECK_INT(avo_sandbox_select(&m, err, sizeof err), 0);
    CHECK_INT(m, AVO_SANDBOX_UNISOLATED);
    setenv("AVO_SANDBOX", "bogus", 1);
    CHECK_INT(avo_sandbox_select(&m, err, sizeof err), AVO_EINVAL);
    unsetenv("AVO_SANDBOX");
}

/* The scratch tree the confinement tests use (all world-readable, as the
 * sandbox's uid must be kept out by the mechanism, not by file modes). */
static char root[PATH_MAX], writable[PATH_MAX + 8], readonly[PATH_MAX + 8], outside[PATH_MAX + 16];

static void make_tree(void)
{
    snprintf(root, sizeof root, "/tmp/avo-test-sandbox-XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    chmod(root, 0755);
    snprintf(writable, sizeof writable, "%s/rw", root);
    snprintf(readonly, sizeof readonly, "%s/ro", root);
    snprintf(outside, sizeof outside, "%s/archive.db", root);
    CHECK_INT(mkdir(writable, 0777), 0);
    chmod(writable, 0777);
    CHECK_INT(mkdir(readonly, 0755), 0);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/header.h", readonly);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("#define X 1\n", f);
        fclose(f);
    }
    f = fopen(outside, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("the archive\n", f);
        fclose(f);
    }
    chmod(outside, 0666);
}

/* 1 if `path` can be opened with `flags`, else 0. */
static int can_open(const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC, 0644);
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
}

/* What a process sandboxed with `mechanism` can do, as a string of 0/1:
 * write its cwd, TMPDIR is ".", read the read-only bind, write the
 * read-only bind, read /usr, read the file outside, write beside it,
 * read /etc/passwd, write /tmp.  "" if the child failed to report. */
static void confined(const char *mechanism, char *ret, size_t len)
{
    int pipefd[2];
    ret[0] = '\0';
    if (pipe(pipefd) < 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        setenv("AVO_SANDBOX", mechanism, 1);
        avo_sandbox_bind binds[2] = {{.source = writable, .target = "/build", .writable = 1},
                                     {.source = readonly, .target = "/include"}};
        avo_sandbox_opts box = {.profile = AVO_SANDBOX_COMPILER,
                                .binds = binds,
                                .nbinds = 2,
                                .chdir_to = "/build",
                                .file_mb = 16,
                                .nofile = 64,
                                .nproc = 8};
        char err[AVO_ERRLEN];
        if (avo_sandbox_enter(&box, err, sizeof err) < 0) {
            dprintf(pipefd[1], "enter failed: %s", err);
            _exit(1);
        }
        /* Paths as the process sees them: the view's under namespaces,
         * the host's otherwise. */
        int view = !strcmp(mechanism, "namespaces");
        char ro_file[PATH_MAX + 32], beside[PATH_MAX + 32];
        snprintf(ro_file, sizeof ro_file, "%s/header.h", view ? "/include" : readonly);
        snprintf(beside, sizeof beside, "%s/new-file", root);
        const char *tmp = getenv("TMPDIR");
        char out[16];
        int n = 0;
        out[n++] = '0' + can_open("written-here", O_WRONLY | O_CREAT);
        out[n++] = '0' + (tmp && !strcmp(tmp, view ? "/tmp" : "."));
        out[n++] = '0' + can_open(ro_file, O_RDONLY);
        out[n++] = '0' + can_open(ro_file, O_WRONLY);
        out[n++] = '0' + can_open("/usr/include/stdio.h", O_RDONLY);
        out[n++] = '0' + can_open(outside, O_RDONLY);
        out[n++] = '0' + can_open(beside, O_WRONLY | O_CREAT);
        out[n++] = '0' + can_open("/etc/passwd", O_RDONLY);
        out[n++] = '0' + can_open("/tmp/avo-test-sandbox-escape", O_WRONLY | O_CREAT);
        out[n] = '\0';
        if (write(pipefd[1], out, (size_t)n) < 0)
            _exit(2);
        _exit(0);
    }
    close(pipefd[1]);
    ssize_t n = pid > 0 ? read(pipefd[0], ret, len - 1) : -1;
    ret[n > 0 ? n : 0] = '\0';
    close(pipefd[0]);
    int status;
    if (pid > 0)
        waitpid(pid, &status, 0);
    unlink("/tmp/avo-test-sandbox-escape");
}

static void test_confinement(void)
{
    make_tree();
    char got[AVO_ERRLEN];
    char path[PATH_MAX + 32];
    /* One digit per question of confined(), in its order: cwd writable,
     * TMPDIR, read-only bind read, written, /usr, the file outside, a new
     * file beside it, /etc/passwd, /tmp written. */
    if (!avo_sandbox_unavailable(AVO_SANDBOX_LANDLOCK)) {
        confined("landlock", got, sizeof got);
        CHECK_STR(got, "111010000");
        snprintf(path, sizeof path, "%s/written-here", writable);
        CHECK_INT(access(path, F_OK), 0); /* the cwd was the bind's host path */
        snprintf(path, sizeof path, "%s/new-file", root);
        CHECK(access(path, F_OK) < 0);
    } else {
        printf("landlock: not on this machine (%s); its confinement is not tested here\n",
               avo_sandbox_unavailable(AVO_SANDBOX_LANDLOCK));
    }
    if (!avo_sandbox_unavailable(AVO_SANDBOX_NAMESPACES)) {
        confined("namespaces", got, sizeof got);
        /* the view has no /etc/passwd and a private /tmp */
        CHECK_STR(got, "111010001");
    } else {
        printf("namespaces: not on this machine (%s); not tested here\n",
               avo_sandbox_unavailable(AVO_SANDBOX_NAMESPACES));
    }
    /* unisolated: the binds still resolve, but the file outside is open
     * to it (what the docs' table says: nothing confines the filesystem) */
    confined("unisolated", got, sizeof got);
    CHECK_INT(strlen(got), 9);
    CHECK(got[0] == '1' && got[1] == '1' && got[2] == '1' && got[5] == '1');
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    CHECK_INT(system(cmd), 0);
}

/* The uid range root's sandboxes take where the default one is not mapped
 * (a rootless container's 65,536 ids): inside both maps, clear of the
 * accounts, the system range and 61184..65535, the highest first. */
static void test_uid_pick(void)
{
    long base = -1;
    const long accounts[] = {0, 1, 2, 100, 1000, 1001, 65534};
    /* A rootless container: ids 0..65535. */
    const char *rootless = "         0       1000          1\n         1     100000      65535\n";
    CHECK_INT(avo_sandbox_uid_range_pick(rootless, rootless, accounts, 7, 1024, &base), 1024);
    CHECK_INT(base, 61184 - 1024);
    /* An account in the way: the run below it. */
    const long in_way[] = {0, 60500};
    CHECK_INT(avo_sandbox_uid_range_pick(rootless, rootless, in_way, 2, 1024, &base), 1024);
    CHECK_INT(base, 60500 - 1024);
    /* Ids mapped as uids but not as gids are not taken. */
    CHECK_INT(avo_sandbox_uid_range_pick(rootless, "0 0 50000\n", accounts, 7, 1024, &base), 1024);
    CHECK_INT(base, 50000 - 1024);
    /* Too few free ids for the whole count: the longest run. */
    CHECK_INT(avo_sandbox_uid_range_pick("0 0 1010\n", "0 0 1010\n", accounts, 7, 1024, &base), 8);
    CHECK_INT(base, 1002);
    /* Only root and the reserved ids: nothing. */
    CHECK_INT(avo_sandbox_uid_range_pick("0 0 1\n", "0 0 1\n", NULL, 0, 1024, &base), 0);
    CHECK_INT(avo_sandbox_uid_range_pick("0 0 1000\n", "0 0 1000\n", NULL, 0, 16, &base), 0);
    /* Several extents: the first (in map order) with room wins. */
    CHECK_INT(avo_sandbox_uid_range_pick("0 0 1\n70000 500000 100000\n",
                                         "0 0 1\n70000 500000 100000\n", NULL, 0, 1024, &base),
              1024);
    CHECK_INT(base, 170000 - 1024);

    /* The plan as root in the initial namespace: the default range, or the
     * one the settings name; not root: the caller's uid. */
    avo_sandbox_uid_plan plan;
    char err[AVO_ERRLEN];
    unsetenv("AVO_SANDBOX_UID");
    unsetenv("AVO_SANDBOX_UID_BASE");
    unsetenv("AVO_SANDBOX_UID_COUNT");
    CHECK_INT(avo_sandbox_uids(&plan, err, sizeof err), 0);
    if (geteuid() == 0) {
        char map[256] = "";
        FILE *f = fopen("/proc/self/uid_map", "r");
        if (f) {
            if (!fgets(map, sizeof map, f))
                map[0] = '\0';
            fclose(f);
        }
        if (strstr(map, "4294967295")) { /* the initial namespace */
            CHECK_INT(plan.base, 200000);
            CHECK_INT(plan.count, 1024);
            CHECK_INT(plan.picked, 0);
        }
        setenv("AVO_SANDBOX_UID", "65534", 1);
        CHECK_INT(avo_sandbox_uids(&plan, err, sizeof err), 0);
        CHECK_INT(plan.base, 65534);
        CHECK_INT(plan.shared, 1);
        unsetenv("AVO_SANDBOX_UID");
    } else {
        CHECK_INT(plan.base, getuid());
        CHECK_INT(plan.count, 1);
    }
}

int main(void)
{
    test_choose();
    test_uid_pick();
    test_probe();
    test_confinement();
    return check_finish();
}
