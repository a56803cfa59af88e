/*
 * deny-namespaces — run a command the way a container runtime's default
 * seccomp profile (Docker, Podman) would: no new namespaces, no mounts.
 *
 * Usage:  deny-namespaces [--no-landlock] COMMAND [ARG...]
 *
 * Installs a seccomp filter, inherited by COMMAND and all its children,
 * that fails with EPERM: unshare, setns, mount, umount2, pivot_root,
 * mount_setattr, open_tree, move_mount, fsopen, fsmount, fspick, and
 * clone with any CLONE_NEW* flag; clone3 fails with ENOSYS (as Docker's
 * profile does: its flags live in memory seccomp cannot read, and glibc
 * falls back to clone).  With --no-landlock the landlock_* calls fail
 * with ENOSYS too, as on a kernel without Landlock (or an older runtime's
 * profile that does not know them).  Then execs COMMAND.  Exits 126 when the filter
 * cannot be installed, 127 when COMMAND cannot be run.
 *
 * Built by tests/meson.build as tests/deny-namespaces in the build tree;
 * the sandbox fallback tests (tests/sandbox) and the container suite
 * (tests/containers) use it to make avo's sandbox meet a machine where
 * user namespaces and mounts are refused.
 */
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Every namespace flag clone(2) takes. */
#define NEW_NAMESPACE_FLAGS                                                                        \
    (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |     \
     CLONE_NEWCGROUP)

static const char *const denied[] = {"unshare",    "setns",         "mount",     "umount2",
                                     "pivot_root", "mount_setattr", "open_tree", "move_mount",
                                     "fsopen",     "fsmount",       "fspick",    NULL};

int main(int argc, char **argv)
{
    int no_landlock = argc > 1 && !strcmp(argv[1], "--no-landlock");
    if (no_landlock)
        argv++, argc--;
    if (argc < 2) {
        fprintf(stderr, "usage: deny-namespaces [--no-landlock] COMMAND [ARG...]\n");
        return 2;
    }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) {
        fprintf(stderr, "deny-namespaces: seccomp_init failed\n");
        return 126;
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && denied[i]; i++) {
        int nr = seccomp_syscall_resolve_name(denied[i]);
        if (nr != __NR_SCMP_ERROR)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
    }
    /* clone's flags are its first argument on x86-64 and arm64; one rule
     * per flag, as a masked compare tests equality, not "any bit set". */
    for (unsigned long flag = 1; rc == 0 && flag; flag <<= 1) {
        if (!(flag & NEW_NAMESPACE_FLAGS))
            continue;
        const struct scmp_arg_cmp has_flag = {
            .arg = 0, .op = SCMP_CMP_MASKED_EQ, .datum_a = flag, .datum_b = flag};
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, has_flag);
    }
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    static const char *const landlock[] = {"landlock_create_ruleset", "landlock_add_rule",
                                           "landlock_restrict_self", NULL};
    for (size_t i = 0; rc == 0 && no_landlock && landlock[i]; i++) {
        int nr = seccomp_syscall_resolve_name(landlock[i]);
        if (nr != __NR_SCMP_ERROR)
            rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
    }
    /* Without no_new_privs only a privileged process may install a filter. */
    if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        rc = -errno;
    if (rc == 0)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc < 0) {
        fprintf(stderr, "deny-namespaces: cannot install the filter: %s\n", strerror(-rc));
        return 126;
    }
    execvp(argv[1], argv + 1);
    fprintf(stderr, "deny-namespaces: %s: %s\n", argv[1], strerror(errno));
    return 127;
}
