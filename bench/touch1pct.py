#!/usr/bin/env python3
"""bench/touch1pct.py DIR PCT - change PCT % of the regular files under DIR.

Every call picks a fresh random sample (seeded by the time) and appends one
byte to each file picked: content, size, mtime and ctime change, as they
do when a package update rewrites a few files. For `bench/scan`'s --update
and --check rounds (not timed).
"""
import os
import random
import sys


def main():
    root, pct = sys.argv[1], float(sys.argv[2])
    files = []
    for d, _, names in os.walk(root):
        files.extend(os.path.join(d, n) for n in names
                     if os.path.isfile(os.path.join(d, n))
                     and not os.path.islink(os.path.join(d, n)))
    files.sort()
    k = max(1, int(len(files) * pct / 100))
    for p in random.Random().sample(files, k):
        with open(p, "ab") as f:
            f.write(b"\n")
    print(f"changed {k} of {len(files)} files")


if __name__ == "__main__":
    main()
