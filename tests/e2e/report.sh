#!/bin/sh
# `avo report`: one self-contained, well-formed HTML page with inline SVG
# plots, escaped archive text and every section; rendered by headless
# Chromium when it is installed.  Mistakes are refused with clear messages.
. "$(dirname "$0")/lib.sh"
db="$tmp/a.db"
expect_exit 0 "$AVO" run tests/lua/ga_synthetic.lua --db "$db" --jobs 2
expect_exit 0 "$AVO" run tests/lua/test_operators.lua --db "$db" --jobs 2
# Archive text that must be escaped, a failed candidate, and baselines.
q "$db" "UPDATE candidates SET status = 'crashed', score = 0, reason = 'SIGSEGV <here>' WHERE id = 5; DELETE FROM evaluations WHERE candidate_id = 5"
best=$(q "$db" "SELECT id FROM candidates WHERE run_id = 1 AND status = 'ok' ORDER BY score DESC, id LIMIT 1")
q "$db" "UPDATE candidates SET note = '<script>alert(1)</script> & \"x\"' WHERE id = $best"
q "$db" "UPDATE runs SET config = json_set(config, '$.baselines', json('{\"naive\": 2.5, \"vendor\": 8}')) WHERE id = 1"

expect_exit 0 "$AVO" report --db "$db" --run 1 -o "$tmp/r1.html"
expect_in "$tmp/err" "wrote $tmp/r1.html"
python3 - "$tmp/r1.html" "$best" <<'PY'
import re, sys, xml.etree.ElementTree as ET
text = open(sys.argv[1], encoding="utf-8").read()
best = sys.argv[2]
root = ET.fromstring(text.split("\n", 1)[1])          # well-formed (after the doctype)
tags = [el.tag.split("}")[-1] for el in root.iter()]
assert tags.count("svg") >= 2, "expected the trajectory and generation plots"
assert tags.count("circle") > 30 and "path" in tags
for needle in ["Trajectory", "Score per generation", "Lineage of the best candidate",
               "Top versions", "no LLM calls", 'id="c%s"' % best, "tests/lua/ga_synthetic.lua",
               "vendor", "naive", "seed #1", "running best", "SIGSEGV &lt;here&gt;",
               "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;", "<details>"]:
    assert needle in text, needle
assert "<script" not in text, "unescaped script"
# self-contained: nothing is fetched
assert not re.search(r'(src|href)="(https?:)?//', text), "external reference"
assert "<link" not in text and "@import" not in text and "url(" not in text
# every internal link has its anchor
ids = set(re.findall(r'id="([^"]+)"', text))
for ref in re.findall(r'href="#([^"]+)"', text):
    assert ref in ids, "dangling link #" + ref
PY

# The latest run by default; the operator run's report shows its source diffs.
expect_exit 0 "$AVO" report --db "$db" -o "$tmp/r2.html"
expect_in "$tmp/r2.html" "run 2"
expect_in "$tmp/r2.html" "tests/lua/test_operators.lua"
expect_in "$tmp/r2.html" "<span class=\"add\">+/* "

# Rendered by a real browser, when one is installed.
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -n "$chrome" ]; then
    timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$tmp/chrome" --screenshot="$tmp/r1.png" --window-size=1400,2000 \
        "file://$tmp/r1.html" >"$tmp/chrome.log" 2>&1 || { cat "$tmp/chrome.log"; fail "chromium failed"; }
    python3 - "$tmp/r1.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", data[16:24])
assert (w, h) == (1400, 2000), (w, h)
# Decode the image and count pixels that are neither white nor near-white.
pos, idat = 8, b""
depth, ctype = data[24], data[25]
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
bpp = {2: 3, 6: 4}[ctype]
stride = w * bpp
prev, inked, colours = bytearray(stride), 0, set()
i = 0
for y in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 4 == 0:
        for x in range(0, stride, bpp * 4):
            px = bytes(line[x:x + 3])
            if min(px) < 200: inked += 1
            colours.add(px)
    prev = line
assert inked > 2000 and len(colours) > 20, (inked, len(colours))
print("rendered: %d inked samples, %d colours" % (inked, len(colours)))
PY
else
    echo "report: SKIP chromium render (no chromium installed)"
fi

# mistakes
expect_exit 2 "$AVO" report --db "$db";                   expect_in "$tmp/err" "report needs -o FILE.html"
expect_exit 2 "$AVO" report --db "$db" --run 0 -o "$tmp/x.html"; expect_in "$tmp/err" "--run needs a run id"
expect_exit 1 "$AVO" report --db "$db" --run 99 -o "$tmp/x.html"; expect_in "$tmp/err" "no run 99"
[ ! -e "$tmp/x.html" ] || fail "a failed report left a file"
expect_exit 1 "$AVO" report --db "$tmp/none.db" -o "$tmp/x.html"; expect_in "$tmp/err" "cannot open archive"
[ ! -e "$tmp/none.db" ] || fail "report created a missing archive"
expect_exit 1 "$AVO" report --db "$db" -o "$tmp/no/dir/r.html";   expect_in "$tmp/err" "cannot write"
# an archive without runs (a read command never makes one of an empty file)
# A long run's plots stay small: past 2,000 marks, one per 3 px cell, and
# the caption says how many were drawn (cli/view/plot.h).
expect_exit 0 "$AVO" run bench/throughput.lua --db "$tmp/long.db" --max-evals 3000 --retime 0
expect_exit 0 "$AVO" report --db "$tmp/long.db" -o "$tmp/long.html"
drawn=$(grep -o '<p class="muted">[0-9]* of 3000 marks drawn' "$tmp/long.html" | wc -l)
[ "$drawn" = 2 ] || fail "a 3,000-candidate report does not say, under both plots, how many marks it drew"
n=$(grep -o '[0-9]* of 3000 marks drawn' "$tmp/long.html" | head -1 | cut -d' ' -f1)
dots=$(sed -n '/id="trajectory"/,/id="generations"/p' "$tmp/long.html" | grep -c '<circle cx=[^>]*fill="#4a78a8" fill-opacity="0.55"><title>')
[ "$n" -lt 3000 ] && [ "$dots" = "$n" ] ||
    fail "the trajectory drew $dots dots, its caption says $n of 3000"
# A short run draws every mark and says nothing of it.
! grep -q 'marks drawn' "$tmp/r1.html" || fail "a short run's report thinned its plots"

printf 'error("stop")\n' > "$tmp/stop.lua"
"$AVO" run "$tmp/stop.lua" --db "$tmp/empty.db" >/dev/null 2>&1 || true
sqlite3 "$tmp/empty.db" "PRAGMA foreign_keys = OFF; DELETE FROM events; DELETE FROM runs"
expect_exit 1 "$AVO" report --db "$tmp/empty.db" -o "$tmp/x.html"; expect_in "$tmp/err" "has no runs"
echo "report: ok"
