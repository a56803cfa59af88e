-- avo.llm.chat's tool_choice and schema options refuse what they cannot
-- send (tests/agent/escalate.sh).
local avo = require "avo"
local msgs = { { role = "user", content = "hi" } }
local tools = { { name = "evaluate", parameters = { type = "object", properties = {} } } }
local function refused(opts, want)
  opts.messages = msgs
  local ok, err = pcall(avo.llm.chat, opts)
  assert(not ok and tostring(err):find(want, 1, true), ("want %q, got %s"):format(want, tostring(err)))
end
refused({ tools = tools, tool_choice = "sometimes" },
  "'tool_choice' must be \"auto\", \"required\", \"none\" or {name = TOOL}")
refused({ tools = tools, tool_choice = { name = "commit" } },
  "tool_choice names 'commit', which is not one of the request's tools")
refused({ tool_choice = { name = "evaluate" } }, "tool_choice names 'evaluate'")
refused({ tools = tools, schema = { type = "object" } },
  "'schema' must be a JSON schema table, in a request without tools")
refused({ schema = "object" }, "'schema' must be a JSON schema table")
refused({ provider = "anthropic", model = "m", schema = { type = "object" } },
  "'schema' (a JSON-constrained answer) needs an OpenAI-compatible provider")
io.stderr:write("escalate api: ok\n")
