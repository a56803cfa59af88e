-- The knowledge base from Lua (run by tests/e2e/kb.sh on an archive that
-- `avo kb add kernels/kb` filled before the run): avo.kb.search/read on the
-- run's archive, and the avo.Kb userdata of avo.kb.open on another file.
local avo = require "avo"

-- The run's archive holds the shipped notes.
local hits = assert(avo.kb.search("online softmax", 3))
assert(#hits >= 1 and #hits <= 3, "search returns at most the limit")
assert(hits[1].doc:match("softmax%.md$") or hits[1].doc:match("attention%.md$"),
  "online softmax ranks softmax.md or attention.md first, got " .. hits[1].doc)
assert(hits[1].snippet:find("**", 1, true), "snippet marks the matched words")
assert(type(hits[1].score) == "number" and hits[1].score > 0)
assert(math.type(hits[1].section) == "integer" and math.type(hits[1].line) == "integer")
for _, q in ipairs { '"', "*", "NEAR(", "a OR", ")", "", "title:x", "(((" } do
  assert(type(avo.kb.search(q)) == "table", "hostile query: " .. q)
end
local doc = assert(avo.kb.read("hopper.md"))
assert(doc.path == "kernels/kb/hopper.md" and doc.text:find("setmaxnreg", 1, true))
assert(avo.kb.read(doc.id).path == doc.path, "read by id")
local none, msg = avo.kb.read("no-such-note.md")
assert(none == nil and msg:find("no-such-note.md", 1, true), "missing doc: nil, message")
assert(not pcall(avo.kb.search, 42), "a non-string query is misuse")
assert(not pcall(avo.kb.search, "x", 0), "limit out of range is misuse")

-- More notes into the run's archive: unchanged ones are kept, new ones found.
local notes = os.tmpname()
os.remove(notes)
assert(os.execute("mkdir -p " .. notes))
local f = assert(io.open(notes .. "/pipelining.md", "w"))
f:write("# Pipelining\n\n## Double buffering\n\nOverlap the copy of tile k+1 with the math of tile k.\n")
f:close()
local again = assert(avo.kb.add_dir("kernels/kb"))
assert(again.added == 0 and again.removed == 0, "re-indexing the same notes changes nothing")
assert(avo.kb.add_dir(notes).added == 1)
assert(avo.kb.search("double buffering overlap")[1].doc:find("pipelining.md", 1, true))
local missing, why = avo.kb.add_dir(notes .. "/none")
assert(missing == nil and why:find("cannot read directory", 1, true), "a missing directory: nil, message")
assert(not pcall(avo.kb.add_dir, 42), "a non-string directory is misuse")
os.execute("rm -rf " .. notes)

-- A standalone KB through avo.kb.open.
local path = os.tmpname()
os.remove(path)
local kb = assert(avo.kb.open(path))
assert(#kb:search("anything") == 0, "a new KB is empty")
assert(kb:add_file("notes/tile.md", "# Tiles\n\n## Swizzle\n\nXOR the chunk index.\n") == true)
assert(kb:add_file("notes/tile.md", "# Tiles\n\n## Swizzle\n\nXOR the chunk index.\n") == false,
  "unchanged content")
local stats = assert(kb:add_dir("kernels/kb"))
assert(stats.added >= 7 and stats.removed == 0 and stats.sections > stats.added)
assert(#kb:list() == stats.added + 1)
assert(kb:search("swizzle chunk")[1].doc == "notes/tile.md")
local r, err = kb:add_dir(path .. ".missing")
assert(r == nil and err:find("cannot read directory", 1, true))
kb:close()
kb:close() -- idempotent
assert(not pcall(kb.search, kb, "x"), "a closed KB raises")
assert(avo.kb.open(path), "reopens")
os.remove(path)
os.remove(path .. "-wal")
os.remove(path .. "-shm")
print("kb_run: ok")
