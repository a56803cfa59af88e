---@meta agent
-- operators/agent.lua (avo.operator("agent")), annotated here rather than
-- inline while that file is being split (docs/lua-api.md "The agent operator").

---State of one lineage across steps.
---@class avo.agent.Lineage
---@field name string
---@field incumbent avo.Record
---@field messages avo.llm.Message[] the conversation
---@field summary? string the compacted conversation
---@field versions avo.Record[] committed versions
---@field directions? string[] the supervisor's directions

---@class avo.agent.WindowPlan
---@field window integer
---@field from string
---@field answer integer max_tokens of a turn
---@field margin integer
---@field room integer prompt tokens a call may send
---@field tpc number tokens per character

---@class avo.agent: avo.Operator
local agent = {}

---@param spec string|table a prompt module name, path or table
---@return table # {system =, step = function, ...}
function agent.load_prompt(spec) end

---@param messages avo.llm.Message[]
---@param cfg table the agent options
---@param system? string
---@param tools? avo.llm.Tool[]
---@return integer
function agent.estimate_tokens(messages, cfg, system, tools) end

---@param name string
---@param incumbent avo.Record a verified record
---@return avo.agent.Lineage
function agent.new_lineage(name, incumbent) end

---@return table[] # the run's notes (scratchpad), shared by its lineages
function agent.notes() end

---@param source string the kernel; set_knobs's schema names its knobs
---@return avo.llm.Tool[]
function agent.tools_for(source) end

---@param cfg table
---@return avo.agent.WindowPlan?
function agent.window_plan(cfg) end

---@param cfg table
---@param overhead integer tokens of system prompt and tool schemas
---@return integer threshold
---@return integer? window
function agent.compaction_threshold(cfg, overhead) end

---Compact the conversation into a summary (one LLM call).
---@param lineage avo.agent.Lineage
---@param cfg table
---@param prompt table
---@param threshold integer
---@param window? integer
---@param during_step? boolean
---@param plan? avo.agent.WindowPlan
---@return true? ok
---@return string? why
function agent.compact(lineage, cfg, prompt, threshold, window, during_step, plan) end

---One variation step of `lineage` from its incumbent.
---@param ctx avo.OperatorContext
---@param lineage avo.agent.Lineage
---@return avo.Record? committed
---@return string? why
function agent.step(ctx, lineage) end

---@param ctx avo.OperatorContext
---@param parents avo.Record[]
---@return avo.Candidate?
---@return string? why_not
function agent.apply(ctx, parents) end

return agent
