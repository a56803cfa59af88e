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
-- A self-hosted server that says nothing: a conservative default, said so;
-- the user's window where given.
local n, _, from = avo.llm.context_window{ base_url = args.base .. "/v1", model = "plain-openai" }
assert(n == avo.llm.DEFAULT_WINDOW and n == 8192 and from == "default", "default window")
n, _, from = avo.llm.context_window{ base_url = args.base .. "/v1", model = "plain-openai",
  context_window = 32768 }
assert(n == 32768 and from == "the user", "the user's window")
n, _, from = avo.llm.context_window{ base_url = args.base .. "/ctx3000/v1", model = "plain-openai",
  context_window = 32768 }
assert(n == 3000 and from == "the server", "the server's window above the user's")
assert(not pcall(avo.llm.context_window, { base_url = args.base .. "/v1", context_window = 12 }))
-- Token estimates: 3 characters a token until the server counts; the
-- ctxN server's tokenizer (POST /tokenize) is denser.
local req = { messages = { { role = "user", content = ("x"):rep(3000) } } }
assert(avo.llm.estimate_tokens({ base_url = args.base .. "/v1", model = "fresh-openai" }, req)
  == math.ceil(avo.llm.request_chars(req) / 3))
local tpc, measured = avo.llm.tokens_per_char{ base_url = args.base .. "/ctx3000/v1", model = "plain-openai" }
assert(measured and tpc > 1 / 2.8, "tokens per char from /tokenize: " .. tpc)
-- The error of a prompt too long names the window.
local r, err = avo.llm.chat{ base_url = args.base .. "/v1", model = "ctxerr2048-openai",
  messages = { { role = "user", content = "hi" } }, retries = 0 }
assert(not r and err:find("exceed context window of 2048", 1, true), tostring(err))
assert(window("/v1", "ctxerr2048-openai") == 2048, "window learned from the error")
assert(avo.llm.context_from_error("This model's maximum context length is 8192 tokens.") == 8192)
assert(avo.llm.context_from_error("prompt is too long: 210000 tokens > 200000 maximum") == 200000)
assert(avo.llm.context_from_error("HTTP 500") == nil)
io.stderr:write("window: ok\n")
