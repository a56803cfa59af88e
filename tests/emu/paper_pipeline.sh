#!/bin/sh
# The AVO paper's experiment end to end on the CPU emulator, with scripted
# model answers and small configs: examples/avo_attention.lua evolves the
# seed attention (the agent searches the knowledge base indexed into the
# run's archive, retunes, compiles,
# evaluates, commits a faster correct version), then examples/gqa_transfer.lua
# carries the committed MHA version over to grouped-query attention, where it
# must verify as it is.  Skips (77) without the emulator or NVRTC.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"
unset AVO_LLM_REPLAY AVO_LLM_MODEL AVO_LLM_API_KEY AVO_LLM_BASE_URL
export AVO_LLM_PROVIDER=scripted

AVO_LLM_SCRIPT=tests/emu/avo_attention.jsonl expect_exit 0 "$AVO" run examples/avo_attention.lua \
    --db "$tmp/mha.db" --jobs 1 steps=2 \
    evaluator=tests/emu/evaluators/attention_small.lua
expect_in "$tmp/out" "speedup over the seed kernel"
best=$(q "$tmp/mha.db" "SELECT id FROM candidates WHERE operator = 'agent' AND status = 'ok'")
[ -n "$best" ] || fail "no committed agent version"
[ "$(q "$tmp/mha.db" "SELECT knobs FROM candidates WHERE id = $best")" = \
    '{"BLOCK_M":16,"BLOCK_N":32,"TPR":4}' ] || fail "the committed version has other knobs"
[ "$(q "$tmp/mha.db" "SELECT count(*) FROM evaluations WHERE candidate_id = $best AND correct = 1")" \
    -eq 3 ] || fail "the committed version is not verified on every config"
[ "$(q "$tmp/mha.db" "SELECT count(*) FROM attempts WHERE outcome = 'committed'")" -eq 1 ] \
    || fail "the commit is not among the attempts"
q "$tmp/mha.db" "SELECT count(*) FROM llm_calls WHERE response LIKE '%kb_search%'" | grep -qv '^0$' \
    || fail "the knowledge-base search is not recorded"
# The notes the agent searched are in the run's own archive.
[ "$(q "$tmp/mha.db" "SELECT count(*) FROM kb_docs")" -ge 1 ] || fail "kernels/kb not in the archive"
q "$tmp/mha.db" "SELECT count(*) FROM llm_calls WHERE request LIKE '%kernels/kb/%'" | grep -qv '^0$' \
    || fail "the search found no note"

AVO_LLM_SCRIPT=tests/emu/gqa_transfer.jsonl expect_exit 0 "$AVO" run examples/gqa_transfer.lua \
    --db "$tmp/gqa.db" --jobs 1 id="$best" db="$tmp/mha.db" steps=1 \
    evaluator=tests/emu/evaluators/attention_gqa.lua
[ "$(q "$tmp/gqa.db" "SELECT operator || ' ' || status || ' ' || knobs FROM candidates WHERE id = 1")" = \
    'transfer ok {"BLOCK_M":16,"BLOCK_N":32,"TPR":4}' ] || fail "the MHA version did not carry over"
q "$tmp/gqa.db" "SELECT note FROM candidates WHERE id = 1" | grep -q "MHA version #$best of" \
    || fail "the transferred version does not name its origin"
[ "$(q "$tmp/gqa.db" "SELECT count(*) FROM evaluations WHERE candidate_id = 1 AND correct = 1")" \
    -eq 2 ] || fail "the transferred version is not verified on every GQA config"
echo "paper pipeline on the emulator: ok"
