#!/bin/sh
# A compile error, segfault, abort, infinite loop, wrong answer and a source
# that is not UTF-8 each give the right status and reason in the archive, and
# the run continues.
. "$(dirname "$0")/lib.sh"
expect_exit 0 "$AVO" run tests/e2e/failures.lua --db "$tmp/f.db" --jobs 2
expect_in "$tmp/out" "failures: ok"
[ "$(q "$tmp/f.db" "SELECT status FROM candidates WHERE note = 'axpy_segv'")" = crashed ] || fail "segv not archived as crashed"
[ "$(q "$tmp/f.db" "SELECT status FROM candidates WHERE note = 'axpy_hang'")" = timeout ] || fail "hang not archived as timeout"
[ "$(q "$tmp/f.db" "SELECT status FROM candidates WHERE note = 'axpy_latin1'")" = invalid ] || fail "latin-1 source not archived as invalid"
[ "$(q "$tmp/f.db" "SELECT count(*) FROM candidates WHERE status = 'pending'")" = 0 ] || fail "pending candidates left"
[ "$(q "$tmp/f.db" "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id WHERE c.status = 'ok'")" = 2 ] || fail "good kernel's evaluations missing"
echo "failures: ok"
