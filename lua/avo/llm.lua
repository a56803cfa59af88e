-- avo.llm — chat with a language model from inside a task (avo.llm.chat).
--
-- Providers: "openai" (Chat Completions: hosted, vLLM, llama.cpp server,
-- Ollama, ...), "anthropic" (Messages API), "scripted" (answers from a JSONL
-- file, for tests and demos).  With a replay archive (AVO_LLM_REPLAY or
-- `avo run --llm-replay`), every call is answered from an earlier run's
-- llm_calls by request hash instead, offline.
--
-- The HTTP work (transfers, timeouts, retries with backoff) is in C
-- (core/llm.c) and runs in the engine's event loop: an HTTP call submits a
-- request and the task yields until the answer arrives, while other tasks
-- and evaluations go on.  This module builds each provider's request, parses
-- its answer, accounts tokens and cost, enforces the budgets and records
-- every call in the archive.
--
-- Errors: bad arguments and misconfiguration raise; a call that fails
-- (network, HTTP status, unparsable answer, budget exhausted) returns nil and
-- a message.  API keys are never stored, logged or put in a message.
--
-- The parts, one concern each, under lua/avo/llm/:
--   config.lua     prices, validation of the options, a call's configuration
--   families.lua   server families: each provider's request and answer
--   transport.lua  the run's C client (core/llm.c through lua/lua_llm.c)
--   faults.lua     infrastructure faults and the limit of them in a row
--   replay.lua     scripted answers, replay of a recorded run, resume
--   server.lua     what is known of a server: windows, token estimates, slots
--   budget.lua     budget and deadlines: refusals, reservations, accounting
--   http.lua       one call over HTTP: attempts, the cut at its reserve, settling
--   chat.lua       avo.llm.chat itself: checks, then resume, replay, script or HTTP
--   run.lua        the run hooks, totals and the status line
--   state.lua      the public table and the current run's state they share

local S = require "avo.llm.state"

for _, part in ipairs{ "config", "families", "transport", "faults", "replay", "server", "budget",
                      "http", "chat", "run" } do
  require("avo.llm." .. part)
end

return S.api
