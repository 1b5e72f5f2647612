#!/usr/bin/env python3
"""bench/mktree.py DIR NFILES SEED - a reproducible tree with /usr-like sizes.

Sizes are log-normal (mu = ln 2300, sigma = 1.97, capped at 16 MiB), fitted
to /usr in ../shared/notes/perf-baselines.md; 100 files per leaf directory,
10 leaves per middle directory. Content is pseudo-random (seeded), so two
runs with the same seed build the same tree.
"""
import math
import os
import random
import sys


def main():
    root, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rnd = random.Random(seed)
    block = rnd.randbytes(1 << 20)
    os.makedirs(root, exist_ok=True)
    for i in range(n):
        d = os.path.join(root, f"d{i // 1000:03d}", f"l{(i // 100) % 10}")
        if i % 100 == 0:
            os.makedirs(d, exist_ok=True)
        size = min(int(rnd.lognormvariate(math.log(2300), 1.97)), 16 << 20)
        with open(os.path.join(d, f"f{i:06d}"), "wb") as f:
            left, off = size, rnd.randrange(1 << 20)
            f.write(i.to_bytes(8, "little")[:min(8, left)])
            left -= min(8, left)
            while left:
                k = min(left, (1 << 20) - off)
                f.write(block[off:off + k])
                left -= k
                off = 0


if __name__ == "__main__":
    main()
