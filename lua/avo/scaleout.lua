-- avo.scaleout — where a run's workers come from beyond the local CPU slots:
-- one timing worker per GPU (--devices), remote workers over TCP (--listen),
-- and remote workers started as a Slurm job step (--slurm).  Used by avo.cli;
-- like it, it prints (through the `log` function it is given).

local core = require "avo.core"

local M = {}

-- "0,2,5" -> {0, 2, 5}; "none" -> {}; nil, message when malformed or when
-- a number is not a visible device (count() says how many are).
function M.parse_devices(text, count)
  if text == "none" then return {} end
  local list = {}
  for item in (text .. ","):gmatch("([^,]*),") do
    local n = math.tointeger(tonumber(item))
    if not n or n < 0 or not item:match("^%s*%d+%s*$") then
      return nil, ("--devices needs CUDA device numbers like 0,2,5 (or 'none'), got '%s'")
        :format(text)
    end
    list[#list + 1] = n
  end
  local visible = count()
  for _, n in ipairs(list) do
    if n >= visible then
      return nil, visible == 0 and ("--devices %s: no CUDA device is visible (avo doctor says why)")
        :format(text) or ("--devices %s: only %d CUDA device%s visible (0 to %d; "
        .. "CUDA_VISIBLE_DEVICES renumbers them)"):format(text, visible,
        visible == 1 and " is" or "s are", visible - 1)
    end
  end
  return list
end

-- The number of tasks a --slurm option string asks srun for itself (-n N,
-- -nN, --ntasks=N, --ntasks N; the last one counts, as for srun), or nil.
function M.slurm_ntasks(options)
  local words, n = {}, nil
  for w in options:gmatch("%S+") do words[#words + 1] = w end
  for i, w in ipairs(words) do
    local v = w:match("^%-%-ntasks=(%d+)$") or w:match("^%-n(%d+)$")
    if not v and (w == "-n" or w == "--ntasks") and words[i + 1] then
      v = words[i + 1]:match("^(%d+)$")
    end
    if v then n = math.tointeger(tonumber(v)) end
  end
  return n
end

-- The srun options without their task and node counts (-n, --ntasks, -N,
-- --nodes, in each spelling), for a step of another size.
function M.slurm_without_counts(options)
  local words, out, skip = {}, {}, false
  for w in options:gmatch("%S+") do words[#words + 1] = w end
  for _, w in ipairs(words) do
    if skip then
      skip = false
    elseif w == "-n" or w == "--ntasks" or w == "-N" or w == "--nodes" then
      skip = true
    elseif not (w:match("^%-%-ntasks=") or w:match("^%-n%d") or w:match("^%-%-nodes=")
        or w:match("^%-N%d")) then
      out[#out + 1] = w
    end
  end
  return table.concat(out, " ")
end

-- Where the workers of `avo run` and `avo resume` come from, from their
-- options (jobs, devices, listen, slurm): {jobs =, devices = list or nil},
-- or nil, message for a usage error.  With --slurm, --jobs counts the Slurm
-- tasks: a task count in the srun options is taken when --jobs is not
-- given, and refused when it disagrees with --jobs.
function M.workers(opts, default_jobs)
  if opts.jobs == 0 and not opts.listen then
    return nil, "--jobs 0 (no local workers) needs --listen for remote workers"
  end
  local jobs = opts.jobs
  if opts.slurm then
    local n = M.slurm_ntasks(opts.slurm)
    if n and jobs and n ~= jobs then
      return nil, ("--slurm '%s' asks srun for %d tasks and --jobs for %d: with --slurm, " ..
        "--jobs is the number of worker tasks; give one of them (or the same number)")
        :format(opts.slurm, n, jobs)
    end
    jobs = jobs or n or 2
    if jobs < 1 then return nil, "--slurm needs at least one worker task (--jobs 1 or more)" end
  end
  local devices
  if opts.devices then
    local derr
    devices, derr = M.parse_devices(opts.devices, core.cuda_devices)
    if not devices then return nil, derr end
  end
  return { jobs = jobs or default_jobs, devices = devices }
end

local function advertised(address)
  local host, port = address:match("^(.*):(%d+)$")
  if host == "" or host == "*" or host == "0.0.0.0" or host == "[::]" or host == "::" then
    host = core.hostname()
  end
  return host, port
end

-- Start listening (and Slurm) for run `run_id`.  opts: listen, slurm, jobs,
-- db.  Returns a state table or nil, message.
function M.start(pool, opts, run_id, log)
  if not opts.listen and not opts.slurm then return nil end
  local secret = core.secret_from_env()
  local secret_file
  if not secret then
    if os.getenv("AVO_WORKER_SECRET") or os.getenv("AVO_WORKER_SECRET_FILE") then
      local _, err = core.secret_from_env()
      return nil, err
    end
    secret = core.worker_secret()
    if not opts.slurm then
      -- Workers started by hand need the secret: a private file next to the archive.
      secret_file = (opts.db == ":memory:" and "avo" or opts.db) .. ".worker-secret"
      local ok, err = core.write_private(secret_file, secret)
      if not ok then return nil, err end
    end
  end
  local token = ("%d-%s"):format(run_id, core.worker_secret():sub(1, 8))
  local address = opts.listen or "0.0.0.0:0"
  local port, err = pool:listen{ address = address, run = token, secret = secret }
  if not port then return nil, err end
  local host = advertised(address)
  local st = { token = token, connect = ("%s:%d"):format(host, port), started = core.monotonic() }
  log(("avo: workers connect to %s (run %s)"):format(st.connect, token))
  if secret_file then
    log(("avo: worker secret in %s; start one with: AVO_WORKER_SECRET_FILE=%s avo worker "
      .. "--connect %s --run %s"):format(secret_file, secret_file, st.connect, token))
  end
  if opts.slurm then
    st.log = (opts.db == ":memory:" and "avo" or opts.db) .. ".slurm.log"
    -- The log is appended to (a resume adds to the run's): this step's part
    -- starts here.
    local f = io.open(st.log, "rb")
    st.log_from = f and f:seek("end") or 0
    if f then f:close() end
    local launcher, serr = core.slurm{
      options = opts.slurm, ntasks = opts.jobs, name = "avo-" .. token, secret = secret,
      log = st.log, argv = { core.exe(), "worker", "--connect", st.connect, "--run", token },
    }
    if not launcher then return nil, serr end
    st.slurm = launcher
    st.jobs, st.options, st.secret = opts.jobs, opts.slurm, secret
    st.replacements = {}
    log(("avo: srun started %d worker tasks (Slurm job name avo-%s; log %s)"):format(opts.jobs,
      token, st.log))
  else
    -- Workers started by hand: declare them gone after a minute without any.
    pool:set_grace(tonumber(os.getenv("AVO_WORKER_GRACE")) or 60)
  end
  return st
end

-- Why the workers of a Slurm step exited, in their own words: the distinct
-- "avo worker: ..." lines (at most 3) this step wrote into its log, or nil.
local function worker_reasons(st)
  local f = io.open(st.log, "rb")
  if not f then return nil end
  f:seek("set", st.log_from or 0)
  local seen, list = {}, {}
  for line in f:lines() do
    local what = line:match("avo worker: (.*)$")
    if what and not seen[what] and #list < 3 then
      seen[what] = true
      list[#list + 1] = what
    end
  end
  f:close()
  return #list > 0 and table.concat(list, "; ") or nil
end

-- Seconds a Slurm step may stay short of its workers before avo starts a
-- step of its own for the missing ones (AVO_SLURM_REPLACE_AFTER): a worker
-- that lost its connection reconnects well within it.
local function replace_after()
  return tonumber(os.getenv("AVO_SLURM_REPLACE_AFTER")) or 30
end

-- Workers of the step lost for good (their node failed, they were killed)
-- are replaced by a step of their own of the missing size, which Slurm
-- places where there is room: a node that joined since, or one that came
-- back.  Only once the step had all its workers, one replacement at a time
-- (it may wait, PENDING, for a node), with a longer wait after each that
-- ended without bringing its workers.
local function replace_lost(st, pool, log)
  local w = pool:workers()
  local have = w.remote + w.handshaking
  local now = core.monotonic()
  if have >= st.jobs then
    st.full, st.short_since, st.replacing = true, nil, nil
    return
  end
  local r = st.replacing
  if r then
    local running, what = r.launcher:running()
    if have >= r.base + r.ntasks then
      st.replacing = nil -- its workers are here; it keeps running with them
    elseif not running then
      st.replacing = nil
      st.backoff = math.min((st.backoff or replace_after()) * 2, 600)
      log(("avo: the replacement Slurm step ended (%s) before its workers connected; "
        .. "next try after %.0f s"):format(what, st.backoff))
    end
    return
  end
  if not st.full then return end
  st.short_since = st.short_since or now
  if now - st.short_since < (st.backoff or replace_after()) then return end
  local missing = st.jobs - have
  local launcher, err = core.slurm{
    options = M.slurm_without_counts(st.options), ntasks = missing, name = "avo-" .. st.token,
    secret = st.secret, log = st.log,
    argv = { core.exe(), "worker", "--connect", st.connect, "--run", st.token },
  }
  st.short_since = nil
  if not launcher then
    log("avo: cannot start a replacement Slurm step: " .. tostring(err))
    return
  end
  st.replacements[#st.replacements + 1] = launcher
  st.replacing = { launcher = launcher, ntasks = missing, base = have }
  log(("avo: %d of %d Slurm workers lost; srun started %d replacement task%s (Slurm job name "
    .. "avo-%s; it waits for room on the cluster)"):format(missing, st.jobs, missing,
    missing == 1 and "" or "s", st.token))
end

-- Called on every turn of the loop: show pool events, watch srun.
function M.tick(st, pool, log)
  if not st then return end
  for _, line in ipairs(pool:events()) do log("avo: " .. line) end
  if st.slurm and not st.ended then replace_lost(st, pool, log) end
  if st.slurm and not st.ended and core.monotonic() - (st.polled or 0) >= 5 then
    -- Slurm's view of the job (PENDING while it waits for nodes), at most every 5 s.
    st.polled = core.monotonic()
    local p = io.popen("squeue -h --name=avo-" .. st.token .. " -o %T 2>/dev/null")
    if p then
      st.state = p:read("l")
      p:close()
    end
  end
  if st.slurm and not st.ended then
    local running, what = st.slurm:running()
    if not running then
      st.ended = what
      local said = worker_reasons(st)
      pool:launcher_ended("the Slurm step ended (" .. what .. "; see " .. st.log .. ")" ..
        (said and ("; the workers said: " .. said) or ""))
      for _, line in ipairs(pool:events()) do log("avo: " .. line) end
    end
  end
end

-- A part of the status line: remote workers and Slurm's state.
function M.status(st, pool)
  if not st then return nil end
  local w = pool:workers()
  local text = ("workers %d remote"):format(w.remote)
  if w.handshaking > 0 then text = text .. (" (+%d joining)"):format(w.handshaking) end
  if st.slurm then
    text = text .. (st.ended and ", slurm step ended" or
      (", slurm job %s"):format(st.state and st.state:lower() or "starting"))
    if st.replacing then text = text .. (", %d replacing"):format(st.replacing.ntasks) end
  end
  return text
end

-- End the Slurm step (workers that said goodbye exit on their own).
-- Call after the pool has closed (which tells remote workers goodbye).
function M.stop(st)
  if st and st.slurm then
    st.slurm:stop(5)
    for _, r in ipairs(st.replacements or {}) do r:stop(5) end
  end
end

return M
