local M = {}
function M.main(opts) return 1 end
return M
