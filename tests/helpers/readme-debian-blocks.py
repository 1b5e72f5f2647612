#!/usr/bin/python3
# tests/helpers/readme-debian-blocks.py FILE OUTDIR - the command blocks of a
# Debian README (plain text: a block is a run of lines indented four
# spaces, after a blank line), one shell script each in OUTDIR, named
# LINE.sh by the line the block starts on; prints each name. A block whose
# first character is '/' is a list of files, not commands, and is left out.
# Lines ending in a backslash continue onto the next, as the shell reads
# them.
import os
import sys

path, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
lines = open(path).read().split("\n")
i = 0
while i < len(lines):
    if lines[i].startswith("    ") and (i == 0 or lines[i - 1].strip() == ""):
        start = i
        block = []
        while i < len(lines) and (lines[i].startswith("    ") or
                                  (block and block[-1].endswith("\\") and lines[i].strip())):
            block.append(lines[i][4:] if lines[i].startswith("    ") else lines[i])
            i += 1
        if block and not block[0].lstrip().startswith("/"):
            name = "%d.sh" % (start + 1)
            with open(os.path.join(out, name), "w") as f:
                f.write("set -e\n" + "\n".join(block) + "\n")
            print(name)
        continue
    i += 1
