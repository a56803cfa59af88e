-- avo.scaleout's reading of srun options: the task count --jobs follows,
-- and the options a replacement step for lost workers reuses (the user's
-- options without task and node counts, so it can be of another size).
local scaleout = require "avo.scaleout"

local cases = {
  { "-n 3", 3 }, { "-n3", 3 }, { "--ntasks=4", 4 }, { "--ntasks 5", 5 },
  { "-p cpu -n 2 --ntasks=6", 6 }, { "--partition=cpu", nil },
}
for _, c in ipairs(cases) do
  assert(scaleout.slurm_ntasks(c[1]) == c[2],
    ("slurm_ntasks(%q) = %s, want %s"):format(c[1], tostring(scaleout.slurm_ntasks(c[1])), tostring(c[2])))
end

local strip = {
  { "-n 3 --ntasks-per-node=1 -p cpu", "--ntasks-per-node=1 -p cpu" },
  { "-N 2 --ntasks-per-node=4 --gres=gpu:4 -t 4:00:00", "--ntasks-per-node=4 --gres=gpu:4 -t 4:00:00" },
  { "--nodes=8 --ntasks=8 --account=proj42", "--account=proj42" },
  { "-N2 -n8 --qos=high", "--qos=high" },
  { "--nodes 3 --ntasks 3 --time=30", "--time=30" },
  { "--ntasks-per-node=1 --partition=avo", "--ntasks-per-node=1 --partition=avo" },
  { "", "" },
}
for _, c in ipairs(strip) do
  local got = scaleout.slurm_without_counts(c[1])
  assert(got == c[2], ("slurm_without_counts(%q) = %q, want %q"):format(c[1], got, c[2]))
end
print("scaleout: ok")
