---@meta
-- LuaCATS classes for what strategy, operator and evaluator files hand to
-- avo and get back (docs/lua-api.md, docs/evaluators.md).  Never loaded:
-- a language server reads it (.luarc.json at the repository root points
-- at lua/types/ and lua/), and tools/check-annotations checks the public
-- functions are annotated.

---A candidate, as an operator builds it (docs/lua-api.md "Candidates and records").
---@class avo.Candidate
---@field source string the kernel source
---@field knobs? table<string, integer|number|string> knob values by name
---@field operator? string the operator that made it
---@field parents? { id: integer, role: string }[]
---@field note? string a short line for humans ("BM 16 -> 32")
---@field generation? integer
---@field explanation? string what an LLM operator said about its change

---What avo.evaluate returns: the candidate's fields plus the verdict.
---@class avo.Record: avo.Candidate
---@field id? integer archive id (nil for an attempt, see attempt_id)
---@field status "ok"|"compile_error"|"wrong"|"crashed"|"timeout"|"invalid"|"error"|"skipped"
---@field score number aggregate score, 0 when failed
---@field reason? string why it failed; nil when ok
---@field configs? table[] per-config results
---@field duplicate? boolean true when the same source and knobs were evaluated before
---@field attempt_id? integer set for an attempt (opts.attempt)
---@field outcome? string an attempt's outcome
---@field result? table the worker's raw result (attempts)

---A knob parsed from `// avo:param NAME v1 v2 ...`.
---@class avo.Knob
---@field name string
---@field values (integer|number|string)[]

---A random stream derived from the run seed and a name (avo.rng).
---@class avo.Stream
---@field name string
local Stream = {}
---@param lo integer
---@param hi integer
---@return integer # uniform in [lo, hi]
function Stream:int(lo, hi) end
---@return number # uniform in [0, 1)
function Stream:float() end
---@param p number
---@return boolean
function Stream:chance(p) end
---@generic T
---@param array T[]
---@return T
function Stream:choice(array) end
---@generic T
---@param array T[]
---@return T[] # the same array, shuffled in place
function Stream:shuffle(array) end
---@param map table<any, number> weights by key
---@return any # a key chosen with probability proportional to its weight
function Stream:weighted(map) end

---What avo.budget returns.
---@class avo.Budget
---@field evaluations integer evaluations done
---@field max_evaluations? integer
---@field elapsed number seconds since the run began
---@field max_seconds? number
---@field llm? table LLM spend totals
---@field max_usd? number
---@field max_tokens? integer

---A loaded evaluator (avo.evaluator): the validated fields of the file.
---@class avo.Evaluator: avo.EvaluatorSpec
---@field knobs avo.Knob[] the seed kernel's knobs
local Evaluator = {}
---@return avo.Candidate # the seed kernel, operator "seed", knobs at their first values
function Evaluator:seed() end

---An argument of the kernel's C signature.
---@class avo.EvaluatorArg
---@field name string
---@field kind "scalar"|"in"|"out"|"inout"
---@field type string dtype such as "f32", "i32"
---@field length? fun(config: table): integer elements, for arrays

---What an evaluator file returns (docs/evaluators.md).
---@class avo.EvaluatorSpec
---@field name string
---@field description string
---@field backend "cpu"|"cuda"|"test"
---@field kernel string the seed kernel's file
---@field entry string the function to call
---@field reference { source: string, entry: string }
---@field args avo.EvaluatorArg[]
---@field configs { name: string, [string]: any }[]
---@field tolerance { atol: number, rtol: number }
---@field flops? fun(config: table): number
---@field bytes? fun(config: table): number
---@field score? fun(configs: table[]): number replaces the default aggregate
---@field artifacts? fun(result: table, cand: avo.Candidate): any feedback for the next prompt
---@field cascade? { configs: string[], min_ratio: number }[]
---@field cflags? string[]
---@field timing? table overrides of the timing defaults
---@field baselines? table[]

---What an operator's apply receives.
---@class avo.OperatorContext
---@field ev avo.Evaluator
---@field rng avo.Stream the operator's stream ("op." .. name)
---@field generation integer
---@field options table the operator's table from the strategy config

---What an operator file returns (docs/lua-api.md "Operators").
---@class avo.Operator
---@field name string
---@field llm? boolean true when it calls a language model
---@field apply fun(ctx: avo.OperatorContext, parents: avo.Record[]): avo.Candidate?, string?

---Options every strategy takes; each strategy adds its own.
---@class avo.StrategyOptions
---@field evaluator string|avo.EvaluatorSpec a spec for avo.evaluator
---@field operators? table<string, number> operator weights
---@field [string] any

---What a strategy file returns (docs/lua-api.md "Strategies").
---@class avo.Strategy
---@field run fun(opts: avo.StrategyOptions): avo.Record? the best record
