#!/bin/bash
# tests/slurm/multinode.sh — avo on a real multi-node Slurm cluster (issue 32):
# slurmctld and slurmd nodes n1..n3 (and n4, which joins later), each in a
# rootful Podman container of its own on one machine, with munge and a
# private network (podman network create --internal); the checkout and the
# build at their own paths in every container, read-only. The engine runs on
# the controller's container, the submit host, and its workers are Slurm
# tasks, one per node (srun --ntasks-per-node=1, CPUs=1 per node):
#   1. a run across the nodes (avo run --slurm); node n2 is killed
#      (podman kill) while it evaluates: its candidates are requeued, the run
#      finishes with nothing lost and nothing evaluated twice; avo starts a
#      replacement step for the lost worker, which waits until node n4 joins
#      the cluster mid-run and then evaluates there;
#   2. a run interrupted on the cluster (kill -9 of the engine mid-run) ends
#      its Slurm job, and `avo resume --slurm` finishes it on the cluster:
#      every candidate answered once, none twice.
# Prints the wall time of each run and the evaluations per node.
#
# The image is a Debian root made by debootstrap from the host's apt mirror
# with slurmctld, slurmd, munge and the runtime libraries of build/avo
# (tests/containers/lib.sh, cached under /var/tmp/avo-test-image), imported
# into Podman: nothing inside any container needs a network beyond the
# cluster's own. Needs root, podman, runc, debootstrap (exit 77 naming what
# is missing). Containers, network and names are this run's own
# (avo-mn-PID-*), removed at the end.
set -u
src=${AVO_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
avo=${AVO:-$src/build/avo}
build=$(cd "$(dirname "$avo")" && pwd)
. "$src/tests/containers/lib.sh"

skip() { echo "slurm_multinode: SKIP: $*"; exit 77; }
fail() { echo "slurm_multinode: FAIL: $*" >&2; exit 1; }
say() { echo "slurm_multinode: $*"; }

[ "$(id -u)" = 0 ] || skip "needs root (a rootful Podman container per Slurm node)"
for tool in podman runc debootstrap sqlite3; do
    command -v $tool >/dev/null || skip "$tool is missing (tools/install-deps --tests installs podman runc debootstrap sqlite3)"
done
[ -x "$avo" ] || fail "$avo is not built"
why=$(ct_no_podman_here) && skip "$why"

prefix=${AVO_SLURM_PREFIX:-avo-mn}-$$
pm=(podman --storage-driver vfs)
tmp=$(mktemp -d /var/tmp/avo-slurm-mn.XXXXXX) || fail "no scratch directory"
chmod 755 "$tmp"
containers=()
network=""
cleanup() {
    local rc=$?
    set +e
    for c in "${containers[@]}"; do "${pm[@]}" rm -f -t 0 "$c" >/dev/null 2>&1; done
    [ -n "$network" ] && "${pm[@]}" network rm -f "$network" >/dev/null 2>&1
    if [ $rc != 0 ] && [ $rc != 77 ]; then
        for f in "$tmp"/logs/*; do [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done
    fi
    rm -rf "$tmp"
    exit $rc
}
trap cleanup EXIT
trap "exit 143" TERM
trap "exit 130" INT

# ------------------------------------------------------------------ image
mkdir -p "$CT_CACHE" && exec 9>"$CT_CACHE/.lock" && flock 9 || fail "cannot lock $CT_CACHE"
# (77 where no Debian root can be built here: ct_root says why)
base=$(ct_root slurm "$(ct_packages "$avo") slurmctld slurmd slurm-client munge iproute2") ||
    { rc=$?; [ "$rc" = 77 ] && exit 77; fail "cannot build the Debian root with Slurm (see above)"; }
image=localhost/avo-slurm:$(basename "$(dirname "$base")")
if ! "${pm[@]}" image exists "$image"; then
    say "importing $base as $image"
    tar -C "$base" -c . | "${pm[@]}" import - "$image" >/dev/null || fail "podman import failed"
fi
for stale in $("${pm[@]}" images --format '{{.Repository}}:{{.Tag}}' | grep '^localhost/avo-slurm:'); do
    [ "$stale" = "$image" ] || "${pm[@]}" rmi "$stale" >/dev/null 2>&1
done
exec 9>&-

# ---------------------------------------------------------------- network
# A private subnet of this run's own: 10.<a>.<b>.0/24 from the PID, the
# first free one.
for try in 0 1 2 3 4 5 6 7; do
    n=$((($$ + try * 7919) % 60000))
    subnet=10.$((200 + n / 250 % 50)).$((n % 250)).0/24
    net3=${subnet%.0/24}
    if "${pm[@]}" network create --internal --subnet "$subnet" "$prefix-net" >/dev/null 2>"$tmp/net.err"; then
        network=$prefix-net
        break
    fi
done
[ -n "$network" ] || { cat "$tmp/net.err"; skip "podman cannot create a private network here"; }
ip_of() { case $1 in ctld) echo "$net3.2" ;; n*) echo "$net3.$((10 + ${1#n}))" ;; esac; }

# ------------------------------------------------------ cluster config
mkdir -p "$tmp/logs" "$tmp/etc"
dd if=/dev/urandom of="$tmp/etc/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$tmp/etc/munge.key"
{
    echo "ClusterName=avomn"
    echo "SlurmctldHost=ctld($(ip_of ctld))"
    cat <<'CONF'
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=10
SlurmctldTimeout=10
MessageTimeout=5
InactiveLimit=0
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
CONF
    for node in n1 n2 n3 n4; do
        echo "NodeName=$node NodeAddr=$(ip_of $node) CPUs=1 State=UNKNOWN"
    done
    echo "PartitionName=avo Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP"
} >"$tmp/etc/slurm.conf"
# What every container runs first: munged with the cluster's key, then its
# Slurm daemon in the foreground.
cat >"$tmp/etc/node.sh" <<'NODE'
#!/bin/bash
role=$1 etc=$2 logs=$3
mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge /var/spool/slurmd /var/spool/slurmctld
cp "$etc/munge.key" /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
munged --force --key-file=/etc/munge/munge.key --log-file="$logs/munged-$role.log" ||
    { echo "munged did not start" >&2; exit 1; }
if [ "$role" = ctld ]; then
    exec slurmctld -D -f "$etc/slurm.conf" -L "$logs/slurmctld.log"
fi
# A node that joins later: booted, its slurmd not yet started (join_node).
[ "${4:-}" = later ] && exec sleep infinity
exec slurmd -D -N "$role" -f "$etc/slurm.conf" -L "$logs/slurmd-$role.log"
NODE
chmod 755 "$tmp/etc/node.sh"

hosts=()
for h in ctld n1 n2 n3 n4; do hosts+=(--add-host "$h:$(ip_of $h)"); done
volumes=(-v "$src:$src:ro" -v "$tmp:$tmp")
case $build/ in "$src"/*) ;; *) volumes+=(-v "$build:$build:ro") ;; esac
# start ROLE: its container, in the background (runc, the explicit ulimits
# and cgroupfs of tests/containers; Podman's default seccomp profile and
# capabilities).
start() {
    local role=$1 when=${2:-now}
    "${pm[@]}" --runtime runc --cgroup-manager cgroupfs run -d --name "$prefix-$role" \
        --hostname "$role" --network "$network" --ip "$(ip_of "$role")" "${hosts[@]}" \
        --ulimit nofile=4096:4096 --ulimit nproc=8192:8192 "${volumes[@]}" \
        --env SLURM_CONF="$tmp/etc/slurm.conf" --env AVO_SLURM_REPLACE_AFTER=5 \
        --env HOME=/root --env LC_ALL=C \
        "$image" "$tmp/etc/node.sh" "$role" "$tmp/etc" "$tmp/logs" "$when" >/dev/null ||
        fail "podman could not start the container of $role"
    containers+=("$prefix-$role")
}
# join_node NODE: its slurmd starts (the node joins the cluster)
join_node() {
    "${pm[@]}" exec -d "$prefix-$1" slurmd -D -N "$1" -f "$tmp/etc/slurm.conf" \
        -L "$tmp/logs/slurmd-$1.log" || fail "slurmd did not start on $1"
}
# on ctld: run a command on the submit host (the controller's container)
on_ctld() { "${pm[@]}" exec "$prefix-ctld" "$@"; }
node_state() { on_ctld sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n 1; }
# wait_nodes STATE NODE...: until each node is in STATE (idle, down...), 90 s
wait_nodes() {
    local want=$1 node ok
    shift
    for _ in $(seq 180); do
        ok=1
        for node in "$@"; do
            case $(node_state "$node") in "$want"*) ;; *) ok=0 ;; esac
        done
        [ $ok = 1 ] && return 0
        sleep 0.5
    done
    on_ctld sinfo -N 2>&1
    fail "nodes $* did not become $want"
}
q() { sqlite3 "$1" "$2"; }

t0=$(date +%s)
start ctld
for node in n1 n2 n3; do start $node; done
start n4 later # booted now, so that joining mid-run takes seconds
wait_nodes idle n1 n2 n3
say "slurmctld and 3 slurmd nodes up in $(($(date +%s) - t0)) s: $(on_ctld sinfo -h -o '%D nodes %T' | tr '\n' ' ')"
on_ctld srun -N 3 --ntasks-per-node=1 hostname >"$tmp/probe.out" 2>&1 ||
    { cat "$tmp/probe.out"; fail "srun cannot run a step across the three nodes"; }
[ "$(sort -u "$tmp/probe.out" | tr '\n' ' ')" = "n1 n2 n3 " ] ||
    fail "srun -N 3 ran on: $(cat "$tmp/probe.out")"

listen="$(ip_of ctld):0"
slurm_opts="--ntasks-per-node=1 --partition=avo"
# check_archive DB MAX: the run is done with MAX candidates, each answered
# once, and each evaluation recorded once
check_archive() {
    local db=$1 max=$2
    [ "$(q "$db" "SELECT status FROM runs")" = done ] || fail "$db: run $(q "$db" "SELECT status FROM runs")"
    [ "$(q "$db" "SELECT count(*) FROM candidates")" = "$max" ] ||
        fail "$db: $(q "$db" "SELECT count(*) FROM candidates") candidates, expected $max"
    [ "$(q "$db" "SELECT count(*) FROM candidates WHERE status = 'pending'")" = 0 ] ||
        fail "$db: a candidate was never answered"
    [ "$(q "$db" "SELECT count(*) FROM candidates WHERE status <> 'ok'")" = 0 ] ||
        fail "$db: $(q "$db" "SELECT id, status, reason FROM candidates WHERE status <> 'ok'")"
    [ "$(q "$db" "SELECT count(DISTINCT key) FROM candidates")" = "$max" ] ||
        fail "$db: a candidate was evaluated twice"
    [ "$(q "$db" "SELECT count(*) FROM (SELECT candidate_id, config FROM evaluations
        GROUP BY 1, 2 HAVING count(*) > 1)")" = 0 ] || fail "$db: an evaluation is recorded twice"
}
# per_node DB: "n1=5 n3=7 ..." candidates evaluated on each node
per_node() {
    q "$1" "SELECT substr(json_extract(result, '\$.worker.name'), 1,
        instr(json_extract(result, '\$.worker.name'), '/') - 1) AS node, count(*)
        FROM candidates WHERE result IS NOT NULL GROUP BY node ORDER BY node" | tr '|' '=' | tr '\n' ' '
}

# ---------------------------------------- 1. a node lost, a node joins
db1="$tmp/run1.db"
# 64: on a quiet machine 40 ended about 30 s after n4 joined, before n4's
# worker had finished a candidate; n4 needs the run to go on a while.
max1=${AVO_MULTINODE_EVALS:-64}
t1=$(date +%s)
"${pm[@]}" exec "$prefix-ctld" "$avo" run "$src/examples/quickstart.lua" --db "$db1" \
    --slurm "$slurm_opts" --jobs 3 --listen "$listen" --max-evals "$max1" --retime 0 \
    >"$tmp/run1.out" 2>"$tmp/run1.err" &
engine=$!
# n2 dies while it evaluates: a compiler or a candidate runs there, and
# some candidates are already in.
killed=0
for _ in $(seq 1200); do
    if [ "$(q "$db1" "SELECT count(*) FROM candidates WHERE status != 'pending'" 2>/dev/null || echo 0)" -ge 4 ] &&
        "${pm[@]}" exec "$prefix-n2" pgrep -f 'cc1|avo worker' >/dev/null 2>&1 &&
        "${pm[@]}" exec "$prefix-n2" pgrep -x cc1 >/dev/null 2>&1; then
        "${pm[@]}" kill "$prefix-n2" >/dev/null && killed=1
        break
    fi
    kill -0 $engine 2>/dev/null || break
    sleep 0.1
done
[ $killed = 1 ] || { cat "$tmp/run1.err"; fail "node n2 was never seen compiling mid-run"; }
say "node n2 killed mid-run after $(($(date +%s) - t1)) s"
wait_nodes down n2
# The replacement step waits for room: n1 and n3 are busy, n2 is down.
for _ in $(seq 200); do grep -q "replacement task" "$tmp/run1.err" && break; sleep 0.2; done
grep -q "replacement task" "$tmp/run1.err" || { cat "$tmp/run1.err"; fail "no replacement step for the lost worker"; }
kill -0 $engine 2>/dev/null || fail "the run ended before n4 could join (more evaluations: AVO_MULTINODE_EVALS)"
join_node n4
wait_nodes alloc n4
say "node n4 joined mid-run after $(($(date +%s) - t1)) s"
wait $engine
rc=$?
wall1=$(($(date +%s) - t1))
[ $rc = 0 ] || { cat "$tmp/run1.err"; fail "the run exited $rc"; }
grep -Eq "worker n2/[0-9]* (lost|dropped)" "$tmp/run1.err" || { cat "$tmp/run1.err"; fail "the engine did not see n2's worker lost"; }
grep -q "queued again" "$tmp/run1.err" || { cat "$tmp/run1.err"; fail "n2's candidate was not queued again"; }
check_archive "$db1" "$max1"
nodes1=$(per_node "$db1")
for node in n1 n3 n4; do
    case " $nodes1" in *" $node="*) ;; *) cat "$tmp/run1.err"; fail "no candidate evaluated on $node ($nodes1)" ;; esac
done
[ -z "$(on_ctld squeue -h -o %j | grep '^avo-')" ] || { on_ctld squeue; fail "a Slurm job of the run is left"; }
say "run 1: $max1 candidates in $wall1 s across the cluster, n2 lost and n4 joined; per node: $nodes1"

# --------------------------- 2. interrupted on the cluster, resumed there
db2="$tmp/run2.db"
max2=${AVO_MULTINODE_RESUME_EVALS:-24}
t2=$(date +%s)
"${pm[@]}" exec "$prefix-ctld" bash -c 'echo $$ >"$1"; exec "${@:2}"' engine "$tmp/engine.pid" \
    "$avo" run "$src/examples/quickstart.lua" --db "$db2" --slurm "$slurm_opts" --jobs 3 \
    --listen "$listen" --max-evals "$max2" --retime 0 >"$tmp/run2.out" 2>"$tmp/run2.err" &
engine=$!
for _ in $(seq 1200); do
    [ "$(q "$db2" "SELECT count(*) FROM candidates WHERE status != 'pending'" 2>/dev/null || echo 0)" -ge 5 ] && break
    sleep 0.1
done
on_ctld kill -9 "$(cat "$tmp/engine.pid")"
wait $engine
done_before=$(q "$db2" "SELECT count(*) FROM candidates WHERE status != 'pending'")
[ "$done_before" -lt "$max2" ] || fail "the run finished before it could be interrupted"
for _ in $(seq 100); do
    [ -z "$(on_ctld squeue -h -o %j | grep '^avo-')" ] && break
    sleep 0.2
done
[ -z "$(on_ctld squeue -h -o %j | grep '^avo-')" ] || { on_ctld squeue; fail "the killed engine's Slurm job is left"; }
on_ctld "$avo" resume --db "$db2" --slurm "$slurm_opts" --jobs 3 --listen "$listen" \
    >"$tmp/resume.out" 2>"$tmp/resume.err" || { cat "$tmp/resume.err"; fail "avo resume --slurm failed"; }
wall2=$(($(date +%s) - t2))
grep -q "srun started 3 worker tasks" "$tmp/resume.err" || { cat "$tmp/resume.err"; fail "the resume started no Slurm step"; }
check_archive "$db2" "$max2"
say "run 2: interrupted (kill -9 of the engine) after $done_before of $max2 candidates, resumed on the cluster; $wall2 s in all; per node: $(per_node "$db2")"
say "PASS in $(($(date +%s) - t0)) s"
