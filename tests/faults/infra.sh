#!/bin/sh
# Infrastructure faults are not charged to candidates: a compiler that is
# killed, and workers killed from outside mid-job, are retried; when they
# persist the run stops (exit 3, as `avo eval` does) with the candidates left
# pending, and resume in a working environment finishes them.  What the
# compiler prints never makes a fault the machine's (a candidate writes it:
# `#error No space left on device`), and candidates that fail "for the
# machine" on every try while a verified candidate passes are charged, side
# by side or one after the other, and the run goes on.
. "$(dirname "$0")/lib.sh"
fake="$tmp/cc"
chmod 755 "$tmp" # the compiler runs as a sandbox uid, which must reach it
# fake_cc BEHAVIOUR: a compiler that reports a version, then fails that way.
fake_cc() {
    cat > "$fake" <<SH
#!/bin/sh
[ "\$1" = --version ] && { echo "fakecc 1.0"; exit 0; }
case "$1" in
    oom) echo "cc1: out of memory allocating 65536 bytes after a total of 1 bytes" >&2; exit 1 ;;
    killed) kill -9 \$\$ ;;
esac
SH
    chmod +x "$fake"
}
for how in killed; do
    fake_cc $how
    export AVO_CACHE="$tmp/cache-$how"
    CC="$fake" expect_exit 3 "$AVO" eval tests/e2e/kernels/axpy.c --evaluator tests/e2e/evaluators/axpy.lua
    expect_in "$tmp/out" ": error — "
    CC="$fake" expect_exit 3 "$AVO" run examples/quickstart.lua --db "$tmp/$how.db" --jobs 1 --max-evals 6 --retime 0
    expect_in "$tmp/err" "the environment is broken"
    [ "$(q "$tmp/$how.db" "SELECT count(*) FROM candidates WHERE status <> 'pending'")" = 0 ] ||
        fail "a compiler that $how charged a candidate"
    [ "$(q "$tmp/$how.db" "SELECT status FROM runs")" = failed ] || fail "$how: run not failed"
    expect_exit 0 "$AVO" resume --db "$tmp/$how.db" --jobs 1
    [ "$(q "$tmp/$how.db" "SELECT count(*) FROM candidates WHERE status IN ('pending', 'error', 'compile_error')")" = 0 ] ||
        fail "$how: resume in a working environment left candidates unfinished"
done
unset AVO_CACHE

# A compiler's words are the candidate's: messages of a full disk or of
# memory refused, with exit 1, are a compile error, charged.
fake_cc oom
export AVO_CACHE="$tmp/cache-words"
CC="$fake" expect_exit 1 "$AVO" eval tests/e2e/kernels/axpy.c --evaluator tests/e2e/evaluators/axpy.lua
expect_in "$tmp/out" ": compile_error — "
printf '#error No space left on device\n' >"$tmp/nospace.c"
expect_exit 1 "$AVO" eval "$tmp/nospace.c" --evaluator tests/e2e/evaluators/axpy.lua
expect_in "$tmp/out" ": compile_error — "
unset AVO_CACHE

# Hostile candidates: the compiler is killed on each of them, every try;
# a verified candidate passes as the control, so they are charged
# ("crashed", the reason says why) and the run goes on, with one worker or
# two side by side.
cat > "$fake" <<'SH'
#!/bin/sh
[ "$1" = --version ] && exec cc --version
grep -q HOSTILE-FAULT kernel.c 2>/dev/null && kill -9 $$
exec cc "$@"
SH
for jobs in 1 2; do
    export AVO_CACHE="$tmp/cache-hostile-$jobs"
    CC="$fake" expect_exit 0 "$AVO" run tests/faults/hostile.lua --db "$tmp/hostile$jobs.db" --jobs $jobs
    [ "$(grep -c '^record [1-6] crashed .*charged to the candidate' "$tmp/out")" = 6 ] ||
        { cat "$tmp/out" "$tmp/err"; fail "--jobs $jobs: hostile candidates not charged"; }
    grep -q '^record 0 ok' "$tmp/out" && grep -q '^record 7 ok' "$tmp/out" ||
        { cat "$tmp/out"; fail "--jobs $jobs: an honest candidate did not pass"; }
    [ "$(q "$tmp/hostile$jobs.db" "SELECT count(*) FROM candidates WHERE status = 'crashed'")" = 6 ] ||
        fail "--jobs $jobs: the archive does not hold the 6 charged candidates"
    [ "$(q "$tmp/hostile$jobs.db" "SELECT status FROM runs")" = done ] || fail "--jobs $jobs: run not done"
done
unset AVO_CACHE

# Workers killed from outside while they run jobs: retried, never `crashed`.
cp "$AVO" "$tmp/avo-w"
AVO_TEST_SLOW_MS=0 "$tmp/avo-w" run examples/quickstart.lua --db "$tmp/w.db" --jobs 2 \
    generations=1 --retime 0 >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$tmp/w.db" "SELECT count(*) FROM candidates WHERE status <> 'pending'"
for i in 1 2 3; do
    w=$(pgrep -f "$tmp/avo-w worker" | head -1 || true)
    [ -n "$w" ] && kill -9 "$w"
    sleep 0.5
done
wait "$pid" || { cat "$tmp/err"; fail "the run did not survive killed workers"; }
expect_in "$tmp/err" "infrastructure fault, not the candidate's (worker died with signal 9"
[ "$(q "$tmp/w.db" "SELECT count(*) FROM candidates WHERE status = 'crashed'")" = 0 ] ||
    fail "a candidate was charged with a killed worker"
echo "infra: ok"
