-- avo.llm.state — what the parts of avo.llm share (see lua/avo/llm.lua).
--
-- `api` is the public table `require "avo.llm"` returns: every part adds its
-- public functions and settings to it, so a part calls another's public
-- function as M.name and a user's assignment (llm.prices, llm.DEFAULT_WINDOW)
-- is seen by all.  `current` is the current run's LLM state, set by
-- avo.llm._begin and cleared by avo.llm._end (see lua/avo/llm/run.lua); nil
-- outside a run.

return { api = {}, current = nil }
