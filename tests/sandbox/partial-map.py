#!/usr/bin/env python3
"""partial-map.py COUNT [--no-mount] -- COMMAND...: run COMMAND as root of a
new user namespace that maps ids 0..COUNT-1 (uids and gids) to the same ids
outside, as a rootless container maps its 65,536 ids.  Started by root (who
may write any map); with --no-mount the capabilities the kernel gives root
there lose CAP_SYS_ADMIN (from the bounding set, before exec), as root of a
rootful container lacks it.  Exits with COMMAND's status; 77 when the kernel
refuses user namespaces."""
import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000
PR_CAPBSET_DROP = 24
CAP_SYS_ADMIN = 21


def identity_map(parent, count):
    """Ids 0..count-1 mapped to themselves, one line per extent of our own
    map they fall in: the kernel maps each line into one extent of the
    parent's, and a rootless container's root is an extent of its own (0 ->
    the user's uid, 1.. -> the subuid range)."""
    lines = []
    with open(parent) as f:
        for row in f:
            inside, _, n = (int(x) for x in row.split())
            lo, hi = max(inside, 0), min(inside + n, count)
            if lo < hi:
                lines.append(f"{lo} {lo} {hi - lo}\n")
    return "".join(lines)


def main():
    args = sys.argv[1:]
    count = int(args.pop(0))
    no_mount = args and args[0] == "--no-mount"
    if no_mount:
        args.pop(0)
    if args and args[0] == "--":
        args.pop(0)
    libc = ctypes.CDLL(None, use_errno=True)
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(go_w)
        if libc.unshare(CLONE_NEWUSER) != 0:
            e = ctypes.get_errno()
            print(f"partial-map: SKIP: unshare(CLONE_NEWUSER): {os.strerror(e)}", file=sys.stderr)
            os._exit(77)
        os.write(ready_w, b"u")
        if os.read(go_r, 1) != b"g":
            os._exit(1)
        os.setresgid(0, 0, 0)
        os.setresuid(0, 0, 0)
        if no_mount and libc.prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) != 0:
            print("partial-map: cannot drop CAP_SYS_ADMIN", file=sys.stderr)
            os._exit(1)
        os.execvp(args[0], args)
    os.close(ready_w)
    os.close(go_r)
    if os.read(ready_r, 1) == b"u":
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{pid}/{name}", "w") as f:
                f.write(identity_map(f"/proc/self/{name}", count))
        os.write(go_w, b"g")
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))


main()
