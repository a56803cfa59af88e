# tests/containers/lib.sh — sourced by the containers suite (tests/containers)
# and tools/fresh-debian-check: a minimal Debian 12 root made by debootstrap
# (--variant=minbase, the host's apt mirror), cached between runs because
# debootstrap takes minutes.
#
# The host-built avo runs inside these roots from the bind-mounted checkout,
# so a root for the suite holds the runtime libraries avo links (ldd
# build/avo), the C compiler its CPU backend calls, and what the integrity
# suite drives its attacks with (sqlite3, python3, GNU time), and OpenBLAS
# (the quickstart's baseline; the vendor_openblas attack dlopens it).

# Runtime packages of a root that runs the host's build/avo and the tests:
# the tools below, plus (ct_packages) the packages of every library avo links.
CT_TOOLS="gcc libc6-dev sqlite3 python3 time procps libopenblas0"
CT_SUITE=bookworm
CT_CACHE=${AVO_TEST_IMAGE_CACHE:-/var/tmp/avo-test-image}

# ct_packages AVO: CT_TOOLS and the Debian packages holding the shared
# libraries the binary AVO links (ldd; dpkg -S, with or without /usr on a
# merged-/usr system), so a new dependency of avo needs no edit here.
ct_packages() {
    local lib pkgs=$CT_TOOLS
    for lib in $(ldd "$1" | awk '/=>/ {print $3}'); do
        pkgs+=" $( { dpkg -S "$lib" || dpkg -S "/usr$lib" || dpkg -S "${lib#/usr}"; } 2>/dev/null |
            head -n 1 | cut -d: -f1)"
    done
    echo $pkgs
}

# ct_mirror: the Debian mirror the host's apt uses (the first deb.debian.org
# style URI of its sources), for debootstrap; the container has no network.
ct_mirror() {
    local uri
    uri=$(grep -hE '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list \
        /etc/apt/sources.list 2>/dev/null | grep -v security |
        sed -E 's/^URIs:[[:space:]]*//; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//' |
        awk '{print $1}' | grep -E '/debian/?$' | head -n 1)
    echo "${uri:-http://deb.debian.org/debian}"
}

# ct_copy_apt_config ROOT: the host's apt sources and apt.conf.d snippets
# (a proxy, the mirror's date checks) into ROOT, so apt inside it reaches the
# same mirror the host does. Only enabled sources of Debian itself are copied.
ct_copy_apt_config() {
    local root=$1 f
    mkdir -p "$root/etc/apt/sources.list.d" "$root/etc/apt/apt.conf.d"
    for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] && grep -q 'debian' "$f" && ! grep -q 'nodesource\|google' "$f" &&
            cp "$f" "$root/etc/apt/sources.list.d/"
    done
    if ls "$root/etc/apt/sources.list.d/"* >/dev/null 2>&1; then
        rm -f "$root/etc/apt/sources.list"
    fi
    for f in /etc/apt/apt.conf.d/*; do
        [ -f "$f" ] && grep -qiE 'proxy|Check-Valid-Until|Check-Date' "$f" &&
            cp "$f" "$root/etc/apt/apt.conf.d/"
    done
    return 0
}

# ct_root NAME PACKAGES: prints the path of a cached Debian root holding
# PACKAGES (debootstrap --variant=minbase --include), building it when the
# cache has none for this (suite, mirror, package list). Progress goes to
# stderr; returns non-zero (with the reason on stderr) if it cannot be built,
# 77 where this place cannot build one at all: debootstrap makes device
# nodes in the root, which a container without CAP_MKNOD (rootful Podman's
# default) or a nodev mount refuses.
ct_root() {
    local name=$1 pkgs key dir tmp mirror
    pkgs=$(echo $2 | tr ' ' '\n' | sort -u | tr '\n' ',' | sed 's/,$//')
    mirror=$(ct_mirror)
    key=$(printf '%s\n' "v1" "$CT_SUITE" "$mirror" "$pkgs" | sha256sum | cut -c1-16)
    dir=$CT_CACHE/$name-$key
    if [ -f "$dir/.complete" ]; then
        echo "$dir/root"
        return 0
    fi
    command -v debootstrap >/dev/null || { echo "debootstrap is missing (apt-get install debootstrap)" >&2; return 1; }
    mkdir -p "$CT_CACHE" || return 1
    local probe=$CT_CACHE/.mknod-probe.$$ why
    if ! why=$({ mknod "$probe" c 1 3 && echo probe >"$probe"; } 2>&1); then
        rm -f "$probe"
        echo "containers: SKIP: device nodes cannot be made or used under $CT_CACHE" \
            "(${why:-mknod failed}): debootstrap cannot build a Debian root here" >&2
        return 77
    fi
    rm -f "$probe"
    tmp=$(mktemp -d "$CT_CACHE/.$name-$key.XXXXXX") || return 1
    echo "containers: debootstrap --variant=minbase $CT_SUITE from $mirror into $tmp (minutes; cached afterwards)" >&2
    if ! debootstrap --variant=minbase ${pkgs:+--include="$pkgs"} "$CT_SUITE" "$tmp/root" "$mirror" \
        >"$tmp/debootstrap.log" 2>&1; then
        echo "containers: debootstrap failed; the end of its log:" >&2
        tail -n 20 "$tmp/debootstrap.log" >&2
        rm -rf "$tmp"
        return 1
    fi
    ct_copy_apt_config "$tmp/root"
    touch "$tmp/.complete"
    # Another run may have finished the same root meanwhile: keep the first.
    if ! mv -T "$tmp" "$dir" 2>/dev/null; then
        rm -rf "$tmp"
        [ -f "$dir/.complete" ] || { echo "containers: cannot move the root into $dir" >&2; return 1; }
    fi
    # Roots of earlier package lists are stale: one of each name is kept.
    local stale
    for stale in "$CT_CACHE/$name"-*; do
        [ "$stale" = "$dir" ] || rm -rf --one-file-system "$stale"
    done
    echo "$dir/root"
}

# ct_no_podman_here: why this place cannot start Podman containers (printed),
# or nothing (status 1) where it can: a plain chroot ("/" is no mount point:
# Podman's runtime cannot pivot out of it). A skip is never taken on the CI
# machine (.ci/allowed-skips), where Podman works.
ct_no_podman_here() {
    if ! mountpoint -q / 2>/dev/null && [ "$(stat -c %d:%i /)" != "$(stat -c %d:%i /proc/1/root/. 2>/dev/null)" ]; then
        echo "this is a plain chroot (/ is no mount point): Podman cannot start containers in it; run this test on the machine itself"
        return 0
    fi
    return 1
}
