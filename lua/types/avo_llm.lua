---@meta avo.llm
-- avo.llm (lua/avo/llm.lua), annotated here rather than inline while that
-- file is being split (docs/lua-api.md "Language models").

---@class avo.llm.Message
---@field role "user"|"assistant"|"tool"|"system"
---@field content? string
---@field tool_calls? { id: string, name: string, arguments: table }[] assistant messages
---@field tool_call_id? string tool messages

---@class avo.llm.Tool
---@field name string
---@field description string
---@field parameters table a JSON schema

---@class avo.llm.ChatOptions
---@field messages avo.llm.Message[]
---@field system? string
---@field tools? avo.llm.Tool[]
---@field model? string|table a model name, or a weighted list of models
---@field provider? string
---@field base_url? string
---@field api_key_env? string
---@field temperature? number
---@field max_tokens? integer
---@field timeout? number seconds
---@field connect_timeout? number
---@field retries? integer
---@field backoff? number
---@field stream? string the random stream of the caller (ctx.rng.name)
---@field schema? table constrain the answer to a JSON schema
---@field context_window? integer

---@class avo.llm.Response
---@field content string
---@field tool_calls { id: string, name: string, arguments: table }[]
---@field message avo.llm.Message
---@field stop_reason string
---@field usage { input_tokens: integer, output_tokens: integer }
---@field cost_usd number
---@field latency_s number
---@field attempts integer
---@field model string
---@field provider string
---@field call_id integer

---@class avo.llm.Request
---@field system? string
---@field messages avo.llm.Message[]
---@field tools? avo.llm.Tool[]

---@class avo.llm
local llm = {}

---Price entry of `model`: exact name, else the longest prefix key.
---@param model string
---@return table? # { input = usd per million tokens, output = ... }
function llm.price_of(model) end

---@return boolean ok
---@return string? what_to_set when no model is configured
function llm.configured() end

---Factors on the configured weights of models in a model list.
---@param bias table<string, number> model name -> factor > 0
function llm.set_model_bias(bias) end

---Whether a failed chat() result was the infrastructure's fault.
---@param result any the second value of a failed chat()
---@return boolean
function llm.is_fault(result) end

---@return integer # calls in a row the infrastructure failed
function llm.fault_streak() end

---@param text string a provider's "too long" error
---@return integer? # the context window it names
function llm.context_from_error(text) end

---@param req avo.llm.Request
---@return integer # characters, as the token estimates count them
function llm.request_chars(req) end

---@param opts avo.llm.ChatOptions|table
---@return number tokens_per_char
---@return boolean measured
function llm.tokens_per_char(opts) end

---@param opts avo.llm.ChatOptions|table
---@param req avo.llm.Request
---@return integer
function llm.estimate_tokens(opts, req) end

---@param opts table { model?, provider?, base_url?, max_tokens?, context_window? }
---@return integer? tokens
---@return integer max_tokens
---@return string from "the server"|"the recorded run"|"the user"|"default"
function llm.context_window(opts) end

---@param opts table { provider?, base_url?, model? }
---@return { family: string?, named_tool_choice: boolean, schema: boolean }
function llm.capabilities(opts) end

---@param message string a chat() failure message
---@return boolean # a refusal (no call made), not a failed call
function llm.is_refusal(message) end

---One chat call; yields until the answer is in.
---@param opts avo.llm.ChatOptions
---@return avo.llm.Response? response
---@return string? message why it failed
function llm.chat(opts) end

---@return table # calls, failed, cut, faults, fault_streak, input_tokens, output_tokens, cost_usd, latency_s
function llm.totals() end

---@return integer in_flight
---@return integer waiting
---@return number oldest_age_s
function llm.in_flight() end

---@param outcomes table avo.outcomes()
---@return string? # the LLM part of the status line
function llm.status_text(outcomes) end

---@param key string
---@param text string? nil removes it
function llm.set_progress(key, text) end

---@return boolean # --max-usd or --max-tokens is spent
function llm.exhausted() end

return llm
