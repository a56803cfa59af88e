-- avo.patch — apply an LLM's answer to a kernel source.
--
-- An answer is either SEARCH/REPLACE blocks
--
--     <<<<<<< SEARCH
--     exact lines of the current source
--     =======
--     the lines that replace them
--     >>>>>>> REPLACE
--
-- (several per answer, applied in order, each to the result of the previous)
-- or, without any block, a full rewrite in a fenced code block (the longest
-- one when there are several).  A SEARCH text must match exactly once: first
-- as an exact substring, then line by line ignoring differences in
-- whitespace.  No match and several matches are both errors, with a message
-- written for the model to read and correct.
--
-- Evolve regions: when the parent marks regions with lines containing
-- `avo:evolve-begin` ... `avo:evolve-end`, everything outside them (the
-- marker lines included) must come out unchanged, whatever the form of the
-- answer.  A kernel without markers may be edited anywhere.
--
-- Every function returns nil and a message on a bad answer; none raises on
-- bad input text.

local M = {}

M.BEGIN_MARK = "avo:evolve-begin"
M.END_MARK = "avo:evolve-end"

-- Lines of `text` (without their "\n") and whether it ended with one.
local function split_lines(text)
  local lines = {}
  local pos = 1
  while true do
    local nl = text:find("\n", pos, true)
    if not nl then
      if pos <= #text then lines[#lines + 1] = text:sub(pos) end
      break
    end
    lines[#lines + 1] = text:sub(pos, nl - 1)
    pos = nl + 1
  end
  return lines, text:sub(-1) == "\n"
end
M.split_lines = split_lines

local function join_lines(lines, trailing)
  local s = table.concat(lines, "\n")
  if trailing and #lines > 0 then s = s .. "\n" end
  return s
end

local function normalize(line)
  return (line:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

local function excerpt(text, n)
  text = text:gsub("%s+", " "):gsub("^ ", "")
  if #text > (n or 60) then text = text:sub(1, n or 60) .. "..." end
  return text
end

------------------------------------------------------------------ parsing

local SEARCH_PAT = "^%s*<<<<<<<+%s*SEARCH%s*$"
local DIVIDER_PAT = "^%s*=======+%s*$"
local REPLACE_PAT = "^%s*>>>>>>>+%s*REPLACE%s*$"

-- The SEARCH/REPLACE blocks of an answer: array of {search=, replace=}
-- (texts without a trailing newline), or nil and a message for a block that
-- is not closed.
---@param answer string a model's answer
---@return table[]? blocks
---@return string? err
function M.parse_blocks(answer)
  local blocks = {}
  local state, search, replace = nil, nil, nil
  for _, line in ipairs((split_lines(answer))) do
    line = line:gsub("\r$", "")
    if state == nil then
      if line:match(SEARCH_PAT) then state, search = "search", {} end
    elseif state == "search" then
      if line:match(DIVIDER_PAT) then
        state, replace = "replace", {}
      elseif line:match(SEARCH_PAT) or line:match(REPLACE_PAT) then
        return nil, ("SEARCH/REPLACE block %d has no ======= line"):format(#blocks + 1)
      else
        search[#search + 1] = line
      end
    else
      if line:match(REPLACE_PAT) then
        blocks[#blocks + 1] = { search = table.concat(search, "\n"),
                                replace = table.concat(replace, "\n") }
        state = nil
      elseif line:match(SEARCH_PAT) then
        return nil, ("SEARCH/REPLACE block %d has no >>>>>>> REPLACE line"):format(#blocks + 1)
      else
        replace[#replace + 1] = line
      end
    end
  end
  if state then
    return nil, ("SEARCH/REPLACE block %d is not closed (missing %s)"):format(#blocks + 1,
      state == "search" and "======= and >>>>>>> REPLACE" or ">>>>>>> REPLACE")
  end
  return blocks
end

-- The longest fenced code block of an answer (its body), or nil.
---@param answer string
---@return string? source
---@return string? err
function M.parse_rewrite(answer)
  local best
  local lines = split_lines(answer)
  local i = 1
  while i <= #lines do
    local fence = lines[i]:match("^%s*(```+)")
    if fence then
      local body = {}
      local j = i + 1
      while j <= #lines and not lines[j]:match("^%s*" .. fence .. "%s*$") do
        body[#body + 1] = lines[j]
        j = j + 1
      end
      if j <= #lines then -- closed fence only: a truncated answer is no rewrite
        local text = table.concat(body, "\n") .. "\n"
        if not best or #text > #best then best = text end
      end
      i = j + 1
    else
      i = i + 1
    end
  end
  return best
end

-- What the model said outside its blocks and code: the first sentence-ish
-- line, for the candidate's note.
---@param answer string
---@param max? integer characters
---@return string?
function M.explanation(answer, max)
  local out, inside = {}, false
  for _, line in ipairs((split_lines(answer))) do
    if line:match("^%s*```") then
      inside = not inside
    elseif line:match(SEARCH_PAT) then
      inside = true
    elseif line:match(REPLACE_PAT) then
      inside = false
    elseif not inside and line:match("%S") then
      out[#out + 1] = line
    end
  end
  local text = table.concat(out, " ")
  if text == "" then return nil end
  return excerpt(text, max or 200)
end

----------------------------------------------------------------- applying

-- Occurrences of `needle` in `hay` (plain, non-overlapping): count, first.
local function count_plain(hay, needle)
  local n, first, pos = 0, nil, 1
  while true do
    local s, e = hay:find(needle, pos, true)
    if not s then break end
    n = n + 1
    first = first or s
    pos = e + 1
  end
  return n, first
end

-- Replace the unique whitespace-tolerant match of `search` in `source`.
local function apply_tolerant(source, search, replace, k)
  local src, trailing = split_lines(source)
  local pat = {}
  for _, l in ipairs((split_lines(search))) do pat[#pat + 1] = normalize(l) end
  while #pat > 0 and pat[1] == "" do table.remove(pat, 1) end
  while #pat > 0 and pat[#pat] == "" do table.remove(pat) end
  if #pat == 0 then return nil, ("SEARCH block %d is empty"):format(k) end
  local norm = {}
  for i, l in ipairs(src) do norm[i] = normalize(l) end
  local matches = {}
  for i = 1, #src - #pat + 1 do
    local ok = true
    for j = 1, #pat do
      if norm[i + j - 1] ~= pat[j] then ok = false break end
    end
    if ok then matches[#matches + 1] = i end
  end
  if #matches == 0 then
    return nil, ("SEARCH block %d does not match the source (first line: '%s'); copy the lines " ..
      "to replace exactly from the current source"):format(k, excerpt(pat[1]))
  end
  if #matches > 1 then
    return nil, ("SEARCH block %d matches %d places (lines %s); include more lines so it " ..
      "matches exactly one"):format(k, #matches, table.concat(matches, ", "))
  end
  local out = table.move(src, 1, matches[1] - 1, 1, {})
  if replace ~= "" then
    for _, l in ipairs((split_lines(replace))) do out[#out + 1] = l end
  end
  table.move(src, matches[1] + #pat, #src, #out + 1, out)
  return join_lines(out, trailing)
end

-- Apply blocks in order; returns the new source or nil and a message.
---@param source string
---@param blocks table[]
---@return string? source
---@return string? err
function M.apply_blocks(source, blocks)
  for k, b in ipairs(blocks) do
    if not b.search:match("%S") then
      return nil, ("SEARCH block %d is empty; to insert code, search for the line " ..
        "next to it and repeat it in the replacement"):format(k)
    end
    local n, at = count_plain(source, b.search)
    if n == 1 then
      source = source:sub(1, at - 1) .. b.replace .. source:sub(at + #b.search)
    elseif n > 1 then
      return nil, ("SEARCH block %d matches %d places; include more lines so it matches " ..
        "exactly one"):format(k, n)
    else
      local out, err = apply_tolerant(source, b.search, b.replace, k)
      if not out then return nil, err end
      source = out
    end
  end
  return source
end

------------------------------------------------------------ evolve regions

-- Fixed segments of `source`: arrays of {first = line, last = line} outside
-- the evolve regions, marker lines included; nil when the source has no
-- markers; nil and a message when they do not pair up.
---@param source string
---@return table[]? segments the regions an edit must leave alone
---@return string? err
---@return string[]? lines
function M.fixed_segments(source)
  local lines = split_lines(source)
  local segments, start, inside, any = {}, 1, false, false
  for i, line in ipairs(lines) do
    if line:find(M.BEGIN_MARK, 1, true) then
      if inside then return nil, ("line %d: evolve region opened twice"):format(i) end
      segments[#segments + 1] = { first = start, last = i }
      inside, any = true, true
    elseif line:find(M.END_MARK, 1, true) then
      if not inside then return nil, ("line %d: %s without a begin"):format(i, M.END_MARK) end
      start, inside = i, false
    end
  end
  if inside then return nil, "an evolve region is not closed" end
  if not any then return nil end
  segments[#segments + 1] = { first = start, last = #lines }
  return segments, nil, lines
end

local function count_markers(text)
  local n = 0
  for _, mark in ipairs({ M.BEGIN_MARK, M.END_MARK }) do
    local pos = 1
    while true do
      local _, e = text:find(mark, pos, true)
      if not e then break end
      n, pos = n + 1, e + 1
    end
  end
  return n
end

-- true when `new` keeps every line of `old` outside its evolve regions;
-- nil and a message for the model otherwise.
---@param old string
---@param new string
---@return true? ok
---@return string? err
function M.check_regions(old, new)
  local segments, err, old_lines = M.fixed_segments(old)
  if err then return nil, "the parent kernel's evolve markers are broken: " .. err end
  if not segments then return true end
  if count_markers(new) ~= count_markers(old) then
    return nil, "the answer adds or removes avo:evolve markers; keep them as they are"
  end
  local new_lines = split_lines(new)
  local pos = 1
  for s, seg in ipairs(segments) do
    local n = seg.last - seg.first + 1
    local found
    local from, to = pos, #new_lines - n + 1
    if s == 1 then to = 1 end
    if s == #segments then from = math.max(pos, #new_lines - n + 1) end
    for i = from, to do
      local ok = true
      for j = 0, n - 1 do
        if new_lines[i + j] ~= old_lines[seg.first + j] then ok = false break end
      end
      if ok then found = i break end
    end
    if not found then
      return nil, ("edit outside the evolve regions: lines %d-%d of the kernel (from '%s') " ..
        "must stay exactly as they are; change only code between the lines marked %s and %s")
        :format(seg.first, seg.last, excerpt(old_lines[seg.first] or ""), M.BEGIN_MARK,
          M.END_MARK)
    end
    pos = found + n
  end
  return true
end

------------------------------------------------------------------ answers

-- Apply an answer to `source`: returns the new source and how it was read
-- ("blocks" or "rewrite"), or nil and a message for the model.
---@param source string
---@param answer string a model's answer: edit blocks or a rewrite
---@return string? source
---@return string how_or_err how it applied, or why it did not
function M.apply(source, answer)
  if type(answer) ~= "string" or not answer:match("%S") then
    return nil, "the answer is empty"
  end
  local blocks, err = M.parse_blocks(answer)
  if not blocks then return nil, err end
  local new, how
  if #blocks > 0 then
    new, err = M.apply_blocks(source, blocks)
    if not new then return nil, err end
    how = "blocks"
  else
    new = M.parse_rewrite(answer)
    if not new then
      return nil, "the answer has neither SEARCH/REPLACE blocks nor a complete fenced code block"
    end
    how = "rewrite"
  end
  local ok, rerr = M.check_regions(source, new)
  if not ok then return nil, rerr end
  if new == source then return nil, "the answer leaves the kernel unchanged" end
  return new, how
end

return M
