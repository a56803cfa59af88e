#!/bin/sh
# A candidate process killed from outside (SIGKILL from another process:
# a user, the OOM killer) is not its fault: the job runs once more in a
# fresh judge and kernel process and that verdict stands; killed again, it
# is charged `crashed`.  A kernel cannot buy itself that retry: SIGKILL and
# SIGTERM to itself, and a CPU-time limit of its own (whose end is SIGKILL),
# are refused by its seccomp filter, so a kernel that tries them dies by
# its own fault (here SIGSEGV) and is charged at once (docs/threat-model.md).
. "$(dirname "$0")/lib.sh"
chmod 755 "$tmp" # the kernel's objects are read by a sandbox uid
export AVO_CACHE="$tmp/cache"
cat >"$tmp/slow.c" <<'C'
#include <stdint.h>
#include <time.h>
void axpy(int32_t n, float a, const float *x, const float *y, float *out)
{
    struct timespec t = {0, 150000000L}; /* slow enough to be killed mid-call */
    nanosleep(&t, NULL);
    for (int32_t i = 0; i < n; i++)
        out[i] = a * x[i] + y[i];
}
C
cat >"$tmp/selfkill.c" <<'C'
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
void axpy(int32_t n, float a, const float *x, const float *y, float *out)
{
    /* Every way to die by SIGKILL or SIGTERM of its own doing. */
    kill(getpid(), SIGKILL);
    kill(0, SIGKILL);
    syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGKILL);
    syscall(SYS_tkill, (pid_t)syscall(SYS_gettid), SIGTERM);
    raise(SIGTERM);
    struct rlimit cpu = {1, 1};
    setrlimit(RLIMIT_CPU, &cpu);
    clock_t start = clock();
    while (clock() - start < CLOCKS_PER_SEC * 3 / 2) /* past a 1 s CPU limit */
        ;
    /* Still alive: it dies by its own fault. */
    *(volatile int *)0 = 1;
    for (int32_t i = 0; i < n; i++)
        out[i] = a * x[i] + y[i];
}
C
sed -e "s|tests/e2e/kernels/axpy_ref.c|$AVO_SOURCE_ROOT/tests/e2e/kernels/axpy_ref.c|" \
    -e 's|timeout = 3,|timeout = 60,|' \
    -e "s|kernel = \"tests/e2e/kernels/axpy.c\"|kernel = \"$tmp/slow.c\"|" \
    tests/e2e/evaluators/axpy.lua >"$tmp/slow.lua"
export EVALUATOR="$tmp/slow.lua"
# Compiled once here, so no compiler process runs (and is taken for the
# kernel's) in the runs below.
expect_exit 0 "$AVO" eval "$tmp/slow.c" --evaluator "$tmp/slow.lua"

# candidate_of ROOT: the pid of the kernel process under ROOT (a descendant
# named as avo's binary at least 3 levels down: engine, worker, judge,
# kernel), once one exists; not the one in $2 (already killed)
candidate_of() {
    for _ in $(seq 600); do
        p=$1 depth=0
        while c=$(pgrep -P "$p" | head -n1) && [ -n "$c" ]; do
            p=$c depth=$((depth + 1))
        done
        if [ $depth -ge 3 ] && [ "$p" != "${2:-}" ] &&
           [ "$(ps -o comm= -p "$p" 2>/dev/null)" = "$(basename "$AVO" | cut -c1-15)" ]; then
            echo "$p"
            return 0
        fi
        sleep 0.05
    done
    return 1
}

# run_killing DB TIMES: the slow kernel's run; its kernel process is killed
# from outside TIMES times (each time the next fresh one)
run_killing() {
    KERNEL="$tmp/slow.c" "$AVO" run tests/faults/outside_kill.lua --db "$1" --jobs 1 \
        >"$1.out" 2>"$1.err" &
    engine=$!
    last=""
    for _ in $(seq "$2"); do
        c=$(candidate_of $engine "$last") || { cat "$1.err"; fail "no kernel process seen"; }
        sleep 0.3 # in a call
        kill -9 "$c"
        last=$c
    done
    set +e
    wait $engine
    rc=$?
    set -e
}

# Killed once: retried, and the retry's verdict (ok) stands.
run_killing "$tmp/once.db" 1
[ $rc = 0 ] || { cat "$tmp/once.db.err"; fail "killed once: the run exited $rc"; }
grep -q '^record ok ' "$tmp/once.db.out" || { cat "$tmp/once.db.out" "$tmp/once.db.err"; fail "killed once: not ok after the retry"; }
[ "$(q "$tmp/once.db" "SELECT status FROM candidates")" = ok ] || fail "killed once: archive status"
[ "$(q "$tmp/once.db" "SELECT json_extract(result, '\$.retried.reason') LIKE 'killed by SIGKILL%from outside%' FROM candidates")" = 1 ] ||
    fail "killed once: the result does not say it was retried: $(q "$tmp/once.db" "SELECT result FROM candidates")"
[ "$(q "$tmp/once.db" "SELECT status FROM runs")" = done ] || fail "killed once: run not done"

# Killed on the retry too: charged `crashed`, saying so.
run_killing "$tmp/twice.db" 2
[ $rc = 0 ] || { cat "$tmp/twice.db.err"; fail "killed twice: the run exited $rc"; }
[ "$(q "$tmp/twice.db" "SELECT status FROM candidates")" = crashed ] ||
    fail "killed twice: expected crashed, got $(q "$tmp/twice.db" "SELECT status, reason FROM candidates")"
expect_in "$tmp/twice.db.out" "on the retry in a fresh process too"
[ "$(q "$tmp/twice.db" "SELECT status FROM runs")" = done ] || fail "killed twice: run not done"

# A kernel that tries to kill itself: refused every way; it dies by its own
# SIGSEGV, charged at once, never retried.
KERNEL="$tmp/selfkill.c" expect_exit 0 "$AVO" run tests/faults/outside_kill.lua --db "$tmp/self.db" --jobs 1
grep -q '^record crashed - crashed with SIGSEGV' "$tmp/out" ||
    { cat "$tmp/out" "$tmp/err"; fail "a self-killing kernel was not charged its own crash"; }
[ "$(q "$tmp/self.db" "SELECT status FROM candidates")" = crashed ] || fail "self-kill: archive status"
[ "$(q "$tmp/self.db" "SELECT json_extract(result, '\$.retried') IS NULL FROM candidates")" = 1 ] ||
    fail "self-kill: the kernel was retried"
echo "outside_kill: ok"
