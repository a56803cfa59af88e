#!/bin/sh
# Help, usage errors and exit codes of the CLI.
. "$(dirname "$0")/lib.sh"
expect_exit 0 "$AVO" --help;            expect_in "$tmp/out" "usage: avo COMMAND"
for cmd in run eval best show lineage; do
    expect_exit 0 "$AVO" "$cmd" --help; expect_in "$tmp/out" "usage: avo $cmd"
done
expect_exit 2 "$AVO";                   expect_in "$tmp/err" "usage: avo COMMAND"
expect_exit 2 "$AVO" frobnicate;        expect_in "$tmp/err" "unknown command 'frobnicate'"
expect_exit 2 "$AVO" run;               expect_in "$tmp/err" "run needs a script"
expect_exit 2 "$AVO" run x.lua --jobs 2000; expect_in "$tmp/err" "--jobs needs an integer"
expect_exit 2 "$AVO" run x.lua --max-time soon; expect_in "$tmp/err" "--max-time needs"
expect_exit 2 "$AVO" run x.lua notkeyvalue; expect_in "$tmp/err" "expected KEY=VALUE"
expect_exit 2 "$AVO" run "$tmp/missing.lua"; expect_in "$tmp/err" "cannot read script"
expect_exit 2 "$AVO" eval kernels/cpu/sgemm.c; expect_in "$tmp/err" "eval needs --evaluator"
expect_exit 2 "$AVO" show;              expect_in "$tmp/err" "expected one candidate id"
expect_exit 2 "$AVO" show abc;          expect_in "$tmp/err" "positive integer"
expect_exit 1 "$AVO" best --db "$tmp/none.db"; expect_in "$tmp/err" "cannot open archive"
[ ! -e "$tmp/none.db" ] || fail "a query created an archive"

# Help and errors cannot disagree: every command `avo --help` lists prints,
# after a usage error, exactly the usage its --help prints (one table,
# cli/commands.c, holds both).
commands=$("$AVO" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\).*/\1/p')
[ "$(echo "$commands" | wc -l)" -ge 16 ] || fail "avo --help lists too few commands: $commands"
for cmd in $commands; do
    expect_exit 0 "$AVO" "$cmd" --help
    mv "$tmp/out" "$tmp/help"
    expect_exit 2 "$AVO" "$cmd" --no-such-option
    tail -n +3 "$tmp/err" | cmp -s - "$tmp/help" ||
        fail "avo $cmd: the usage after an error is not the one --help prints"
done

# A newer archive schema is refused with a clear message.
sqlite3 "$tmp/new.db" "PRAGMA user_version = 99; CREATE TABLE x(y);"
expect_exit 1 "$AVO" best --db "$tmp/new.db"; expect_in "$tmp/err" "99"
# A run that does not exist is named as such.
"$AVO" run tests/lua/ga_synthetic.lua --db "$tmp/s.db" >/dev/null 2>&1
expect_exit 1 "$AVO" best --db "$tmp/s.db" --run 9; expect_in "$tmp/err" "no run 9"
expect_exit 0 "$AVO" best --db "$tmp/s.db" --run 1
# The README's usage block is the CLI's: every command `avo --help` lists is
# there and it names no other; each entry is the command's own synopsis
# (`avo X --help` up to its first blank line; whitespace and `# comments`
# aside); and every option a command's help describes is in its synopsis.
python3 - "$AVO" README.md <<'PY' || fail "the README's usage block does not match the CLI"
import re, subprocess, sys

avo, readme = sys.argv[1], sys.argv[2]
problems = []

def help_of(*args):
    return subprocess.run([avo, *args, "--help"] if args else [avo, "--help"],
                          capture_output=True, text=True, check=True).stdout

def entries(lines):
    """'avo X ...' entries, continuation lines joined, whitespace collapsed."""
    out = []
    for line in lines:
        line = re.sub(r"\s+#.*$", "", line.replace("usage: ", "", 1)).strip()
        if line.startswith("avo "):
            out.append(line)
        elif line and out:
            out[-1] += " " + line
    return [" ".join(e.split()) for e in out]

main = help_of()
commands = re.findall(r"^  (\S+)", main.split("commands:\n", 1)[1].split("\n\n", 1)[0], re.M)

text = open(readme, encoding="utf-8").read()
block = text.split("## Using avo", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
documented = {}
for e in entries(block.splitlines()):
    documented.setdefault(e.split()[1], []).append(e)

for c in sorted(set(commands) - set(documented)):
    problems.append(f"`avo {c}` is in `avo --help` but not in the README's usage block")
for c in sorted(set(documented) - set(commands)):
    problems.append(f"`avo {c}` is in the README's usage block but not in `avo --help`")
for c in commands:
    text = help_of(c)
    synopsis_text, _, body = text.partition("\n\n")
    synopsis = entries(synopsis_text.splitlines())
    if c in documented and documented[c] != synopsis:
        problems.append(f"avo {c}: README says\n    " + "\n    ".join(documented[c]) +
                        "\n  --help says\n    " + "\n    ".join(synopsis))
    named = set(re.findall(r"(?<![\w-])--?[\w][\w-]*", " ".join(synopsis)))
    for short, long in re.findall(r"^  (?:(-\w), )?(--[\w-]+)", body, re.M):
        if long not in named and short not in named:
            problems.append(f"avo {c}: --help describes {long} but its synopsis lacks it")

for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
echo "cli_usage: ok"
