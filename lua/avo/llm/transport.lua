-- avo.llm.transport — the run's HTTP client (core/llm.c through lua/lua_llm.c),
-- opened at the first HTTP call and watched by the event loop.
-- (A part of avo.llm: see lua/avo/llm.lua.)

local core = require "avo.core"
local sched = require "avo.sched"
local S = require "avo.llm.state"

local M = S.api

------------------------------------------------------------------ client

local function client()
  if not S.current.client then
    local c, err = core.llm(S.current.run.seed)
    if not c then error("avo.llm: " .. err, 0) end
    S.current.client = c
    sched.add_source(c, "l")
  end
  return S.current.client
end

return {
  client = client,
}
