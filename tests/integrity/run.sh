#!/bin/bash
# tests/integrity/run.sh — the planted-hack suite (issue 10, item 6).
#
# Every kernel in tests/integrity/attacks/ is an attack on the evaluation,
# written as an adversary who has read avo's source would; its header says
# what it tries, which defence must stop it, and what the verdict must be
# ("integrity: expect=fail|noinflate|any", optionally followed by
# "status=S" and "reason=TEXT": the verdict must be S and its reason must
# contain TEXT, so the attack is known to fail BY the defence it names).
# Each attack is evaluated twice:
# by `avo eval --json` and by a one-candidate `avo run` into an archive that
# already holds earlier candidates. An attack is CAUGHT when all of these
# hold, otherwise it ESCAPED:
#   - both commands end normally with a verdict (the engine never aborts);
#   - the verdict is never ok with an inflated score (more than $INFLATION
#     times the honest kernel, kernels/honest.c, measured in the same run);
#     expect=fail: the verdict is not ok; a failure names its reason, and the
#     status is one of wrong, crashed, invalid, timeout, compile_error;
#   - the canary file and a victim process of the test are untouched, no
#     connection reached the test's listener, no file over 1 GiB appeared;
#   - every compile-cache file that existed before is unchanged, no cache
#     file over 32 MiB is left, and afterwards the honest kernel still
#     passes and a kernel writing zeros still fails (the cached reference
#     is intact);
#   - the archive rows of earlier candidates (status, score, per-config
#     rates) are unchanged;
#   - neither the fake API key exported here, nor the planted host secret,
#     nor a line of /etc/passwd appears in any output or in the archive;
#   - no output and no new archive row holds "INTEGRITY-ESCAPE:", the line an
#     attack prints (then failing on purpose, so the log is kept) when a step
#     worked whose effect the test cannot see (a private mount view);
#   - include_dev_zero: no process of the evaluation grew past 1 GiB
#     resident (it runs under an outer 3 GiB address-space cap).
# Then a GA is seeded with kernels/ga_cheat.c, whose CHEAT knob skips the
# work on timed calls and whose ADAPT knob is the gap-measuring adaptive
# cheat (attacks/time_adaptive_gaps.c): no candidate with either knob on may
# be ok (each must be "wrong" by the checks of timed runs), and `avo
# rebench` of the run must rank none of them.
#
# Started as root, the suite runs twice, side by side: as root and as nobody
# (setpriv to uid/gid 65534, HOME, caches and archive in a directory that
# user owns).
# Started as another user it runs once as that user. All of that once per
# sandbox mechanism (issue 19), forced with AVO_SANDBOX: $INTEGRITY_MECHANISMS
# (default "namespaces landlock unisolated"). An attack a
# mechanism cannot stop says so in its header ("integrity: escapes=MECH,..."
# where MECH is a mechanism, or MECH/root or MECH/user for avo started by
# root or by anyone else; the table in docs/threat-model.md): under those it must
# escape (ESCAPES, as documented), and being caught there fails too (the
# table is out of date). It prints one table per mode and exits 1 if any
# attack escaped where it should not, or was caught where it should not be.
# A mechanism the machine lacks is reported as missing, with why: the suite
# still passes where every mechanism the machine offers held, the one avo
# chooses by itself among them (landlock in a chroot or under a container's
# seccomp profile), so it runs and asserts its table in every place avo
# runs. Only a mechanism named in $INTEGRITY_MECHANISMS that the machine
# lacks makes it SKIPPED (exit 77).
#
# Attacks modify files only under the test's scratch root (-DINTEGRITY_ROOT)
# and never signal anything but the test's victim, their own worker and
# engine.
#
# Two side-by-side runs (--jobs 2) follow: "neighbours" (attacks on other
# processes beside honest candidates, which must all pass) and
# "fault_fakers" (six candidates that fake an infrastructure fault, which
# must be charged while the run goes on to the end); then "remote", the key
# scan of attacks/secret_memory.c on a remote worker (`avo worker --connect`
# holding the run's secret and the fake keys).
#
#   tests/integrity/run.sh [ATTACK|neighbours|fault_fakers|remote|ga ...]
#       (default: every attack, then both side-by-side runs and the GA)
# INTEGRITY_KEEP=1 keeps the scratch root (logs/ holds every output).
set -u

src=${AVO_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
avo=${AVO:-$src/build/avo}
here=$src/tests/integrity
evaluator=$here/evaluators/mm.lua
INFLATION=3
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3)

for tool in sqlite3 sha256sum setpriv timeout prlimit; do
    command -v "$tool" >/dev/null || { echo "integrity: SKIP: $tool is missing" >&2; exit 77; }
done
[ -x /usr/bin/time ] || { echo "integrity: SKIP: /usr/bin/time (package time) is missing" >&2; exit 77; }
[ -n "$python" ] || { echo "integrity: SKIP: python3 is missing" >&2; exit 77; }
[ -x "$avo" ] || { echo "integrity: $avo is not built" >&2; exit 1; }

# ------------------------------------------------------- each mechanism
if [ -z "${INTEGRITY_MECHANISM:-}" ]; then
    overall=0 summary=""
    # The mechanism avo takes here by itself: it must be among those run.
    chosen=$(env -u AVO_SANDBOX "$avo" doctor | sed -n 's/^sandbox  *\([a-z]*\) .*/\1/p')
    for mechanism in ${INTEGRITY_MECHANISMS:-namespaces landlock unisolated}; do
        if ! AVO_SANDBOX=$mechanism "$avo" doctor | grep -q "^sandbox  *$mechanism "; then
            why=$(AVO_SANDBOX=$mechanism "$avo" doctor | grep -A1 "^  $mechanism  *MISSING" | tr -s ' \n' ' ')
            if [ -n "${INTEGRITY_MECHANISMS:-}" ]; then
                echo "integrity: SKIP mechanism $mechanism: $why" >&2
                summary+="integrity: mechanism $mechanism: SKIPPED (not on this machine)"$'\n'
                [ "$overall" = 0 ] && overall=77
            else
                echo "integrity: mechanism $mechanism is not on this machine, not run: $why" >&2
                summary+="integrity: mechanism $mechanism: not on this machine ($why)"$'\n'
            fi
            continue
        fi
        echo "=================== sandbox mechanism: $mechanism"
        out=$(mktemp "${TMPDIR:-/tmp}/avo-integrity-out.XXXXXX") || exit 1
        INTEGRITY_MECHANISM=$mechanism AVO_SANDBOX=$mechanism "$0" "$@" 2>&1 | tee "$out"
        rc=${PIPESTATUS[0]}
        case $rc in
            0) summary+="integrity: mechanism $mechanism: as documented"$'\n' ;;
            77) summary+="integrity: mechanism $mechanism: a mode SKIPPED (see above)"$'\n'
                [ "$overall" = 0 ] && overall=77 ;;
            *) summary+="integrity: mechanism $mechanism: FAILED (exit $rc)"$'\n'
               # what failed, repeated in the last lines (CI shows a log's end)
               summary+=$(grep -E 'not as documented: |honest kernel does not pass|results say|: FAILED' "$out" |
                   sed 's/^/    /')$'\n'
               overall=1 ;;
        esac
        rm -f "$out"
    done
    case " ${INTEGRITY_MECHANISMS:-namespaces landlock unisolated} " in
        *" $chosen "*) ;;
        *) chosen="" ;;
    esac
    if [ -z "$chosen" ] && [ -z "${INTEGRITY_MECHANISMS:-}" ]; then
        summary+="integrity: SKIPPED: avo chooses no isolating mechanism here (avo doctor)"$'\n'
        [ "$overall" = 0 ] && overall=77
    fi
    echo
    printf '%s' "$summary"
    exit $overall
fi

# ---------------------------------------------------------------- both modes
# The two modes run side by side (each has its own scratch root, cache,
# archive, listener, victim and uids: root's candidates run as sandbox
# uids, nobody's as nobody), their tables printed one after the other.
if [ "$(id -u)" = 0 ] && [ -z "${INTEGRITY_MODE:-}" ]; then
    logs=$(mktemp -d "${TMPDIR:-/tmp}/avo-integrity-modes.XXXXXX") || exit 1
    INTEGRITY_MODE=root "$0" "$@" >"$logs/root" 2>&1 &
    root_pid=$!
    as_nobody() { TMPDIR=/tmp setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    script=$0 nobody_env= nobody_avo=$avo stage=
    if ! as_nobody test -x "$avo" -a -r "$evaluator" -a -x "$0"; then
        # The build is out of uid 65534's reach (a checkout under /root):
        # that mode runs a copy of the binary and this suite it can read.
        stage=$(mktemp -d /tmp/avo-integrity-stage.XXXXXX) && mkdir -p "$stage/tests" &&
            cp -r "$here" "$stage/tests/" && cp -r "$src/strategies" "$src/operators" "$stage/" &&
            cp "$avo" "$stage/avo" && chmod -R a+rX "$stage"
        script=$stage/tests/integrity/run.sh
        nobody_env="AVO_SOURCE_ROOT=$stage AVO=$stage/avo AVO_PATH=$stage"
        nobody_avo=$stage/avo
    fi
    if as_nobody test -x "$nobody_avo"; then
        INTEGRITY_MODE=nobody as_nobody env $nobody_env "$script" "$@" >"$logs/nobody" 2>&1
        nobody_rc=$?
    else
        echo "integrity: SKIP mode nobody: uid 65534 cannot run $avo or a copy of it in /tmp" >"$logs/nobody"
        nobody_rc=77
    fi
    wait "$root_pid"
    root_rc=$?
    cat "$logs/root" "$logs/nobody"
    rm -rf "$logs"
    [ -n "$stage" ] && rm -rf "$stage"
    describe() {
        case $1 in
            0) echo "as documented" ;;
            77) echo "SKIPPED (see above)" ;;
            *) echo "FAILED (exit $1)" ;;
        esac
    }
    echo
    echo "integrity ($INTEGRITY_MECHANISM): mode root: $(describe $root_rc)"
    echo "integrity ($INTEGRITY_MECHANISM): mode nobody: $(describe $nobody_rc)"
    [ $root_rc != 0 ] && exit 1
    [ $nobody_rc = 0 ] || [ $nobody_rc = 77 ] || exit 1
    exit $nobody_rc
fi
mode=${INTEGRITY_MODE:-$(id -un 2>/dev/null || id -u)}
starter=user # who started avo, as the attacks' "escapes=" lines say it
[ "$(id -u)" = 0 ] && starter=root

# ------------------------------------------------------------------- set-up
root=$(mktemp -d "${TMPDIR:-/tmp}/avo-integrity.XXXXXX") || exit 1
root=$(realpath "$root")
listener_pid= victim_pid=
cleanup() {
    [ -n "$listener_pid" ] && kill "$listener_pid" 2>/dev/null
    [ -n "$victim_pid" ] && kill "$victim_pid" 2>/dev/null
    if [ -n "${INTEGRITY_KEEP:-}" ]; then echo "integrity: kept $root" >&2; else rm -rf "$root"; fi
}
trap cleanup EXIT
mkdir -p "$root/work" "$root/home" "$root/xdg" "$root/logs"
cd "$root/work" || exit 1

# The fake key: a fragment of 18 characters or more anywhere holds "KEYMATERIAL"
# (attacks/secret_memory.c scans for it).
secret="sk-canary-$$-$RANDOM$RANDOM-KEYMATERIAL-KEYMATERIAL-KEYMATERIAL"
host_secret="HOSTSECRET-$$-$RANDOM$RANDOM"
passwd_line=$(head -n 1 /etc/passwd)
export HOME=$root/home XDG_CACHE_HOME=$root/xdg AVO_CACHE=$root/cache INTEGRITY_ROOT=$root
export INTEGRITY_DRIVER=$$
printf '"%s"\n' "$host_secret" >"$root/host-secret.inc"
canary_text="canary of the integrity suite, mode $mode"
reset_canary() { echo "$canary_text" >"$root/canary"; }
reset_canary
archive=$root/archive.db

"$python" "$here/listener.py" "$root/listener.sock" "$root/listener.log" "$root/port" &
listener_pid=$!
for _ in $(seq 100); do [ -s "$root/port" ] && break; sleep 0.05; done
[ -s "$root/port" ] || { echo "integrity: the socket listener did not start" >&2; exit 1; }
INTEGRITY_PORT=$(cat "$root/port")
start_victim() {
    sleep 3600 &
    victim_pid=$!
}
start_victim

# in_env CMD...: CMD in the environment avo gets here, and nothing else of
# the driver's (so no credential of whoever started the test can leak): the
# scratch paths, the test's knobs and the fake API keys the attacks hunt for.
in_env() {
    local keep=() v
    for v in CC ASAN_OPTIONS UBSAN_OPTIONS LD_LIBRARY_PATH AVO_PATH AVO_SANDBOX AVO_SANDBOX_UID_BASE; do
        [ -n "${!v:-}" ] && keep+=("$v=${!v}")
    done
    env -i PATH="$PATH" TMPDIR="${TMPDIR:-/tmp}" LC_ALL=C HOME="$HOME" \
        XDG_CACHE_HOME="$XDG_CACHE_HOME" AVO_CACHE="$AVO_CACHE" ${keep[@]+"${keep[@]}"} \
        AVO_LLM_API_KEY="$secret" OPENAI_API_KEY="$secret" ANTHROPIC_API_KEY="$secret" \
        AVO_WORKER_SECRET="$secret" \
        INTEGRITY_ROOT="$root" INTEGRITY_DRIVER="$INTEGRITY_DRIVER" INTEGRITY_PORT="$INTEGRITY_PORT" \
        INTEGRITY_VICTIM="$victim_pid" "$@"
}

# eval_json KERNEL OUT_PREFIX [WRAPPER...]: avo eval --json; sets eval_rc.
eval_json() {
    local kernel=$1 out=$2
    shift 2
    in_env "$@" timeout 180 "$avo" eval "$kernel" --evaluator "$evaluator" --json \
        >"$out.out" 2>"$out.err" </dev/null
    eval_rc=$?
}

# field FILE KEY: a top-level field of the JSON verdict in FILE, "" if none.
field() {
    "$python" - "$1" "$2" <<'EOF'
import json, sys
try:
    text = open(sys.argv[1]).read().strip().splitlines()
    rec = json.loads(text[-1]) if text else {}
except (ValueError, OSError, IndexError):
    rec = {}
v = rec.get(sys.argv[2], "") if isinstance(rec, dict) else ""
print("" if v is None else str(v).replace("\n", " ")[:200])
EOF
}

cache_sums() {
    [ -d "$AVO_CACHE" ] || return 0
    find "$AVO_CACHE" -type f -name '*.so' -print0 | xargs -0 -r sha256sum | LC_ALL=C sort
}
archive_rows() {
    sqlite3 "$archive" "SELECT id, status, quote(score) FROM candidates WHERE id <= $1 ORDER BY id;
        SELECT candidate_id, config, correct, quote(gflops) FROM evaluations
        WHERE candidate_id <= $1 ORDER BY candidate_id, config;" 2>&1
}

# ------------------------------------------------------------- the baseline
eval_json "$here/kernels/honest.c" "$root/logs/honest1"
honest=$(field "$root/logs/honest1.out" score)
eval_json "$here/kernels/honest.c" "$root/logs/honest2"
honest2=$(field "$root/logs/honest2.out" score)
if [ "$(field "$root/logs/honest1.out" status)" != ok ] || [ "$(field "$root/logs/honest2.out" status)" != ok ]; then
    echo "integrity ($mode): the honest kernel does not pass: $(field "$root/logs/honest1.out" status):" \
        "$(field "$root/logs/honest1.out" reason | cut -c1-200)" >&2
    cat "$root/logs/honest1.out" "$root/logs/honest1.err" >&2
    exit 1
fi
mechanism=$(field "$root/logs/honest1.out" sandbox)
if [ "$mechanism" != "$INTEGRITY_MECHANISM" ]; then
    echo "integrity ($mode): results say \"sandbox\": \"$mechanism\", not $INTEGRITY_MECHANISM" >&2
    exit 1
fi
honest=$("$python" -c "print(max($honest, $honest2))")
in_env "$avo" run "$here/eval_one.lua" --db "$archive" kernel="$here/kernels/honest.c" \
    evaluator="$evaluator" >"$root/logs/baseline.out" 2>&1 </dev/null ||
    { echo "integrity ($mode): baseline run failed" >&2; cat "$root/logs/baseline.out" >&2; exit 1; }

echo "integrity suite, sandbox $mechanism, mode $mode (uid $(id -u)): honest kernel $honest GFLOP/s; inflated = over ${INFLATION}x"
printf '%-22s %-14s %-9s %-10s %s\n' attack verdict "x honest" result "reason / what escaped"
printf '%-22s %-14s %-9s %-10s %s\n' ---------------------- -------------- --------- ---------- ---------------------

escaped=0 caught=0 documented=0 undocumented=""
# Names of the side-by-side runs (below) select them; the rest are attacks.
attacks=() sections=()
for a in "$@"; do
    case $a in
        neighbours | fault_fakers | remote | ga) sections+=("$a") ;;
        *) attacks+=("$a") ;;
    esac
done
if [ $# = 0 ]; then
    for f in "$here"/attacks/*.c; do attacks+=("$(basename "$f" .c)"); done
    sections=(neighbours fault_fakers remote ga)
fi
want_section() { [[ " ${sections[*]-} " == *" $1 "* ]]; }

# judge NAME STATUS SCORE REASON EXPECT [WANT_STATUS WANT_REASON]: appends to
# $why what is wrong with a verdict.
judge() {
    local name=$1 status=$2 score=$3 reason=$4 expect=$5 want_status=${6:-} want_reason=${7:-}
    [ -n "$want_status" ] && [ "$status" != "$want_status" ] &&
        why+="$name status '${status:-none}', expected $want_status; "
    # reason=A|B: either (an attack that may trip an earlier check on a busy machine)
    if [ -n "$want_reason" ]; then
        local alt said=
        IFS='|' read -ra alts <<<"$want_reason"
        for alt in "${alts[@]}"; do [[ "$reason" == *"$alt"* ]] && said=1; done
        [ -n "$said" ] || why+="$name reason '${reason:0:80}' does not say '$want_reason'; "
    fi
    case $status in
        ok)
            if [ "$expect" = fail ]; then
                why+="$name verdict ok; "
            elif "$python" -c "import sys; sys.exit(0 if float('$score' or 0) > $INFLATION * $honest else 1)"; then
                why+="$name ok with inflated score; "
            fi ;;
        wrong | crashed | invalid | timeout | compile_error)
            [ -n "$reason" ] || why+="$name $status without a reason; " ;;
        "") why+="$name gave no verdict; " ;;
        *) why+="$name status '$status' blames the engine; " ;;
    esac
}

for name in ${attacks[@]+"${attacks[@]}"}; do
    kernel=$here/attacks/$name.c
    [ -f "$kernel" ] || { echo "integrity: no attack $kernel" >&2; exit 1; }
    expect=$(sed -n 's/.*integrity: expect=\([a-z]*\).*/\1/p' "$kernel" | head -n 1)
    [ -n "$expect" ] || { echo "integrity: $kernel has no 'integrity: expect=' line" >&2; exit 1; }
    # the mechanisms this attack is documented to escape (docs/threat-model.md)
    escapes=$(sed -n 's/.*integrity: escapes=\([a-z,/]*\).*/\1/p' "$kernel" | head -n 1)
    case ",$escapes," in
        *",$mechanism,"* | *",$mechanism/$starter,"*) known_escape=1 ;;
        *) known_escape= ;;
    esac
    want_status=$(sed -n 's/.*integrity: expect=[a-z]* .*status=\([a-z_]*\).*/\1/p' "$kernel" | head -n 1)
    want_reason=$(sed -n 's/.*integrity: expect=[a-z]* .*reason=\(.*\)$/\1/p' "$kernel" | head -n 1)
    log=$root/logs/$name
    why=""
    cp "$archive" "$root/archive.bak" # no avo holds it open now, so the copy is whole
    last_id=$(sqlite3 "$archive" "SELECT coalesce(max(id), 0) FROM candidates")
    rows_before=$(archive_rows "$last_id")
    sums_before=$(cache_sums)
    dump_before=$(sqlite3 "$archive" .dump 2>&1 | LC_ALL=C sort)
    : >"$root/listener.log"

    # avo eval --json (include_dev_zero: capped and measured)
    if [ "$name" = include_dev_zero ]; then
        eval_json "$kernel" "$log" /usr/bin/time -f %M -o "$log.rss" prlimit --as=3221225472
    else
        eval_json "$kernel" "$log"
    fi
    status=$(field "$log.out" status)
    score=$(field "$log.out" score)
    reason=$(field "$log.out" reason)
    [ "$eval_rc" = 0 ] || [ "$eval_rc" = 1 ] || why+="avo eval exited $eval_rc; "
    judge "eval" "$status" "$score" "$reason" "$expect" "$want_status" "$want_reason"

    # a one-candidate avo run into the archive
    in_env timeout 240 "$avo" run "$here/eval_one.lua" --db "$archive" kernel="$kernel" \
        evaluator="$evaluator" >"$log.run.out" 2>"$log.run.err" </dev/null
    run_rc=$?
    record=$(grep -o 'integrity-record .*' "$log.run.out" | head -n 1)
    run_status=$(sed -n 's/.* status=\([a-z_]*\).*/\1/p' <<<"$record")
    run_score=$(sed -n 's/.* score=\([^ ]*\).*/\1/p' <<<"$record")
    run_reason=$(sed -n 's/.* reason=\(.*\)$/\1/p' <<<"$record")
    judge "run" "$run_status" "$run_score" "$run_reason" "$expect" "$want_status" "$want_reason"
    if [ "$run_rc" != 0 ]; then
        why+="avo run exited $run_rc; "
        # a run that died must at least resume (issue 10: "avo resume aborts the same way")
        in_env timeout 240 "$avo" resume --db "$archive" >"$log.resume.out" 2>&1 </dev/null ||
            why+="avo resume exited $?; "
    fi

    # side effects
    [ "$(cat "$root/canary" 2>/dev/null)" = "$canary_text" ] || { why+="canary file modified; "; reset_canary; }
    kill -0 "$victim_pid" 2>/dev/null || { why+="victim process killed; "; start_victim; }
    [ -s "$root/listener.log" ] && why+="listener reached ($(tr '\n' ' ' <"$root/listener.log")); "
    big=$(find "$root" -xdev -type f -size +1G 2>/dev/null | head -n 3)
    [ -n "$big" ] && { why+="huge file written: $(echo $big); "; find "$root" -xdev -type f -size +1G -delete; }
    sums_after=$(cache_sums)
    changed=$(LC_ALL=C comm -23 <(echo "$sums_before") <(echo "$sums_after"))
    [ -n "$changed" ] && why+="cache entries changed: $(echo "$changed" | wc -l); "
    bloat=$([ -d "$AVO_CACHE" ] && find "$AVO_CACHE" -type f -size +32M | head -n 1)
    [ -n "$bloat" ] && why+="huge object left in the cache; "
    poisoned=
    eval_json "$here/kernels/honest.c" "$log.honest"
    [ "$(field "$log.honest.out" status)" = ok ] ||
        poisoned+="honest kernel fails afterwards ($(field "$log.honest.out" status): $(field "$log.honest.out" reason | cut -c1-160)); "
    eval_json "$here/kernels/zeros.c" "$log.zeros"
    [ "$(field "$log.zeros.out" status)" = wrong ] || poisoned+="zero-writing kernel passes afterwards; "
    why+=$poisoned
    if [ -n "$changed$bloat$poisoned" ]; then # start the next attack on a clean, warm cache
        rm -rf "$AVO_CACHE"
        eval_json "$here/kernels/honest.c" "$log.rewarm"
    fi
    dump_after=$(sqlite3 "$archive" .dump 2>&1 | LC_ALL=C sort)
    if [ "$(archive_rows "$last_id")" != "$rows_before" ]; then
        why+="earlier archive rows changed or lost; "
        rm -f "$archive" "$archive-wal" "$archive-shm"
        cp "$root/archive.bak" "$archive" # the next attack starts on the intact archive
    fi
    added=$(LC_ALL=C comm -13 <(echo "$dump_before") <(echo "$dump_after"))
    for s in "$secret" "$host_secret" "$passwd_line"; do
        if grep -qF -- "$s" "$log".* || grep -qF -- "$s" <<<"$added"; then
            why+="leaked '${s:0:20}'; "
        fi
    done
    marker=$( (cat "$log".out "$log".err "$log".run.out "$log".run.err 2>/dev/null; echo "$added") |
        grep -o 'INTEGRITY-ESCAPE: [^"%\\][^"\\]*' | head -n 1)
    [ -n "$marker" ] && why+="attack reports '${marker#INTEGRITY-ESCAPE: }'; "
    if [ "$name" = include_dev_zero ]; then
        rss=$(tail -n 1 "$log.rss" 2>/dev/null)
        [ -n "$rss" ] && [ "$rss" -gt 1048576 ] && why+="compiler grew to $((rss / 1024)) MiB; "
    fi

    ratio=-
    [ -n "$score" ] && ratio=$("$python" -c "print('%.3g' % (float('$score' or 0) / $honest))")
    if [ -z "$why" ] && [ -n "$known_escape" ]; then
        result=NOT-ESCAPED
        escaped=$((escaped + 1)) undocumented+="$name "
        detail="caught, but its header says it escapes under $mechanism: update escapes= and docs/threat-model.md ($reason)"
    elif [ -z "$why" ]; then
        result=CAUGHT
        caught=$((caught + 1))
        detail=$reason
    elif [ -n "$known_escape" ]; then
        result=ESCAPES
        documented=$((documented + 1))
        detail="as documented for $mechanism: $why"
    else
        result=ESCAPED
        escaped=$((escaped + 1)) undocumented+="$name "
        detail=$why
    fi
    printf '%-22s %-14s %-9s %-10s %s\n' "$name" "${status:-none}" "$ratio" "$result" "${detail:0:160}"
done

# --------------------------------------------------------- side by side
# side_by_side NAME OUT KERNEL...: one `avo run --jobs 2` evaluating the
# kernels at once; sets side_rc, and side_status[i] / side_reason[i] per kernel.
side_by_side() {
    local name=$1 out=$2 list
    shift 2
    list=$(IFS=,; echo "$*")
    in_env timeout 400 "$avo" run "$here/side_by_side.lua" --db "$root/$name.db" --jobs 2 \
        kernels="$list" evaluator="$evaluator" >"$out.out" 2>"$out.err" </dev/null
    side_rc=$?
    side_status=() side_reason=()
    local i
    for ((i = 1; i <= $#; i++)); do
        local line
        line=$(grep "^integrity-record $i " "$out.out" | head -n 1)
        side_status[$i]=$(sed -n 's/.* status=\([a-z_]*\).*/\1/p' <<<"$line")
        side_reason[$i]=$(sed -n 's/.* reason=//p' <<<"$line")
    done
}

# side_report NAME WHY DETAIL: the table row of a side-by-side run.
side_report() {
    local marker
    marker=$(grep -ho 'INTEGRITY-ESCAPE: [^"%\\][^"\\]*' "$root/logs/$1".* 2>/dev/null | head -n 1)
    [ -n "$marker" ] && why+="attack reports '${marker#INTEGRITY-ESCAPE: }'; "
    grep -qF -- "$secret" "$root/logs/$1".* && why+="leaked the key; "
    [ -n "$(sqlite3 "$root/$1.db" "SELECT 1 FROM candidates WHERE log LIKE '%INTEGRITY-ESCAPE%'
        OR log LIKE '%$secret%' LIMIT 1" 2>/dev/null)" ] && why+="escape marker or key in the archive; "
    kill -0 "$victim_pid" 2>/dev/null || { why+="victim process killed; "; start_victim; }
    if [ -z "$why" ]; then
        result=CAUGHT caught=$((caught + 1)) detail=$2
    else
        result=ESCAPED escaped=$((escaped + 1)) detail=$why undocumented+="$1 "
    fi
    printf '%-22s %-14s %-9s %-10s %s\n' "$1" "${3:-}" - "$result" "${detail:0:160}"
}

# Neighbours: attacks on other processes run beside honest candidates of
# the same run (--jobs 2); every honest one must pass (a neighbour killed is
# `crashed`), the attacks must not blame the engine, the run must finish.
if want_section neighbours; then
    why=""
    honest_k=$here/kernels/honest.c
    side_by_side neighbours "$root/logs/neighbours" "$honest_k" "$here/attacks/sigio_neighbour.c" \
        "$honest_k" "$here/attacks/prlimit_judge.c" "$honest_k" "$here/attacks/secret_memory.c" \
        "$honest_k" "$here/attacks/signal_others.c" "$honest_k"
    [ "$side_rc" = 0 ] || why+="avo run exited $side_rc; "
    n_ok=0
    for i in 1 3 5 7 9; do
        if [ "${side_status[$i]}" = ok ]; then n_ok=$((n_ok + 1)); else
            why+="honest neighbour $i: ${side_status[$i]:-no verdict} ${side_reason[$i]:0:60}; "
        fi
    done
    for i in 2 4 6 8; do
        judge "attack $i" "${side_status[$i]}" 0 "${side_reason[$i]}" any
    done
    side_report neighbours "5 honest neighbours ok beside 4 attacks" "ok x$n_ok of 5"
fi

# Fault fakers: candidates that pass their failure off as the machine's, a
# run of them side by side with honest ones; they are charged (not `error`,
# not left pending), the run goes on to the end and the honest ones pass.
if want_section fault_fakers; then
    why=""
    honest_k=$here/kernels/honest.c
    side_by_side fault_fakers "$root/logs/fault_fakers" "$honest_k" \
        "$here/attacks/fault_nospace.c" "$here/attacks/fault_hello.c" \
        "$here/attacks/fault_nospace.c" "$here/attacks/fault_hello.c" \
        "$here/attacks/fault_nospace.c" "$here/attacks/fault_hello.c" "$honest_k"
    [ "$side_rc" = 0 ] || why+="avo run exited $side_rc; "
    for i in 1 8; do
        [ "${side_status[$i]}" = ok ] || why+="honest $i: ${side_status[$i]:-no verdict} ${side_reason[$i]:0:120}; "
    done
    n_charged=0
    for i in 2 3 4 5 6 7; do
        case ${side_status[$i]} in wrong | crashed | invalid | timeout | compile_error) n_charged=$((n_charged + 1)) ;; esac
        judge "faker $i" "${side_status[$i]}" 0 "${side_reason[$i]}" fail
    done
    [ "$(sqlite3 "$root/fault_fakers.db" "SELECT status FROM runs" 2>&1)" = done ] ||
        why+="the run did not finish; "
    side_report fault_fakers "6 fakers charged, the run went on" "charged x$n_charged of 6"
fi

# Remote: the key scan on a remote worker (`avo worker --connect`, whose
# environment holds the run's secret and the fake API keys), beside an
# honest candidate; an engine with no local worker.
if want_section remote; then
    why=""
    in_env timeout 300 "$avo" run "$here/side_by_side.lua" --db "$root/remote.db" --jobs 0 \
        --listen 127.0.0.1:0 kernels="$here/kernels/honest.c,$here/attacks/secret_memory.c" \
        evaluator="$evaluator" >"$root/logs/remote.out" 2>"$root/logs/remote.err" </dev/null &
    engine_pid=$!
    address=""
    for _ in $(seq 200); do
        address=$(sed -n 's/^avo: workers connect to \([^ ]*\) .*/\1/p' "$root/logs/remote.err" 2>/dev/null)
        [ -n "$address" ] && break
        sleep 0.1
    done
    if [ -z "$address" ]; then
        why+="the engine did not listen; "
        kill "$engine_pid" 2>/dev/null
    else
        in_env timeout 300 "$avo" worker --connect "$address" --retry 5 \
            >"$root/logs/remote.worker.out" 2>"$root/logs/remote.worker.err" </dev/null &
        worker_pid=$!
    fi
    wait "$engine_pid"
    remote_rc=$?
    [ -n "$address" ] && { kill "$worker_pid" 2>/dev/null; wait "$worker_pid" 2>/dev/null; }
    [ "$remote_rc" = 0 ] || why+="avo run exited $remote_rc; "
    line1=$(grep '^integrity-record 1 ' "$root/logs/remote.out")
    line2=$(grep '^integrity-record 2 ' "$root/logs/remote.out")
    [[ "$line1" == *" status=ok "* ]] || why+="honest: ${line1:-no verdict}; "
    judge "scan" "$(sed -n 's/.* status=\([a-z_]*\).*/\1/p' <<<"$line2")" 0 "-" any
    side_report remote "no key in a remote worker's candidate" \
        "$(sed -n 's/.* status=\([a-z_]*\).*/\1/p' <<<"$line2")"
fi

# ------------------------------------------------- a GA with a cheating knob
if want_section ga; then
    ga_db=$root/ga.db
    why=""
    in_env timeout 600 "$avo" run "$here/ga.lua" --db "$ga_db" --jobs 2 \
        evaluator="$here/evaluators/mm_ga.lua" >"$root/logs/ga.out" 2>&1 </dev/null
    ga_rc=$?
    [ "$ga_rc" = 0 ] || why+="avo run exited $ga_rc; "
    cheats="(json_extract(knobs, '\$.CHEAT') = 1 OR json_extract(knobs, '\$.ADAPT') = 1)"
    best=$(sqlite3 -separator ' ' "$ga_db" "SELECT id, json_extract(knobs, '\$.CHEAT'),
        json_extract(knobs, '\$.ADAPT'), score
        FROM candidates WHERE status = 'ok' ORDER BY score DESC, id LIMIT 1" 2>&1)
    tried=$(sqlite3 "$ga_db" "SELECT count(*) FROM candidates WHERE $cheats" 2>&1)
    tried_adapt=$(sqlite3 "$ga_db" "SELECT count(*) FROM candidates WHERE json_extract(knobs, '\$.ADAPT') = 1" 2>&1)
    ok_cheats=$(sqlite3 "$ga_db" "SELECT group_concat(id || ':' || status || ':' || coalesce(reason, ''), ' | ')
        FROM candidates WHERE $cheats AND status = 'ok'" 2>&1)
    unjudged=$(sqlite3 "$ga_db" "SELECT count(*) FROM candidates WHERE $cheats AND
        (status != 'wrong' OR reason NOT LIKE '%timed runs%')" 2>&1)
    read -r best_id best_cheat best_adapt best_score <<<"$best"
    [ "${tried_adapt:-0}" -gt 0 ] 2>/dev/null || why+="the GA never tried ADAPT=1 (test too short); "
    [ -n "$ok_cheats" ] && why+="cheating candidates ok: ${ok_cheats:0:200}; "
    [ "${unjudged:-1}" = 0 ] || why+="$unjudged cheating candidates not failed by the timed-run checks; "
    ratio=-
    if [ -n "${best_score:-}" ]; then
        ratio=$("$python" -c "print('%.3g' % (float('$best_score') / $honest))")
    else
        why+="no ok candidate ($best); "
    fi
    # avo rebench re-times the run's best: it must rank no cheating candidate.
    in_env timeout 300 "$avo" rebench --db "$ga_db" --top 3 --rounds 2 >"$root/logs/ga.rebench.out" 2>&1 </dev/null ||
        why+="avo rebench exited $?; "
    ranked=$(sqlite3 "$ga_db" "SELECT count(*) FROM rebench_results r JOIN candidates c
        ON c.id = r.candidate_id WHERE (json_extract(c.knobs, '\$.CHEAT') = 1 OR
        json_extract(c.knobs, '\$.ADAPT') = 1)" 2>&1)
    [ "$ranked" = 0 ] || why+="avo rebench ranked cheating candidates ($ranked); "
    if [ -z "$why" ]; then
        result=CAUGHT caught=$((caught + 1))
        detail="best #$best_id CHEAT=$best_cheat ADAPT=$best_adapt; $tried cheating candidates tried ($tried_adapt ADAPT=1), none ok"
    else
        result=ESCAPED escaped=$((escaped + 1)) undocumented+="ga_cheat_knob "
        detail=$why
    fi
    printf '%-22s %-14s %-9s %-10s %s\n' ga_cheat_knob "best C${best_cheat:-?}A${best_adapt:-?}" "$ratio" "$result" "${detail:0:160}"
fi

# (the attacks not as documented named on the line, so a log cut to its
# last lines, as CI shows it, still says which)
echo "integrity ($mechanism, $mode): $caught caught, $documented escape as documented for $mechanism, $escaped not as documented${undocumented:+: ${undocumented% }}"
[ "$escaped" = 0 ]
