-- The synthetic workload (tests/lua/evaluators/synthetic.lua) with
-- evaluator feedback: artifacts(result, cand) returns values the next
-- prompt about the candidate shows (tests/llm/scripted.sh).
local ev = dofile("tests/lua/evaluators/synthetic.lua")
ev.name = "feedback"
ev.artifacts = function(result, cand)
  return { hint = "try BK=64", unroll = cand.knobs.UNROLL, status = result.status }
end
return ev
