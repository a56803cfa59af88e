-- Novelty rejection before evaluation: a child whose source is a near
-- duplicate of one the strategy already has (same knob values, and a
-- normalized-token similarity at or above a threshold) is not evaluated.
--
-- Sources are compared as token sequences: comments and whitespace are
-- dropped, identifiers, numbers and punctuation kept.  The similarity of two
-- sources is the Jaccard index of their sets of k-token shingles (k =
-- `shingle`, default 3): 1 for the same tokens, lower the more they differ.
--
--   local novelty = require "strategies.lib.novelty"
--   local f = novelty.new{ threshold = 0.95 }
--   local why = f:check(child)   -- nil, or "near-duplicate of #12 (...)"
--   f:add(child_or_record)
--
-- The filter holds what was added, in the order it was added; the ga family
-- adds children in slot order, so a seed fixes every decision.

local M = {}

-- The tokens of C-like `source`, comments and whitespace dropped.
function M.tokens(source)
  local text = source:gsub("/%*.-%*/", " "):gsub("//[^\n]*", " ")
  local out = {}
  local pos, n = 1, #text
  while pos <= n do
    local s, e = text:find("^%s+", pos)
    if s then
      pos = e + 1
    else
      s, e = text:find("^[%a_][%w_]*", pos)
      if not s then s, e = text:find("^%d[%w%.]*", pos) end
      if not s then s, e = text:find("^%p", pos) end
      if not s then s, e = pos, pos end
      out[#out + 1] = text:sub(s, e)
      pos = e + 1
    end
  end
  return out
end

-- The set of k-token shingles of `tokens` (and its size).
function M.shingles(tokens, k)
  local set, n = {}, 0
  if #tokens < k then
    local key = table.concat(tokens, " ")
    set[key] = true
    return set, 1
  end
  for i = 1, #tokens - k + 1 do
    local key = table.concat(tokens, " ", i, i + k - 1)
    if not set[key] then
      set[key] = true
      n = n + 1
    end
  end
  return set, n
end

-- Jaccard index of two shingle sets of sizes na and nb.
local function jaccard(a, na, b, nb)
  if na > nb then a, na, b, nb = b, nb, a, na end
  local common = 0
  for key in pairs(a) do
    if b[key] then common = common + 1 end
  end
  local union = na + nb - common
  return union == 0 and 1 or common / union
end

-- Similarity of two sources (1: the same tokens).
function M.similarity(a, b, k)
  local sa, na = M.shingles(M.tokens(a), k or 3)
  local sb, nb = M.shingles(M.tokens(b), k or 3)
  return jaccard(sa, na, sb, nb)
end

local function knob_text(knobs)
  local names = {}
  for k in pairs(knobs or {}) do names[#names + 1] = k end
  table.sort(names)
  local parts = {}
  for _, k in ipairs(names) do parts[#parts + 1] = k .. "=" .. tostring(knobs[k]) end
  return table.concat(parts, ",")
end

-- Checks `opts` (nil: off; a table {threshold = (0, 1], shingle = integer
-- >= 1}); returns the options with defaults, false when off, or nil and why.
function M.read(opts)
  if opts == nil or opts == false then return false end
  if opts == true then opts = {} end
  if type(opts) ~= "table" then return nil, "a table {threshold =, shingle =}" end
  local t = opts.threshold or 0.95
  local k = opts.shingle or 3
  if type(t) ~= "number" or t <= 0 or t > 1 then return nil, "threshold in (0, 1]" end
  if math.type(k) ~= "integer" or k < 1 then return nil, "shingle an integer >= 1" end
  return { threshold = t, shingle = k }
end

local Filter = {}
Filter.__index = Filter

function M.new(opts)
  return setmetatable({ threshold = opts.threshold or 0.95, k = opts.shingle or 3,
                        entries = {}, by_source = {} }, Filter)
end

-- Remember a record or child (once per source and knobs).
function Filter:add(c)
  local key = knob_text(c.knobs) .. "\0" .. c.source
  if self.by_source[key] then return end
  local set, n = M.shingles(M.tokens(c.source), self.k)
  local e = { id = c.id, knobs = knob_text(c.knobs), set = set, n = n, source = c.source }
  self.by_source[key] = e
  self.entries[#self.entries + 1] = e
end

-- nil when `c` is novel enough, else why not: the most similar entry with
-- the same knob values whose similarity reaches the threshold.  An entry
-- with the very same source is left to the exact dedupe.
function Filter:check(c)
  local knobs = knob_text(c.knobs)
  local set, n
  for _, e in ipairs(self.entries) do
    if e.knobs == knobs and e.source ~= c.source then
      if not set then set, n = M.shingles(M.tokens(c.source), self.k) end
      local s = jaccard(set, n, e.set, e.n)
      if s >= self.threshold then
        return ("near-duplicate of %s (token similarity %.3f >= %g)"):format(
          e.id and ("#" .. e.id) or "another child of this run", s, self.threshold), e, s
      end
    end
  end
  return nil
end

return M
