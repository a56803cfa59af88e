-- Option checks shared by the strategies.  A bad option is reported as
-- "<who>: option '<name>' must be <expected>, got <got>".
--
--   local options = require "strategies.lib.options"

local M = {}

function M.is_integer_at_least(v, lo)
  return math.type(v) == "integer" and v >= lo
end

function M.is_probability(v)
  return type(v) == "number" and v >= 0 and v <= 1
end

-- The message for a bad option.
function M.message(who, name, expected, got)
  return string.format("%s: option '%s' must be %s, got %s", who, name, expected, tostring(got))
end

-- nil and the message for a bad option, for read_options to return.
function M.bad(who, name, expected, got)
  return nil, M.message(who, name, expected, got)
end

-- What every strategy's options need: a table naming an evaluator, and
-- with `known` (option name -> true) no other option.  Returns true, or nil
-- and the message.
function M.check_common(who, opts, known)
  if type(opts) ~= "table" then return M.bad(who, "opts", "a table", opts) end
  if opts.evaluator == nil then return M.bad(who, "evaluator", "given", nil) end
  for name in pairs(known and opts or {}) do
    if not known[name] then
      return nil, ("%s: unknown option '%s'"):format(who, tostring(name))
    end
  end
  return true
end

return M
