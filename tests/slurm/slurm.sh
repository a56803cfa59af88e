#!/bin/sh
# A real single-node Slurm (Debian's slurm-wlm and munge), started here with
# a config in a temp dir and stopped by PID at the end, runs avo's remote
# workers (`avo run --slurm`):
#   1. a CPU sgemm evolution on 3 worker tasks; one worker process is killed
#      mid-job; the run still finishes, its job ran elsewhere, every
#      evaluation is in the archive exactly once, and the step is gone after;
#   2. an srun that cannot start its step (no such partition): the run ends
#      normally with a clear message instead of waiting forever;
#   3. Ctrl-C (SIGINT) and kill -9 of the engine: the step is cancelled.
# Needs root and slurmctld, slurmd, munged, srun (skip 77 naming what is
# missing, or when the daemons cannot start).
. "$(dirname "$0")/../e2e/lib.sh"
[ "$(id -u)" = 0 ] || { echo "skip: the test Slurm runs its daemons as root"; exit 77; }
for tool in slurmctld slurmd munged srun squeue scancel sinfo sqlite3 python3; do
    command -v $tool >/dev/null ||
        { echo "skip: $tool not found (tools/install-deps --tests installs slurm-wlm and munge)"; exit 77; }
done

# Run from a directory every process can reach; the daemons' files live in $s.
s="$tmp/slurm"
mkdir -p "$s/state" "$s/spool"
chmod 755 "$tmp" "$s"
daemons=""
engine=""
cleanup() {
    [ -n "$engine" ] && kill -9 $engine 2>/dev/null || true
    SLURM_CONF="$s/slurm.conf" scancel --user=root 2>/dev/null || true
    for p in $daemons; do kill "$p" 2>/dev/null || true; done
    sleep 1
    for p in $daemons; do kill -9 "$p" 2>/dev/null || true; done
    [ -f "$s/munged.pid" ] && kill "$(cat "$s/munged.pid")" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
skip_with_logs() {
    echo "skip: $1"
    for f in "$s"/*.log "$s"/*.out; do [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }; done
    exit 77
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
host=$(hostname -s)
ctld_port=$(free_port)
slurmd_port=$(free_port)

dd if=/dev/urandom of="$s/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$s/munge.key"
munged --force --socket="$s/munge.sock" --key-file="$s/munge.key" --pid-file="$s/munged.pid" \
    --log-file="$s/munged.log" --seed-file="$s/munged.seed" >"$s/munged.out" 2>&1 ||
    skip_with_logs "munged did not start"

cat >"$s/slurm.conf" <<EOF
ClusterName=avotest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$s/munge.sock
CredType=cred/munge
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.pid
SlurmctldLogFile=$s/slurmctld.log
SlurmdLogFile=$s/slurmd.log
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF="$s/slurm.conf"
slurmctld -D -f "$SLURM_CONF" >"$s/slurmctld.out" 2>&1 &
daemons="$daemons $!"
slurmd -D -N "$host" -f "$SLURM_CONF" >"$s/slurmd.out" 2>&1 &
daemons="$daemons $!"
up=0
for _ in $(seq 60); do
    if [ "$(sinfo -h -o %T 2>/dev/null)" = idle ]; then up=1; break; fi
    sleep 0.5
done
[ $up = 1 ] || skip_with_logs "slurmctld/slurmd did not bring the node up within 30 s"
timeout 60 srun -n 1 true >"$s/probe.out" 2>&1 || skip_with_logs "srun cannot run a step"

avo_jobs() { squeue -h -o %j | grep -c '^avo-' || true; }
wait_no_avo_jobs() {
    for _ in $(seq 100); do
        [ "$(avo_jobs)" = 0 ] && return 0
        sleep 0.2
    done
    squeue; fail "$1: the Slurm job of the workers is still there"
}

# --- 1. an evolution on 3 Slurm worker tasks; one worker killed mid-job
db="$tmp/run.db"
"$AVO" run examples/quickstart.lua --db "$db" --slurm "--time=30" --jobs 3 \
    --listen 127.0.0.1:0 --max-evals 40 >"$tmp/run.out" 2>"$tmp/run.err" &
engine=$!
token=""
for _ in $(seq 100); do
    token=$(sed -n 's/.*(Slurm job name avo-\([^;]*\);.*/\1/p' "$tmp/run.err")
    [ -n "$token" ] && break
    sleep 0.1
done
[ -n "$token" ] || { cat "$tmp/run.err"; fail "the engine did not start srun"; }
killed=0
for _ in $(seq 1200); do
    for w in $(pgrep -f -- "worker --connect .* --run $token" || true); do
        child=$(pgrep -P "$w" | head -n1 || true)
        # a worker whose serving process has a compiler or runner: mid-job
        if [ -n "$child" ] && pgrep -P "$child" >/dev/null &&
           [ "$(q "$db" "SELECT count(*) FROM candidates WHERE status != 'pending'" 2>/dev/null || echo 0)" -ge 5 ]; then
            kill -9 "$w"
            killed=1
            break 2
        fi
    done
    sleep 0.05
done
[ $killed = 1 ] || { cat "$tmp/run.err"; fail "no worker was ever seen mid-job"; }
set +e
wait $engine; rc=$?
set -e
engine=""
[ $rc = 0 ] || { cat "$tmp/run.err"; fail "the run exited $rc"; }
err="$tmp/run.err"
expect_in "$err" "srun started 3 worker tasks"
expect_in "$err" "queued again"
expect_in "$err" "done after 40 evaluations"
[ "$(grep -c ' connected$' "$err")" -ge 3 ] || { cat "$err"; fail "expected 3 workers to connect"; }
[ "$(q "$db" "SELECT count(*) FROM candidates")" = 40 ] || fail "expected 40 candidates"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'pending'")" = 0 ] ||
    fail "a candidate was never answered"
[ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'ok'")" = 40 ] ||
    fail "every candidate should pass: $(q "$db" "SELECT status, reason FROM candidates WHERE status != 'ok'")"
[ "$(q "$db" "SELECT count(DISTINCT key) FROM candidates")" = 40 ] || fail "a candidate was evaluated twice"
[ "$(q "$db" "SELECT count(*) FROM evaluations")" = 120 ] ||
    fail "expected 40 candidates x 3 configs evaluations, got $(q "$db" "SELECT count(*) FROM evaluations")"
[ "$(q "$db" "SELECT count(*) FROM (SELECT candidate_id, config FROM evaluations
    GROUP BY 1, 2 HAVING count(*) > 1)")" = 0 ] || fail "an evaluation is recorded twice"
[ "$(q "$db" "SELECT count(DISTINCT json_extract(result, '\$.worker.name')) FROM candidates")" -ge 2 ] ||
    fail "the evaluations should spread over the Slurm workers"
wait_no_avo_jobs "after the run"

# --- 2. srun cannot start the step: the run ends with a clear message
expect_exit 0 "$AVO" run examples/quickstart.lua --db "$tmp/bad.db" --slurm "--partition=nosuch" \
    --jobs 2 --listen 127.0.0.1:0 --max-evals 10
expect_in "$tmp/err" "no workers left: the Slurm step ended (srun exited with status 1; see $tmp/bad.db.slurm.log)"
expect_in "$tmp/err" "run stopped early"
expect_in "$tmp/bad.db.slurm.log" "nosuch"
[ "$(q "$tmp/bad.db" "SELECT status FROM runs")" = stopped ] || fail "the run should be recorded as stopped"

# --- 3. Ctrl-C and kill -9 of the engine cancel the workers' step
for sig in INT KILL; do
    db="$tmp/sig$sig.db"
    "$AVO" run examples/quickstart.lua --db "$db" --slurm "--time=30" --jobs 2 \
        --listen 127.0.0.1:0 --max-evals 400 >"$db.out" 2>"$db.err" &
    engine=$!
    for _ in $(seq 600); do
        [ "$(q "$db" "SELECT count(*) FROM candidates WHERE status != 'pending'" 2>/dev/null || echo 0)" -ge 3 ] && break
        sleep 0.1
    done
    [ "$(avo_jobs)" -ge 1 ] || fail "SIG$sig: no Slurm job while the run is going"
    kill -$sig $engine
    set +e
    wait $engine
    set -e
    engine=""
    wait_no_avo_jobs "after SIG$sig to the engine"
    [ -z "$(pgrep -f -- "worker --connect .*" || true)" ] || { pgrep -af -- "worker --connect"; fail "SIG$sig: workers outlived the run"; }
done
echo "slurm: ok"
