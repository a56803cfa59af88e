-- axpy with kernel baselines (docs/evaluators.md, "baselines"): "plain" is
-- the seed's own loop, measured like a candidate; "broken" disagrees with
-- the reference and must be reported wrong, never compared with.
local dir = debug.getinfo(1, "S").source:match("^@(.*)/") or "."
local ev = dofile(dir .. "/axpy.lua")
ev.name = "axpy_baselines"
ev.baselines = {
  { name = "plain", kernel = "tests/e2e/kernels/axpy.c", knobs = { UNROLL = 2 } },
  { name = "broken", kernel = "tests/e2e/kernels/axpy_wrong.c" },
}
return ev
