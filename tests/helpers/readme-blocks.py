#!/usr/bin/python3
# tests/helpers/readme-blocks.py README OUTDIR - write every shell command block of
# README (```sh, ```bash or ```shell fences) verbatim to OUTDIR/NNNN.sh,
# where NNNN is the line of its opening fence, and print one line per
# block: "run LINE" or "skip LINE REASON". Exempt are the block of the two
# commands (`make demo`, `make test`: nothing but those lines and
# comments) and a block right after a line `<!-- slow: REASON -->`.
# Exit 2 if README has no block to run: a test over nothing cannot fail.
import os
import re
import sys

readme, outdir = sys.argv[1], sys.argv[2]
lines = open(readme, encoding="utf-8").read().split("\n")
os.makedirs(outdir, exist_ok=True)
runs = 0
i = 0
while i < len(lines):
    m = re.match(r"^```(sh|bash|shell)\s*$", lines[i])
    if not m:
        i += 1
        continue
    start = i + 1
    j = start
    while j < len(lines) and lines[j].rstrip() != "```":
        j += 1
    if j == len(lines):
        sys.exit(f"{readme}:{i + 1}: block not closed")
    body = lines[start:j]
    prev = lines[i - 1].strip() if i > 0 else ""
    slow = re.match(r"^<!--\s*slow:\s*(.*?)\s*-->$", prev)
    cmds = [re.sub(r"\s+#.*$", "", l).strip() for l in body
            if l.strip() and not l.strip().startswith("#")]
    if slow:
        print(f"skip {i + 1} slow: {slow.group(1)}")
    elif cmds and all(c in ("make demo", "make test") for c in cmds):
        print(f"skip {i + 1} the two commands (CI runs them)")
    else:
        with open(os.path.join(outdir, f"{i + 1:04d}.sh"), "w") as f:
            f.write("\n".join(body) + "\n")
        print(f"run {i + 1}")
        runs += 1
    i = j + 1
if runs == 0:
    sys.exit(f"{readme}: no command block to run")
