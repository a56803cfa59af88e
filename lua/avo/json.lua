-- avo.json — JSON for scripts and plug-ins (docs/lua-api.md, "JSON"), over
-- the engine's own conversion (jansson; lua/luajson.h), so what a plug-in
-- writes reads back the way the archive and the LLM client see it.
-- Also reachable as avo.json.

local core = require "avo.core"

local M = {}

-- The metatable that makes an empty table encode as [] (an empty table
-- without it is {}).
M.array_mt = core.json_array_mt

-- `t` (or a new table) marked as a JSON array; returns it.
---@param t table
---@return table # t, marked to encode as a JSON array even when empty
function M.array(t)
  return setmetatable(t or {}, M.array_mt)
end

-- Compact JSON text of `value`, object keys sorted (so equal values give
-- equal text).  A value JSON cannot hold (a function, userdata, a thread)
-- is an error naming the call.
---@param value any
---@return string
function M.encode(value)
  local ok, text = pcall(core.json_encode, value)
  if not ok then
    local why = tostring(text):gsub("^bad argument #1 to '[^']*' %((.*)%)$", "%1")
    error("avo.json.encode: " .. why, 2)
  end
  return text
end

-- The value of JSON text `text` (objects as tables, arrays as sequences,
-- null as nil), or nil and the parser's message.
---@param text string
---@return any
function M.decode(text)
  if type(text) ~= "string" then
    error(("avo.json.decode: expected a string, got %s"):format(type(text)), 2)
  end
  return core.json_decode(text)
end

return M
