-- avo.paths — where strategies, operators and evaluators are found by name.
--
-- A name like "cpu/sgemm" is looked up as <dir>/<kind>/cpu/sgemm.lua for each
-- dir on the search path: $AVO_PATH (colon-separated), the current
-- directory, then the avo source tree.  A spec ending in ".lua" or naming an
-- existing file is used as a path.  `require` searches the same roots (see
-- M.searcher below).

local core = require "avo.core"

local M = {}

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() return true end
  return false
end

-- The whole file at `path` (binary), or nil and why.  The one file reader
-- of the engine's Lua side (scripts, kernels, evaluator files).
function M.read_file(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local text, rerr = f:read("a") -- a directory opens, then fails here
  f:close()
  if not text then return nil, ("%s: %s"):format(path, rerr or "cannot be read") end
  return text
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

-- The names `find(kind, name)` can find, sorted: <dir>/<kind>/NAME.lua
-- for each search dir, and one level down (cpu/sgemm) where a kind keeps
-- its parts in folders; *_common.lua files (shared code) are left out.
function M.available(kind)
  local seen, names = {}, {}
  local function add(name)
    if not seen[name] and not name:match("_common$") then
      seen[name] = true
      names[#names + 1] = name
    end
  end
  for _, dir in ipairs(M.search_dirs(kind)) do
    for _, entry in ipairs(core.list_dir(dir) or {}) do
      local base = entry:match("^(.+)%.lua$")
      if base then
        add(base)
      elseif kind == "evaluators" then
        for _, sub in ipairs(core.list_dir(dir .. "/" .. entry) or {}) do
          local b = sub:match("^(.+)%.lua$")
          if b then add(entry .. "/" .. b) end
        end
      end
    end
  end
  table.sort(names)
  return names
end

-- "strategy 'x' not found (looked in ...); strategies here: a, b" for a
-- name find(kind, name) did not find; `kind` is plural ("strategies").
function M.not_found(kind, name)
  local singular = ({ strategies = "strategy", operators = "operator",
    evaluators = "evaluator" })[kind] or kind
  local names = M.available(kind)
  return ("%s '%s' not found (looked in %s); %s"):format(singular, name,
    table.concat(M.search_dirs(kind), ", "),
    #names > 0 and (kind .. " there: " .. table.concat(names, ", ")) or ("no " .. kind .. " there"))
end

-- A directory named relative to the avo roots, as evaluators are: as given
-- when it exists (or is absolute), else <root>/dir for the first root that
-- has it, else nil.  So `kernels/kb` in an example works from any directory.
function M.find_dir(dir)
  if dir:sub(1, 1) == "/" or exists(dir) then return dir end
  for _, root in ipairs(M.roots()) do
    local path = root .. "/" .. dir
    if exists(path) then return path end
  end
  return nil
end

------------------------------------------------------------ shared modules

-- `require "a.b.c"` also finds <root>/a/b/c.lua under every root above (the
-- host installs M.searcher after the engine's own modules), so strategies,
-- operators, evaluators and scripts share code through ordinary modules:
-- require "operators.lib.knobs", require "evaluators.cuda.attention_common".
--
-- Every such module is loaded with `require` recording what it requires in
-- turn, so M.required_files can name all the files an evaluator depends on
-- (its fingerprint covers them) even when a module was loaded earlier.

local module_file = {}     -- module name -> file the searcher loaded it from
local module_requires = {} -- module name -> set of names it required while loading

-- Calls fn(...) with the global `require` recording each name asked for
-- into the set `into`; `require` is restored however fn ends.
function M.recording_requires(into, fn, ...)
  local real = require
  _G.require = function(name)
    into[name] = true
    return real(name)
  end
  local results = table.pack(pcall(fn, ...))
  _G.require = real
  if not results[1] then error(results[2], 0) end
  return table.unpack(results, 2, results.n)
end

-- package.searchers entry.  Returns the loader and the file's path, or the
-- places it looked ("no file '...'" lines) for require's error message.
function M.searcher(name)
  local relative = name:gsub("%.", "/")
  local tried = {}
  for _, root in ipairs(M.roots()) do
    local path = root .. "/" .. relative .. ".lua"
    if exists(path) then
      local chunk, err = loadfile(path, "t")
      if not chunk then
        error(("error loading module '%s' from file '%s':\n\t%s"):format(name, path, err), 0)
      end
      return function(...)
        module_file[name], module_requires[name] = path, {}
        return M.recording_requires(module_requires[name], chunk, ...)
      end, path
    end
    tried[#tried + 1] = "no file '" .. path .. "'"
  end
  return table.concat(tried, "\n\t")
end

-- The files of the modules named in the set `names` that the searcher
-- loaded, and of everything those required, transitively; sorted.
function M.required_files(names)
  local files, seen = {}, {}
  local function visit(name)
    if seen[name] then return end
    seen[name] = true
    if module_file[name] then files[#files + 1] = module_file[name] end
    for dep in pairs(module_requires[name] or {}) do visit(dep) end
  end
  for name in pairs(names) do visit(name) end
  table.sort(files)
  return files
end

---------------------------------------------------------------- evaluators

-- Places a file named inside an evaluator may be.
function M.file_candidates(name, dir)
  if name:sub(1, 1) == "/" then return { name } end
  local list = {}
  for _, root in ipairs(M.roots()) do list[#list + 1] = root .. "/" .. name end
  list[#list + 1] = dir .. "/" .. name
  return list
end

return M
