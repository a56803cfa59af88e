---@meta avo.core
-- avo.core: the functions C registers (lua/*.c, luaopen_avo_core in
-- lua/core.c) and the userdata classes behind them.  The engine's own
-- modules program against it; scripts use avo.* instead.  Generated once
-- from the luaL_Reg tables and the luaL_check* calls (parameter types),
-- then edited; tools/check-annotations fails when C registers a function
-- this file does not declare.  "any" returns are tables or multiple values
-- the C comment describes.

---@class avo.core
local core = {}



---core.archive(path) -> Archive | nil, message (lua/lua_archive.c)
---@param path string
---@return avo.Archive
function core.archive(path) end

---core.archive_read(path) -> Archive | nil, message: an existing archive for reading, read-only when the file cannot be written (store/archive.h). (lua/lua_archive.c)
---@param path string
---@return avo.Archive
function core.archive_read(path) end

---core.kb(path | archive) -> Kb | nil, message (lua/lua_kb.c)
---@param path string|avo.Archive
---@return avo.Kb
function core.kb(path) end

---core.llm(seed) -> Llm | nil, message (lua/lua_llm.c)
---@param seed integer
---@return avo.LlmClient
function core.llm(seed) end

---core.sse_join(body [, cap]) -> document, deltas | nil: a streamed Chat Completions answer (server-sent events) joined into one completion; nil when the body is no event stream; past `cap` deltas the rest is dropped (lua/lua_llm.c, core/sse.c)
---@param body string
---@param cap? integer
---@return table? document
---@return integer? deltas
function core.sse_join(body, cap) end

---core.wait(timeout_ms, source...) -> index, ticket, result | false (nothing pending anywhere) | nil (timeout or interrupted) Waits on all sources at once; `index` is the position of the source that answered among the arguments (1-based). (lua/lua_loop.c)
---@param timeout_ms integer
---@param ... any the sources: pools, LLM clients
---@return any
function core.wait(timeout_ms, ...) end

---core.rng(seed, name) -> Rng (lua/lua_pcg.c)
---@param seed integer
---@param name string
---@return avo.Rng
function core.rng(seed, name) end

---core.gp(spans) -> Gp: the surrogate strategy's Gaussian process over knob positions; spans: values per knob, each >= 2 (lua/lua_gp.c, core/gp.h)
---@param spans integer[]
---@return avo.Gp
function core.gp(spans) end

---core.pool(jobs, worker_exe) -> pool | nil, msg (lua/lua_pool.c)
---@param jobs integer
---@param worker_exe string
---@return avo.Pool
function core.pool(jobs, worker_exe) end

---core.spawn(argv, log_path) -> pid | nil, message (lua/lua_process.c)
---@param argv string[]
---@param log_path string
---@return any
function core.spawn(argv, log_path) end

---core.reap(pid) -> nil (running) | exit status (128 + N: killed by signal N) (lua/lua_process.c)
---@param pid integer
---@return any
function core.reap(pid) end

---core.signal(pid, "TERM"|"KILL"|"INT") -> true | nil, message (lua/lua_process.c)
---@param pid integer
---@param signal "TERM"|"KILL"|"INT"
---@return any
function core.signal(pid, signal) end

---core.sleep(seconds): a signal cuts it short (the caller checks core.interrupted()). (lua/lua_process.c)
---@param seconds number
---@return any
function core.sleep(seconds) end

---core.lock(path) -> true | nil, message Take an exclusive advisory lock (flock) on path, created if missing, for the life of this process: the kernel drops it when the process ends, even by SIGKILL, so a stale lock never needs cleaning up. The descriptor is deliberately kept open (and close-on-exec). (lua/lua_process.c)
---@param path string
---@return any
function core.lock(path) end

---A fresh random worker secret, as hex text (to hand to remote workers). (lua/lua_remote.c)
---@return any
function core.worker_secret() end

---core.cuda_devices() -> number of visible CUDA devices (0 without a driver) (lua/lua_remote.c)
---@return any
function core.cuda_devices() end

---The worker secret AVO_WORKER_SECRET holds, as bytes | nil, message. (lua/lua_remote.c)
---@return any
function core.secret_from_env() end

---core.write_private(path, text): created (or truncated) with mode 0600. (lua/lua_remote.c)
---@param path string
---@param text string
---@return any
function core.write_private(path, text) end

---core.slurm{options=, ntasks=, name=, argv={...}, secret=, log=} -> Slurm | nil, message (lua/lua_remote.c)
---@param opts { options: string[]?, ntasks: integer, name: string, argv: string[], secret: string, log: string }
---@return avo.Slurm
function core.slurm(opts) end

---Content hash of `data`, as hex text (core/hash.h). (lua/lua_util.c)
---@param data string
---@return string
function core.hash(data) end

---Three-way merge of texts (core/merge.h). (lua/lua_util.c)
---@param base string
---@param ours string
---@param theirs string
---@return string merged
---@return integer conflicts
function core.merge3(base, ours, theirs) end

---core.diff(a, b [, name]) -> unified diff text ("" when equal) | nil, msg (lua/lua_util.c)
---@param a string
---@param b string
---@param name? string
---@return string
function core.diff(a, b, name) end

---Whether file descriptor `fd` is a terminal. (lua/lua_util.c)
---@param fd integer
---@return boolean
function core.isatty(fd) end

---Wall-clock time, seconds since the epoch (fractional). (lua/lua_util.c)
---@return number
function core.now() end

---Monotonic clock, seconds. (lua/lua_util.c)
---@return number
function core.monotonic() end

---CPU cores available to this process. (lua/lua_util.c)
---@return integer
function core.cores() end

---core.baselines() -> array of {name, backend, library, summary}: the named vendor baselines evaluators may list (eval/baseline.h). (lua/lua_util.c)
---@return any
function core.baselines() end

---This machine's host name. (lua/lua_util.c)
---@return string
function core.hostname() end

---core.cache_dir(backend) -> the compile cache folder of `backend` by the one folder rule (cache.h) (lua/lua_util.c)
---@param backend string
---@return string
function core.cache_dir(backend) end

---core.exe() -> path of the running avo binary (workers are started from it) (lua/lua_util.c)
---@return string
function core.exe() end

---core.list_dir(path) -> {name, ...} sorted, without . and .. | nil, message (lua/lua_util.c)
---@param path string
---@return string[]?
function core.list_dir(path) end

---core.realpath(path) -> the absolute path with no symlink, . or .. | nil, message (lua/lua_util.c)
---@param path string
---@return string?
function core.realpath(path) end

---core.freeze(value) -> one string holding the value | nil when it cannot be frozen
---(functions, userdata, shared or cyclic tables, other metatables) (lua/lua_freeze.c)
---@param value any
---@return string?
function core.freeze(value) end

---core.thaw(frozen) -> the value core.freeze made `frozen` from, in fresh tables (lua/lua_freeze.c)
---@param frozen string
---@return any
function core.thaw(frozen) end

---core.shelf() -> Shelf: a run's finished records kept frozen in C memory the collector never sees (lua/lua_shelf.c)
---@return avo.Shelf
function core.shelf() end

---core.inert(text [, oneline]) -> text made inert for a terminal (avo_strbuf_inert): what a candidate or a server wrote, before it is printed. Newlines are kept unless `oneline`; a non-string is tostring'ed. (lua/lua_util.c)
---@param text string
---@param oneline? boolean
---@return any
function core.inert(text, oneline) end

---core.catch_interrupts(): the first SIGINT, SIGTERM or SIGHUP only sets a flag, so the run can stop starting work and end cleanly. (lua/lua_watch.c)
---@return any
function core.catch_interrupts() end

---core.interrupted() -> the number of the signal that asked to stop, or false (lua/lua_watch.c)
---@return boolean
function core.interrupted() end

---core.watch(deadline_or_nil, grace_s [, db, run_id]): arm the watchdog on the calling (main) thread, so every task created from now on inherits it; with the run's archive and id, also the watchdog thread (watchdog.h), which ends the process when a task stays inside one C call past the grace, or on... (lua/lua_watch.c)
---@param deadline? number
---@param grace_s number
---@param db? string
---@param run_id? integer
---@return any
function core.watch(deadline, grace_s, db, run_id) end

---core.unwatch() -> why the watchdog stopped the script, or nil (lua/lua_watch.c)
---@return any
function core.unwatch() end

---core.task_enter() / core.task_leave(): the scheduler resumes a task / the task gave control back (the watchdog thread times single calls). (lua/lua_watch.c)
---@return any
function core.task_enter() end

---See core.task_enter. (lua/lua_watch.c)
---@return any
function core.task_leave() end

---core.json_encode(value) -> compact JSON text with sorted keys (lua/luajson.c)
---@param value any
---@return string
function core.json_encode(value) end

---Parse JSON text; arrays come back marked as arrays (json_array_mt). (lua/luajson.c)
---@param text string
---@return any
function core.json_decode(text) end

---@class avo.Archive
local Archive = {}

---archive:experiment_add{name=, path=, source=, hash=, plan=table, machine=table, engine_version=} -> id (lua/avo/experiment.lua) (lua/lua_archive.c)
---@param experiment table
---@return any
function Archive:experiment_add(experiment) end

---archive:experiments() -> array of experiments (lua/lua_archive.c)
---@return any
function Archive:experiments() end

---archive:experiment_cell_put(experiment_id, {cell=, run_id=, status=, reason=, exit_code=}) -> true (lua/lua_archive.c)
---@param experiment_id integer
---@param cell table
---@return any
function Archive:experiment_cell_put(experiment_id, cell) end

---archive:experiment_cells(experiment_id) -> array of cells (lua/lua_archive.c)
---@param experiment_id integer
---@return any
function Archive:experiment_cells(experiment_id) end

---archive:baseline_put(run_id, baseline_table) -> id (fields: avo_archive_baseline_put) (lua/lua_archive.c)
---@param run_id integer
---@param baseline table
---@return any
function Archive:baseline_put(run_id, baseline) end

---archive:baselines([run_id]) -> array of rows (0 or none: all runs) (lua/lua_archive.c)
---@param run_id? integer
---@return any
function Archive:baselines(run_id) end

---archive:attempt_add(run_id, attempt_table) -> id (fields: avo_archive_attempt_add) (lua/lua_archive.c)
---@param run_id integer
---@param attempt table
---@return any
function Archive:attempt_add(run_id, attempt) end

---archive:attempt_update(id, outcome [, reason [, candidate_id]]) -> true (lua/lua_archive.c)
---@param id integer
---@param outcome string
---@param reason? string
---@param candidate_id? integer
---@return any
function Archive:attempt_update(id, outcome, reason, candidate_id) end

---archive:attempts([run_id]) -> array of rows (0 or none: all runs) (lua/lua_archive.c)
---@param run_id? integer
---@return any
function Archive:attempts(run_id) end

---archive:llm_record(run_id, call_table) -> id (fields: avo_archive_llm_call_add) (lua/lua_archive.c)
---@param run_id integer
---@param call table
---@return any
function Archive:llm_record(run_id, call) end

---archive:llm_calls([run_id]) -> array of rows (0 or none: all runs) (lua/lua_archive.c)
---@param run_id? integer
---@return any
function Archive:llm_calls(run_id) end

---archive:rebench_begin(run_id, config_table) -> set_id (lua/lua_archive.c)
---@param run_id integer
---@param config table
---@return any
function Archive:rebench_begin(run_id, config) end

---archive:rebench_add(set_id, candidate_id, round, score, result_table) (lua/lua_archive.c)
---@param set_id integer
---@param candidate_id integer
---@param round integer
---@param score number
---@param result table
---@return any
function Archive:rebench_add(set_id, candidate_id, round, score, result) end

---archive:candidates(run_id, with_source) -> array of candidate objects (lua/lua_archive.c)
---@param run_id integer
---@param with_source? boolean
---@return any
function Archive:candidates(run_id, with_source) end

---archive:events(run_id, kind_or_nil) -> array of {id, t, kind, data} (lua/lua_archive.c)
---@param run_id integer
---@param kind? string
---@return any
function Archive:events(run_id, kind) end

---Mark a stopped run running again (avo resume). (lua/lua_archive.c)
---@param run_id integer
---@return any
function Archive:run_reopen(run_id) end

---archive:run_claim(run_id [, takeover]) -> true, previous_owner_or_nil | nil, message, "busy"|nil (lua/lua_archive.c)
---@param run_id integer
---@param takeover? boolean
---@return any
function Archive:run_claim(run_id, takeover) end

---archive:run_live(run_id) -> boolean: claimed by a live process here (lua/lua_archive.c)
---@param run_id integer
---@return any
function Archive:run_live(run_id) end

---archive:run_restore(run_id, {status=, ended_at=, owner=table|nil}, last_event_id) -> true (lua/lua_archive.c)
---@param run_id integer
---@param state table
---@param last_event_id integer
---@return any
function Archive:run_restore(run_id, state, last_event_id) end

---archive:runs() -> array of run summaries, oldest first (lua/lua_archive.c)
---@return any
function Archive:runs() end

---archive:run_begin{script_path=, script_source=, config=table, seed=, engine_version=, compiler=, host=} -> run_id (lua/lua_archive.c)
---@param run table
---@return any
function Archive:run_begin(run) end

---archive:run_end(run_id, status): the run ends with status ("done", "failed", "stopped"). (lua/lua_archive.c)
---@param run_id integer
---@param status string
---@return any
function Archive:run_end(run_id, status) end

---archive:add{run_id=, generation=, operator=, source=, knobs=table, note=, key=, evaluator=, parents={{id=, role=}, ...}} -> id (lua/lua_archive.c)
---@param candidate table
---@return any
function Archive:add(candidate) end

---archive:finish(id, result_table, score) (lua/lua_archive.c)
---@param id integer
---@param result table
---@param score number
---@return any
function Archive:finish(id, result, score) end

---archive:event(run_id, kind, data_table_or_nil) (lua/lua_archive.c)
---@param run_id integer
---@param kind string
---@param data? table
---@return any
function Archive:event(run_id, kind, data) end

---archive:get(id) -> the candidate | nil (lua/lua_archive.c)
---@param id integer
---@return any
function Archive:get(id) end

---archive:by_key(key) -> the candidate with that dedupe key | nil (lua/lua_archive.c)
---@param key string
---@return any
function Archive:by_key(key) end

---archive:best([run_id]) -> the best finished candidate | nil (0 or none: the latest run) (lua/lua_archive.c)
---@param run_id? integer
---@return any
function Archive:best(run_id) end

---archive:lineage(id) -> array of ancestors including id, {id, parents, ...} (lua/lua_archive.c)
---@param id integer
---@return any
function Archive:lineage(id) end

---archive:common_ancestor(a, b) -> id | nil (lua/lua_archive.c)
---@param a integer
---@param b integer
---@return any
function Archive:common_ancestor(a, b) end

---archive:run_get([run_id]) -> run | nil (0 or none: the latest) (lua/lua_archive.c)
---@param run_id? integer
---@return any
function Archive:run_get(run_id) end

---archive:source(hash) -> the source text stored under hash | nil (lua/lua_archive.c)
---@param hash string
---@return any
function Archive:source(hash) end

---Close the archive (also on __gc / __close). (lua/lua_archive.c)
---@return any
function Archive:close() end

---archive:quick_check() -> true | false, first problem (PRAGMA quick_check) (lua/lua_archive.c)
---@return any
function Archive:quick_check() end

---@class avo.Kb
local Kb = {}

---kb:search(query[, limit]) -> array (lua/lua_kb.c)
---@param query string
---@param limit? integer
---@return any
function Kb:search(query, limit) end

---kb:read(doc) -> table | nil, message (lua/lua_kb.c)
---@param doc string
---@return any
function Kb:read(doc) end

---kb:list() -> the indexed documents (lua/lua_kb.c)
---@return any
function Kb:list() end

---kb:add_dir(dir) -> stats table | nil, message (lua/lua_kb.c)
---@param dir string
---@return any
function Kb:add_dir(dir) end

---kb:add_file(path[, text]) -> changed | nil, message (lua/lua_kb.c)
---@param path string
---@param text? string
---@return any
function Kb:add_file(path, text) end

---Close the knowledge base (also on __gc / __close). (lua/lua_kb.c)
---@return any
function Kb:close() end

---@class avo.LlmClient
local LlmClient = {}

---llm:submit(request) -> ticket (lua/lua_llm.c)
---@param request table
---@return any
function LlmClient:submit(request) end

---llm:pending() -> calls in flight (lua/lua_llm.c)
---@return integer
function LlmClient:pending() end

---llm:streamed() -> events read so far by streamed answers in transfer (lua/lua_llm.c)
---@return any
function LlmClient:streamed() end

---Close the client, cancelling calls in flight. (lua/lua_llm.c)
---@return any
function LlmClient:close() end

---@class avo.Rng
local Rng = {}

---rng:next() -> the next 32-bit output (lua/lua_pcg.c)
---@return integer
function Rng:next() end

---rng:below(n) -> integer in [0, n) (lua/lua_pcg.c)
---@param n integer
---@return integer
function Rng:below(n) end

---rng:double() -> uniform number in [0, 1) (lua/lua_pcg.c)
---@return number
function Rng:double() end

---rng:state() -> state, inc (to persist a stream) (lua/lua_pcg.c)
---@return integer
function Rng:state() end

---@class avo.GpHyper
---@field scale number lengthscale (times the number of knobs), > 0
---@field w number weight of the category distance, in [0, 1]
---@field shape integer 1: position differences (rough), 2: their squares (smooth)
---@field noise number variance on the diagonal, >= 0

---@class avo.Gp
local Gp = {}

---gp:add(x): append a training position, x an encoding (1-based value positions, one per knob) (lua/lua_gp.c)
---@param x integer[]
function Gp:add(x) end

---gp:pop(): drop the last training position; the model keeps its leading rows (lua/lua_gp.c)
---@return nil
function Gp:pop() end

---gp:clear(): drop every training position and the model (lua/lua_gp.c)
---@return nil
function Gp:clear() end

---gp:size() -> training positions held (lua/lua_gp.c)
---@return integer
function Gp:size() end

---gp:loglik(y, hyper) -> log marginal likelihood of y (one per training position), nil when not positive definite; the model is kept (lua/lua_gp.c)
---@param y number[]
---@param hyper avo.GpHyper
---@return number?
function Gp:loglik(y, hyper) end

---gp:fit(y, hyper) -> log marginal likelihood | nil (not positive definite: no model); the model is now this one (lua/lua_gp.c)
---@param y number[]
---@param hyper avo.GpHyper
---@return number?
function Gp:fit(y, hyper) end

---gp:has_model(hyper) -> true when the model was made under hyper (lua/lua_gp.c)
---@param hyper avo.GpHyper
---@return boolean
function Gp:has_model(hyper) end

---gp:extend(y) -> true, or false (no model, or a new row not positive definite): the model grown to every training position, a row each (lua/lua_gp.c)
---@param y number[]
---@return boolean
function Gp:extend(y) end

---gp:best(encodings, best, xi [, floor]) -> index, mean, ei | nil: the encoding (false entries skipped) of highest expected improvement over best + xi, above floor (lua/lua_gp.c)
---@param encodings (integer[]|false)[]
---@param best number
---@param xi number
---@param floor? number
---@return integer?, number?, number?
function Gp:best(encodings, best, xi, floor) end

---gp:close(): free the model (also on collection) (lua/lua_gp.c)
---@return nil
function Gp:close() end

---@class avo.Shelf
local Shelf = {}

---shelf:put(key, rec) -> true, or false when rec cannot freeze (nothing kept); rec.source is kept once per distinct source (lua/lua_shelf.c)
---@param key string
---@param rec table
---@return boolean
function Shelf:put(key, rec) end

---shelf:get(key) -> the record put under key, in fresh tables with its source | nil (lua/lua_shelf.c)
---@param key string
---@return table?
function Shelf:get(key) end

---shelf:has(key) -> whether a record is kept under key (lua/lua_shelf.c)
---@param key string
---@return boolean
function Shelf:has(key) end

---shelf:add_ok(key): append key to the verified records' keys (lua/lua_shelf.c)
---@param key string
---@return nil
function Shelf:add_ok(key) end

---shelf:ok_keys() -> the keys add_ok appended, in order (lua/lua_shelf.c)
---@return string[]
function Shelf:ok_keys() end

---shelf:close(): free what it holds (also on collection) (lua/lua_shelf.c)
---@return nil
function Shelf:close() end

---@class avo.Pool
local Pool = {}

---pool:submit(job_table, deadline_s) -> ticket (lua/lua_pool.c)
---@param job table
---@param deadline number
---@return any
function Pool:submit(job, deadline) end

---pool:pending() -> jobs submitted and not yet collected (lua/lua_pool.c)
---@return integer
function Pool:pending() end

---Stop the workers (also on __gc / __close). (lua/lua_pool.c)
---@return any
function Pool:close() end

---pool:set_devices({ordinal, ...}) (lua/lua_remote.c)
---@param devices table
---@return any
function Pool:set_devices(devices) end

---pool:devices() -> the device ordinals jobs are spread over (lua/lua_remote.c)
---@return any
function Pool:devices() end

---pool:listen{address=, run=, version=, secret=} -> port | nil, message (lua/lua_remote.c)
---@param opts table
---@return any
function Pool:listen(opts) end

---pool:allow_fingerprint(fp): accept remote workers whose certificate has this fingerprint. (lua/lua_remote.c)
---@param fingerprint string
---@return any
function Pool:allow_fingerprint(fingerprint) end

---pool:workers() -> {remote =, handshaking =, gone = why|nil} (lua/lua_remote.c)
---@return any
function Pool:workers() end

---pool:events() -> the remote workers' connection events since the last call (lua/lua_remote.c)
---@return any
function Pool:events() end

---pool:launcher_ended([why]): the process that launches workers (Slurm) ended. (lua/lua_remote.c)
---@param why? string
---@return any
function Pool:launcher_ended(why) end

---pool:set_grace(seconds): how long to wait for lost remote workers. (lua/lua_remote.c)
---@param seconds number
---@return any
function Pool:set_grace(seconds) end

---pool:gone() -> why the pool cannot go on (no workers left), or nil (lua/lua_remote.c)
---@return any
function Pool:gone() end

---@class avo.Slurm
local Slurm = {}

---slurm:running() -> true | false, what (lua/lua_remote.c)
---@return boolean
function Slurm:running() end

---slurm:pid() -> the srun process id (lua/lua_remote.c)
---@return integer
function Slurm:pid() end

---slurm:stop([grace_s]); __gc and __close (which pass other arguments) use 5 s (avo_slurm_stop: for the step to end by itself, then after SIGTERM). (lua/lua_remote.c)
---@param grace_s? number
---@return any
function Slurm:stop(grace_s) end

---@type string
core.version = ""
---@type string
core.git_commit = ""
---@type string
core.source_root = ""

return core
