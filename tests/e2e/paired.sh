#!/bin/sh
# One figure everywhere, and it is paired (issue 30): the end of a run
# re-times the top K with the seed and the evaluator's baselines in the same
# rounds; the summary's first lines, the final status line, `avo best`,
# `avo show`, the report, the exports and the inspect command give the
# re-timed #1 with the same paired ratios (per round, median [95% interval])
# read from the one "retimed" event; `avo rebench` pairs the same way; a run
# that is not re-timed says its figures are unpaired; an event from before
# pairing still reads.  No timing is asserted: only that every view shows
# the figures the event holds, and that they are the per-round ratios.
. "$(dirname "$0")/lib.sh"
db=$tmp/q.db
expect_exit 0 "$AVO" run examples/quickstart.lua --db "$db" --jobs 1 generations=1 population=3
cp "$tmp/out" "$tmp/summary"; cp "$tmp/err" "$tmp/status"
q "$db" "SELECT data FROM events WHERE kind = 'retimed'" > "$tmp/ev.json"
q "$db" "SELECT candidate_id, score FROM rebench_results" > "$tmp/rounds.txt"

# The event: the seed timed in the rounds, every ratio the median and
# interval of the per-round ratios, per config too; the text every view prints.
python3 - "$tmp/ev.json" "$tmp/rounds.txt" > "$tmp/expected" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
assert d["paired"] is True and d["ranked"], d
seed = d["seed"]
assert seed and "median" in seed and len(seed["scores"]) == d["rounds"], seed
rounds = {}
for line in open(sys.argv[2]):
    cid, score = line.strip().split("|")
    rounds.setdefault(int(cid), []).append(float(score))
assert len(rounds[seed["id"]]) == len(seed["scores"]) and all(
    abs(a - b) < 1e-9 * b for a, b in zip(rounds[seed["id"]], seed["scores"])), (rounds, seed)
blas = {b["name"]: b for b in d["baselines"]}
assert "openblas" in blas and len(blas["openblas"]["scores"]) == d["rounds"], d["baselines"]
names = [c["name"] for c in blas["openblas"]["configs"]]
assert len(names) >= 3, names
def ratio_text(p):
    label = "seed #%d" % p["id"] if p["against"] == "seed" else p["against"]
    return "%.2fx %s [%.2f, %.2f]" % (p["median"], label, p["low"], p["high"])
for e in d["ranked"]:
    against = {p["against"]: p for p in e["paired"]}
    want = ["openblas"] + (["seed"] if e["id"] != seed["id"] else [])
    assert sorted(against) == sorted(want), (e["id"], list(against))
    for name, p in against.items():
        theirs = seed["scores"] if name == "seed" else blas[name]["scores"]
        ratios = [a / b for a, b in zip(e["scores"], theirs)]
        assert p["ratios"] == ratios, (p, ratios)
        assert abs(p["median"] - statistics.median(ratios)) < 1e-12, p
        assert p["low"] <= p["median"] <= p["high"], p
        assert [c["name"] for c in p["configs"]] == names, p["configs"]
    assert e["vs"]["openblas"] == against["openblas"]["median"], e
best = d["ranked"][0]
print(best["id"])
print(", ".join(ratio_text(p) for p in best["paired"]))
print("%.4g" % best["median"])
print("[%.4g, %.4g]" % (best["low"], best["high"]))
PY
first=$(sed -n 1p "$tmp/expected"); ratios=$(sed -n 2p "$tmp/expected"); med=$(sed -n 3p "$tmp/expected"); int=$(sed -n 4p "$tmp/expected")
[ -n "$first" ] && [ -n "$ratios" ] || fail "no re-timed best"

# The summary: the re-timed #1 first, paired; the recorded figures labelled.
head -1 "$tmp/summary" | grep -qF "best #$first (" || { cat "$tmp/summary"; fail "the summary does not start with the re-timed #1"; }
expect_in "$tmp/summary" ", re-timed: $med GFLOP/s $int (median of 3 rounds"
expect_in "$tmp/summary" "  paired per round (median [95% interval]): $ratios"
expect_in "$tmp/summary" "  openblas per config, paired: sq-512 "
# The per-config ratios (point 4: per shape, paired), from the event.
per_config=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = [p for p in d["ranked"][0]["paired"] if p["against"] == "openblas"][0]
print(", ".join("%s %.2fx [%.2f, %.2f]" % (c["name"], c["median"], c["low"], c["high"]) for c in p["configs"]))' "$tmp/ev.json")
expect_in "$tmp/summary" "  openblas per config, paired: $per_config"
expect_in "$tmp/summary" "recorded in the search (maximum of noisy measurements, unpaired):"
expect_in "$tmp/summary" "knob space: #$first is the seed's source with other knob values, so the 7 knobs kernels/cpu/sgemm.c declares (ORDER BM BN BK UNROLL TILE PACK"
expect_in "$tmp/summary" "inspect it: avo show $first --db $db --source"
expect_in "$tmp/status" "avo: re-timing the top"
tail -1 "$tmp/status" | grep -q "^avo: done after" || fail "the run did not end with its done line"
grep "^gen " "$tmp/status" | tail -1 | grep -qF "best #$first $med GFLOP/s re-timed, $ratios (paired)" ||
    { cat "$tmp/status"; fail "the final status line does not give the re-timed best"; }

# avo best and avo show: the same candidate and figures, text and JSON.
expect_exit 0 "$AVO" best --db "$db"
head -1 "$tmp/out" | grep -q "^candidate #$first " || { cat "$tmp/out"; fail "avo best is not the re-timed #1"; }
expect_in "$tmp/out" "re-timed $med GFLOP/s $int (median of 3 rounds"
expect_in "$tmp/out" "paired per round (median [95% interval]): $ratios"
expect_in "$tmp/out" "(recorded in the search)"
expect_exit 0 "$AVO" show "$first" --db "$db"
expect_in "$tmp/out" "paired per round (median [95% interval]): $ratios"
expect_in "$tmp/out" "  openblas per config, paired: $per_config"
for cmd in best "show $first"; do
    expect_exit 0 "$AVO" $cmd --db "$db" --json
    python3 - "$tmp/out" "$tmp/ev.json" <<'PY' || fail "$cmd --json does not carry the event's paired figures"
import json, sys
c = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
e = d["ranked"][0]
r = c["retimed"]
assert c["id"] == e["id"] and r["paired"] is True and r["best"] is True and r["rank"] == 1, r
assert (r["median"], r["low"], r["high"], r["rounds"]) == (e["median"], e["low"], e["high"], d["rounds"]), r
assert r["ratios"] == e["paired"], r
PY
done

# The report and the exports.
expect_exit 0 "$AVO" report --db "$db" -o "$tmp/r.html"
expect_in "$tmp/r.html" "best <a href=\"#c$first\">#$first</a>"
expect_in "$tmp/r.html" "re-timed: <span class=\"retimed\">$med $int</span>"
expect_in "$tmp/r.html" "paired per round (median [95% interval]): <span class=\"paired\">$ratios</span>"
expect_in "$tmp/r.html" "Recorded in the search (unpaired)"
expect_in "$tmp/r.html" "openblas per config, paired: $per_config"
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$tmp/r.html" || fail "the report is not well-formed"
expect_exit 0 "$AVO" export --db "$db" --json "$tmp/e.json"
python3 - "$tmp/e.json" "$tmp/ev.json" <<'PY' || fail "the JSON export does not carry the paired figures"
import json, sys
x = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
run = x["runs"][0]
assert run["retimed"] == d and run["retimed_best"] == d["ranked"][0]["id"], run.get("retimed_best")
by_id = {c["id"]: c for c in x["candidates"]}
for e in d["ranked"]:
    r = by_id[e["id"]]["retimed"]
    assert r["rank"] == e["rank"] and r["ratios"] == e["paired"], r
out = [c for c in x["candidates"] if not any(e["id"] == c["id"] for e in d["ranked"])]
assert all(c["retimed"]["paired"] is False for c in out), out
PY
expect_exit 0 "$AVO" export --db "$db" --git "$tmp/g"
[ "$(git -C "$tmp/g" rev-parse best)" = "$(git -C "$tmp/g" rev-parse "c$first")" ] ||
    fail "the git export's best branch is not the re-timed #1"

# avo runs: the re-timed #1 with its median, the paired ratio to openblas.
expect_exit 0 "$AVO" runs --db "$db"
expect_in "$tmp/out" "#$first $med GFLOP/s rt"
blas_median=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.2f" % [p for p in d["ranked"][0]["paired"] if p["against"] == "openblas"][0]["median"])' "$tmp/ev.json")
expect_in "$tmp/out" "${blas_median}x openblas paired"
expect_exit 0 "$AVO" runs --db "$db" --json
python3 - "$tmp/out" "$tmp/ev.json" <<'PY' || fail "avo runs --json does not carry the paired figures"
import json, sys
r = json.load(open(sys.argv[1]))[0]; d = json.load(open(sys.argv[2]))
assert r["retimed_best"] == d["ranked"][0]["id"] and r["retimed"]["ratios"] == d["ranked"][0]["paired"], r
PY

# avo rebench: the seed and OpenBLAS in its rounds, the same paired figures.
expect_exit 0 "$AVO" rebench --db "$db" --top 2 --rounds 2
expect_in "$tmp/out" "paired per round (median [95% interval])"
expect_in "$tmp/out" "baseline openblas in the same rounds: "
grep -q "x openblas \[" "$tmp/out" || { cat "$tmp/out"; fail "rebench gives no paired ratio to openblas"; }
expect_exit 0 "$AVO" rebench --db "$db" --top 2 --rounds 2 --json
python3 - "$tmp/out" <<'PY' || fail "rebench --json"
import json, statistics, sys
d = json.load(open(sys.argv[1]))
assert d["paired"] is True and d["rebench"] is True and d["rounds"] == 2, d
b = {x["name"]: x for x in d["baselines"]}["openblas"]
for e in d["ranked"]:
    p = {p["against"]: p for p in e["paired"]}["openblas"]
    assert p["ratios"] == [a / c for a, c in zip(e["scores"], b["scores"])], p
    assert abs(p["median"] - statistics.median(p["ratios"])) < 1e-12
PY
[ "$(q "$db" "SELECT count(*) FROM events WHERE kind = 'rebenched'")" = 2 ] || fail "rebench stored no event"

# Resume re-times again; the views follow the latest re-timing.
q "$db" "UPDATE runs SET status = 'interrupted', ended_at = NULL"
expect_exit 0 "$AVO" resume --db "$db" --jobs 1
[ "$(q "$db" "SELECT count(*) FROM events WHERE kind = 'retimed'")" = 2 ] || fail "resume did not re-time"
latest=$(q "$db" "SELECT json_extract(data, '$.ranked[0].id') FROM events WHERE kind = 'retimed' ORDER BY id DESC LIMIT 1")
expect_in "$tmp/out" "inspect it: avo show $latest "
expect_exit 0 "$AVO" best --db "$db"
head -1 "$tmp/out" | grep -q "^candidate #$latest " || fail "avo best does not follow the latest re-timing"

# An archive from before pairing (no seed, no `paired`): still reads, the
# ratios shown as ratios of medians.
q "$db" "UPDATE events SET data = json_remove(json_remove(data, '$.paired'), '$.seed') WHERE kind = 'retimed'"
q "$db" "UPDATE events SET data = json_remove(data, '$.ranked[0].paired', '$.ranked[1].paired', '$.ranked[2].paired', '$.ranked[3].paired', '$.ranked[4].paired') WHERE kind = 'retimed'"
expect_exit 0 "$AVO" best --db "$db"
expect_in "$tmp/out" "re-timed before pairing: "
expect_in "$tmp/out" "x openblas (ratio of medians)"
expect_exit 0 "$AVO" report --db "$db" -o "$tmp/old.html"
expect_in "$tmp/old.html" "(ratio of medians)"

# Re-timing off: every view says the figures are unpaired.
expect_exit 0 "$AVO" run examples/quickstart.lua --db "$tmp/off.db" --jobs 1 generations=0 population=3 --retime 0
expect_in "$tmp/out" "unpaired: re-timing is off (--retime 0 or avo.retime{top = 0}); the figures below are the search's own measurements"
expect_exit 0 "$AVO" best --db "$tmp/off.db"
expect_in "$tmp/out" "unpaired: the run was not re-timed"
expect_exit 0 "$AVO" best --db "$tmp/off.db" --json
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["retimed"]; assert r["paired"] is False and r["why"], r' "$tmp/out" ||
    fail "best --json of an unpaired run"
expect_exit 0 "$AVO" report --db "$tmp/off.db" -o "$tmp/off.html"
expect_in "$tmp/off.html" "<span class=\"unpaired\">unpaired: the run was not re-timed"
echo "paired: ok"
