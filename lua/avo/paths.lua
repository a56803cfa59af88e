-- avo.paths — where strategies, operators and evaluators are found by name.
--
-- A name like "cpu/sgemm" is looked up as <dir>/<kind>/cpu/sgemm.lua for each
-- dir on the search path: $AVO_PATH (colon-separated), the current
-- directory, then the avo source tree.  A spec ending in ".lua" or naming an
-- existing file is used as a path.

local core = require "avo.core"

local M = {}

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() return true end
  return false
end

function M.roots()
  local roots = {}
  for dir in (os.getenv("AVO_PATH") or ""):gmatch("[^:]+") do roots[#roots + 1] = dir end
  roots[#roots + 1] = "."
  roots[#roots + 1] = core.source_root
  return roots
end

function M.search_dirs(kind)
  local dirs = {}
  for i, root in ipairs(M.roots()) do dirs[i] = root .. "/" .. kind end
  return dirs
end

function M.find(kind, spec)
  if spec:match("%.lua$") or spec:find("/", 1, true) and exists(spec) then
    if exists(spec) then return spec end
    if spec:match("%.lua$") then return nil end
  end
  for _, dir in ipairs(M.search_dirs(kind)) do
    local path = dir .. "/" .. spec .. ".lua"
    if exists(path) then return path end
  end
  return nil
end

-- Places a file named inside an evaluator may be.
function M.file_candidates(name, dir)
  if name:sub(1, 1) == "/" then return { name } end
  local list = {}
  for _, root in ipairs(M.roots()) do list[#list + 1] = root .. "/" .. name end
  list[#list + 1] = dir .. "/" .. name
  return list
end

return M
