#!/bin/sh
# avo kb: indexing the shipped notes (kernels/kb), ranked search, JSON output,
# reading, a run consulting the KB of its archive, a file that is not UTF-8,
# AVO_DB_TIMEOUT refused as `avo runs` refuses it, and the error paths.
. "$(dirname "$0")/lib.sh"
kb="$tmp/kb.db"
json_get() { python3 -c "import json, sys; v = json.load(open(sys.argv[1])); print($2)" "$3"; }

expect_exit 0 "$AVO" kb --help;          expect_in "$tmp/out" "usage: avo kb add"
expect_exit 0 "$AVO" kb add kernels/kb --kb "$kb"
expect_in "$tmp/out" "kernels/kb: "
expect_in "$tmp/out" " 0 replaced, 0 unchanged, 0 removed"
notes=$(ls kernels/kb | grep -c '\.md$')
expect_exit 0 "$AVO" kb list --kb "$kb" --json
[ "$(json_get v 'len(v)' "$tmp/out")" = "$notes" ] || fail "expected $notes documents"
expect_exit 0 "$AVO" kb list --kb "$kb";  expect_in "$tmp/out" "kernels/kb/hopper.md"

# Adding again changes nothing.
expect_exit 0 "$AVO" kb add kernels/kb --kb "$kb"
expect_in "$tmp/out" "0 added, 0 replaced, $notes unchanged"

# Ranked search, as text and as JSON.
expect_exit 0 "$AVO" kb search "online softmax" --kb "$kb" --limit 3
expect_in "$tmp/out" "1. kernels/kb/"
expect_in "$tmp/out" "**"
expect_exit 0 "$AVO" kb search online softmax --kb "$kb" --json
first=$(json_get v 'v[0]["doc"]' "$tmp/out")
case "$first" in
    */softmax.md | */attention.md) ;;
    *) fail "'online softmax' ranked $first first" ;;
esac
for key in doc section title line snippet score; do
    json_get v "v[0][\"$key\"]" "$tmp/out" >/dev/null || fail "search result lacks $key"
done
expect_exit 0 "$AVO" kb search "setmaxnreg" --kb "$kb" --json
[ "$(json_get v 'v[0]["doc"]' "$tmp/out")" = kernels/kb/hopper.md ] || fail "setmaxnreg not in hopper.md"

# Queries are plain words, never search syntax.
for q in '"' '*' 'NEAR(' 'a OR' ')' 'title:gemm' "x'; DROP TABLE kb_docs; --"; do
    expect_exit 0 "$AVO" kb search "$q" --kb "$kb" --json
    json_get v 'len(v)' "$tmp/out" >/dev/null || fail "query '$q' did not print JSON"
done
expect_exit 0 "$AVO" kb search '"' --kb "$kb"; expect_in "$tmp/out" "no match"

# Reading by suffix, path and JSON.
expect_exit 0 "$AVO" kb read softmax.md --kb "$kb";        expect_in "$tmp/out" "# Softmax"
expect_exit 0 "$AVO" kb read kernels/kb/gemm.md --kb "$kb"; expect_in "$tmp/out" "Split-K"
expect_exit 0 "$AVO" kb read attention.md --kb "$kb" --json
[ "$(json_get v 'v["path"]' "$tmp/out")" = kernels/kb/attention.md ] || fail "read --json path"

# Errors.
expect_exit 1 "$AVO" kb add "$tmp/no-such-dir" --kb "$kb"; expect_in "$tmp/err" "cannot read directory"
expect_exit 1 "$AVO" kb read no-such-note.md --kb "$kb";    expect_in "$tmp/err" "no document 'no-such-note.md'"
expect_exit 2 "$AVO" kb search --kb "$kb";                  expect_in "$tmp/err" "kb search needs a query"
expect_exit 2 "$AVO" kb read --kb "$kb";                    expect_in "$tmp/err" "kb read needs exactly one"
expect_exit 2 "$AVO" kb add --kb "$kb";                     expect_in "$tmp/err" "kb add needs"
expect_exit 2 "$AVO" kb;                                    expect_in "$tmp/err" "kb needs a subcommand"
expect_exit 2 "$AVO" kb frobnicate;                         expect_in "$tmp/err" "unknown kb subcommand"
expect_exit 2 "$AVO" kb search x --limit 0 --kb "$kb";      expect_in "$tmp/err" "--limit needs"
expect_exit 1 "$AVO" kb search x --kb "$tmp/none.db";       expect_in "$tmp/err" "cannot open knowledge base"
[ ! -e "$tmp/none.db" ] || fail "a search created a knowledge base file"

# The KB added first to a file, then a run on that file as its archive:
# the run's agents see the notes through avo.kb.
# A standalone KB file holds the KB alone: no archive tables, no schema
# version; the run adds them.
expect_exit 0 "$AVO" kb add kernels/kb --kb "$tmp/run.db"
[ "$(q "$tmp/run.db" "SELECT count(*) FROM sqlite_schema WHERE tbl_name NOT LIKE 'kb\_%' ESCAPE '\' AND tbl_name NOT LIKE 'sqlite\_%' ESCAPE '\'")" = 0 ] ||
    fail "a standalone KB file has tables other than the KB's"
[ "$(q "$tmp/run.db" "PRAGMA user_version")" = 0 ] || fail "a standalone KB file has a schema version"
expect_exit 0 "$AVO" run tests/e2e/kb_run.lua --db "$tmp/run.db" --jobs 1
expect_in "$tmp/out" "kb_run: ok"
[ "$(q "$tmp/run.db" "SELECT count(*) FROM runs")" = 1 ] || fail "the run on the KB file is not recorded"
expect_exit 0 "$AVO" runs --db "$tmp/run.db"
expect_in "$tmp/out" "tests/e2e/kb_run.lua"
expect_exit 0 "$AVO" kb list --kb "$tmp/run.db"; expect_in "$tmp/out" "kernels/kb/cpu.md"
# A Latin-1 note is indexed, listed, searched and read (its non-ASCII bytes
# shown as '?'), never "out of memory" or "no document".
mkdir "$tmp/latin1"
printf '# Caf\351 tiling\n\nTiles of 32 r\351duce bank conflicts.\n' > "$tmp/latin1/cafe.md"
expect_exit 0 "$AVO" kb add "$tmp/latin1" --kb "$tmp/l1.db"; expect_in "$tmp/out" "1 added"
expect_exit 0 "$AVO" kb list --kb "$tmp/l1.db";               expect_in "$tmp/out" "cafe.md"
expect_exit 0 "$AVO" kb search "bank conflicts" --kb "$tmp/l1.db"; expect_in "$tmp/out" "cafe.md"
expect_exit 0 "$AVO" kb read cafe.md --kb "$tmp/l1.db";       expect_in "$tmp/out" "r?duce"

# A malformed AVO_DB_TIMEOUT: the KB commands refuse it as the archive's do.
AVO_DB_TIMEOUT=abc expect_exit 1 "$AVO" runs --db "$tmp/run.db"
cp "$tmp/err" "$tmp/runs.err"
expect_in "$tmp/runs.err" "AVO_DB_TIMEOUT='abc' is not a number of seconds"
AVO_DB_TIMEOUT=abc expect_exit 1 "$AVO" kb list --kb "$tmp/run.db"
cmp -s "$tmp/err" "$tmp/runs.err" || fail "kb list and runs refuse AVO_DB_TIMEOUT=abc differently: $(cat "$tmp/err")"
AVO_DB_TIMEOUT=abc expect_exit 1 "$AVO" kb search x --kb "$tmp/run.db"
cmp -s "$tmp/err" "$tmp/runs.err" || fail "kb search refuses AVO_DB_TIMEOUT=abc differently"
echo "kb: ok"
