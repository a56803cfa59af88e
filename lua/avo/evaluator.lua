-- avo.evaluator — load and validate a workload description, turn candidates
-- into self-contained jobs, and score results.  The format is documented in
-- docs/evaluators.md.

local core = require "avo.core"
local knobs = require "avo.knobs"
local paths = require "avo.paths"
local inprocess = require "avo.inprocess"

local M = {}
local Evaluator = {}
Evaluator.__index = Evaluator

local KINDS = { scalar = true, ["in"] = true, out = true, inout = true }
local TYPES = { f32 = true, f64 = true, i32 = true, i64 = true }
local CUDA_TYPES = { f32 = true, f64 = true, i32 = true, i64 = true, f16 = true, bf16 = true }
local BACKENDS = { cpu = true, cuda = true, test = true }
local ELEMENT_BYTES = { f32 = 4, f64 = 8, i32 = 4, i64 = 8, f16 = 2, bf16 = 2 }
local INT32_MIN, INT32_MAX = -2147483648, 2147483647

-- Memory a CPU candidate may use (its limits.memory_mb): a config whose
-- buffers alone need more cannot run, so it is refused at load.
local CPU_MEMORY_MB = 4096
-- The longest buffer a CUDA job may declare (eval/cuda/cuda.c cuda_rules).
local CUDA_MAX_LENGTH = 1 << 40

-- GPU samples are short and steadier than CPU ones: aim for 1% spread.
local CUDA_TIMING_DEFAULTS = {
  enabled = true, min_sample_s = 0.0002, min_samples = 5, max_samples = 50,
  target_spread = 0.01, max_seconds = 3.0,
}

local TIMING_DEFAULTS = {
  enabled = true, min_sample_s = 0.001, min_samples = 5, max_samples = 40,
  target_spread = 0.02, max_seconds = 2.0,
}

-- A validation error names the evaluator and the field.
local function field_error(ev, field, msg)
  error(("%s: evaluator field '%s' %s"):format(ev._origin, field, msg), 0)
end

local cascade_stages -- defined with the Evaluator methods

local function check_type(ev, field, value, want, optional)
  if value == nil then
    if optional then return end
    field_error(ev, field, "is missing")
  end
  if type(value) ~= want then
    local shown = (type(value) == "string" or type(value) == "boolean") and
      (" %q"):format(tostring(value)) or type(value) == "number" and " " .. tostring(value) or ""
    field_error(ev, field, ("must be a %s, got %s%s"):format(want, type(value), shown))
  end
end

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

-- An optional number field that must be finite and at least `min` (above
-- it with `above`): NaN or inf would reach the job as JSON null and be
-- replaced by a default without a word.
local function check_number(ev, field, value, min, above, optional)
  check_type(ev, field, value, "number", optional)
  if value == nil then return end
  if not finite(value) or value < min or (above and value == min) then
    field_error(ev, field, ("must be a finite number %s %s, got %s"):format(above and ">" or ">=",
      tostring(min), tostring(value)))
  end
end

-- atol and rtol of a tolerance table (the evaluator's, or one dtype's).
local function check_tolerance(ev, field, t, optional)
  check_number(ev, field .. ".atol", t.atol, 0, false, optional)
  check_number(ev, field .. ".rtol", t.rtol, 0, false, optional)
end

local read_file = paths.read_file

-- Resolve a file named in the evaluator: repository root first, then the
-- evaluator's own folder, then as given.
local function resolve_file(ev, field, name)
  for _, candidate in ipairs(paths.file_candidates(name, ev._dir)) do
    local text = read_file(candidate)
    if text then return text, candidate end
  end
  field_error(ev, field, ("names '%s', which cannot be read"):format(name))
end

local function validate_args(ev)
  check_type(ev, "args", ev.args, "table")
  if #ev.args == 0 then field_error(ev, "args", "must list at least one argument") end
  local names = {}
  for i, a in ipairs(ev.args) do
    local f = ("args[%d]"):format(i)
    check_type(ev, f, a, "table")
    check_type(ev, f .. ".name", a.name, "string")
    if names[a.name] then field_error(ev, f .. ".name", ("repeats '%s'"):format(a.name)) end
    names[a.name] = true
    if not KINDS[a.kind] then
      field_error(ev, f .. ".kind", ("must be scalar, in, out or inout, got %s"):format(tostring(a.kind)))
    end
    if ev.backend == "cuda" then
      if not CUDA_TYPES[a.type] then
        field_error(ev, f .. ".type", ("must be f32, f64, i32, i64, f16 or bf16, got %s"):format(
          tostring(a.type)))
      end
    elseif not TYPES[a.type] then
      field_error(ev, f .. ".type", ("must be f32, f64, i32 or i64, got %s"):format(tostring(a.type)))
    end
    if a.kind == "scalar" then
      check_type(ev, f .. ".value", a.value, "function", true)
    else
      check_type(ev, f .. ".length", a.length, "function")
      check_type(ev, f .. ".range", a.range, "table", true)
    end
  end
end

-- Evaluate the per-config functions once: element counts, scalar values,
-- work.  Errors name the config and the field.
local function resolve_configs(ev, list, label)
  list, label = list or ev.configs, label or "configs"
  local resolved = {}
  for i, c in ipairs(list) do
    local where = ("%s[%d]"):format(label, i)
    local function call(field, fn)
      local ok, v = pcall(fn, c)
      if not ok then field_error(ev, field, ("failed for %s: %s"):format(where, tostring(v))) end
      return v
    end
    local r = { name = c.name, scalars = {}, lengths = {}, flops = 0, bytes = 0 }
    local total_bytes = 0
    for j, a in ipairs(ev.args) do
      local f = ("args[%d]"):format(j)
      if a.kind == "scalar" then
        local v = a.value and call(f .. ".value", a.value) or c[a.name]
        if v ~= nil and type(v) ~= "number" then
          field_error(ev, f, ("is %s %q for %s (%s): a scalar must be a number"):format(type(v),
            tostring(v), where, tostring(c.name)))
        end
        if type(v) ~= "number" then
          field_error(ev, f, ("has no value for %s (set %s.%s or give args[%d].value)"):format(
            where, where, a.name, j))
        end
        if not finite(v) then
          field_error(ev, f, ("is %s for %s (%s): a scalar must be a finite number"):format(
            tostring(v), where, tostring(c.name)))
        end
        if a.type:sub(1, 1) == "i" then
          v = math.tointeger(v) or field_error(ev, f, ("must be an integer for %s, got %s"):format(
            where, tostring(v)))
        end
        if a.type == "i32" and (v < INT32_MIN or v > INT32_MAX) then
          field_error(ev, f, ("is %d for %s (%s), out of range for i32 (%d to %d)"):format(v, where,
            tostring(c.name), INT32_MIN, INT32_MAX))
        end
        r.scalars[a.name] = v
      else
        local raw = call(f .. ".length", a.length)
        local n = math.tointeger(raw)
        if not n or n < 1 then
          field_error(ev, f .. ".length", ("must return a positive integer for %s, got %s"):format(
            where, tostring(raw)))
        end
        if ev.backend == "cuda" and n > CUDA_MAX_LENGTH then
          field_error(ev, f .. ".length", ("is %d elements for %s (%s), over the 2^40 a CUDA " ..
            "buffer may hold"):format(n, where, tostring(c.name)))
        end
        r.lengths[a.name] = n
        -- (in floating point: a product of lengths must not wrap around)
        total_bytes = total_bytes + n * 1.0 * ELEMENT_BYTES[a.type]
      end
    end
    if ev.backend == "cpu" and total_bytes > CPU_MEMORY_MB * 1048576.0 then
      field_error(ev, "args", ("needs %.4g GiB of buffers for %s (%s), over the %d MiB a CPU " ..
        "candidate may use"):format(total_bytes / 1073741824, where, tostring(c.name),
        CPU_MEMORY_MB))
    end
    if ev.flops then r.flops = call("flops", ev.flops) end
    if ev.bytes then r.bytes = call("bytes", ev.bytes) end
    for _, field in ipairs({ "flops", "bytes" }) do
      local v = r[field]
      if type(v) ~= "number" or not finite(v) or v < 0 then
        field_error(ev, field, ("must return a finite number >= 0 for %s, got %s"):format(where,
          tostring(v)))
      end
    end
    resolved[i] = r
  end
  return resolved
end

local validate_cuda -- defined below, used by validate

-- A launch dimension field: a function, or a constant number/list.
local function check_launch_field(ev, field, value, optional)
  if value == nil and optional then return end
  local t = type(value)
  if t ~= "function" and t ~= "number" and t ~= "table" then
    field_error(ev, field, ("must be a function(config, knobs) or a number, got %s"):format(
      value == nil and "nothing (it is missing)" or t))
  end
end

-- The CUDA-only fields (docs/evaluators.md): launch geometry as functions of
-- the config and the candidate's knobs, headers, NVRTC options, per-dtype
-- tolerances.  Headers given as file names are read here.
validate_cuda = function(ev)
  check_launch_field(ev, "grid", ev.grid)
  check_launch_field(ev, "block", ev.block)
  check_launch_field(ev, "shared_bytes", ev.shared_bytes, true)
  check_launch_field(ev, "reference.grid", ev.reference.grid)
  check_launch_field(ev, "reference.block", ev.reference.block)
  check_launch_field(ev, "reference.shared_bytes", ev.reference.shared_bytes, true)
  check_type(ev, "nvrtc_options", ev.nvrtc_options, "table", true)
  for i, o in ipairs(ev.nvrtc_options or {}) do
    check_type(ev, ("nvrtc_options[%d]"):format(i), o, "string")
  end
  check_type(ev, "name_expressions", ev.name_expressions, "table", true)
  for i, o in ipairs(ev.name_expressions or {}) do
    check_type(ev, ("name_expressions[%d]"):format(i), o, "string")
  end
  check_type(ev, "arch", ev.arch, "string", true)
  check_type(ev, "headers", ev.headers, "table", true)
  ev.header_texts = {}
  for name, value in pairs(ev.headers or {}) do
    local f = ("headers[%q]"):format(tostring(name))
    if type(name) ~= "string" or name == "" or name:find("..", 1, true) or name:sub(1, 1) == "/" then
      field_error(ev, f, "must be keyed by a relative header name without '..'")
    end
    if type(value) == "table" then
      check_type(ev, f .. ".file", value.file, "string")
      ev.header_texts[name] = resolve_file(ev, f .. ".file", value.file)
    elseif type(value) == "string" then
      -- A one-line value naming a readable file is that file; anything else is the text.
      local text
      if not value:find("\n") then
        for _, candidate in ipairs(paths.file_candidates(value, ev._dir)) do
          text = read_file(candidate)
          if text then break end
        end
      end
      ev.header_texts[name] = text or value
    else
      field_error(ev, f, ("must be the header's text or a file name, got %s"):format(type(value)))
    end
  end
  for dtype, t in pairs(ev.tolerance) do
    if dtype ~= "atol" and dtype ~= "rtol" then
      local f = "tolerance." .. tostring(dtype)
      if not CUDA_TYPES[dtype] then
        field_error(ev, f, "is not an element type (f32, f64, f16, bf16) nor atol/rtol")
      end
      check_type(ev, f, t, "table")
      check_tolerance(ev, f, t, true)
    end
  end
end


-- The fields a kernel baseline (a table in `baselines`) may have.
local KERNEL_BASELINE_FIELDS = {
  name = true, kernel = true, source = true, entry = true, knobs = true, grid = true,
  block = true, shared_bytes = true, nvrtc_options = true, name_expressions = true,
  cflags = true,
  -- A library baseline (CPU): the kernel is a call adapter of `symbol` in `library`.
  library = true, symbol = true, describe = true, thread_count = true, threads = true,
  install = true,
}

-- Local: the library fields of kernel baseline `b` (CPU evaluators only):
-- fills entry.lib = {file, symbol, describe, thread_count, install} (the
-- job's "library", eval/cpu/cpulib.h) and entry.threads.
local function validate_library_baseline(ev, f, b, entry)
  local any = false
  for _, k in ipairs({ "library", "symbol", "describe", "thread_count", "threads", "install" }) do
    if b[k] ~= nil then any = true end
  end
  if not any then return end
  if ev.backend ~= "cpu" then
    field_error(ev, f, "names a library (library, symbol, ...): library baselines are for CPU " ..
      "evaluators")
  end
  check_type(ev, f .. ".library", b.library, "string")
  check_type(ev, f .. ".symbol", b.symbol, "string")
  if not b.library:match("^/") and not b.library:match("^lib[%w_.+%-]+%.so[%d.]*$") then
    field_error(ev, f .. ".library", ("must be a shared library's file name (libx.so.N) or an " ..
      "absolute path, got %q"):format(b.library))
  end
  if not b.symbol:match("^[%a_][%w_]*$") then
    field_error(ev, f .. ".symbol", ("must be a C function's name, got %q"):format(b.symbol))
  end
  check_type(ev, f .. ".describe", b.describe, "table", true)
  local describe = {}
  for k, v in pairs(b.describe or {}) do
    if type(k) ~= "string" or not k:match("^[%a_][%w_]*$") then
      field_error(ev, f .. ".describe", ("must be keyed by names, got '%s'"):format(tostring(k)))
    end
    if type(v) ~= "string" or not v:match("^[%a_][%w_]*$") then
      field_error(ev, f .. ".describe." .. k, "must name a function of the library")
    end
    describe[k] = v
  end
  check_type(ev, f .. ".thread_count", b.thread_count, "string", true)
  check_type(ev, f .. ".install", b.install, "string", true)
  if b.threads ~= nil and (math.type(b.threads) ~= "integer" or b.threads < 1
      or b.threads > 256) then
    field_error(ev, f .. ".threads", "must be an integer from 1 to 256")
  end
  entry.kind, entry.library = "library", b.library
  entry.threads = b.threads or 1
  entry.lib = { file = b.library, symbol = b.symbol, thread_count = b.thread_count,
                install = b.install, describe = next(describe) and describe or nil }
end

-- The unit of a score paired with the yardstick: the geometric mean over
-- the configs of the candidate's speed-up over the seed timed beside it.
local YARDSTICK_UNIT = "x seed"

-- `timing.yardstick = true`: the judge times the evaluator's seed (its kernel
-- at the knobs' first values, trusted like the reference) beside the
-- candidate, sample by sample on the same inputs, and the score is the
-- paired speed-up (each config's vs_yardstick, their geometric mean, unit
-- "x seed"), which what slows the machine for a moment slows alike.  CPU
-- evaluators; a score() of the evaluator's own still decides the score.
local function validate_yardstick(ev)
  if not (ev.timing and ev.timing.yardstick) then return end
  if ev.backend ~= "cpu" then
    field_error(ev, "timing.yardstick", ("is not supported by the %s backend yet (cpu only)")
      :format(tostring(ev.backend)))
  end
  if ev.timing.enabled == false then
    field_error(ev, "timing.yardstick", "needs timing (timing.enabled is false)")
  end
  if ev.threads ~= nil and ev.threads ~= 1 then
    field_error(ev, "timing.yardstick", "needs a single-threaded kernel (threads = 1): the " ..
      "judge runs the seed itself, where no thread may start")
  end
  for i, b in ipairs(type(ev.baselines) == "table" and ev.baselines or {}) do
    if type(b) == "table" and b.threads ~= nil and b.threads ~= 1 then
      field_error(ev, ("baselines[%d].threads"):format(i), "must be 1 with timing.yardstick " ..
        "(a baseline is timed beside the seed like a candidate)")
    end
  end
  ev._yardstick = { source = ev.kernel_source, knobs = knobs.defaults(ev.knobs) }
end

-- `libraries`: what the judge does with libraries a kernel loads beyond its
-- own object and the runtime (eval/libraries.h): "allow" (the default: the
-- result names them), "forbid" (such a kernel is invalid) or a list of file
-- name prefixes it may load ({ "libopenblas" }).  CPU kernels only: NVRTC
-- code cannot load a library.
local function validate_libraries(ev)
  local v = ev.libraries
  if v == nil or v == "allow" or v == "forbid" then
  elseif type(v) == "table" then
    for i, p in ipairs(v) do
      if type(p) ~= "string" or p == "" or p:find("/", 1, true) then
        field_error(ev, ("libraries[%d]"):format(i), "must be a file name prefix such as " ..
          "\"libopenblas\" (no directory)")
      end
    end
    for k in pairs(v) do
      if math.type(k) ~= "integer" or k < 1 or k > #v then
        field_error(ev, "libraries", "must be a list of file name prefixes")
      end
    end
  else
    field_error(ev, "libraries", "must be \"allow\", \"forbid\" or a list of file name " ..
      "prefixes such as { \"libopenblas\" }")
  end
  if v ~= nil and ev.backend ~= "cpu" then
    field_error(ev, "libraries", "applies to CPU kernels only (the " .. ev.backend ..
      " backend's kernels cannot load libraries)")
  end
end

-- A vendor baseline named `b` (eval/baseline.h's registry) as entry `f`.
local function vendor_baseline(ev, f, b, registry, known_text)
  local info = registry[b]
  if not info then
    field_error(ev, f, ("names an unknown baseline '%s' (known: %s; or a table {name =, " ..
      "kernel =} for a kernel baseline)"):format(b, known_text))
  end
  if info.backend ~= ev.backend then
    field_error(ev, f, ("'%s' (%s) serves %s evaluators, and this evaluator's backend is '%s'")
      :format(b, info.library, info.backend, ev.backend))
  end
  return { name = b, kind = "vendor", vendor = b, library = info.library }
end

-- A kernel baseline {name =, kernel = file | source = text, ...} (or a
-- library one, which is a kernel calling into a library) as entry `f`.
local function kernel_baseline(ev, f, b, registry)
  for k in pairs(b) do
    if not KERNEL_BASELINE_FIELDS[k] then
      field_error(ev, f, ("has an unknown field '%s' (a kernel baseline has name, kernel or " ..
        "source, entry, knobs, grid, block, shared_bytes, nvrtc_options, name_expressions, " ..
        "cflags; a library baseline also library, symbol, describe, thread_count, threads, " ..
        "install)")
        :format(tostring(k)))
    end
  end
  check_type(ev, f .. ".name", b.name, "string")
  if not b.name:match("^[%w_.%-]+$") then
    field_error(ev, f .. ".name", ("must be letters, digits, '_', '-' or '.', got %q"):format(b.name))
  end
  if registry[b.name] then
    field_error(ev, f .. ".name", ("'%s' is a vendor baseline's name; name the kernel " ..
      "baseline differently"):format(b.name))
  end
  if (b.kernel == nil) == (b.source == nil) then
    field_error(ev, f, "needs exactly one of 'kernel' (a file) or 'source' (the text)")
  end
  local entry = { name = b.name, kind = "kernel", library = "kernel" }
  if b.kernel ~= nil then
    check_type(ev, f .. ".kernel", b.kernel, "string")
    entry.source, entry.path = resolve_file(ev, f .. ".kernel", b.kernel)
  else
    check_type(ev, f .. ".source", b.source, "string")
    entry.source = b.source
  end
  entry.version = core.hash(entry.source)
  check_type(ev, f .. ".entry", b.entry, "string", true)
  entry.entry = b.entry or ev.entry
  local ok, declared = pcall(knobs.parse, entry.source)
  if not ok then field_error(ev, f, ("has a bad knob declaration: %s"):format(declared)) end
  entry.declared = declared
  entry.knobs = knobs.defaults(declared)
  check_type(ev, f .. ".knobs", b.knobs, "table", true)
  for name, v in pairs(b.knobs or {}) do
    if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
      field_error(ev, f .. ".knobs", ("must be keyed by knob names, got '%s'"):format(tostring(name)))
    end
    if type(v) ~= "number" and type(v) ~= "string" then
      field_error(ev, f .. ".knobs." .. name, "must be a number or a string")
    end
    entry.knobs[name] = v
  end
  if ev.backend == "cuda" then
    check_launch_field(ev, f .. ".grid", b.grid, true)
    check_launch_field(ev, f .. ".block", b.block, true)
    check_launch_field(ev, f .. ".shared_bytes", b.shared_bytes, true)
    entry.grid, entry.block, entry.shared_bytes = b.grid, b.block, b.shared_bytes
  else
    for _, k in ipairs({ "grid", "block", "shared_bytes", "nvrtc_options", "name_expressions" }) do
      if b[k] ~= nil then field_error(ev, f .. "." .. k, "applies to CUDA evaluators only") end
    end
  end
  if ev.backend == "cpu" and b.nvrtc_options ~= nil then
    field_error(ev, f .. ".nvrtc_options", "applies to CUDA evaluators only")
  end
  if ev.backend == "cuda" and b.cflags ~= nil then
    field_error(ev, f .. ".cflags", "applies to CPU evaluators (CUDA ones take nvrtc_options)")
  end
  for _, k in ipairs({ "nvrtc_options", "name_expressions", "cflags" }) do
    check_type(ev, f .. "." .. k, b[k], "table", true)
    for j, o in ipairs(b[k] or {}) do
      check_type(ev, ("%s.%s[%d]"):format(f, k, j), o, "string")
    end
    entry[k] = b[k]
  end
  validate_library_baseline(ev, f, b, entry)
  return entry
end

-- The evaluator's `baselines` (docs/evaluators.md): names of vendor
-- baselines (eval/baseline.h) for this backend, and kernel baselines
-- {name =, kernel = file | source = text, ...} measured as a candidate
-- would be.  Fills ev.baseline_list with one normalized entry each:
-- {name, kind = "vendor" | "kernel", library, version, path, and for
-- kernels source, entry, knobs (values), declared (knob list), launch and
-- compiler fields; vendor: the registry's name}.  Errors name the evaluator
-- and the entry.
local function validate_baselines(ev)
  ev.baseline_list = {}
  local list = ev.baselines
  if list == nil then return end
  if type(list) ~= "table" then
    field_error(ev, "baselines", ("must be an array of names or {name =, kernel =} tables, got %s")
      :format(type(list)))
  end
  for k in pairs(list) do
    if math.type(k) ~= "integer" or k < 1 or k > #list then
      field_error(ev, "baselines", ("must be an array, has key '%s'"):format(tostring(k)))
    end
  end
  if #list > 0 and ev.backend ~= "cpu" and ev.backend ~= "cuda" then
    field_error(ev, "baselines", "is not supported by the " .. ev.backend .. " backend")
  end
  local registry, known = {}, {}
  for _, b in ipairs(core.baselines()) do
    registry[b.name] = b
    known[#known + 1] = ("%s (%s)"):format(b.name, b.backend)
  end
  local known_text = table.concat(known, ", ")
  local seen = {}
  for i, b in ipairs(list) do
    local f = ("baselines[%d]"):format(i)
    local entry
    if type(b) == "string" then
      entry = vendor_baseline(ev, f, b, registry, known_text)
    elseif type(b) == "table" then
      entry = kernel_baseline(ev, f, b, registry)
    else
      field_error(ev, f, ("must be a baseline's name or a {name =, kernel =} table, got %s")
        :format(type(b)))
    end
    if seen[entry.name] then field_error(ev, f, ("repeats the name '%s'"):format(entry.name)) end
    seen[entry.name] = true
    ev.baseline_list[i] = entry
  end
end

-- A config's `knobs`: the knobs its time depends on, as a name or a
-- prefix ending in "*" ("LG_*"), or a list of them; a config without it may
-- depend on any.  Each must match a knob the kernel declares, so a typo is
-- not silently a group of none.  Left in the config as a list (a single
-- string becomes a list of one), as operators/lib/knobs.lua reads it.
local function validate_config_knobs(ev)
  for i, c in ipairs(ev.configs) do
    local f = ("configs[%d].knobs"):format(i)
    local list = c.knobs
    if type(list) == "string" then list = { list } end
    if list ~= nil and (type(list) ~= "table" or #list == 0) then
      field_error(ev, f, ("must be a knob name, a prefix ending in '*' or a non-empty list of " ..
        "them, got %s"):format(type(c.knobs)))
    end
    for j, pattern in ipairs(list or {}) do
      if type(pattern) ~= "string" or not pattern:match("^[%a_][%w_]*%*?$") then
        field_error(ev, f, ("has %s at %d: a knob name or a prefix ending in '*' (LG_*)")
          :format(type(pattern) == "string" and ("%q"):format(pattern) or type(pattern), j))
      end
      local matched = false
      for _, knob in ipairs(ev.knobs) do
        if knobs.matches(pattern, knob.name) then matched = true break end
      end
      if not matched then
        field_error(ev, f, ("names %q, which matches none of the kernel's knobs (%s)"):format(
          pattern, #ev.knobs > 0 and knobs.names(ev.knobs) or "it declares none"))
      end
    end
    c.knobs = list
  end
end

local function validate(ev)
  -- A field named like a method would hide it (ev:score_of is the engine's
  -- scoring): refused by name rather than silently mis-scoring.
  for k in pairs(ev) do
    if type(k) == "string" and rawget(Evaluator, k) ~= nil then
      field_error(ev, k, "has the name of an evaluator method (ev:" .. k .. "); rename it")
    end
  end
  check_type(ev, "name", ev.name, "string")
  check_type(ev, "description", ev.description, "string")
  check_type(ev, "backend", ev.backend, "string")
  if not BACKENDS[ev.backend] then
    field_error(ev, "backend", ("must be 'cpu', 'cuda' or 'test', got '%s'"):format(ev.backend))
  end
  check_type(ev, "kernel", ev.kernel, "string")
  check_type(ev, "configs", ev.configs, "table")
  if #ev.configs == 0 then field_error(ev, "configs", "must list at least one config") end
  local names = {}
  for i, c in ipairs(ev.configs) do
    check_type(ev, ("configs[%d]"):format(i), c, "table")
    check_type(ev, ("configs[%d].name"):format(i), c.name, "string")
    if names[c.name] then field_error(ev, ("configs[%d].name"):format(i), "repeats " .. c.name) end
    names[c.name] = true
  end
  check_type(ev, "score", ev.score, "function", true)
  check_type(ev, "artifacts", ev.artifacts, "function", true)
  check_type(ev, "restrictions", ev.restrictions, "function", true)
  ev.kernel_source, ev.kernel_path = resolve_file(ev, "kernel", ev.kernel)
  local ok, parsed = pcall(knobs.parse, ev.kernel_source)
  if not ok then field_error(ev, "kernel", ("has a bad knob declaration: %s"):format(parsed)) end
  ev.knobs = parsed
  validate_config_knobs(ev)

  -- Which fields an evaluator needs depends on its backend.  The
  -- deterministic in-process one (lua/avo/inprocess.lua, the engine's own
  -- tests): test_score(candidate, config) stands in for compiling and timing.
  if ev.backend == inprocess.backend then
    validate_baselines(ev)
    check_type(ev, "test_score", ev.test_score, "function")
    check_type(ev, "test_compile", ev.test_compile, "function", true)
    ev.resolved = {}
    for i, c in ipairs(ev.configs) do ev.resolved[i] = { name = c.name } end
    ev.unit = "score"
    return
  end

  check_type(ev, "entry", ev.entry, "string")
  check_type(ev, "reference", ev.reference, "table")
  check_type(ev, "reference.source", ev.reference.source, "string")
  check_type(ev, "reference.entry", ev.reference.entry, "string")
  ev.reference_source = resolve_file(ev, "reference.source", ev.reference.source)
  validate_args(ev)
  check_type(ev, "tolerance", ev.tolerance, "table")
  check_tolerance(ev, "tolerance", ev.tolerance)
  check_type(ev, "flops", ev.flops, "function", true)
  check_type(ev, "bytes", ev.bytes, "function", true)
  if not ev.flops and not ev.bytes then field_error(ev, "flops", "or 'bytes' is required") end
  check_type(ev, "cflags", ev.cflags, "table", true)
  check_type(ev, "timing", ev.timing, "table", true)
  for k, v in pairs(ev.timing or {}) do
    if k == "yardstick" then
      check_type(ev, "timing.yardstick", v, "boolean")
    elseif k ~= "enabled" then
      check_number(ev, "timing." .. tostring(k), v, 0)
    end
  end
  validate_yardstick(ev)
  check_number(ev, "timeout", ev.timeout, 0, true, true)
  check_number(ev, "compile_timeout", ev.compile_timeout, 0, true, true)
  check_type(ev, "unit", ev.unit, "string", true)
  if ev.backend == "cuda" then validate_cuda(ev) end
  validate_baselines(ev)
  ev.unit = ev.score and (ev.unit or "score")
    or ev._yardstick and YARDSTICK_UNIT or (ev.flops and "GFLOP/s" or "GB/s")
  ev.resolved = resolve_configs(ev)
  if ev.threads ~= nil and (math.type(ev.threads) ~= "integer" or ev.threads < 1
      or ev.threads > 256) then
    field_error(ev, "threads", "must be an integer from 1 to 256 (threads the kernel may start)")
  end
  validate_libraries(ev)
  if ev.check_configs ~= nil then
    if ev.backend ~= "cpu" and ev.backend ~= "cuda" then
      field_error(ev, "check_configs", "is not supported by the " .. ev.backend .. " backend yet")
    end
    local t = type(ev.check_configs)
    if t ~= "table" and t ~= "function" then
      field_error(ev, "check_configs", "must be a list of configs or a function(rng) returning one")
    end
    -- Resolve once now, so a broken generator fails at load, naming the field.
    ev:check_jobs_configs(0)
  end
end

-- The extra sizes a job verifies (never times): the evaluator's list, or
-- what its generator draws from the candidate's seed.  Names default to
-- check-<i> and must differ from the timed configs'.
function Evaluator:check_jobs_configs(seed)
  local list = self.check_configs
  if type(list) == "function" then
    local gen = core.rng(seed, "check-configs")
    local rng = { int = function(_, lo, hi) return lo + gen:below(hi - lo + 1) end }
    local ok, v = pcall(list, rng)
    if not ok then field_error(self, "check_configs", "failed: " .. tostring(v)) end
    if type(v) ~= "table" then field_error(self, "check_configs", "must return a list of configs") end
    list = v
  end
  local named, names = {}, {}
  for _, c in ipairs(self.configs) do names[c.name] = true end
  for i, c in ipairs(list) do
    if type(c) ~= "table" then field_error(self, ("check_configs[%d]"):format(i), "must be a table") end
    local copy = {}
    for k, v in pairs(c) do copy[k] = v end
    copy.name = copy.name or ("check-%d"):format(i)
    if names[copy.name] then
      field_error(self, ("check_configs[%d].name"):format(i), "repeats " .. copy.name)
    end
    names[copy.name] = true
    named[i] = copy
  end
  return resolve_configs(self, named, "check_configs"), named
end

-- What identifies the workload: its file and the shared modules it
-- requires, reference and resolved configs.
local function fingerprint(ev)
  local parts = { ev._text or "", ev.reference_source or "", ev.kernel_source,
                  core.json_encode(ev.resolved) }
  for _, path in ipairs(ev._modules or {}) do
    parts[#parts + 1] = path .. "\0" .. (read_file(path) or "")
  end
  local names = {}
  for name in pairs(ev.header_texts or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    parts[#parts + 1] = name .. "\0" .. ev.header_texts[name]
  end
  return core.hash(table.concat(parts, "\0"))
end

-- Load an evaluator from a name ("cpu/sgemm"), a path, or a table.
---@param spec string|avo.EvaluatorSpec
---@return avo.Evaluator
function M.load(spec)
  local ev, origin, text, dir, modules
  if type(spec) == "table" then
    if getmetatable(spec) == Evaluator then return spec end
    ev, origin, dir = spec, "evaluator", "."
  elseif type(spec) == "string" then
    local path = paths.find("evaluators", spec)
    if not path then
      error(paths.not_found("evaluators", spec), 0)
    end
    if path:match("_common%.lua$") then
      error(("%s: a *_common.lua file is code shared by evaluators (load it with require), "
        .. "not an evaluator"):format(path), 0)
    end
    local rerr
    text, rerr = read_file(path)
    if not text then error(("evaluator %s cannot be read: %s"):format(spec, rerr), 0) end
    local chunk, err = load(text, "@" .. path, "t")
    if not chunk then error(err, 0) end
    local required = {}
    ev = paths.recording_requires(required, chunk)
    if type(ev) ~= "table" then
      error(("%s: an evaluator must return a table, got %s"):format(path, type(ev)), 0)
    end
    origin, dir, modules = path, path:match("^(.*)/[^/]*$") or ".", paths.required_files(required)
  else
    error(("avo.evaluator: expected a name, path or table, got %s"):format(type(spec)), 2)
  end
  ev._origin, ev._text, ev._dir, ev._modules = origin, text, dir, modules
  setmetatable(ev, Evaluator)
  validate(ev)
  ev.fingerprint = fingerprint(ev)
  ev._stages = cascade_stages(ev)
  return ev
end

-- Keep only the configs named in `names`, in that order (`avo eval
-- --config`).  Errors naming the evaluator's configs when one is unknown.
function Evaluator:only_configs(names)
  local at, all = {}, {}
  for i, c in ipairs(self.configs) do
    at[c.name] = i
    all[i] = c.name
  end
  local configs, resolved, seen = {}, {}, {}
  for _, name in ipairs(names) do
    local i = at[name]
    if not i then
      error(("%s has no config '%s' (configs: %s)"):format(self.name, name,
        table.concat(all, ", ")), 0)
    end
    if seen[name] then error(("config '%s' is named twice"):format(name), 0) end
    seen[name] = true
    configs[#configs + 1], resolved[#resolved + 1] = self.configs[i], self.resolved[i]
  end
  self.configs, self.resolved = configs, resolved
  self._stages = false -- exactly these configs: no cascade
  self.fingerprint = fingerprint(self)
end

-- The evaluator restricted to the configs `names` (a view sharing
-- everything else), for one stage of a cascade.
function Evaluator:view(names)
  local v = setmetatable({}, { __index = self })
  Evaluator.only_configs(v, names)
  return v
end

-- The cascade of `ev` (its `cascade` field; ev._stages) as stages {names, min_ratio,
-- view}, the last one holding every config no earlier stage named; nil
-- without a cascade.  Errors name the field.
cascade_stages = function(ev)
  local spec = ev.cascade
  if spec == nil then return nil end
  if type(spec) ~= "table" or #spec == 0 then
    field_error(ev, "cascade", "must be an array of stages {configs = {names}, min_ratio = x}")
  end
  local known, used, stages = {}, {}, {}
  for _, c in ipairs(ev.configs) do known[c.name] = true end
  for i, st in ipairs(spec) do
    local where = ("cascade[%d]"):format(i)
    if type(st) ~= "table" or type(st.configs) ~= "table" or #st.configs == 0 then
      field_error(ev, where, "must be {configs = {names...}, min_ratio = number}")
    end
    for _, name in ipairs(st.configs) do
      if not known[name] then field_error(ev, where, ("names no config '%s'"):format(tostring(name))) end
      if used[name] then field_error(ev, where, ("names config '%s' twice"):format(name)) end
      used[name] = true
    end
    if st.min_ratio ~= nil and (type(st.min_ratio) ~= "number" or st.min_ratio <= 0) then
      field_error(ev, where .. ".min_ratio", "must be a number > 0")
    end
    stages[i] = { names = st.configs, min_ratio = st.min_ratio }
  end
  local rest = {}
  for _, c in ipairs(ev.configs) do
    if not used[c.name] then rest[#rest + 1] = c.name end
  end
  if #rest == 0 then
    field_error(ev, "cascade", "leaves no config for the last stage (a cascade stops " ..
      "candidates early; the last stage runs the configs no stage names)")
  end
  stages[#stages + 1] = { names = rest }
  for _, st in ipairs(stages) do st.view = ev:view(st.names) end
  return stages
end

-- The seed kernel as a candidate.
function Evaluator:seed()
  return {
    source = self.kernel_source, knobs = knobs.defaults(self.knobs), operator = "seed",
    parents = {}, generation = 0, note = "seed kernel " .. self.kernel_path,
  }
end

-- Dedupe key: same source, knobs and workload => same evaluation.
function Evaluator:key(cand)
  return core.hash(table.concat({ cand.source, knobs.canonical(cand.knobs), self.fingerprint }, "\0"))
end

-- Seconds after which the engine kills an evaluation outright.
function Evaluator:deadline()
  local timeout = self.timeout or 60
  return timeout + (self.compile_timeout or 120) + 10 -- run + compile allowance + margin
end

-- The job for one candidate, by the evaluator's backend: a self-contained
-- message for a worker (docs/protocol.md), or the in-process backend's job
-- (lua/avo/inprocess.lua).  `trial` counts earlier measurements of the same
-- candidate; only the in-process backend uses it (its test_score).
local JOB_OF = {
  cpu = function(ev, cand, seed, cache_dir)
    local job = ev:job_base(cand, seed, cache_dir, TIMING_DEFAULTS)
    if ev.libraries ~= nil and ev.libraries ~= "allow" then
      job.libraries = type(ev.libraries) == "table"
        and setmetatable({ table.unpack(ev.libraries) }, core.json_array_mt) or ev.libraries
    end
    return job
  end,
  cuda = function(ev, cand, seed, cache_dir) return ev:cuda_job(cand, seed, cache_dir) end,
  [inprocess.backend] = function(ev, cand, _, _, trial) return inprocess.job(ev, cand, trial) end,
}

function Evaluator:job(cand, seed, cache_dir, trial)
  return JOB_OF[self.backend](self, cand, seed, cache_dir, trial)
end

local function nonempty(list) return #list > 0 and list or nil end

function Evaluator:job_base(cand, seed, cache_dir, timing_defaults)
  local args = {}
  for i, a in ipairs(self.args) do
    args[i] = { name = a.name, kind = a.kind, type = a.type, range = a.range }
  end
  local timing = {}
  for k, v in pairs(timing_defaults) do timing[k] = v end
  for k, v in pairs(self.timing or {}) do timing[k] = v end
  timing.yardstick = nil -- the job's own field: what the judge times beside the candidate
  local timeout = self.timeout or 60
  return {
    backend = self.backend, source = cand.source, entry = self.entry,
    knobs = cand.knobs or {}, cflags = self.cflags or setmetatable({}, core.json_array_mt),
    reference = { source = self.reference_source, entry = self.reference.entry },
    args = args, configs = self.resolved, tolerance = self.tolerance,
    check_configs = self.check_configs and nonempty(self:check_jobs_configs(seed)) or nil,
    threads = self.threads or 1,
    seed = seed, trials = 2, timing = timing,
    limits = { timeout_s = timeout, compile_timeout_s = self.compile_timeout or 120,
               memory_mb = CPU_MEMORY_MB, cpu_s = timeout * 2 },
    cache_dir = cache_dir, fingerprint = self.fingerprint, yardstick = self._yardstick,
  }
end

-- A launch field's value for one config: constants as they are, functions
-- called with (config, knobs).  Raises with the field and config named.
local function launch_value(ev, field, value, config, knob_values)
  if type(value) ~= "function" then return value end
  local ok, v = pcall(value, config, knob_values)
  if not ok then
    error(("%s(%s) failed: %s"):format(field, config.name, tostring(v)), 0)
  end
  if type(v) ~= "number" and type(v) ~= "table" then
    error(("%s(%s) must return a number or {x, y, z}, got %s"):format(field, config.name,
      type(v)), 0)
  end
  return v
end

-- Launch geometry of every config for these knobs; an evaluator function
-- that fails becomes {error = message}, which the backend reports as the
-- candidate's `invalid` status instead of stopping the run.
local function launches(ev, knob_values, configs, raw)
  local all = knobs.defaults(ev.knobs)
  for k, v in pairs(knob_values or {}) do all[k] = v end
  for i, c in ipairs(raw or ev.configs) do
    local r = configs[i]
    local ok, err = pcall(function()
      r.launch = {
        grid = launch_value(ev, "grid", ev.grid, c, all),
        block = launch_value(ev, "block", ev.block, c, all),
        shared_bytes = launch_value(ev, "shared_bytes", ev.shared_bytes or 0, c, all),
      }
    end)
    if not ok then r.launch = { error = err } end
    local rok, rerr = pcall(function()
      r.reference_launch = {
        grid = launch_value(ev, "reference.grid", ev.reference.grid, c, {}),
        block = launch_value(ev, "reference.block", ev.reference.block, c, {}),
        shared_bytes = launch_value(ev, "reference.shared_bytes", ev.reference.shared_bytes or 0,
          c, {}),
      }
    end)
    if not rok then r.reference_launch = { error = rerr } end
  end
end

-- The CUDA job: the CPU job's fields plus launch geometry, headers, NVRTC
-- options and name expressions (docs/protocol.md).
function Evaluator:cuda_job(cand, seed, cache_dir)
  local job = self:job_base(cand, seed, cache_dir, CUDA_TIMING_DEFAULTS)
  local configs = {}
  for i, r in ipairs(self.resolved) do
    local copy = {}
    for k, v in pairs(r) do copy[k] = v end
    configs[i] = copy
  end
  launches(self, cand.knobs, configs)
  job.configs = configs
  if job.check_configs then
    -- Check configs drawn again as job_base drew them (same seed): their
    -- own tables are what the launch functions read.
    local resolved, raw = self:check_jobs_configs(seed)
    launches(self, cand.knobs, resolved, raw)
    job.check_configs = resolved
  end
  job.cflags = nil
  local arr = function(t) return setmetatable(t or {}, core.json_array_mt) end
  job.nvrtc_options = arr(self.nvrtc_options and { table.unpack(self.nvrtc_options) })
  job.name_expressions = arr(self.name_expressions and { table.unpack(self.name_expressions) })
  job.headers = next(self.header_texts or {}) and self.header_texts or nil
  job.arch = self.arch
  return job
end

-- The job that measures baseline `b` (an entry of ev.baseline_list).  A
-- vendor baseline is a CUDA job whose "baseline" names the library call in
-- place of source, entry and knobs, and whose configs carry no launch
-- (docs/protocol.md, "Baseline jobs"); a kernel baseline is a candidate's
-- job for its source, with its entry, knobs, launch and compiler fields
-- where it gives them and the evaluator's elsewhere.  `device` (an ordinal
-- or nil) pins it to one GPU.
function Evaluator:baseline_job(b, seed, cache_dir, device)
  local job
  if b.kind == "vendor" then
    job = self:cuda_job({ source = "", knobs = knobs.defaults(self.knobs) }, seed, cache_dir)
    for _, list in ipairs({ job.configs, job.check_configs or {} }) do
      for _, c in ipairs(list) do c.launch = nil end
    end
    -- nvrtc_options and headers stay: the reference is compiled with them
    -- (docs/protocol.md, "Baseline jobs").
    job.source, job.entry, job.knobs, job.name_expressions = nil, nil, nil, nil
    job.baseline = b.vendor
  else
    local declared = {}
    for _, k in ipairs(self.knobs) do declared[#declared + 1] = k end
    for _, k in ipairs(b.declared) do declared[#declared + 1] = k end
    local view = setmetatable({
      entry = b.entry, knobs = declared, grid = b.grid or self.grid, block = b.block or self.block,
      shared_bytes = b.shared_bytes or self.shared_bytes,
      nvrtc_options = b.nvrtc_options or self.nvrtc_options, cflags = b.cflags or self.cflags,
      name_expressions = b.name_expressions or self.name_expressions,
    }, { __index = self })
    job = Evaluator.job(view, { source = b.source, knobs = b.knobs }, seed, cache_dir)
    -- A baseline is the evaluator's own yardstick: its libraries are noted
    -- in its result, never refused by the rule for candidates.
    job.libraries = nil
    if b.kind == "library" then
      -- The worker probes the library and links the adapter (only) to it
      -- (docs/protocol.md, "Library baselines").
      job.library, job.threads = b.lib, b.threads
    end
  end
  job.device = device
  return job
end

-- Local: the configs that a baseline result marks unavailable (a library
-- that cannot serve them), by name.
local function unavailable_configs(result)
  local out = {}
  for _, c in ipairs(result.configs or {}) do
    if c.unavailable then out[#out + 1] = c.name end
  end
  return out
end

-- The verdict on a baseline's result, checked like a candidate's:
-- status (the worker's, "wrong" when a config that ran disagrees with the
-- reference), reason, and the score (score_of; nil unless every config is
-- correct, so a baseline missing a config has no aggregate to compare).
function Evaluator:baseline_verdict(result)
  local status, reason = result.status, result.reason
  local missing = unavailable_configs(result)
  if status == "ok" then
    local wrong = #missing == 0 and not self:verified(result)
    for _, c in ipairs(result.configs or {}) do
      if not c.correct and not c.unavailable then wrong = true end
    end
    if wrong then
      status = "wrong"
      reason = reason or "not every config was verified"
    elseif #missing > 0 then
      reason = reason or ("unavailable for %s"):format(table.concat(missing, ", "))
    end
  end
  local score
  if status == "ok" and #missing == 0 then
    score = self:score_of(result)
    if not (score > 0) then score = nil end
  end
  return status, reason, score
end

local function geomean(values)
  local sum, n = 0, 0
  for _, v in ipairs(values) do
    if not (v > 0) then return 0 end
    sum, n = sum + math.log(v), n + 1
  end
  return n > 0 and math.exp(sum / n) or 0
end

-- True when the result covers every config and each one verified.
function Evaluator:verified(result)
  local configs = result.configs or {}
  if #configs ~= #self.configs then return false end
  for _, c in ipairs(configs) do
    if not c.correct then return false end
  end
  return true
end

-- Aggregate score of a worker result: 0 unless every config is correct.
function Evaluator:score_of(result)
  if result.status ~= "ok" or not self:verified(result) then return 0 end
  local configs = result.configs
  if self.score then
    local v = self.score(configs)
    if type(v) ~= "number" or v ~= v then
      error(("%s: score() must return a number, got %s"):format(self._origin, tostring(v)), 0)
    end
    return v
  end
  local values = {}
  for i, c in ipairs(configs) do
    if self._yardstick then
      values[i] = c.vs_yardstick or 0
    else
      values[i] = (self.unit == "GB/s") and (c.gbs or 0) or (c.gflops or 0)
    end
  end
  return geomean(values)
end

-- Feedback for the next prompt (the evaluator's artifacts(result, cand)):
-- text, or nil.  A table becomes "key: value" lines in key order; the text
-- is cut at 4000 bytes.  An error in artifacts() is a script error.
function Evaluator:artifacts_of(result, cand)
  if not self.artifacts then return nil end
  local ok, v = pcall(self.artifacts, result, cand)
  if not ok then error(("%s: artifacts() failed: %s"):format(self._origin, tostring(v)), 0) end
  if type(v) == "table" then
    local keys, lines = {}, {}
    for k in pairs(v) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local x = v[k]
      if x == nil then x = v[tonumber(k)] end
      lines[#lines + 1] = ("%s: %s"):format(k, type(x) == "table" and core.json_encode(x) or
        tostring(x))
    end
    v = table.concat(lines, "\n")
  end
  if v ~= nil and type(v) ~= "string" then
    error(("%s: artifacts() must return a string, a table or nil, got %s"):format(self._origin,
      type(v)), 0)
  end
  if v and #v > 4000 then v = v:sub(1, 4000) .. "\n..." end
  return v ~= "" and v or nil
end

M.Evaluator = Evaluator
return M
