# A single-node Slurm for tests and benchmarks (sourced): munged, slurmctld
# and slurmd as root with their config, state and logs in one directory,
# on free ports, stopped by PID.
#   cluster_start DIR   -> 0 with SLURM_CONF exported, or 1 with $cluster_error
#   cluster_stop        cancel every job, stop the daemons and wait until they
#                       have exited (safe to repeat; never fails)
#   cluster_logs        tail of the daemons' logs (for a skip message)
# Needs python3 (free ports).

cluster_dir=""
cluster_pids=""

cluster_logs() {
    for f in "$cluster_dir"/*.log "$cluster_dir"/*.out; do
        [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
    done
    return 0
}

cluster_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cluster_start() {
    cluster_dir=$1
    cluster_error=""
    if [ "$(id -u)" != 0 ]; then
        cluster_error="the test Slurm runs its daemons as root"; return 1
    fi
    for tool in slurmctld slurmd munged srun squeue scancel sinfo python3; do
        if ! command -v $tool >/dev/null; then
            cluster_error="$tool not found (tools/install-deps --tests installs slurm-wlm and munge)"
            return 1
        fi
    done
    mkdir -p "$cluster_dir/state" "$cluster_dir/spool"
    chmod 755 "$cluster_dir"
    host=$(hostname -s)
    ctld_port=$(cluster_free_port)
    slurmd_port=$(cluster_free_port)
    dd if=/dev/urandom of="$cluster_dir/munge.key" bs=1024 count=1 2>/dev/null
    chmod 600 "$cluster_dir/munge.key"
    if ! munged --force --socket="$cluster_dir/munge.sock" --key-file="$cluster_dir/munge.key" \
        --pid-file="$cluster_dir/munged.pid" --log-file="$cluster_dir/munged.log" \
        --seed-file="$cluster_dir/munged.seed" >"$cluster_dir/munged.out" 2>&1; then
        cluster_error="munged did not start"; return 1
    fi
    cat >"$cluster_dir/slurm.conf" <<CONF
ClusterName=avotest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$cluster_dir/munge.sock
CredType=cred/munge
StateSaveLocation=$cluster_dir/state
SlurmdSpoolDir=$cluster_dir/spool
SlurmctldPidFile=$cluster_dir/slurmctld.pid
SlurmdPidFile=$cluster_dir/slurmd.pid
SlurmctldLogFile=$cluster_dir/slurmctld.log
SlurmdLogFile=$cluster_dir/slurmd.log
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
CONF
    export SLURM_CONF="$cluster_dir/slurm.conf"
    slurmctld -D -f "$SLURM_CONF" >"$cluster_dir/slurmctld.out" 2>&1 &
    cluster_pids="$cluster_pids $!"
    slurmd -D -N "$host" -f "$SLURM_CONF" >"$cluster_dir/slurmd.out" 2>&1 &
    cluster_pids="$cluster_pids $!"
    # 30 s by the clock (sinfo itself waits when slurmctld does not answer);
    # a daemon that exits at start ends the wait at once.
    deadline=$(($(date +%s) + 30))
    while [ "$(date +%s)" -lt $deadline ]; do
        for p in $cluster_pids; do
            if cluster_gone "$p"; then
                cluster_error="a Slurm daemon (pid $p) exited at start"; return 1
            fi
        done
        if [ "$(timeout 5 sinfo -h -o %T 2>/dev/null)" = idle ]; then
            if timeout 60 srun -n 1 true >"$cluster_dir/probe.out" 2>&1; then
                return 0
            fi
            cluster_error="srun cannot run a step"; return 1
        fi
        sleep 0.5
    done
    cluster_error="slurmctld/slurmd did not bring the node up within 30 s"
    return 1
}

# cluster_gone PID: the process has exited (a zombie child of ours counts)
cluster_gone() {
    state=$(ps -o stat= -p "$1" 2>/dev/null || true)
    [ -z "$state" ] || [ "${state#Z}" != "$state" ]
}

# cluster_wait_gone PID: wait up to 10 s for it to exit after SIGTERM, then
# SIGKILL it and wait up to 5 s more
cluster_wait_gone() {
    for _ in $(seq 100); do cluster_gone "$1" && return 0; sleep 0.1; done
    kill -9 "$1" 2>/dev/null || true
    for _ in $(seq 50); do cluster_gone "$1" && return 0; sleep 0.1; done
    echo "cluster: process $1 did not exit" >&2
    return 0
}

cluster_stop() {
    [ -n "$cluster_dir" ] || return 0
    timeout 10 scancel --user=root >/dev/null 2>&1 || true
    munged_pid=$(cat "$cluster_dir/munged.pid" 2>/dev/null || true)
    for p in $cluster_pids $munged_pid; do kill "$p" 2>/dev/null || true; done
    # Wait for each: a daemon still writing its state or seed file into
    # cluster_dir makes the caller's rm -rf fail ("Directory not empty").
    for p in $cluster_pids $munged_pid; do cluster_wait_gone "$p"; done
    for p in $cluster_pids; do wait "$p" 2>/dev/null || true; done
    cluster_pids=""
    cluster_dir=""
}
