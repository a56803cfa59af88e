-- Context windows learned from the server (tests/llm/local.sh): GET
-- /props (llama.cpp), GET /v1/models (vLLM), nothing (a plain server), and
-- a "too long" error.  Args: base=URL (the fake server's root).
local avo = require "avo"
local args = ...
local function window(path, model)
  return (avo.llm.context_window{ base_url = args.base .. path, model = model or "plain-openai" })
end
assert(window("/ctx3000/v1") == 3000, "llama.cpp /props n_ctx")
assert(window("/vllm8192/v1") == 8192, "vLLM max_model_len")
assert(window("/v1") == nil, "nothing known of a plain server")
-- The error of a prompt too long names the window.
local r, err = avo.llm.chat{ base_url = args.base .. "/v1", model = "ctxerr2048-openai",
  messages = { { role = "user", content = "hi" } }, retries = 0 }
assert(not r and err:find("exceed context window of 2048", 1, true), tostring(err))
assert(window("/v1", "ctxerr2048-openai") == 2048, "window learned from the error")
assert(avo.llm.context_from_error("This model's maximum context length is 8192 tokens.") == 8192)
assert(avo.llm.context_from_error("prompt is too long: 210000 tokens > 200000 maximum") == 200000)
assert(avo.llm.context_from_error("HTTP 500") == nil)
io.stderr:write("window: ok\n")
