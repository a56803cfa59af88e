#!/bin/sh
# avo experiment end to end: bad input refused before anything runs; a grid
# on the test backend (strategy, function arms; two budgets; three seeds)
# runs, resumes as a no-op, refuses a changed file unless --new, reports
# numbers an independent computation (python3 + sqlite3) recomputes from the
# archive, and replays cell for cell; a failing arm is reported with its
# reason; paths in the file are relative to it (the shipped examples run
# from /); every finished cell has its exit status, even one that ended
# while its runner was stopped and then killed; a grid with real workers
# killed with -9 in the middle leaves no process behind, reports itself
# incomplete, and resumes to the end.
. "$(dirname "$0")/lib.sh"
check=tests/e2e/experiment/check_report.py

# --- bad input: refused before anything runs, naming the culprit
sed 's/strategy = "ga"/strategy = "no_such_strategy"/' tests/e2e/experiment/grid.lua >"$tmp/badarm.lua"
expect_exit 2 "$AVO" experiment "$tmp/badarm.lua" --db "$tmp/bad.db"
expect_in "$tmp/err" "arm 'ga'"
expect_in "$tmp/err" "no_such_strategy"
expect_in "$tmp/err" "nothing was run"
sed 's#bench/landscape.lua#bench/no_such_evaluator.lua#' tests/e2e/experiment/grid.lua >"$tmp/badwl.lua"
expect_exit 2 "$AVO" experiment "$tmp/badwl.lua" --db "$tmp/bad.db"
expect_in "$tmp/err" "workload 'nk'"
printf 'return { arms = { a = "random" } }\n' >"$tmp/noworkload.lua"
expect_exit 2 "$AVO" experiment "$tmp/noworkload.lua" --db "$tmp/bad.db"
expect_in "$tmp/err" "'workloads' must be a table"
if [ -f "$tmp/bad.db" ]; then
    [ "$(q "$tmp/bad.db" "SELECT count(*) FROM runs")" = 0 ] || fail "a refused experiment ran"
fi
for bad in '{ top = 2, round = 1 }' '-1' '{ top = 1, rounds = 0 }' '"off"'; do
    printf 'return { arms = { a = "random" }, workloads = { nk = "bench/landscape.lua" }, retime = %s }\n' \
        "$bad" >"$tmp/badretime.lua"
    expect_exit 2 "$AVO" experiment "$tmp/badretime.lua" --db "$tmp/bad.db"
    case $bad in
        *round\ =*) expect_in "$tmp/err" "retime: unknown key 'round' (top, rounds)" ;;
        *) expect_in "$tmp/err" "'retime' must be an integer top K from 0 to 1000, or {top = K, rounds = N}" ;;
    esac
done
# a good one reaches each cell's run as --retime K --retime-rounds N
printf 'return { arms = { a = "random" }, workloads = { nk = "bench/landscape.lua" },
  budgets = { { max_evals = 2 } }, retime = { top = 1, rounds = 2 } }\n' >"$tmp/retime.lua"
expect_exit 0 "$AVO" experiment "$tmp/retime.lua" --db "$tmp/retime.db"
[ "$(q "$tmp/retime.db" "SELECT json_extract(config, '\$.retime') || ' ' ||
    json_extract(config, '\$.retime_rounds') FROM runs")" = "1 2" ] ||
    fail "retime = {top = 1, rounds = 2}: $(q "$tmp/retime.db" "SELECT config FROM runs")"
expect_exit 2 "$AVO" experiment
expect_exit 2 "$AVO" experiment report --new
# report and replay only read: a missing archive is named, never created
for cmd in report replay; do
    expect_exit 1 "$AVO" experiment $cmd --db "$tmp/missing.db"
    expect_in "$tmp/err" "avo: cannot open archive $tmp/missing.db: No such file or directory"
    [ ! -e "$tmp/missing.db" ] || fail "avo experiment $cmd created the missing archive"
done

# --- paths in an experiment file are relative to the file: a script arm, a
# workload's evaluator and an env value beside it, run from / and again
# (the same experiment) from another directory by a relative path
mkdir "$tmp/expdir"
cp bench/landscape.lua "$tmp/expdir/nk.lua"
echo beside >"$tmp/expdir/data.txt"
cat >"$tmp/expdir/arm.lua" <<'LUA'
local avo = require "avo"
local file = assert(os.getenv("AVO_TEST_FILE"), "AVO_TEST_FILE is not set")
assert(file:sub(1, 1) == "/", "the env path was not made absolute: " .. file)
local f = assert(io.open(file, "r"))
assert(f:read("l") == "beside", "read the wrong file")
f:close()
return avo.strategy("ga")
LUA
cat >"$tmp/expdir/paths.lua" <<'LUA'
return {
  name = "paths",
  arms = {
    { name = "script", script = "arm.lua", env = { AVO_TEST_FILE = "./data.txt" },
      options = { population = 4, generations = 1000 } },
    { name = "ga", strategy = "ga", options = { population = 4, generations = 1000 } },
  },
  workloads = { nk = "nk.lua" },
  budgets = { { max_evals = 6 } },
  jobs = 1,
}
LUA
from_root() { (cd / && "$@"); }
expect_exit 0 from_root "$AVO" experiment "$tmp/expdir/paths.lua" --db "$tmp/paths.db"
[ "$(q "$tmp/paths.db" "SELECT count(*) FROM experiment_cells WHERE status = 'done'")" = 2 ] ||
    fail "paths beside the experiment file: $(q "$tmp/paths.db" "SELECT * FROM experiment_cells")"
from_tmp() { (cd "$tmp" && "$@"); }
expect_exit 0 from_tmp "$AVO" experiment expdir/paths.lua --db paths.db
expect_in "$tmp/err" "2 cells finished before, 0 to run"
# a script that is nowhere: the message says where relative paths are read
sed 's/"arm.lua"/"no_arm.lua"/' "$tmp/expdir/paths.lua" >"$tmp/expdir/nowhere.lua"
expect_exit 2 from_root "$AVO" experiment "$tmp/expdir/nowhere.lua" --db "$tmp/nowhere.db"
expect_in "$tmp/err" "arm 'script': cannot read script no_arm.lua"
expect_in "$tmp/err" "read beside the experiment file, in $(cd "$tmp/expdir" && pwd -P)"
# the shipped examples work from any directory (agent_vs_tweaks has paths):
# a copy beside copies of the files it names, with a smaller budget and no
# re-timing at the end of a cell (the whole example takes minutes)
mkdir -p "$tmp/ex/examples/experiments"
cp examples/avo_cpu.lua examples/avo_cpu.jsonl "$tmp/ex/examples/"
sed 's/max_evals = 12,/max_evals = 3,/; s/^  jobs = 1,$/  jobs = 1, retime = 0,/' \
    examples/experiments/agent_vs_tweaks.lua >"$tmp/ex/examples/experiments/agent_vs_tweaks.lua"
grep -q 'max_evals = 3,' "$tmp/ex/examples/experiments/agent_vs_tweaks.lua" &&
    grep -q 'retime = 0,' "$tmp/ex/examples/experiments/agent_vs_tweaks.lua" ||
    fail "examples/experiments/agent_vs_tweaks.lua changed: update the sed above"
expect_exit 0 from_root "$AVO" experiment "$tmp/ex/examples/experiments/agent_vs_tweaks.lua" \
    --db "$tmp/agent.db"
[ "$(q "$tmp/agent.db" "SELECT count(*) FROM experiment_cells WHERE status = 'done' AND exit_code = 0")" = 4 ] ||
    fail "agent_vs_tweaks from /: $(q "$tmp/agent.db" "SELECT cell, status, reason FROM experiment_cells")"

# --- a grid on the test backend
db="$tmp/grid.db"
expect_exit 0 "$AVO" experiment tests/e2e/experiment/grid.lua --db "$db" --jobs 2
expect_in "$tmp/err" "18 cells (3 arms x 1 workloads x 2 budgets x 3 seeds)"
[ "$(q "$db" "SELECT count(*) FROM experiment_cells WHERE status = 'done' AND run_id IS NOT NULL")" = 18 ] ||
    fail "not every cell is done"
[ "$(q "$db" "SELECT count(DISTINCT run_id) FROM experiment_cells")" = 18 ] || fail "cells share runs"
[ "$(q "$db" "SELECT count(*) FROM runs WHERE status = 'done'")" = 18 ] || fail "runs not done"
# each cell's run kept its budget
over=$(q "$db" "SELECT count(*) FROM (SELECT run_id, count(*) n FROM candidates GROUP BY run_id)
                WHERE n > 30")
[ "$over" = 0 ] || fail "a run exceeded its budget"
q "$db" "SELECT machine FROM experiments" | grep -q '"cores"' || fail "no machine description"
[ "$(q "$db" "SELECT length(hash) > 10 AND source LIKE '%small_ga%' FROM experiments")" = 1 ] ||
    fail "definition or hash not stored"
# every cell is an ordinary run: show, lineage, report work on it
run=$(q "$db" "SELECT run_id FROM experiment_cells WHERE cell = 'ga/nk/long/s2'")
best=$(q "$db" "SELECT id FROM candidates WHERE run_id = $run AND status = 'ok' ORDER BY score DESC LIMIT 1")
expect_exit 0 "$AVO" show "$best" --db "$db"
expect_exit 0 "$AVO" lineage "$best" --db "$db"

# re-running the same file keeps every finished cell
expect_exit 0 "$AVO" experiment tests/e2e/experiment/grid.lua --db "$db"
expect_in "$tmp/err" "18 cells finished before, 0 to run"
[ "$(q "$db" "SELECT count(*) FROM runs")" = 18 ] || fail "a finished cell ran again"

# every finished cell has its exit status
[ "$(q "$db" "SELECT count(*) FROM experiment_cells WHERE exit_code = 0")" = 18 ] ||
    fail "a finished cell has no exit status"

# A cell that ends while its runner cannot see it (stopped, then killed
# with -9: nothing reaps the cell) has recorded its own exit status, and a
# re-run keeps it.
sdb="$tmp/unseen.db"
sed 's/jobs = 2/jobs = 1/; s/seeds = 3/seeds = 1/' tests/e2e/experiment/grid.lua >"$tmp/unseen.lua"
"$AVO" experiment "$tmp/unseen.lua" --db "$sdb" >"$tmp/u.out" 2>"$tmp/u.err" &
pid=$!
waited=0
until [ "$(q "$sdb" "SELECT count(*) FROM experiment_cells" 2>/dev/null || echo 0)" -ge 2 ]; do
    sleep 0.05
    waited=$((waited + 1))
    [ "$waited" -lt 2000 ] || fail "no second cell started"
done
kill -STOP "$pid"
# the cell the runner launched last, running or ended unseen
cell=$(q "$sdb" "SELECT cell FROM experiment_cells ORDER BY updated_at DESC, rowid DESC LIMIT 1")
waited=0
while pgrep -f "$sdb.cells/" >/dev/null 2>&1; do
    sleep 0.1
    waited=$((waited + 1))
    [ "$waited" -lt 600 ] || fail "the cell $cell did not end"
done
kill -9 "$pid"
kill -CONT "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
[ "$(q "$sdb" "SELECT status || ' ' || exit_code FROM experiment_cells WHERE cell = '$cell'")" = "done 0" ] ||
    fail "the cell that ended unseen: $(q "$sdb" "SELECT * FROM experiment_cells WHERE cell = '$cell'")"
expect_exit 0 "$AVO" experiment "$tmp/unseen.lua" --db "$sdb"
[ "$(q "$sdb" "SELECT count(*) FROM experiment_cells WHERE status = 'done' AND exit_code = 0")" = 6 ] ||
    fail "after the re-run: $(q "$sdb" "SELECT cell, status, exit_code FROM experiment_cells")"

# a changed file under the same name is refused unless --new
sed 's/seeds = 3/seeds = 2/' tests/e2e/experiment/grid.lua >"$tmp/grid2.lua"
expect_exit 2 "$AVO" experiment "$tmp/grid2.lua" --db "$db"
expect_in "$tmp/err" "declared by a different file"
expect_exit 0 "$AVO" experiment "$tmp/grid2.lua" --db "$db" --new
[ "$(q "$db" "SELECT count(*) FROM experiments")" = 2 ] || fail "--new made no new experiment"
[ "$(q "$db" "SELECT count(*) FROM runs")" = 30 ] || fail "the new experiment ran $(q "$db" "SELECT count(*) FROM runs") - 18 cells, expected 12"

# the report, recomputed independently from the archive
expect_exit 0 "$AVO" experiment report --db "$db" --experiment 1 --out "$tmp/rep"
expect_in "$tmp/out" "ga vs small_ga"
python3 "$check" "$db" "$tmp/rep.json" || fail "report numbers differ from the archive"
expect_in "$tmp/rep.html" "<svg"
expect_in "$tmp/rep.html" "Mann-Whitney U"
expect_in "$tmp/rep.html" "seeds 1, 2, 3"
[ "$(wc -l <"$tmp/rep.csv")" = 7 ] || fail "CSV: expected a header and 6 rows"
# the three files are written all or none: one that cannot be written
# (a directory in its place) leaves the others unwritten, and no temporary
mkdir "$tmp/half.csv"
cp "$tmp/rep.html" "$tmp/half.json"
expect_exit 1 "$AVO" experiment report --db "$db" --experiment 1 --out "$tmp/half"
expect_in "$tmp/err" "avo: cannot write $tmp/half.csv: Is a directory"
[ ! -e "$tmp/half.html" ] || fail "a report that failed wrote its HTML"
cmp -s "$tmp/rep.html" "$tmp/half.json" || fail "a report that failed replaced its JSON"
ls "$tmp" | grep -q '^half.*\.tmp\.' && fail "a report that failed left a temporary"
# report and replay of what is not there
expect_exit 1 "$AVO" experiment report --db "$db" --experiment 99 --out "$tmp/none"
expect_in "$tmp/err" "holds no experiment 99"
expect_exit 1 "$AVO" experiment replay --db "$db" --experiment 99 --out "$tmp/none"
expect_in "$tmp/err" "holds no experiment 99"
expect_exit 1 "$AVO" experiment report --db "$tmp/no-such.db"
expect_in "$tmp/err" "cannot open archive"
[ ! -e "$tmp/no-such.db" ] || fail "report created an archive"
"$AVO" run examples/quickstart.lua --db "$tmp/plain.db" --max-evals 1 --retime 0 >/dev/null 2>&1 || true
expect_exit 1 "$AVO" experiment report --db "$tmp/plain.db"
expect_in "$tmp/err" "the archive holds no experiment"
# the default is the latest experiment
expect_exit 0 "$AVO" experiment report --db "$db" --out "$tmp/rep2"
python3 "$check" "$db" "$tmp/rep2.json" || fail "report of experiment 2 differs from the archive"
expect_in "$tmp/rep2.json" '"id":2'

# replay: every cell re-executed from its recording
expect_exit 0 "$AVO" experiment replay --db "$db" --experiment 1 --out "$tmp/replay"
expect_in "$tmp/out" "18 cells reproduce, 0 differ, 0 not finished"

# a cell whose recording was tampered with does not reproduce, and says so
cand=$(q "$db" "SELECT c.id FROM candidates c JOIN experiment_cells e ON e.run_id = c.run_id
                WHERE e.experiment_id = 1 AND e.cell = 'ga/nk/evals12/s1' ORDER BY c.id LIMIT 1 OFFSET 3")
q "$db" "UPDATE candidates SET knobs = '{\"K1\":3,\"K2\":3}' WHERE id = $cand"
expect_exit 1 "$AVO" experiment replay --db "$db" --experiment 1 --out "$tmp/replay2"
expect_in "$tmp/out" "ga/nk/evals12/s1"
expect_in "$tmp/out" "DIFFERS"
expect_in "$tmp/out" "17 cells reproduce, 1 differ, 0 not finished"

# --- a failing arm: failed with its reason, never dropped
fdb="$tmp/fail.db"
expect_exit 1 "$AVO" experiment tests/e2e/experiment/fail.lua --db "$fdb"
expect_in "$tmp/err" "4 of them failed"
expect_in "$tmp/err" "deliberately refused"
# still failed when the file is run again (kept, not retried, not forgotten)
expect_exit 1 "$AVO" experiment tests/e2e/experiment/fail.lua --db "$fdb"
expect_in "$tmp/err" "6 cells finished before, 0 to run"
expect_in "$tmp/err" "4 of them failed"
expect_exit 0 "$AVO" experiment report --db "$fdb" --out "$tmp/frep"
expect_in "$tmp/out" "4 cell(s) failed"
expect_in "$tmp/frep.html" "deliberate failure in arm"
expect_in "$tmp/frep.html" "deliberately refused"
[ "$(q "$fdb" "SELECT count(*) FROM runs WHERE status = 'stopped'")" = 2 ] ||
    fail "avo.exit(2) should leave the run stopped"
# --retry-failed runs the failed cells again, a new run each; the report
# follows each cell's latest run
expect_exit 1 "$AVO" experiment tests/e2e/experiment/fail.lua --db "$fdb" --retry-failed
expect_in "$tmp/err" "2 cells finished before, 4 to run (0 to resume)"
expect_in "$tmp/err" "4 of them failed"
[ "$(q "$fdb" "SELECT count(*) FROM runs")" = 10 ] || fail "--retry-failed: expected 4 new runs"
expect_exit 0 "$AVO" experiment report --db "$fdb" --out "$tmp/frep"
python3 "$check" "$fdb" "$tmp/frep.json" || fail "report after --retry-failed differs from the archive"
[ "$(q "$fdb" "SELECT count(*) FROM experiment_cells WHERE status = 'failed' AND run_id > 6")" = 4 ] ||
    fail "--retry-failed: cells should point at their new runs"
expect_exit 2 "$AVO" experiment report --db "$fdb" --retry-failed
python3 "$check" "$fdb" "$tmp/frep.json" || fail "failed-cell report differs from the archive"
[ "$(q "$fdb" "SELECT count(*) FROM experiment_cells WHERE status = 'failed'
                AND reason LIKE '%deliberate failure%'")" = 2 ] || fail "failure reasons not stored"

# --- re-timed cells (retime = {top = 2, rounds = 2} on axpy): the report's
# best scores are each run's re-timed #1, with its ratio to the seed paired
# round by round; the recorded maxima stay beside them, labelled
rdb="$tmp/retimed.db"
expect_exit 0 "$AVO" experiment tests/e2e/experiment/retimed.lua --db "$rdb"
[ "$(q "$rdb" "SELECT count(*) FROM events WHERE kind = 'retimed'")" = 8 ] ||
    fail "the cells did not re-time their bests: $(q "$rdb" "SELECT run_id, kind FROM events")"
expect_exit 0 "$AVO" experiment report --db "$rdb" --out "$tmp/rrep"
python3 "$check" "$rdb" "$tmp/rrep.json" || fail "re-timed report differs from the archive"
expect_in "$tmp/out" "axpy, budget evals3 (GFLOP/s, each run's re-timed best):"
[ "$(grep -c '^                 paired: [0-9.]*x seed \[[0-9.]*, [0-9.]*\]; recorded median [0-9.]' "$tmp/out")" = 4 ] ||
    fail "no paired line per arm: $(cat "$tmp/out")"
# where the seed is each run's best, its ratio to itself is 1
expect_in "$tmp/out" "axpy, budget seed (GFLOP/s, each run's re-timed best):"
[ "$(grep -c '^                 paired: 1x seed \[1, 1\]; recorded median' "$tmp/out")" -ge 2 ] ||
    fail "the seed's own ratio: $(cat "$tmp/out")"
expect_in "$tmp/rrep.html" "<th class=l>paired</th><th>recorded median</th>"
expect_in "$tmp/rrep.html" "Best scores of axpy/evals3, axpy/seed are re-timed"
head -n 1 "$tmp/rrep.csv" | grep -q ',figure,recorded_median,paired$' || fail "CSV header: $(head -n 1 "$tmp/rrep.csv")"
[ "$(grep -c ',retimed,[0-9.e+-]*,seed=[0-9.e+-]*$' "$tmp/rrep.csv")" = 4 ] || fail "CSV rows: $(cat "$tmp/rrep.csv")"
# the same grid without re-timing: recorded; `avo rebench` of every cell's
# run afterwards makes it re-timed (the latest paired re-timing of a run)
sed "s#\"../evaluators/axpy.lua\"#\"$AVO_SOURCE_ROOT/tests/e2e/evaluators/axpy.lua\"#;
     s#retime = { top = 2, rounds = 2 },#retime = 0,#" tests/e2e/experiment/retimed.lua >"$tmp/rt0.lua"
grep -q 'retime = 0,' "$tmp/rt0.lua" || fail "tests/e2e/experiment/retimed.lua changed: update the sed above"
r0db="$tmp/rt0.db"
expect_exit 0 "$AVO" experiment "$tmp/rt0.lua" --db "$r0db"
expect_exit 0 "$AVO" experiment report --db "$r0db" --out "$tmp/r0rep"
expect_in "$tmp/out" "axpy, budget evals3 (GFLOP/s, best as recorded, not re-timed):"
python3 "$check" "$r0db" "$tmp/r0rep.json" || fail "report without re-timing differs from the archive"
for run in $(q "$r0db" "SELECT run_id FROM experiment_cells"); do
    expect_exit 0 "$AVO" rebench --db "$r0db" --run "$run" --top 1 --rounds 2
done
expect_exit 0 "$AVO" experiment report --db "$r0db" --out "$tmp/r0rep"
expect_in "$tmp/out" "axpy, budget evals3 (GFLOP/s, each run's re-timed best):"
python3 "$check" "$r0db" "$tmp/r0rep.json" || fail "report after rebench differs from the archive"
# the test backend's grid times nothing: recorded, said so, no paired figures
expect_in "$tmp/rep.html" "Best scores of nk/evals12, nk/long are as recorded in the search: not every run re-timed its bests"
grep -q ',recorded,[0-9.e+-]*,$' "$tmp/rep.csv" || fail "CSV of recorded figures: $(cat "$tmp/rep.csv")"

# --- real workers, kill -9 in the middle, resume
cp "$AVO" "$tmp/avo-exp"
cdb="$tmp/cpu.db"
"$tmp/avo-exp" experiment tests/e2e/experiment/cpu.lua --db "$cdb" >"$tmp/c.out" 2>"$tmp/c.err" &
pid=$!
waited=0
until [ "$(q "$cdb" "SELECT count(*) FROM experiment_cells WHERE status = 'done'" 2>/dev/null || echo 0)" -ge 1 ] &&
      [ "$(q "$cdb" "SELECT count(*) FROM experiment_cells WHERE status = 'running'" 2>/dev/null || echo 0)" -ge 1 ]; do
    sleep 0.2
    waited=$((waited + 1))
    [ "$waited" -lt 1500 ] || fail "no cell finished within 5 minutes"
    kill -0 "$pid" 2>/dev/null || { cat "$tmp/c.err"; fail "the experiment ended before the kill"; }
done
# a second runner of the same experiment is refused while the first runs
expect_exit 1 "$tmp/avo-exp" experiment tests/e2e/experiment/cpu.lua --db "$cdb"
expect_in "$tmp/err" "is being run by another process"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
# the cells' runs die with the runner
waited=0
while pgrep -f "$tmp/avo-exp" >/dev/null 2>&1; do
    sleep 0.2
    waited=$((waited + 1))
    [ "$waited" -lt 150 ] || { pgrep -af "$tmp/avo-exp" >&2; fail "cells outlived the killed runner"; }
done
[ "$(q "$cdb" "PRAGMA integrity_check")" = ok ] || fail "integrity_check after kill -9"
expect_exit 0 "$tmp/avo-exp" experiment report --db "$cdb" --out "$tmp/crep"
expect_in "$tmp/out" "incomplete:"
expect_in "$tmp/crep.html" "The experiment is incomplete"
python3 "$check" "$cdb" "$tmp/crep.json" || fail "partial report differs from the archive"
expect_exit 0 "$tmp/avo-exp" experiment tests/e2e/experiment/cpu.lua --db "$cdb"
expect_in "$tmp/err" "resuming (4 cells)"
grep -q "cells finished before, [1-3] to run" "$tmp/err" || { cat "$tmp/err"; fail "resume did not keep the finished cells"; }
[ "$(q "$cdb" "SELECT count(*) FROM runs WHERE status = 'done'")" = 4 ] || fail "not every cell finished after resume"
[ "$(q "$cdb" "SELECT count(*) FROM runs")" = 4 ] || fail "a cell got a second run"
over=$(q "$cdb" "SELECT count(*) FROM (SELECT run_id, count(*) n FROM candidates
                 WHERE status <> 'pending' GROUP BY run_id) WHERE n > 4")
[ "$over" = 0 ] || fail "a resumed run exceeded its budget"
expect_exit 0 "$tmp/avo-exp" experiment report --db "$cdb" --out "$tmp/crep"
python3 "$check" "$cdb" "$tmp/crep.json" || fail "report after resume differs from the archive"
expect_in "$tmp/crep.html" "sandboxed worker processes ("
# retime = 0 in the file: each cell's run was told so and re-timed nothing
[ "$(q "$cdb" "SELECT count(*) FROM runs WHERE json_extract(config, '\$.retime') = 0")" = 4 ] ||
    fail "retime = 0 did not reach the cells' runs: $(q "$cdb" "SELECT config FROM runs")"
[ "$(q "$cdb" "SELECT count(*) FROM events WHERE kind = 'retimed'")" = 0 ] || fail "a cell re-timed its bests"

# SIGTERM to the runner stops its cells (recorded interrupted); a re-run
# resumes them
tdb="$tmp/term.db"
"$tmp/avo-exp" experiment tests/e2e/experiment/cpu.lua --db "$tdb" >"$tmp/t.out" 2>"$tmp/t.err" &
pid=$!
waited=0
until [ "$(q "$tdb" "SELECT count(*) FROM candidates WHERE status = 'ok'" 2>/dev/null || echo 0)" -ge 1 ]; do
    sleep 0.2
    waited=$((waited + 1))
    [ "$waited" -lt 1500 ] || fail "no evaluation finished within 5 minutes"
done
kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" = 143 ] || { cat "$tmp/t.err"; fail "SIGTERM: exit $rc, expected 143"; }
expect_in "$tmp/t.err" "stopping: the running cells are interrupted"
[ "$(q "$tdb" "SELECT count(*) FROM runs WHERE status = 'interrupted'")" -ge 1 ] ||
    fail "SIGTERM: no cell recorded itself interrupted"
[ "$(q "$tdb" "SELECT count(*) FROM runs WHERE status = 'running'")" = 0 ] ||
    fail "SIGTERM: a cell's run is still marked running"
expect_exit 0 "$tmp/avo-exp" experiment tests/e2e/experiment/cpu.lua --db "$tdb"
[ "$(q "$tdb" "SELECT count(*) FROM runs WHERE status = 'done'")" = 4 ] || fail "SIGTERM: resume did not finish"
[ "$(q "$tdb" "SELECT count(*) FROM runs")" = 4 ] || fail "SIGTERM: a cell got a second run"
echo "experiment: ok"
