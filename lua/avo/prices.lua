-- avo.prices — what an LLM call costs: USD per million tokens, by model.
--
-- Edit freely, or override without rebuilding:
--   * AVO_LLM_PRICES=/path/prices.lua, a file returning a table of the same
--     shape, merged over this one at the start of a run;
--   * in a script: require("avo.llm").prices["my-model"] = { input = 1, output = 2 }.
-- A model is looked up by its exact name, then by the longest key that is a
-- prefix of it ("claude-sonnet-4-20250514" matches "claude-sonnet-4").  A
-- model with no price costs 0, so --max-usd cannot stop it (a warning is
-- logged once when --max-usd is set): use --max-tokens for those.  Local
-- servers are free: "local/" and "scripted" are priced 0 explicitly.
--
-- These are list prices as of early 2025 and will drift; check your provider.
return {
  -- OpenAI
  ["gpt-4o"] = { input = 2.50, output = 10.00 },
  ["gpt-4o-mini"] = { input = 0.15, output = 0.60 },
  ["gpt-4.1"] = { input = 2.00, output = 8.00 },
  ["gpt-4.1-mini"] = { input = 0.40, output = 1.60 },
  ["gpt-4.1-nano"] = { input = 0.10, output = 0.40 },
  ["o3-mini"] = { input = 1.10, output = 4.40 },
  ["o4-mini"] = { input = 1.10, output = 4.40 },
  -- Anthropic
  ["claude-opus-4"] = { input = 15.00, output = 75.00 },
  ["claude-sonnet-4"] = { input = 3.00, output = 15.00 },
  ["claude-3-7-sonnet"] = { input = 3.00, output = 15.00 },
  ["claude-3-5-sonnet"] = { input = 3.00, output = 15.00 },
  ["claude-3-5-haiku"] = { input = 0.80, output = 4.00 },
  -- Free
  ["scripted"] = { input = 0, output = 0 },
  ["local/"] = { input = 0, output = 0 },
}
