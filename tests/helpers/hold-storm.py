#!/usr/bin/env python3
"""hold-storm.py - the storm of t0716 (issue 41): kill vigild's monitor
while an unprivileged user runs an unlabeled program in a loop and root
runs a labeled one, timing each run.

    hold-storm.py HOLDER_PID KILLS GOOD BAD RUNS_DIR [--min S --max S]

The user's loop (setpriv as nobody) appends a line to RUNS_DIR/runs for
each time BAD ran. Between kills: a random pause in [min, max] s, then
SIGKILL to the holder's child (the monitor), waiting for one to exist.
Prints one JSON object: kills, bad_runs, good (runs, failures, p50, p99,
max in ms), the longest time without a monitor.
"""
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time


def monitor_of(holder):
    try:
        with open(f"/proc/{holder}/task/{holder}/children") as f:
            kids = f.read().split()
    except OSError:
        return None
    return int(kids[0]) if kids else None


def main():
    args = sys.argv[1:]
    holder, kills, good, bad, runs_dir = int(args[0]), int(args[1]), args[2], args[3], args[4]
    lo, hi = 0.4, 0.9
    if "--min" in args:
        lo = float(args[args.index("--min") + 1])
    if "--max" in args:
        hi = float(args[args.index("--max") + 1])
    runs = os.path.join(runs_dir, "runs")
    open(runs, "w").close()
    os.chmod(runs, 0o666)
    user = subprocess.Popen(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bash", "-c",
         f'while :; do "{bad}" 2>/dev/null && echo r >>"{runs}"; done'],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    stop = threading.Event()
    lat, fails = [], []

    def labeled():
        while not stop.is_set():
            t0 = time.monotonic()
            rc = subprocess.run([good], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            dt = (time.monotonic() - t0) * 1000
            (lat if rc == 0 else fails).append(dt)

    th = threading.Thread(target=labeled)
    th.start()
    done, gaps = 0, []
    try:
        while done < kills:
            time.sleep(random.uniform(lo, hi))
            m = None
            t0 = time.monotonic()
            while m is None and time.monotonic() - t0 < 30:
                m = monitor_of(holder)
                if m is None:
                    time.sleep(0.01)
            if m is None:
                break
            try:
                os.kill(m, signal.SIGKILL)
            except ProcessLookupError:
                continue
            done += 1
            t1 = time.monotonic()
            while monitor_of(holder) in (None, m) and time.monotonic() - t1 < 30:
                time.sleep(0.002)
            gaps.append((time.monotonic() - t1) * 1000)
        time.sleep(1.0)
    finally:
        stop.set()
        th.join()
        os.killpg(user.pid, signal.SIGKILL)
        user.wait()
    with open(runs) as f:
        bad_runs = sum(1 for _ in f)
    lat.sort()

    def pct(p):
        return round(lat[min(len(lat) - 1, int(p * len(lat)))], 1) if lat else None

    print(json.dumps({
        "kills": done, "bad_runs": bad_runs,
        "good_runs": len(lat), "good_failures": len(fails),
        "good_p50_ms": pct(0.50), "good_p99_ms": pct(0.99),
        "good_max_ms": round(max(lat + fails), 1) if lat or fails else None,
        "respawn_max_ms": round(max(gaps), 1) if gaps else None,
    }))


if __name__ == "__main__":
    main()
