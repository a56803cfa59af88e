-- avo.llm.server — what is known of a server: context windows, token estimates, slots.
-- (A part of avo.llm: see lua/avo/llm.lua.)

local core = require "avo.core"
local sched = require "avo.sched"
local S = require "avo.llm.state"
local config = require "avo.llm.config"
local transport = require "avo.llm.transport"

local M = S.api
local DEFAULT_BASE = config.DEFAULT_BASE
local array = config.array
local env = config.env
local resolve = config.resolve
local client = transport.client

---------------------------------------------------------- server metadata

-- Servers on this machine or a private network: single-user servers
-- (llama.cpp, Ollama, ...) that often serve one request at a time.
local function is_local(url)
  local host = (url:match("^https?://%[([^%]]+)%]") or url:match("^https?://([^/:]+)") or "")
    :lower()
  return host == "localhost" or host == "::1" or host == "0.0.0.0" or host:match("^127%.") ~= nil
    or host:match("^10%.") ~= nil or host:match("^192%.168%.") ~= nil
    or host:match("%.local$") ~= nil
end

-- The context window named in a provider's "too long" error, or nil.
-- Wordings: OpenAI and vLLM "maximum context length is N tokens",
-- llama-cpp-python "exceed context window of N", llama.cpp "context size
-- (N tokens)", Anthropic "N tokens > M maximum".
function M.context_from_error(text)
  if type(text) ~= "string" then return nil end
  local n = text:match("maximum context length is (%d+)") or text:match("context window of (%d+)")
    or text:match("available context size %((%d+) tokens%)") or text:match("context size of (%d+)")
    or text:match("n_ctx[%s=:]+(%d+)") or text:match("%d+ tokens > (%d+) maximum")
  return n and math.tointeger(tonumber(n)) or nil
end

------------------------------------------------------------ token estimates

-- Tokens per character where nothing was measured: 3 characters a token.
-- Code tokenizes denser than prose (SmolLM2's tokenizer gives 3.3-3.5
-- characters a token on C kernels), so the common 4 was 15-20% low.
M.DEFAULT_TOKENS_PER_CHAR = 1 / 3

-- Context window assumed for a self-hosted OpenAI-compatible server that
-- says nothing of its own (llama.cpp's default n_ctx is 4096 to 8192 per
-- version; Ollama's 2048 to 8192), unless the user names one.
M.DEFAULT_WINDOW = 8192

-- What the server's tokenizer is asked to count once (llama.cpp POST
-- /tokenize, llama-cpp-python POST /extras/tokenize): a piece of a kernel,
-- since kernels are most of what the prompts carry.
local TOKENIZE_SAMPLE = [[
// avo:param BM 32 64
#include <stddef.h>
static inline float dot4(const float *a, const float *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
}
void sgemm(int M, int N, int K, const float *restrict A, const float *restrict B,
           float *restrict C) {
  for (int i0 = 0; i0 < M; i0 += BM) {
    for (int j = 0; j < N; j++) {
      for (int i = i0; i < i0 + BM && i < M; i++) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) acc += A[(size_t)i * K + k] * B[(size_t)k * N + j];
        C[(size_t)i * N + j] = acc; /* row-major, no transposition */
      }
    }
  }
}
]]

--[[
avo.llm.request_chars{ system = ?, messages = {...}, tools = ? } -> n
The characters of a request as the token estimates count them: texts, tool
calls and tool schemas, and a few characters a message for its framing.
]]
function M.request_chars(req)
  local n = #(req.system or "") + 16
  for _, m in ipairs(req.messages or {}) do
    n = n + #(m.content or "") + 8
    for _, tc in ipairs(m.tool_calls or {}) do
      n = n + #(tc.name or "") + #core.json_encode(tc.arguments or {}) + 16
    end
  end
  if req.tools and #req.tools > 0 then
    for _, t in ipairs(req.tools) do
      n = n + #(t.name or "") + #(t.description or "") +
        #core.json_encode(t.parameters or {}) + 24
    end
  end
  return n
end

-- Remember that `model` counted `tokens` for `chars` characters: the
-- estimates use the densest ratio seen (prompt_tokens of every answer, the
-- server's tokenizer, a "too long" error's count), never a thinner one.
local function learn_ratio(model, tokens, chars)
  if not (model and tokens and tokens > 0 and chars and chars > 0) then return end
  local r = tokens / chars
  if r > (S.current.ratios[model] or 0) then S.current.ratios[model] = r end
end

-- What the run knew of its server when a call was made, stored with the
-- call's request (not hashed): the tokens per character learned by model
-- (state.ratios) and the model's context window as the server told it
-- (metadata or an error).  The estimates an operator makes just before a
-- call (its max_tokens, whether to compact) rest on it; answers teach it in
-- the order they arrive, which concurrent tasks make a matter of timing, so
-- a replay uses the recorded knowledge of the call a task is about to
-- make, never what the replay itself has learned so far.
local function knowledge_now(cfg, model)
  local ratios = {}
  for m, r in pairs(S.current.ratios) do ratios[m] = r end
  local srv = cfg.base_url and S.current.servers[cfg.provider .. " " .. cfg.base_url]
  return { ratios = ratios, context_tokens = srv and model and srv.contexts[model] or nil }
end

-- Under replay: the recorded knowledge (above) of the next call in
-- `stream`, or in the stream of the current task's last call; nil when
-- there is none (a task before its first call, an archive from before).
local function recorded_knowledge(stream)
  local rp = S.current.replay
  if not rp then return nil end
  stream = stream or S.current.task_stream[coroutine.running()]
  if not stream then return nil end
  local row = rp.by_key[("%s#%d"):format(stream, (S.current.seq[stream] or 0) + 1)]
  local known = row and type(row.request) == "table" and row.request.known
  return type(known) == "table" and known or nil
end

--[[
avo.llm.tokens_per_char{ model = ?, provider = ?, ... } -> ratio, measured
Tokens per character the estimates use for the model the options name:
what its server counted (see learn_ratio) with 5% on top, else
DEFAULT_TOKENS_PER_CHAR; `measured` says which.
]]
function M.tokens_per_char(opts)
  if not S.current then error("avo.llm.tokens_per_char: only available inside 'avo run'", 2) end
  local cfg = resolve(opts or {})
  local known = recorded_knowledge(opts and opts.stream)
  local ratios = known and type(known.ratios) == "table" and known.ratios or S.current.ratios
  local worst, measured = nil, true
  for _, m in ipairs(cfg and cfg.models or {}) do
    local r = m.model and ratios[m.model]
    if not r then measured = false break end
    worst = math.max(worst or 0, r * 1.05)
  end
  if not measured or not worst then return M.DEFAULT_TOKENS_PER_CHAR, false end
  return worst, true
end

--[[
avo.llm.estimate_tokens(opts, { system = ?, messages = {...}, tools = ? }) -> n
Tokens the request would take with the model `opts` names: request_chars
times tokens_per_char, rounded up.
]]
function M.estimate_tokens(opts, req)
  return math.ceil(M.request_chars(req) * (M.tokens_per_char(opts)))
end

-- Record what was learned about a server (also read back by --llm-replay).
local function learned(srv, model, what)
  local data = { base_url = srv.base_url, model = model, from = what.from,
                 context_tokens = what.context_tokens, slots = what.slots,
                 tokens_per_char = what.tokens_per_char, family = srv.family }
  if S.current.event then S.current.event("llm_server", data) end
  if S.current.log and what.context_tokens and what.from == "default" then
    S.current.log(("llm: %s%s says nothing of its context window; assuming %d tokens (set " ..
      "AVO_LLM_CONTEXT_WINDOW or the operator's context_window option if it has more)")
      :format(srv.base_url or "", model and (" model " .. model) or "", what.context_tokens))
  elseif S.current.log and what.context_tokens then
    S.current.log(("llm: %s%s has a context window of %d tokens (from %s)"):format(srv.base_url or "",
      model and (" model " .. model) or "", what.context_tokens, what.from))
  end
end

-- Context window in the model entry of a GET /models answer (vLLM
-- max_model_len, LM Studio/OpenRouter context_length), when the list has
-- `model` or only one entry; the second value is llama.cpp's
-- meta.n_ctx_train (what the model was trained with: the server's own
-- window, from /props, may be smaller), the third the entry's owner.
local function models_context(doc, model)
  local data = type(doc) == "table" and type(doc.data) == "table" and doc.data or {}
  local entry
  for _, e in ipairs(data) do
    if type(e) == "table" and e.id == model then entry = e end
  end
  if not entry and #data == 1 then entry = data[1] end
  if type(entry) ~= "table" then return nil end
  local meta = type(entry.meta) == "table" and entry.meta or {}
  local n = entry.max_model_len or entry.context_length or entry.context_window or entry.n_ctx
    or meta.n_ctx
  return math.tointeger(n), math.tointeger(meta.n_ctx_train), entry.owned_by
end

-- Asks the OpenAI-compatible server of `cfg` what it tells of itself, all
-- at once, 5 s at most each, one attempt: GET /models, llama.cpp's GET
-- /props, and a sample's tokens from POST /tokenize (llama.cpp) and POST
-- /extras/tokenize (llama-cpp-python).  Returns the four decoded answers,
-- false for each that failed.
local function ask_server(cfg, model)
  local llm = client()
  local headers = array()
  if cfg.key then headers[1] = "Authorization: Bearer " .. cfg.key end
  local function call(url, body)
    local h = headers
    if body then
      h = array({ "Content-Type: application/json" })
      for _, x in ipairs(headers) do h[#h + 1] = x end
    end
    local ticket = llm:submit{ url = url, method = body and "POST" or "GET", headers = h,
      body = body and core.json_encode(body) or nil, timeout = 5,
      connect_timeout = math.min(cfg.connect_timeout, 5), max_attempts = 1 }
    return sched.track(llm, ticket, function(result)
      if result.status ~= "ok" then return false end
      return core.json_decode(result.body or "") or false
    end)
  end
  local root = cfg.base_url:gsub("/v1$", "")
  local k_models = call(cfg.base_url .. "/models")
  local k_props = call(root .. "/props")
  local k_tok = call(root .. "/tokenize", { content = TOKENIZE_SAMPLE })
  local k_xtok = call(root .. "/extras/tokenize", { input = TOKENIZE_SAMPLE, model = model })
  return sched.await(k_models), sched.await(k_props), sched.await(k_tok), sched.await(k_xtok)
end

-- What the server's answers (ask_server) say, into `srv`: tokens per
-- character of `model`, its family, slots and context window.
local function learn_server(srv, model, models, props, tok, xtok)
  local counted
  for _, doc in ipairs({ tok, xtok }) do
    if not counted and type(doc) == "table" and type(doc.tokens) == "table" and #doc.tokens > 0 then
      counted = #doc.tokens
    end
  end
  if counted and model then
    learn_ratio(model, counted, #TOKENIZE_SAMPLE)
    srv.tokens_per_char = counted / #TOKENIZE_SAMPLE
  end
  local ctx, trained, owner = models_context(models, model)
  if type(owner) == "string" and owner:lower():find("vllm", 1, true) then srv.batching = true end
  local from = ctx and "GET /models"
  -- The llama.cpp family: its server answers /props, llama-cpp-python
  -- /extras/tokenize (M.capabilities).
  if type(props) == "table" then
    srv.family = "llama.cpp"
  elseif type(xtok) == "table" and type(xtok.tokens) == "table" then
    srv.family = "llama-cpp-python"
  end
  if type(props) == "table" then
    local slots = math.tointeger(props.total_slots)
    local gen = type(props.default_generation_settings) == "table"
      and props.default_generation_settings or {}
    local n_ctx = math.tointeger(gen.n_ctx) or math.tointeger(props.n_ctx)
    if slots and slots >= 1 then srv.slots = slots end
    if n_ctx and n_ctx > 0 then ctx, from = n_ctx, "GET /props" end
  end
  if not ctx and trained then ctx, from = trained, "GET /models (n_ctx_train)" end
  if model and ctx then srv.contexts[model] = ctx end
  if ctx or srv.slots or srv.tokens_per_char then
    learned(srv, model, { slots = srv.slots, context_tokens = ctx,
                          from = from or (srv.slots and "GET /props") or "POST tokenize",
                          tokens_per_char = srv.tokens_per_char })
  end
end

-- What is known of the server of `cfg`: slots, context windows by model,
-- whether it is local.  The first call to an OpenAI-compatible server
-- other than api.openai.com asks it (ask_server; failures are ignored);
-- other callers wait for that.
local function server_of(cfg, model)
  local key = cfg.provider .. " " .. cfg.base_url
  local srv = S.current.servers[key]
  if srv then
    while srv.pending do
      local ev = sched.event()
      srv.waiting[#srv.waiting + 1] = ev
      sched.await(ev)
    end
    return srv
  end
  srv = { base_url = cfg.base_url, contexts = {}, waiting = {}, is_local = is_local(cfg.base_url) }
  S.current.servers[key] = srv
  if cfg.provider ~= "openai" or cfg.base_url == DEFAULT_BASE.openai or
      env("AVO_LLM_DISCOVER") == "0" then
    return srv
  end
  srv.pending = true
  learn_server(srv, model, ask_server(cfg, model))
  srv.pending = nil
  local waiting = srv.waiting
  srv.waiting = {}
  for _, ev in ipairs(waiting) do sched.resolve(ev) end
  return srv
end

-- Calls in flight at once to the server of `cfg`: AVO_LLM_CONCURRENCY (or
-- the concurrency option), else the server's slots (llama.cpp /props),
-- else 1 for a local server that does not batch, else 8.
local function concurrency_of(cfg, srv)
  if cfg.concurrency then return cfg.concurrency end
  if srv.slots then return srv.slots end
  if srv.is_local and not srv.batching then return 1 end
  return 8
end

-- A failed call's error may name the context window: remember it.
local function learn_from_error(cfg, model, err, chars)
  local counted = type(err) == "string" and err:match("n_prompt_tokens (%d+)")
  learn_ratio(model, tonumber(counted), chars)
  local n = M.context_from_error(err)
  if not n then return end
  local srv = cfg.base_url and S.current.servers[cfg.provider .. " " .. cfg.base_url]
  if srv then
    if srv.contexts[model] == n then return end
    srv.contexts[model] = n
    learned(srv, model, { context_tokens = n, from = "an error" })
  else
    if S.current.replay_contexts[model] == n then return end
    S.current.replay_contexts[model] = n
    learned({}, model, { context_tokens = n, from = "an error" })
  end
end

--[[
avo.llm.context_window{ model = ?, provider = ?, base_url = ?, max_tokens = ?,
                        context_window = ? } -> tokens | nil, max_tokens, from
The context window of the model the options name, as far as known: from
the server's metadata (asked on first use; the task may yield) or from an
error of an earlier call; under --llm-replay, what the recorded run knew.
The second value is the max_tokens a call with these options asks for, the
third where the window comes from: "the server", "the recorded run", "the
user" (opts.context_window or AVO_LLM_CONTEXT_WINDOW, when the server says
nothing) or "default" (M.DEFAULT_WINDOW, for a self-hosted OpenAI-compatible
server that says nothing and no user setting).
]]
function M.context_window(opts)
  if not S.current then error("avo.llm.context_window: only available inside 'avo run'", 2) end
  opts = opts or {}
  local cfg, cerr = resolve(opts)
  if not cfg then error("avo.llm: " .. cerr, 2) end
  local model = #cfg.models == 1 and cfg.models[1].model or nil
  local user = opts.context_window or tonumber(env("AVO_LLM_CONTEXT_WINDOW") or "")
  if user ~= nil and (math.type(user) ~= "integer" and not math.tointeger(user) or user < 256) then
    error("avo.llm: context_window (AVO_LLM_CONTEXT_WINDOW) must be an integer >= 256, got " ..
      tostring(user), 2)
  end
  user = user and math.tointeger(user)
  if cfg.provider == "replay" then
    local known = recorded_knowledge(opts.stream)
    if known and math.tointeger(known.context_tokens) then
      return math.tointeger(known.context_tokens), cfg.max_tokens, "the recorded run"
    end
    -- (The server had told nothing by then: what the recorded run assumed
    -- or was told by its user.)
    local n = model and (known and S.current.replay_assumed[model] or S.current.replay_contexts[model])
    if n then return n, cfg.max_tokens, "the recorded run" end
    if user then return user, cfg.max_tokens, "the user" end
    return nil, cfg.max_tokens
  end
  if not cfg.base_url then
    if user then return user, cfg.max_tokens, "the user" end
    return nil, cfg.max_tokens
  end
  local srv = server_of(cfg, model)
  local n = model and srv.contexts[model]
  if n then return n, cfg.max_tokens, "the server" end
  if user then
    -- Recorded once, so that --llm-replay and `avo replay` use it too
    -- without the setting.
    srv.user_said = srv.user_said or {}
    if model and srv.user_said[model] ~= user then
      srv.user_said[model] = user
      learned(srv, model, { context_tokens = user, from = "the user" })
    end
    return user, cfg.max_tokens, "the user"
  end
  -- A self-hosted server that says nothing: assume a small window (said
  -- once, and recorded so that --llm-replay assumes it too).
  if cfg.provider == "openai" and cfg.base_url ~= DEFAULT_BASE.openai then
    local key = model or "?"
    if not srv.assumed then srv.assumed = {} end
    if not srv.assumed[key] then
      srv.assumed[key] = true
      learned(srv, model, { context_tokens = M.DEFAULT_WINDOW, from = "default" })
    end
    return M.DEFAULT_WINDOW, cfg.max_tokens, "default"
  end
  return nil, cfg.max_tokens
end

--[[
avo.llm.capabilities{ provider = ?, base_url = ?, model = ? } -> table
How a call may force the model's hand, as far as the server says: family
("llama.cpp" for llama-server, which answers /props; "llama-cpp-python",
which answers /extras/tokenize; nil otherwise), named_tool_choice (whether
tool_choice = {name = TOOL} is understood: not by llama-server, which takes
only "auto", "required" and "none"), schema (whether an answer may be
constrained to a JSON schema, opts.schema: llama.cpp family and OpenAI-
compatible servers; not Anthropic).  Under --llm-replay: what the recorded
run found (event llm_server, family).  The task may yield (the server is
asked on first use).
]]
function M.capabilities(opts)
  if not S.current then error("avo.llm.capabilities: only available inside 'avo run'", 2) end
  local cfg, cerr = resolve(opts or {})
  if not cfg then error("avo.llm: " .. cerr, 2) end
  if cfg.provider == "replay" then
    -- As the recorded run found its server, so that forced calls go the
    -- same way (the requests, and so their hashes, are the same).
    local family = S.current.replay_family
    return { family = family, named_tool_choice = family ~= "llama.cpp", schema = true }
  end
  if not cfg.base_url then
    return { named_tool_choice = true, schema = cfg.provider ~= "anthropic" }
  end
  if cfg.provider ~= "openai" then return { named_tool_choice = true, schema = false } end
  local srv = server_of(cfg, #cfg.models == 1 and cfg.models[1].model or nil)
  return { family = srv.family, named_tool_choice = srv.family ~= "llama.cpp", schema = true }
end

return {
  concurrency_of = concurrency_of,
  knowledge_now = knowledge_now,
  learn_from_error = learn_from_error,
  learn_ratio = learn_ratio,
  server_of = server_of,
}
