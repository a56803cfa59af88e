#!/bin/sh
# strategies/surrogate.lua on the deterministic test backend, and the
# evaluator's `restrictions` in every strategy: the surrogate spends exactly
# its budget of evaluations, the same seed gives the same lineage (batches
# too) and another seed another; no strategy proposes a configuration the
# restrictions rule out; a space with fewer valid configurations than the
# budget is searched to the end; the surrogate bounds its training set;
# every strategy's first generation is spread over the valid space; bad
# options, a bad restrictions field and a restrictions function that fails
# are errors that name them.
. "$(dirname "$0")/lib.sh"
ev=tests/lua/evaluators/restricted.lua

script() { # NAME STRATEGY EXTRA-OPTIONS
    printf 'local avo = require "avo"\nreturn avo.strategy("%s").run{ evaluator = "%s"%s }\n' \
        "$2" "$ev" "$3" >"$tmp/$1.lua"
}
lineage() { q "$1" "SELECT id, operator, knobs, status, score FROM candidates ORDER BY id"; }
# Every candidate of archive $1 verified, and its knobs within the restrictions.
all_valid() {
    [ "$(q "$1" "SELECT count(*) FROM candidates WHERE status != 'ok'")" = 0 ] ||
        fail "$2: a candidate outside the restrictions was evaluated: $(q "$1" "SELECT id, knobs, reason FROM candidates WHERE status != 'ok' LIMIT 3")"
    python3 - "$1" <<'PY' || fail "$2: knobs outside the restrictions"
import json, sqlite3, sys
for (knobs,) in sqlite3.connect(sys.argv[1]).execute("SELECT knobs FROM candidates"):
    k = json.loads(knobs)
    assert (k["BM"] == 0) == (k["BN"] == 0) and k["BK"] <= 64 and not (k["TILE"] > 0 and k["UNROLL"] == 8), k
PY
}

# Budget and determinism, one pick per round and batches of 4.
script s surrogate ""
script b surrogate ", batch = 4, initial = 5"
for s in s b; do
    expect_exit 0 "$AVO" run "$tmp/$s.lua" --db "$tmp/${s}1.db" --seed 3 --max-evals 40 --jobs 2
    expect_exit 0 "$AVO" run "$tmp/$s.lua" --db "$tmp/${s}2.db" --seed 3 --max-evals 40 --jobs 1
    expect_exit 0 "$AVO" run "$tmp/$s.lua" --db "$tmp/${s}3.db" --seed 4 --max-evals 40 --jobs 2
    [ "$(q "$tmp/${s}1.db" "SELECT count(*) FROM candidates")" = 40 ] || fail "$s: expected 40 evaluations"
    lineage "$tmp/${s}1.db" >"$tmp/${s}1.txt"
    lineage "$tmp/${s}2.db" >"$tmp/${s}2.txt"
    lineage "$tmp/${s}3.db" >"$tmp/${s}3.txt"
    cmp -s "$tmp/${s}1.txt" "$tmp/${s}2.txt" ||
        { diff "$tmp/${s}1.txt" "$tmp/${s}2.txt" | head; fail "$s: same seed, different lineage"; }
    cmp -s "$tmp/${s}1.txt" "$tmp/${s}3.txt" && fail "$s: different seeds gave the same lineage"
    all_valid "$tmp/${s}1.db" "surrogate $s"
    # The model leads after the initial samples.
    [ "$(q "$tmp/${s}1.db" "SELECT count(*) FROM candidates WHERE operator = 'surrogate' AND note = 'highest expected improvement'")" -ge 20 ] ||
        fail "$s: expected most candidates proposed by the model"
done
expect_exit 0 "$AVO" run "$tmp/s.lua" --db "$tmp/s4.db" --seed 3 --max-evals 40
expect_in "$tmp/err" "surrogate: model lengthscale"
# A batch proposes distinct configurations (the kriging believer spreads them).
[ "$(q "$tmp/b1.db" "SELECT count(DISTINCT knobs) FROM candidates")" = 40 ] || fail "batch: repeated knobs"

# A bounded training set: past max_train observations the model trains on
# the best and the latest (said once), the run goes on to its budget, the
# same seed gives the same lineage and it improves on the seed.
script m surrogate ", max_train = 10"
expect_exit 0 "$AVO" run "$tmp/m.lua" --db "$tmp/m1.db" --seed 3 --max-evals 40
expect_in "$tmp/err" "surrogate: 11 observations: the model trains on the best and the latest, 10 at most (max_train)"
[ "$(grep -c "trains on the best" "$tmp/err")" = 1 ] || fail "max_train: said more than once"
expect_exit 0 "$AVO" run "$tmp/m.lua" --db "$tmp/m2.db" --seed 3 --max-evals 40
[ "$(q "$tmp/m1.db" "SELECT count(*) FROM candidates")" = 40 ] || fail "max_train: expected 40 evaluations"
[ "$(lineage "$tmp/m1.db")" = "$(lineage "$tmp/m2.db")" ] || fail "max_train: same seed, different lineage"
all_valid "$tmp/m1.db" "surrogate max_train"
[ "$(q "$tmp/m1.db" "SELECT max(score) > (SELECT score FROM candidates WHERE operator = 'seed') FROM candidates")" = 1 ] ||
    fail "max_train: no improvement on the seed"

# Every strategy's first generation mixes the seed with configurations
# spread over the valid space (not only its neighbours): ga's default
# spread share is half of the 7 children (rounded up), each a valid
# configuration at least two knobs from the seed, all distinct; spread = 0
# leaves the seed's param_tweak children alone, spread = 1 fills generation 0.
spread_check() { # DB NAME COUNT OPERATOR
    [ "$(q "$1" "SELECT count(*) FROM candidates WHERE generation = 0 AND operator = '$4'
                 AND note = 'space-filling sample'")" = "$3" ] ||
        fail "$2: expected $3 space-filling samples in generation 0, got $(q "$1" "SELECT group_concat(operator) FROM candidates WHERE generation = 0")"
    python3 - "$1" "$4" <<'PY' || fail "$2: space-filling samples next to the seed or repeated"
import json, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
seed = json.loads(con.execute("SELECT knobs FROM candidates WHERE operator = 'seed'").fetchone()[0])
rows = [json.loads(k) for (k,) in con.execute(
    "SELECT knobs FROM candidates WHERE generation = 0 AND operator = ?", (sys.argv[2],))]
assert len({json.dumps(r, sort_keys=True) for r in rows}) == len(rows), rows
for r in rows:
    assert sum(r.get(k) != v for k, v in seed.items()) >= 2, (r, seed)
PY
}
script g0 ga ", generations = 3"
expect_exit 0 "$AVO" run "$tmp/g0.lua" --db "$tmp/g0.db" --seed 5 --max-evals 30
spread_check "$tmp/g0.db" ga 4 spread
all_valid "$tmp/g0.db" "ga spread"
script g1 ga ", generations = 3, spread = 1"
expect_exit 0 "$AVO" run "$tmp/g1.lua" --db "$tmp/g1.db" --seed 5 --max-evals 30
spread_check "$tmp/g1.db" "ga spread = 1" 7 spread
script g2 ga ", generations = 3, spread = 0"
expect_exit 0 "$AVO" run "$tmp/g2.lua" --db "$tmp/g2.db" --seed 5 --max-evals 30
[ "$(q "$tmp/g2.db" "SELECT count(*) FROM candidates WHERE generation = 0 AND operator = 'param_tweak'")" = 7 ] ||
    fail "ga spread = 0: expected the seed's 7 param_tweak children"
# islands: 4 records per island by default, so 3 children each in
# generation 0, 2 of them (half, rounded up) from one space-filling sample
# dealt out to the islands (distinct across islands: spread_check).
script i0 islands ", islands = 2, generations = 3"
expect_exit 0 "$AVO" run "$tmp/i0.lua" --db "$tmp/i0.db" --seed 5 --max-evals 40
spread_check "$tmp/i0.db" islands 4 spread
[ "$(q "$tmp/i0.db" "SELECT count(*) FROM candidates WHERE generation = 0")" = 7 ] ||
    fail "islands: expected the seed and 2 x 3 children in generation 0"
script me map_elites ", dims = { 'BM', 'BN' }, iterations = 2"
expect_exit 0 "$AVO" run "$tmp/me.lua" --db "$tmp/me.db" --seed 5 --max-evals 40
spread_check "$tmp/me.db" map_elites 16 random
[ "$(q "$tmp/s1.db" "SELECT count(*) FROM candidates WHERE generation = 0 AND note = 'random sample'")" = 10 ] ||
    fail "surrogate: expected 10 uniform samples of the valid space in generation 0"
script bad ga ", spread = 2"
expect_exit 1 "$AVO" run "$tmp/bad.lua" --db "$tmp/bad.db"
expect_in "$tmp/err" "ga: option 'spread' must be a number in [0, 1], got 2"

# Every strategy keeps to the restrictions (most random draws and mutations
# of this space are outside them).
script random random ", samples = 60"
script ga ga ", generations = 10"
script islands islands ", islands = 2, generations = 10"
script map_elites map_elites ", dims = { 'BM', 'BN' }, iterations = 10"
for s in random ga islands map_elites; do
    expect_exit 0 "$AVO" run "$tmp/$s.lua" --db "$tmp/$s.db" --seed 2 --max-evals 50
    [ "$(q "$tmp/$s.db" "SELECT count(*) FROM candidates")" -ge 20 ] || fail "$s: too few candidates"
    all_valid "$tmp/$s.db" "$s"
done

# A space of 6 valid configurations and a budget of 100: each is evaluated
# once and the search ends.
for s in s random; do
    AVO_TEST_TINY=1 expect_exit 0 "$AVO" run "$tmp/$s.lua" --db "$tmp/tiny_$s.db" --max-evals 100
    [ "$(q "$tmp/tiny_$s.db" "SELECT count(*) FROM candidates")" = 6 ] ||
        fail "$s: expected the 6 valid configurations, got $(q "$tmp/tiny_$s.db" "SELECT count(*) FROM candidates")"
    [ "$(q "$tmp/tiny_$s.db" "SELECT count(*) FROM candidates WHERE status != 'ok'")" = 0 ] ||
        fail "$s: tiny space: a configuration outside the restrictions"
done
AVO_TEST_TINY=1 expect_exit 0 "$AVO" run "$tmp/s.lua" --db "$tmp/tiny_s2.db" --max-evals 100
expect_in "$tmp/err" "found no new valid configuration; stopping"

# Bad options name the option.
for bad in "batch = 0|option 'batch' must be an integer >= 1, got 0" \
           "initial = 1.5|option 'initial' must be an integer >= 1, got 1.5" \
           "pool = -1|option 'pool' must be an integer >= 0, got -1" \
           "xi = -1|option 'xi' must be a finite number >= 0, got -1" \
           "refit = 'x'|option 'refit' must be an integer >= 1, got x" \
           "max_train = 4|option 'max_train' must be an integer >= 8, got 4" \
           "generations = 5|unknown option 'generations'"; do
    script bad surrogate ", ${bad%%|*}"
    expect_exit 1 "$AVO" run "$tmp/bad.lua" --db "$tmp/bad.db"
    expect_in "$tmp/err" "surrogate: ${bad#*|}"
done

# restrictions must be a function; one that fails names the evaluator.
sed 's/restrictions = function(k)/restrictions = 5, unused = function(k)/' "$ev" >"$tmp/badfield.lua"
printf 'local avo = require "avo"\nreturn avo.strategy("surrogate").run{ evaluator = "%s" }\n' \
    "$tmp/badfield.lua" >"$tmp/badfield_run.lua"
expect_exit 1 "$AVO" run "$tmp/badfield_run.lua" --db "$tmp/bf.db"
expect_in "$tmp/err" "restrictions"
expect_in "$tmp/err" "function"
AVO_TEST_RESTRICT_ERROR=1 expect_exit 1 "$AVO" run "$tmp/s.lua" --db "$tmp/re.db" --max-evals 10
expect_in "$tmp/err" "evaluator restricted: restrictions: "
expect_in "$tmp/err" "planted failure"
echo "surrogate: ok"
