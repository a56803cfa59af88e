-- avo.sched — the coroutine scheduler on top of the job executors: the
-- worker pool, and the in-process backend (lua/avo/inprocess.lua) for the
-- engine's own tests.
--
-- Every piece of script code runs in a task (a coroutine).  A task that needs
-- an evaluation submits a job and awaits its ticket; the task yields, and the
-- loop in M.run resumes it when the pool hands the result back.  So script
-- authors write sequential code while up to --jobs evaluations run at once.
--
-- A job's completion handler runs as soon as its result arrives, before any
-- task sees it: that is where results are scored and committed to the
-- archive, so a finished evaluation is on disk even if no task ever reads it.

local core = require "avo.core"
local inprocess = require "avo.inprocess"

local M = {}

local AWAIT, JOIN = {}, {} -- unique yield markers

local sources = {}  -- event sources (avo.Pool, ...), polled together
local names = {}    -- source -> short name used in ticket keys
-- FIFO of { task, value }: ready[head..tail] (a queue with two ends, so a
-- turn of the loop costs the same however many tasks wait)
local ready, head, tail = {}, 1, 0
local waiters = {}  -- ticket key -> array of tasks

local function push_ready(item)
  tail = tail + 1
  ready[tail] = item
end

local function pop_ready()
  local item = ready[head]
  ready[head] = nil
  head = head + 1
  return item
end
local results = {}  -- ticket key -> finished value
local handlers = {} -- ticket key -> function(result) -> value
local aliases = {}  -- ticket key of a retried job -> key tasks await
-- Ticket keys awaited once (M.track's `once`): their value is dropped when
-- it is taken, so results does not keep, say, every LLM answer of a run.
local once = {}
local in_flight = 0
local failed_tasks = {} -- tasks that raised, until someone joins them
local on_tick = function() end

-- Executors of jobs by job.backend: the in-process backend for its jobs,
-- the worker pool (the first event source) for every other.  Both provide
-- submit(job, deadline) (lua/avo/inprocess.lua describes the interface).
local executors = { [inprocess.backend] = inprocess }

-- The executor that runs jobs of backend `backend` (the pool: nil before
-- M.init).
function M.executor(backend)
  return executors[backend] or sources[1]
end

-- Whether a job's failures can be the machine's (infrastructure faults
-- worth a retry): the pool's can, the in-process backend's cannot.
function M.fallible(job)
  return M.executor(job.backend).fallible ~= false
end

-- Whether jobs of `backend` measure time, so that re-timing them means
-- something (the in-process backend's rates are made up).
function M.measures_time(backend)
  local executor = executors[backend]
  return not executor or executor.measures_time ~= false
end

-- Start over with the worker pool as the first event source.
function M.init(pool, tick)
  sources, names, aliases = {}, {}, {}
  M.add_source(pool, "e")
  on_tick = tick or function() end
end

-- Add an event source; `name` prefixes its tickets ("e" evaluations, "l" LLM).
function M.add_source(source, name)
  sources[#sources + 1] = source
  names[source] = name
end

function M.in_flight() return in_flight end

-- `fn` is called when every task waits and nothing is in flight, before
-- that is a deadlock: it may wake a task (resolve an event) and return
-- true (the LLM replay lets a call go on that waits for a recorded call
-- the replay never makes).  nil removes it.
local on_idle
function M.on_idle(fn) on_idle = fn end

-- Submit a job to its executor; `handler(result, key)` turns the result
-- into the value awaiters receive.  Returns the ticket.  An executor that
-- answers at once (in-process) has the handler run now, in the submitting
-- task, as its result would later run it in the loop.
function M.submit(job, deadline, handler)
  local executor = M.executor(job.backend)
  local ticket, result = executor:submit(job, deadline)
  if ticket == nil then
    if handler then result = handler(result) end
    return M.complete_now(result)
  end
  return M.track(executor, ticket, handler)
end

-- What a handler returns after M.retry: the ticket stays open.
M.RETRIED = setmetatable({}, { __name = "sched.RETRIED" })

-- From a job's handler(result, key): submit `job` again under the same
-- ticket key (a retry after an infrastructure fault); return its value,
-- M.RETRIED, from the handler.  The handler runs again with the new result.
function M.retry(key, job, deadline)
  local ticket = names[sources[1]] .. sources[1]:submit(job, deadline)
  aliases[ticket] = key
  in_flight = in_flight + 1
  return M.RETRIED
end

-- Track a ticket another source issued; returns the key tasks await.  With
-- `once`, the key is awaited by one task, once: its value is not kept after.
function M.track(source, ticket, handler, once_only)
  local key = names[source] .. ticket
  handlers[key] = handler
  if once_only then once[key] = true end
  in_flight = in_flight + 1
  return key
end

-- Complete a ticket without a worker (deduplicated or in-process results).
local next_local = 0
function M.complete_now(value)
  next_local = next_local - 1
  results[next_local] = value
  return next_local
end

-- A ticket no source answers (for tasks waiting on a condition, such as
-- the LLM client's budget reservations): M.resolve(key, value) completes
-- it.  Tasks awaiting it count as waiting on the source that will resolve
-- it, so resolve it only from a handler of something in flight or from a
-- task.  Tasks already waiting are woken; with `keep` the value is also
-- kept for later awaits (a ticket), else dropped (a wake-up signal).
local next_event = 0
function M.event()
  next_event = next_event + 1
  return "v" .. next_event
end

local FAILED = {} -- key of the error in a value M.fail made

-- Complete `key` with an error that every task awaiting it raises.
function M.fail(key, err)
  M.resolve(key, { [FAILED] = err }, true)
end

function M.resolve(key, value, keep)
  if value == nil then value = true end
  if keep then results[key] = value end
  for _, task in ipairs(waiters[key] or {}) do
    push_ready({ task, table.pack(value) })
  end
  waiters[key] = nil
end

-- Run fn() in the loop, in turn with the tasks now ready (after them, before
-- those readied later), outside any task.  It may resume waiting tasks
-- (M.resume_now).  An error in fn ends the run, as the engine's own do.
local DEFERRED = {}
function M.defer(fn)
  push_ready({ DEFERRED, fn })
end

local step -- (below)

-- From a deferred function: resume the tasks awaiting event `key` now, with
-- `value`, each until it yields again (as M.resolve would have them run
-- next).
function M.resume_now(key, value)
  local list = waiters[key]
  waiters[key] = nil
  for _, task in ipairs(list or {}) do step(task, table.pack(value)) end
end

-- Wait for a ticket's value from inside a task.
-- The value of a finished ticket, dropped if it is awaited once.
local function take(ticket)
  local value = results[ticket]
  if value ~= nil and once[ticket] then results[ticket], once[ticket] = nil, nil end
  return value
end

-- The value of a finished ticket, left in place (nil while it is not).
function M.peek(ticket)
  return results[ticket]
end

-- Drop the value of a finished ticket that no task will await again.
function M.forget(ticket)
  results[ticket], once[ticket] = nil, nil
end

function M.await(ticket)
  local value = take(ticket)
  if value == nil then
    if not coroutine.isyieldable() then
      error("avo: evaluations can only be awaited inside 'avo run' (a task)", 3)
    end
    value = coroutine.yield(AWAIT, ticket)
  end
  if type(value) == "table" and value[FAILED] ~= nil then error(value[FAILED], 0) end
  return value
end

local Task = {}
Task.__index = Task

-- Start fn(...) as a task; it first runs on the next turn of the loop.
function M.spawn(fn, ...)
  local task = setmetatable({ co = coroutine.create(fn), joiners = {} }, Task)
  push_ready({ task, table.pack(...) })
  return task
end

-- Wait for a task and return its results (re-raising its error).
function M.join(task)
  if not task.finished then
    if not coroutine.isyieldable() then error("avo.join: not inside a task", 2) end
    coroutine.yield(JOIN, task)
  end
  failed_tasks[task] = nil
  if task.err then error(task.err, 0) end
  return table.unpack(task.values, 1, task.values.n)
end

local function wake(task, value)
  push_ready({ task, table.pack(value) })
end

local function finish(task, ok, ...)
  task.finished = true
  if ok then
    task.values = table.pack(...)
  else
    task.err = ...
    failed_tasks[task] = true
  end
  for _, j in ipairs(task.joiners) do wake(j) end
  task.joiners = {}
end

-- The message for error(nil) or error(false) raised in a dead task: the
-- place of the call (the first Lua frame on its stack, the script's line),
-- so the error is not taken for a success nor blamed on the scheduler.
local function no_message_error(co, value)
  for level = 0, 50 do
    local info = debug.getinfo(co, level, "Sl")
    if not info then break end
    if info.currentline and info.currentline > 0 then
      return ("%s:%d: error(%s): an error was raised without a message"):format(info.short_src,
        info.currentline, tostring(value))
    end
  end
  return ("error(%s): an error was raised without a message"):format(tostring(value))
end

-- Resume a task with the given values and file what it yielded.
function step(task, args)
  local co = task.co
  core.task_enter()
  local r = table.pack(coroutine.resume(co, table.unpack(args, 1, args.n)))
  core.task_leave()
  if not r[1] then
    local msg = r[2]
    if msg == nil or msg == false then msg = no_message_error(co, msg) end
    if type(msg) == "string" and not msg:find("stack traceback:", 1, true) then
      msg = debug.traceback(co, msg)
    end
    return finish(task, false, msg)
  end
  if coroutine.status(co) == "dead" then
    return finish(task, true, table.unpack(r, 2, r.n))
  end
  local marker, what = r[2], r[3]
  if marker == AWAIT then
    if results[what] ~= nil then
      wake(task, take(what))
    else
      local list = waiters[what] or {}
      list[#list + 1] = task
      waiters[what] = list
    end
  elseif marker == JOIN then
    if what.finished then wake(task) else what.joiners[#what.joiners + 1] = task end
  else
    finish(task, false, debug.traceback(co,
      "avo: a task yielded outside the engine (coroutine.yield in script code " ..
      "must be inside your own coroutine)"))
  end
end

-- Deliver one result from any source, if one arrives within timeout_ms.
local function pump(timeout_ms)
  local index, ticket, result = core.wait(timeout_ms, table.unpack(sources))
  if not index then return index end
  ticket = names[sources[index]] .. ticket
  local key = aliases[ticket] or ticket
  aliases[ticket] = nil
  in_flight = in_flight - 1
  local handler = handlers[key]
  local value = result
  if handler then value = handler(result, key) end
  if value == M.RETRIED then return true end
  handlers[key] = nil
  ticket = key
  if once[ticket] and waiters[ticket] then
    once[ticket] = nil -- its one task is woken with the value below
  else
    results[ticket] = value
  end
  for _, task in ipairs(waiters[ticket] or {}) do wake(task, value) end
  waiters[ticket] = nil
  return true
end

-- Run fn(...) as the main task until it finishes, then let in-flight
-- evaluations finish (they are recorded, never dropped).  Returns the main
-- task's values or raises its error.
function M.run(fn, ...)
  local main = M.spawn(fn, ...)
  while not main.finished do
    while head <= tail and not main.finished do
      local item = pop_ready()
      if item[1] == DEFERRED then item[2]() else step(item[1], item[2]) end
    end
    if main.finished then break end
    if pump(250) == false and not (on_idle and on_idle()) then
      error("avo: deadlock: every task is waiting but no evaluation is in flight")
    end
    on_tick()
  end
  while in_flight > 0 do
    pump(250)
    on_tick()
  end
  if main.err then error(main.err, 0) end
  -- An error in a task nobody joined must not vanish.
  failed_tasks[main] = nil
  local orphan = next(failed_tasks)
  if orphan then
    failed_tasks = {}
    -- (tostring runs the error's own __tostring, which may fail too)
    local shown, text = pcall(tostring, orphan.err)
    if not shown or type(text) ~= "string" then text = "(an error value that cannot be shown)" end
    error("a task spawned with avo.spawn failed and was never joined: " .. text, 0)
  end
  return table.unpack(main.values, 1, main.values.n)
end

return M
