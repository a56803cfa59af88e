-- core.inert (core/strbuf.h, avo_strbuf_inert): text from candidates and
-- servers made inert for a terminal before text mode prints it.
local core = require "avo.core"
local inert = core.inert

-- Printable ASCII, UTF-8, tab and (multi-line) newlines pass.
assert(inert("plain text\twith tab\nnext line") == "plain text\twith tab\nnext line")
assert(inert("größe λ 块 😀") == "größe λ 块 😀", "printable UTF-8 passes")
-- ESC, other C0 controls, DEL: visible.
assert(inert("\27]0;title\7") == "\\e]0;title\\x07", inert("\27]0;title\7"))
assert(inert("\27]52;c;ZWNobw==\7\27[2J") == "\\e]52;c;ZWNobw==\\x07\\e[2J")
assert(inert("a\0b\8c\127d") == "a\\x00b\\x08c\\x7fd")
-- A bare CR cannot overwrite a line; CR LF ends it all the same.
assert(inert("ok\rstatus ok score 99999") == "ok\\rstatus ok score 99999")
assert(inert("line\r\nnext") == "line\nnext")
-- One line: newlines shown, and a CR before one too.
assert(inert("a\nb", true) == "a\\nb")
assert(inert("a\r\nb", true) == "a\\r\\nb")
-- C1 controls, encoded (U+009B CSI) and raw (invalid UTF-8), and invalid
-- UTF-8 of every kind: shown as escapes.
assert(inert("x\u{9b}31m") == "x\\u009b31m")
assert(inert("x\u{85}y") == "x\\u0085y")
assert(inert("x\x9b31m") == "x\\x9b31m", "a raw C1 byte is invalid UTF-8")
assert(inert("\xff\xfe") == "\\xff\\xfe")
assert(inert("\xc3") == "\\xc3", "a cut sequence")
assert(inert("\xc0\xaf") == "\\xc0\\xaf", "an overlong sequence")
assert(inert("\xed\xa0\x80") == "\\xed\\xa0\\x80", "a surrogate")
assert(inert("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80", "beyond U+10FFFF")
-- Bidirectional overrides and isolates (a source that reads otherwise).
assert(inert("a\u{202e}b\u{2066}c") == "a\\u202eb\\u2066c")
-- Idempotent: what is inert stays as it is.
local once = inert("\27[2J\r\u{9b}\xff")
assert(inert(once) == once)
-- Not a string: tostring'ed.
assert(inert(42) == "42" and inert(nil) == "nil")
print("inert: ok")
