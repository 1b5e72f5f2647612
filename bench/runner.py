#!/usr/bin/env python3
"""bench/runner.py - interleaved benchmark rounds with ratios to a reference.

Usage (from the bench scripts):
  runner.py --rounds N --warmup W --ref NAME [--prep 'CMD'] [--units FILES:BYTES]
            [--prep-for NAME='CMD' ...] [--pair NAME/PEER ...]
            NAME='command' [NAME='command' ...]

Every round runs each command once, in the given order rotated by one per
round, so slow drift and cache state hit all commands alike. A --prep
command (e.g. re-reading the data set into the page cache, or removing
labels) runs before every measured command; a --prep-for command before
each run of that one command only (neither is timed). Per run it records the wall
time and the child's user+sys CPU (wait4 rusage). It prints, per command,
the median wall time (min-max), throughput, CPU and the median of the
per-round ratios to the reference command (ratio < 1: faster than ref).
Each --pair NAME/PEER adds a line: the median over rounds of PEER's wall
time divided by NAME's (how many times faster NAME is than PEER).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd):
    # stderr to a file, not a pipe: a chatty command (evmctl -r) would fill
    # a pipe that is read only after the command ends, and block forever
    with tempfile.TemporaryFile() as errf:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=errf)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        errf.seek(0)
        err = errf.read(4096).decode(errors="replace")
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        sys.stderr.write(f"bench: '{cmd}' exited {rc}: {err.strip()[:300]}\n")
    return wall, ru.ru_utime + ru.ru_stime, rc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--prep", default=None)
    ap.add_argument("--prep-for", action="append", default=[])
    ap.add_argument("--files", type=int, default=0)
    ap.add_argument("--bytes", type=int, default=0)
    ap.add_argument("--title", default="")
    ap.add_argument("--pair", action="append", default=[])
    ap.add_argument("cmds", nargs="+")
    a = ap.parse_args()
    cmds = []
    for c in a.cmds:
        name, _, cmd = c.partition("=")
        cmds.append((name, cmd))
    names = [n for n, _ in cmds]
    prep_for = {}
    for c in a.prep_for:
        name, _, cmd = c.partition("=")
        if name not in names:
            sys.exit(f"bench: --prep-for {name}: no such command")
        prep_for[name] = cmd
    pairs = [p.split("/", 1) for p in a.pair]
    for p in pairs:
        if len(p) != 2 or p[0] not in names or p[1] not in names:
            sys.exit(f"bench: --pair {'/'.join(p)}: not NAME/PEER of two commands")
    if a.ref not in names:
        sys.exit(f"bench: reference {a.ref} is not one of {names}")
    res = {n: [] for n in names}
    for r in range(a.warmup + a.rounds):
        k = r % len(cmds)
        order = cmds[k:] + cmds[:k]
        this = {}
        for name, cmd in order:
            if a.prep:
                subprocess.run(a.prep, shell=True, check=False,
                               stdout=subprocess.DEVNULL)
            if name in prep_for:
                subprocess.run(prep_for[name], shell=True, check=False,
                               stdout=subprocess.DEVNULL)
            this[name] = run(cmd)
        if r >= a.warmup:
            for n in names:
                res[n].append(this[n] + (this[n][0] / this[a.ref][0],) + (this,))
    if a.title:
        print(f"\n### {a.title}")
    print(f"{a.rounds} rounds (+{a.warmup} warm-up), interleaved; "
          f"ratio = wall / wall of '{a.ref}' in the same round (<1 is faster)")
    hdr = f"| {'command':<24} | {'median s (min-max)':>22} |"
    if a.files:
        hdr += f" {'files/s':>9} |"
    if a.bytes:
        hdr += f" {'GB/s':>6} |"
    hdr += f" {'CPU s':>6} | {'ratio':>6} |"
    print(hdr)
    print("|" + "|".join("-" * (len(c)) for c in hdr.split("|")[1:-1]) + "|")
    for n in names:
        walls = [x[0] for x in res[n]]
        med = statistics.median(walls)
        line = f"| {n:<24} | {med:8.3f} ({min(walls):.3f}-{max(walls):.3f}) |"
        if a.files:
            line += f" {a.files / med:9.0f} |"
        if a.bytes:
            line += f" {a.bytes / med / 1e9:6.2f} |"
        line += f" {statistics.median(x[1] for x in res[n]):6.2f} |"
        line += f" {statistics.median(x[3] for x in res[n]):6.2f} |"
        bad = sum(1 for x in res[n] if x[2] != 0)
        if bad:
            line += f" ({bad} runs failed)"
        print(line)
    for n, peer in pairs:
        x = statistics.median(r[4][peer][0] / r[4][n][0] for r in res[n])
        print(f"{n} is {x:.2f}x as fast as {peer} (median of per-round ratios)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
