-- avo.knobs — tunable parameters a kernel declares in its own source:
--
--     // avo:param BLOCK 16 32 64
--
-- The first value is the seed's; values are integers or identifiers and reach
-- the compiler as -DNAME=VALUE.

local M = {}

local function parse_value(word)
  return math.tointeger(tonumber(word)) or tonumber(word) or word
end

-- One declaration's words after "avo:param": { name, values }, or what is
-- wrong (without the line): { err } when the name or the values are
-- missing, { name, bad } when a value is malformed (a knob declared twice
-- is named so first).
local function parse_declaration(rest)
  local words = {}
  for w in rest:gmatch("%S+") do words[#words + 1] = w end
  local name = table.remove(words, 1)
  if not name or not name:match("^[%a_][%w_]*$") then
    return { err = ("'avo:param' needs a C identifier, got %q"):format(name or "") }
  end
  if #words == 0 then
    return { err = ("knob %s has no values"):format(name) }
  end
  local values = {}
  for i, w in ipairs(words) do
    if not w:match("^[%w_.+-]+$") then
      return { name = name, bad = ("knob %s has a bad value %q"):format(name, w) }
    end
    values[i] = parse_value(w)
  end
  return { name = name, values = values }
end

-- The last declarations read (text after "avo:param" -> parse_declaration's
-- answer): sources that differ elsewhere, as an LLM's edits do, share
-- their declarations.  At most DECLARATION_MEMO, forgotten all at once.
local DECLARATION_MEMO = 1024
local declarations, n_declarations = {}, 0

-- Returns an array of { name =, values = {...}, line = n } in source order.
-- Raises on a malformed declaration, naming the line.
---@param source string
---@return avo.Knob[]
function M.parse(source)
  local knobs, seen = {}, {}
  local text = source .. "\n"
  -- Only the lines that name avo:param, found by plain search; the lines
  -- between are counted, not read.
  local lineno, from = 1, 1 -- line `lineno` starts at `from`
  local at = text:find("avo:param", 1, true)
  while at do
    local nl = text:find("\n", from, true)
    while nl < at do
      lineno, from = lineno + 1, nl + 1
      nl = text:find("\n", from, true)
    end
    local rest = text:sub(from, nl - 1):match("//%s*avo:param%s+(.*)$")
    if rest then
      local d = declarations[rest]
      if not d then
        d = parse_declaration(rest)
        if n_declarations >= DECLARATION_MEMO then declarations, n_declarations = {}, 0 end
        declarations[rest], n_declarations = d, n_declarations + 1
      end
      if d.err then error(("line %d: %s"):format(lineno, d.err), 0) end
      if seen[d.name] then
        error(("line %d: knob %s declared twice"):format(lineno, d.name), 0)
      end
      if d.bad then error(("line %d: %s"):format(lineno, d.bad), 0) end
      seen[d.name] = true
      knobs[#knobs + 1] = { name = d.name, values = table.move(d.values, 1, #d.values, 1, {}),
                            line = lineno }
    end
    lineno, from = lineno + 1, nl + 1
    at = text:find("avo:param", from, true)
  end
  return knobs
end

-- A copy of knob list `list` (M.parse's) that its holder may change.
---@param list avo.Knob[]
---@return avo.Knob[]
function M.copy(list)
  local out = {}
  for i, k in ipairs(list) do
    out[i] = { name = k.name, values = table.move(k.values, 1, #k.values, 1, {}), line = k.line }
  end
  return out
end

-- The seed assignment: every knob at its first value.
---@param knobs avo.Knob[]
---@return table<string, any> # each knob at its first value
function M.defaults(knobs)
  local values = {}
  for _, k in ipairs(knobs) do values[k.name] = k.values[1] end
  return values
end

-- Whether knob `name` is one that `pattern` names: the name itself, or
-- any name starting with its prefix when it ends in "*" ("LG_*").
---@param pattern string
---@param name string
---@return boolean
function M.matches(pattern, name)
  if pattern:sub(-1) == "*" then
    local prefix = pattern:sub(1, -2)
    return name:sub(1, #prefix) == prefix
  end
  return name == pattern
end

-- The knobs' names, comma-separated (for messages).
---@param knobs avo.Knob[]
---@return string
function M.names(knobs)
  local names = {}
  for i, k in ipairs(knobs) do names[i] = k.name end
  return table.concat(names, ", ")
end

-- Canonical text of an assignment (sorted NAME=VALUE lines) for hashing.
---@param values table<string, any>
---@return string # the same text for the same values, in any order
function M.canonical(values)
  local names = {}
  for name in pairs(values or {}) do names[#names + 1] = name end
  table.sort(names)
  local parts = {}
  for i, name in ipairs(names) do parts[i] = name .. "=" .. tostring(values[name]) end
  return table.concat(parts, "\n")
end

return M
