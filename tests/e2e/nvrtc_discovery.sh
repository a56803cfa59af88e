#!/bin/sh
# Where avo finds NVRTC (eval/cuda/cuda_api.c), first to last: $AVO_NVRTC (that
# file and nothing else), a toolkit (the loader's path, $CUDA_HOME/lib64,
# $CUDA_PATH/lib64, /usr/local/cuda/lib64), NVIDIA's pip wheels
# ($AVO_CUDA_WHEELS, default /opt/avo/cuda-wheels, at nvidia/cu13/lib); and
# the CUDA headers: beside the NVRTC taken, $CUDA_HOME/include,
# /usr/local/cuda/include, the wheels' nvidia/cu13/include.  A fake libnvrtc
# (tests/mock/libnvrtc_fake.c, version 99.1) is put in each place and
# `avo doctor` must name the right copy and where it came from.
#
# The toolkit places are tested in a mount namespace where a tmpfs hides the
# machine's /usr/local/cuda (needs root or user namespaces).  There, with no
# toolkit in sight, the real wheels that `tools/install-deps --tests`
# installs must be taken, compile a kernel that includes cuda_bf16.h and
# mma.h, and tests/e2e/cuda_no_driver.sh must hold with them and with no
# NVRTC at all.
. "$(dirname "$0")/lib.sh"
unset AVO_NVRTC CUDA_HOME CUDA_PATH AVO_CUDA_WHEELS LD_LIBRARY_PATH
fake=$AVO_MOCK_CUDA_DIR/libnvrtc_fake.so
[ -f "$fake" ] || fail "the fake NVRTC was not built: $fake"
loader="a toolkit in the loader's path (LD_LIBRARY_PATH, ld.so.cache)"

mk_nvrtc() { mkdir -p "$1" && cp "$fake" "$1/libnvrtc.so.13"; }
mk_headers() { mkdir -p "$1" && : >"$1/cuda_fp16.h" && : >"$1/cuda_bf16.h"; }
# doctor [VAR=VALUE...]: avo doctor in that environment, into $tmp/doctor
doctor() { env "$@" "$AVO" doctor >"$tmp/doctor" 2>&1 || { cat "$tmp/doctor"; fail "avo doctor exited $?"; }; }
# expect_nvrtc PATH SOURCE HEADERS [VAR=VALUE...]: in that environment
# doctor takes the NVRTC at PATH, found in SOURCE, and the headers in HEADERS
expect_nvrtc() {
    want_path=$1 want_source=$2 want_headers=$3
    shift 3
    doctor "$@"
    expect_in "$tmp/doctor" "NVRTC           99.1 ($want_path; from $want_source)"
    expect_in "$tmp/doctor" "  headers       $want_headers (cuda_fp16.h, cuda_bf16.h"
}

if [ "${1:-}" != toolkit-hidden ]; then
    t=$tmp
    mk_nvrtc "$t/explicit/lib" && mk_headers "$t/explicit/include"
    mk_nvrtc "$t/ld" && mk_nvrtc "$t/home/lib64" && mk_headers "$t/home/include"
    mk_nvrtc "$t/path/lib64" && mk_nvrtc "$t/wheels/nvidia/cu13/lib"
    mk_headers "$t/wheels/nvidia/cu13/include"

    # 1. $AVO_NVRTC before everything else; the headers beside it
    expect_nvrtc "$t/explicit/lib/libnvrtc.so.13" '$AVO_NVRTC' "$t/explicit/include" \
        AVO_NVRTC=$t/explicit/lib/libnvrtc.so.13 LD_LIBRARY_PATH=$t/ld CUDA_HOME=$t/home \
        CUDA_PATH=$t/path AVO_CUDA_WHEELS=$t/wheels

    # 2. an $AVO_NVRTC that does not work is an error, never another NVRTC
    echo "not a library" >"$t/text.so"
    for bad in "$t/nosuch.so" "$t/text.so"; do
        doctor AVO_NVRTC=$bad LD_LIBRARY_PATH=$t/ld CUDA_HOME=$t/home
        expect_in "$tmp/doctor" "NVRTC           MISSING: cannot load \$AVO_NVRTC ($bad): "
        expect_in "$tmp/doctor" "or name the library in AVO_NVRTC"
    done
    doctor AVO_NVRTC=$AVO_MOCK_CUDA_DIR/libcuda.so.1 CUDA_HOME=$t/home
    expect_in "$tmp/doctor" "NVRTC           MISSING: libnvrtc: the CUDA library has no nvrtcGetErrorString"
    doctor AVO_FAKE_NVRTC_BROKEN=1 AVO_NVRTC=$t/explicit/lib/libnvrtc.so.13 CUDA_HOME=$t/home
    expect_in "$tmp/doctor" "NVRTC           MISSING: $t/explicit/lib/libnvrtc.so.13 (from \$AVO_NVRTC) does not work: nvrtcVersion returned 11"
    # ... and a compile says so too
    set +e
    env AVO_NVRTC=$t/nosuch.so CUDA_HOME=$t/home "$AVO" eval tests/e2e/kernels/cuda_vadd.cu \
        --evaluator tests/e2e/evaluators/cuda_vadd.lua --compile-only --arch sm_90 >"$tmp/out" 2>&1
    rc=$?
    set -e
    [ $rc != 0 ] || { cat "$tmp/out"; fail "a compile with a missing \$AVO_NVRTC succeeded"; }
    expect_in "$tmp/out" "cannot load \$AVO_NVRTC ($t/nosuch.so)"

    # 3. the loader's path before $CUDA_HOME; headers beside it, else $CUDA_HOME's
    expect_nvrtc "$t/ld/libnvrtc.so.13" "$loader" "$t/home/include" \
        LD_LIBRARY_PATH=$t/ld CUDA_HOME=$t/home AVO_CUDA_WHEELS=$t/wheels

    # 4.- the rest with the machine's toolkit hidden: a tmpfs over the folder
    # /usr/local/cuda leads to (or over /usr/local where there is none, to
    # make a fake /usr/local/cuda in), in a mount namespace of our own.
    hide=/usr/local
    [ -e /usr/local/cuda ] && hide=$(readlink -f /usr/local/cuda)
    ns="unshare -m"
    [ "$(id -u)" = 0 ] || ns="unshare -rm"
    if ! $ns sh -c 'mount -t tmpfs avo-no-toolkit "$1"' sh "$hide" >"$tmp/ns" 2>&1; then
        echo "skip: cannot hide the CUDA toolkit in a mount namespace ($ns: $(cat "$tmp/ns")); checks 1-3 passed"
        exit 77
    fi
    set +e
    env FAKES="$t" $ns sh -c 'mount -t tmpfs avo-no-toolkit "$1" && exec sh "$2" toolkit-hidden' \
        sh "$hide" "$0"
    rc=$?
    set -e
    [ $rc = 0 ] || exit $rc
    echo "nvrtc_discovery: ok"
    exit 0
fi

# ---- inside the namespace: /usr/local/cuda is an empty tmpfs (or missing)
t=$FAKES
mkdir -p /usr/local/cuda
[ -z "$(ls -A /usr/local/cuda)" ] || fail "the toolkit is not hidden: $(ls /usr/local/cuda)"
# nothing else offers an NVRTC (Debian's nvidia-cuda-toolkit would, in the loader's path)
doctor AVO_CUDA_WHEELS=$t/none
grep -q "^NVRTC *MISSING: cannot load libnvrtc (tried" "$tmp/doctor" ||
    fail "an NVRTC outside /usr/local/cuda is in sight: $(grep -A1 '^NVRTC' "$tmp/doctor")"
expect_in "$tmp/doctor" "/usr/local/cuda/lib64 and the pip wheels in $t/none/nvidia/cu13/lib); install NVIDIA's NVRTC wheels (tools/install-deps --tests)"
mk_nvrtc /usr/local/cuda/lib64 && mk_headers /usr/local/cuda/include

# 4. $CUDA_HOME before $CUDA_PATH, /usr/local/cuda and the wheels
expect_nvrtc "$t/home/lib64/libnvrtc.so.13" 'the toolkit in $CUDA_HOME' "$t/home/include" \
    CUDA_HOME=$t/home CUDA_PATH=$t/path AVO_CUDA_WHEELS=$t/wheels
# 5. $CUDA_PATH (no headers beside it: /usr/local/cuda's)
expect_nvrtc "$t/path/lib64/libnvrtc.so.13" 'the toolkit in $CUDA_PATH' /usr/local/cuda/include \
    CUDA_PATH=$t/path AVO_CUDA_WHEELS=$t/wheels
# 6. /usr/local/cuda before the wheels
expect_nvrtc /usr/local/cuda/lib64/libnvrtc.so.13 "the toolkit in /usr/local/cuda" \
    /usr/local/cuda/include AVO_CUDA_WHEELS=$t/wheels
# 7. the wheels when there is no toolkit; headers from the wheels
rm -rf /usr/local/cuda/lib64 /usr/local/cuda/include
expect_nvrtc "$t/wheels/nvidia/cu13/lib/libnvrtc.so.13" "the pip wheels in $t/wheels" \
    "$t/wheels/nvidia/cu13/include" AVO_CUDA_WHEELS=$t/wheels
# 8. an NVRTC without headers anywhere: doctor says where it looked
doctor AVO_NVRTC=$t/ld/libnvrtc.so.13 AVO_CUDA_WHEELS=$t/none
expect_in "$tmp/doctor" "  headers       MISSING: the CUDA headers cuda_fp16.h and cuda_bf16.h are in none of $t/include, /usr/local/cuda/include, $t/none/nvidia/cu13/include"

# 9. the real wheels in their default place, and nothing else
wheels=/opt/avo/cuda-wheels
if [ ! -e $wheels/nvidia/cu13/lib/libnvrtc.so.13 ]; then
    echo "skip: NVIDIA's NVRTC wheels are not in $wheels (tools/install-deps --tests installs them); checks 1-8 passed"
    exit 77
fi
doctor
expect_in "$tmp/doctor" "($wheels/nvidia/cu13/lib/libnvrtc.so.13; from the pip wheels in $wheels)"
expect_in "$tmp/doctor" "  headers       $wheels/nvidia/cu13/include (cuda_fp16.h"
grep -q "^NVRTC  *13\." "$tmp/doctor" || fail "the wheels' NVRTC: $(grep '^NVRTC' "$tmp/doctor")"
# a tensor-core kernel (cuda_bf16.h, mma.h) compiles afresh with them alone
expect_exit 0 env AVO_CACHE="$tmp/cache" "$AVO" eval kernels/cuda/gemm_wmma.cu \
    --evaluator cuda/gemm_bf16_tc --compile-only --arch sm_90a
expect_in "$tmp/out" "gemm_bf16_tc: ok (compile only, sm_90a, NVRTC 13."
expect_in "$tmp/out" "($wheels/nvidia/cu13/lib/libnvrtc.so.13)"
# without a driver, a CUDA evaluation is an infrastructure fault with the
# wheels (no driver) and without any NVRTC (no NVRTC)
if grep -q "^driver *MISSING" "$tmp/doctor"; then
    expect_exit 0 sh tests/e2e/cuda_no_driver.sh
    expect_in "$tmp/out" "cuda_no_driver: ok (no NVIDIA driver)"
    expect_exit 0 env AVO_CUDA_WHEELS="$t/none" sh tests/e2e/cuda_no_driver.sh
    expect_in "$tmp/out" "cuda_no_driver: ok (cannot load libnvrtc)"
else
    echo "note: this machine has an NVIDIA driver; cuda_no_driver is not run without the toolkit"
fi
