-- avo.llm.faults — infrastructure faults: what counts as one and the limit in a row.
-- (A part of avo.llm: see lua/avo/llm.lua.)

local S = require "avo.llm.state"
local config = require "avo.llm.config"
local transport = require "avo.llm.transport"

local M = S.api
local env = config.env
local client = transport.client

--[[
avo.llm.is_fault(result) -> boolean
Whether the C client's answer `result` is an infrastructure fault: no
answer at all (connection refused or cut, timeout) or a status a retry may
cure (429, 408, 5xx) after every retry, but not a call cancelled at the
run's time limit.
]]
function M.is_fault(result)
  if type(result) ~= "table" or result.status == "ok" or result.cancelled then return false end
  return (result.http_status or 0) == 0 or result.retryable == true
end

-- Whether recorded call `row` failed for the infrastructure (marked so
-- since issue 24; older archives: by its message).
local function recorded_fault(row)
  if row.status == "ok" then return false end
  if type(row.response) == "table" and row.response.infrastructure then return true end
  local e = tostring(row.error or "")
  return e:find(": network error: ", 1, true) ~= nil or e:find(": timed out (", 1, true) ~= nil
    or e:match(": HTTP 5%d%d") ~= nil or e:match(": HTTP 429") ~= nil
end

-- The limit of LLM calls in a row that the infrastructure fails (each after
-- its own retries with backoff): AVO_LLM_FAULT_LIMIT, default 3.
local function fault_limit()
  local n = math.tointeger(tonumber(env("AVO_LLM_FAULT_LIMIT") or ""))
  if n and n >= 1 then return n end
  return 3
end

-- The run stops on a configuration error: the server `err` names is not
-- one the run can talk to (exit 1, status `failed`; `avo resume` asks the
-- calls again once it is fixed).
local function misconfigured(err)
  error({ avo_configuration = ("avo: LLM configuration error: %s; check AVO_LLM_BASE_URL " ..
    "(or base_url), AVO_LLM_PROVIDER and AVO_LLM_MODEL, then `avo resume` asks the calls " ..
    "again"):format(tostring(err)) }, 0)
end

-- Count a call the infrastructure failed; past the limit (in a row) the
-- run stops as an environment failure: exit 3, status `failed`, and `avo
-- resume` asks the failed calls again.  Under --llm-replay the recorded
-- faults are counted but stop nothing (the recorded run decides).  `kind`
-- (see read_http) "refused" stops the run at once, and "garbage" at the
-- limit from a server `url` that never answered with a completion, as a
-- configuration error: no retry or resume would cure either.
local function faulted(err, kind, url)
  if kind == "refused" and not S.current.replay then misconfigured(err) end
  local t = S.current.totals
  t.faults = t.faults + 1
  S.current.totals.fault_streak = S.current.totals.fault_streak + 1
  if S.current.log then
    S.current.log(("llm: infrastructure fault %d in a row (of %d allowed): %s"):format(
      S.current.totals.fault_streak, fault_limit(), tostring(err)))
  end
  if S.current.replay or S.current.totals.fault_streak < fault_limit() then return end
  if kind == "garbage" and url and not S.current.answered[url] then misconfigured(err) end
  error({ avo_environment = ("avo: the LLM server is out: %d calls in a row failed for the " ..
    "infrastructure, each after its retries (the last: %s); stopped.  Bring the server back " ..
    "and `avo resume` asks these calls again (AVO_LLM_FAULT_LIMIT sets the limit)"):format(
    S.current.totals.fault_streak, tostring(err)) }, 0)
end

--[[
avo.llm.fault_streak() -> n
LLM calls in a row that the infrastructure failed (0 after an answer).
]]
function M.fault_streak()
  return S.current and S.current.totals.fault_streak or 0
end

return {
  faulted = faulted,
  recorded_fault = recorded_fault,
}
