#!/bin/bash
# tests/containers/run.sh CASE — avo where researchers run it (issue 19, item 3).
#
# Runs tests/containers/inside.sh (the quickstart, short, and the integrity
# suite's sandbox attacks; see there what it asserts) in one of:
#   podman   a rootful Podman container of Debian 12's podman, as a user
#            starts one: an image imported from a minimal Debian root
#            (debootstrap --variant=minbase bookworm, the runtime libraries
#            of build/avo, gcc), Podman's default seccomp profile and
#            capabilities (no --privileged), --network none, runc;
#   rootless the same image in a rootless Podman container: started by a
#            user of its own (avo-rootless, created here with a subuid and
#            subgid range of 65,536 ids), so root inside is that user in a
#            user namespace mapping 65,537 ids, not the default sandbox
#            range; no AVO_SANDBOX_UID_BASE given: avo must pick its uids;
#   chroot   a chroot into that Debian root, whose / is not a mount point
#            (the root is a directory of an overlay mounted above it);
#   seccomp  this machine under a seccomp filter refusing new namespaces and
#            mounts, as container runtimes' default profiles do
#            (tests/sandbox/deny-namespaces.c, $DENY_NAMESPACES).
# The checkout and the build are mounted read-only at the same paths as
# outside (the build records its source directory); avo is built here, on
# the host. The Debian root (and the Podman image made of it) is cached
# under /var/tmp/avo-test-image, keyed by a hash of what it holds.
#
# Each case expects avo to record the sandbox in CT_EXPECT_<CASE> (below;
# AVO_CONTAINERS_EXPECT overrides) in every result. It skips (77), saying
# why, only when this machine cannot make the environment at all: podman
# chroot and rootless when not root, or podman / runc / debootstrap /
# unshare / newuidmap missing (tools/install-deps --tests installs them).
set -u
case_name=${1:-}
src=${AVO_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
avo=${AVO:-$src/build/avo}
build=$(cd "$(dirname "$avo")" && pwd)
here=$src/tests/containers

# The isolation avo must choose in each environment. In Podman, rootful or
# rootless, root lacks CAP_SYS_ADMIN but the default profile lets a user
# namespace through: the view is built in one where only the sandbox's uid
# exists. The filter refuses unshare and mount, and in a chroot / cannot be
# made private and the kernel refuses user namespaces: Landlock (Linux
# 5.13+) confines the filesystem instead.
CT_EXPECT_podman=namespaces
CT_EXPECT_rootless=namespaces
CT_EXPECT_chroot=landlock
CT_EXPECT_seccomp=landlock
CT_USER=avo-rootless

skip() {
    echo "containers $case_name: SKIP: $*" >&2
    exit 77
}
case $case_name in
    podman | rootless | chroot | seccomp) ;;
    *) echo "usage: tests/containers/run.sh podman|rootless|chroot|seccomp" >&2; exit 2 ;;
esac
expect_var=CT_EXPECT_$case_name
expect=${AVO_CONTAINERS_EXPECT:-${!expect_var}}
# A kernel that refuses user namespaces (user.max_user_namespaces=0) leaves
# root in a rootful container nothing but Landlock.
if [ "$case_name" = podman ] && [ -z "${AVO_CONTAINERS_EXPECT:-}" ] && ! unshare --user true 2>/dev/null; then
    expect=landlock
    echo "containers podman: this kernel refuses user namespaces: expecting landlock" >&2
fi
[ -x "$avo" ] || { echo "containers: $avo is not built" >&2; exit 1; }
. "$here/lib.sh"
if [ "$case_name" != seccomp ]; then
    [ "$(id -u)" = 0 ] || skip "needs root (a rootful container, a chroot, mounts); run as root"
    case $case_name in podman | rootless) why=$(ct_no_podman_here) && skip "$why" ;; esac
    # One run at a time builds the cached root and imports the image.
    mkdir -p "$CT_CACHE" && exec 9>"$CT_CACHE/.lock" && flock 9 || exit 1
fi

# The environment avo gets in every case: the test's knobs, nothing of the caller's.
# A uid range of each case's own: the chroot has its own /run, so its lock
# directory is not the host's, and no PID namespace keeps its reaping of a
# leased uid (eval/sandbox.h) from the host's sandboxes of the same uid.
# Rootless: none (its ids are the subuid range's; avo picks inside its map).
case $case_name in podman) uid_base=220000 ;; chroot) uid_base=230000 ;; *) uid_base=200000 ;; esac
uid_setting=(AVO_SANDBOX_UID_BASE=$uid_base)
[ "$case_name" = rootless ] && uid_setting=()
# seccomp runs here: where this namespace does not map the case's range (the
# suite itself in a rootless container, 65,536 ids), none is set and avo
# picks inside the map, as a user there gets.
if [ "$case_name" = seccomp ] && ! awk -v lo="$uid_base" -v n=1024 \
        '$1 <= lo && lo + n <= $1 + $3 { found = 1 } END { exit !found }' /proc/self/uid_map; then
    uid_setting=()
fi
inner_env=(AVO="$avo" AVO_SOURCE_ROOT="$src" ${uid_setting[@]+"${uid_setting[@]}"}
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    LC_ALL=C TMPDIR=/tmp AVO_CONTAINERS_INTEGRITY="${AVO_CONTAINERS_INTEGRITY:-}")
inner=(bash "$here/inside.sh" "$case_name" "$expect")
t0=$(date +%s)

case $case_name in
seccomp)
    deny=${DENY_NAMESPACES:-$build/tests/deny-namespaces}
    [ -x "$deny" ] || skip "$deny is not built (a build without libseccomp, -Dseccomp=disabled)"
    # The filter works: an unshare under it must fail.
    if "$deny" unshare --user --map-root-user true 2>/dev/null; then
        echo "containers seccomp: FAIL: unshare --user succeeded under $deny" >&2
        exit 1
    fi
    env -i "${inner_env[@]}" "$deny" "${inner[@]}"
    rc=$?
    ;;
chroot)
    for tool in debootstrap unshare chroot; do
        command -v "$tool" >/dev/null || skip "$tool is missing (tools/install-deps --tests installs it)"
    done
    # the chroot is made in a private mount namespace, which cannot be made
    # where / is no mount point (this suite itself running in a chroot)
    why=$(unshare --mount --propagation private true 2>&1) ||
        skip "no private mount namespace here for the chroot's mounts (unshare --mount: ${why:-failed}; / is no mount point in a chroot)"
    base=$(ct_root suite "$(ct_packages "$avo")") || exit $? # 77: no root can be built here
    exec 9>&-
    scratch=$(mktemp -d /var/tmp/avo-containers-chroot.XXXXXX) || exit 1
    trap 'rm -rf --one-file-system "$scratch"' EXIT
    mkdir -p "$scratch/upper" "$scratch/work" "$scratch/merged"
    # In a private mount namespace: the cached root, copy-on-write (an
    # overlay mounted at merged/, so merged/root itself is no mount point),
    # /proc, /dev, /sys and a /tmp as a chroot's user mounts them, and the
    # checkout and build read-only at their own paths.
    unshare --mount --propagation private -- /bin/bash -c '
        base=$1 s=$2 src=$3 build=$4
        shift 4
        mount -t overlay overlay -o "lowerdir=${base%/root},upperdir=$s/upper,workdir=$s/work" "$s/merged" ||
            exit 1
        r=$s/merged/root
        if mountpoint -q "$r"; then echo "containers chroot: $r is a mount point" >&2; exit 1; fi
        mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" && mount --rbind /sys "$r/sys" &&
            mount -t tmpfs -o mode=1777 tmpfs "$r/tmp" || exit 1
        dirs=("$src")
        case $build/ in "$src"/*) ;; *) dirs+=("$build") ;; esac
        for d in "${dirs[@]}"; do
            mkdir -p "$r$d" && mount --bind "$d" "$r$d" && mount -o remount,bind,ro "$r$d" || exit 1
        done
        exec chroot "$r" "$@"' chroot-case "$base" "$scratch" "$src" "$build" \
        /usr/bin/env -i "${inner_env[@]}" "${inner[@]}"
    rc=$?
    ;;
podman)
    for tool in podman runc debootstrap; do
        command -v "$tool" >/dev/null || skip "$tool is missing (tools/install-deps --tests installs podman runc debootstrap)"
    done
    base=$(ct_root suite "$(ct_packages "$avo")") || exit $? # 77: no root can be built here
    image=localhost/avo-test:$(basename "$(dirname "$base")")
    pm=(podman --storage-driver vfs)
    if ! "${pm[@]}" image exists "$image"; then
        echo "containers podman: importing $base as $image" >&2
        tar -C "$base" -c . | "${pm[@]}" import - "$image" >/dev/null ||
            { echo "containers podman: podman import failed" >&2; exit 1; }
    fi
    # Images of earlier roots are stale (their roots are gone).
    for stale in $("${pm[@]}" images --format '{{.Repository}}:{{.Tag}}' | grep '^localhost/avo-test:'); do
        [ "$stale" = "$image" ] || "${pm[@]}" rmi "$stale" >/dev/null 2>&1
    done
    exec 9>&-
    # runc: crun refuses hybrid cgroup hierarchies; the ulimits explicitly:
    # Podman's defaults (raised to the hard limits) are refused on some hosts.
    volumes=(-v "$src:$src:ro")
    case $build/ in "$src"/*) ;; *) volumes+=(-v "$build:$build:ro") ;; esac
    env_args=()
    for v in "${inner_env[@]}"; do env_args+=(--env "$v"); done
    "${pm[@]}" --runtime runc --cgroup-manager cgroupfs run --rm --network none \
        --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 "${volumes[@]}" "${env_args[@]}" \
        "$image" "${inner[@]}"
    rc=$?
    ;;
rootless)
    for tool in podman runc debootstrap newuidmap newgidmap runuser; do
        command -v "$tool" >/dev/null || skip "$tool is missing (tools/install-deps --tests installs podman runc debootstrap uidmap)"
    done
    base=$(ct_root suite "$(ct_packages "$avo")") || exit $? # 77: no root can be built here
    # The user, its subordinate ids (a range of its own, far from every
    # sandbox range) and its own Podman storage.
    if ! id "$CT_USER" >/dev/null 2>&1; then
        useradd --create-home --shell /bin/bash "$CT_USER" || { echo "containers rootless: useradd failed" >&2; exit 1; }
    fi
    grep -q "^$CT_USER:" /etc/subuid 2>/dev/null ||
        usermod --add-subuids 1500000000-1500065535 --add-subgids 1500000000-1500065535 "$CT_USER" ||
        { echo "containers rootless: cannot give $CT_USER subordinate ids" >&2; exit 1; }
    runuser -u "$CT_USER" -- unshare --user true 2>/dev/null ||
        skip "this kernel refuses $CT_USER a user namespace (user.max_user_namespaces, kernel.unprivileged_userns_clone or AppArmor): rootless Podman needs one"
    # Podman binds the checkout and the build as the user: each directory on
    # the way must let it through (a checkout under /root does not).
    for d in "$src" "$build"; do
        blocked=
        p=
        for part in $(echo "${d#/}" | tr / ' '); do
            p=$p/$part
            runuser -u "$CT_USER" -- test -x "$p" || { blocked=$p; break; }
        done
        [ -z "$blocked" ] || skip "$CT_USER cannot reach $d: $blocked is $(stat -c '%A %U:%G' "$blocked"), closed to other users; rootless Podman binds the checkout as that user (clone it where every user can read, as /srv or /home)"
    done
    home=$(getent passwd "$CT_USER" | cut -d: -f6)
    uid=$(id -u "$CT_USER")
    rt=/tmp/avo-rootless-run-$uid
    mkdir -p "$rt" && chown "$CT_USER" "$rt" && chmod 700 "$rt"
    as_user=(runuser -u "$CT_USER" -- env -i HOME="$home" USER="$CT_USER" XDG_RUNTIME_DIR="$rt"
        PATH=/usr/sbin:/usr/bin:/sbin:/bin podman --storage-driver vfs)
    image=localhost/avo-test:$(basename "$(dirname "$base")")
    if ! (cd / && "${as_user[@]}" image exists "$image"); then
        echo "containers rootless: importing $base as $image for $CT_USER" >&2
        tar -C "$base" -c . | (cd / && "${as_user[@]}" import - "$image" >/dev/null) ||
            { echo "containers rootless: podman import failed" >&2; exit 1; }
    fi
    for stale in $(cd / && "${as_user[@]}" images --format '{{.Repository}}:{{.Tag}}' | grep '^localhost/avo-test:'); do
        [ "$stale" = "$image" ] || (cd / && "${as_user[@]}" rmi "$stale" >/dev/null 2>&1)
    done
    exec 9>&-
    volumes=(-v "$src:$src:ro")
    case $build/ in "$src"/*) ;; *) volumes+=(-v "$build:$build:ro") ;; esac
    env_args=()
    for v in "${inner_env[@]}"; do env_args+=(--env "$v"); done
    (cd / && "${as_user[@]}" --runtime runc --cgroup-manager cgroupfs run --rm --network none \
        --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 "${volumes[@]}" \
        "${env_args[@]}" "$image" "${inner[@]}")
    rc=$?
    ;;
esac
echo "containers $case_name: exit $rc after $(($(date +%s) - t0)) s"
exit $rc
