#!/usr/bin/env python3
# bench/fleet.py - bench/fleet's helpers (standard library only):
#   register VERIFIER TOKENFILE SIMURL PREFIX FROM TO POLICY [PAR]
#       POST /v1/agents for agents PREFIX<FROM..TO-1> (the real registration:
#       identity, EK certificate, MakeCredential, ActivateCredential), PAR
#       at once (default 4); prints "ok FAILED SECONDS" and the first error
#   metrics VERIFIER TOKENFILE [...]
#       sums the counters of one or more verifiers' /metrics, prints
#       "rounds late_total late_now dur_sum dur_count registered"
#   gaps QLOG T0_MS T1_MS INTERVAL_MS
#       per agent, the gaps between its consecutive quotes served in
#       [T0, T1]: prints "agents quotes min_gap_ms p50 max agents_with_a_gap_below_interval/2"
#   recovery QLOG KILL_MS IDS_FILE
#       for the ids listed (one a line; empty: every agent in QLOG), the
#       first quote after KILL_MS: prints "count max_ms p50_ms missing"
#   procs PID
#       PID and its descendants, one a line
#   assign VERIFIER TOKENFILE PREFIX FROM TO POLICY [PAR]
#       PUT /v1/agents/ID/policy for PREFIX<FROM..TO-1> (pushing agents
#       register without one): prints "ok FAILED SECONDS" and the first error
#   tamperlat VERIFIER TOKENFILE SIM_OUT QLOG TIMEOUT_S
#       the agents the simulator set tampering (its "tampering from MS
#       (wall ms): ID..." line in SIM_OUT), each polled (GET /v1/agents/ID,
#       every 200 ms) until failed: prints "agents p50 p99 max
#       never_failed p50_from_signal p99_from_signal" (ms from its first
#       tampered quote served, in QLOG, and from the signal)
#   pushlog PUSHLOG T0_MS T1_MS INTERVAL_MS
#       the evidence pushes answered in [T0, T1]: prints "agents judged
#       conflicts_409 other agents_with_a_gap_above_interval+2s max_gap_ms"
#   cpu PID...   utime+stime+cutime+cstime of each, summed, in seconds
#   rss PID...   VmRSS of each, summed, in KiB
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor


# FLEET_CA: the CA of a verifier served over https
CTX = ssl.create_default_context(cafile=os.environ["FLEET_CA"]) if os.environ.get("FLEET_CA") else None


def urlopen(rq, timeout):
    return urllib.request.urlopen(rq, timeout=timeout, context=CTX)


def tok(path):
    with open(path) as f:
        return f.read().strip()


def register(verifier, tokfile, simurl, prefix, lo, hi, policy, par=4):
    t = tok(tokfile)
    ok, bad, first = 0, 0, None

    def one(i):
        body = json.dumps({"url": "%s/a/%s%05d" % (simurl, prefix, i), "policy": policy}).encode()
        rq = urllib.request.Request(verifier + "/v1/agents", data=body, method="POST",
                                    headers={"Authorization": "Bearer " + t,
                                             "Content-Type": "application/json"})
        for attempt in range(3):
            try:
                with urlopen(rq, 120) as r:
                    return r.status, ""
            except urllib.error.HTTPError as e:
                return e.code, e.read()[:200].decode(errors="replace")
            except OSError as e:
                if attempt == 2:
                    return 0, str(e)
                time.sleep(0.5)
        return 0, "?"

    t0 = time.time()
    with ThreadPoolExecutor(max_workers=par) as ex:
        for code, msg in ex.map(one, range(lo, hi)):
            if code == 201:
                ok += 1
            else:
                bad += 1
                first = first or "%s %s" % (code, msg)
    print(ok, bad, "%.1f" % (time.time() - t0))
    if first:
        print(first)


def metrics(args):
    keys = {"rounds": 0.0, "late_total": 0.0, "late_now": 0.0, "dur_sum": 0.0, "dur_count": 0.0,
            "registered": 0.0}
    for i in range(0, len(args), 2):
        rq = urllib.request.Request(args[i] + "/metrics",
                                    headers={"Authorization": "Bearer " + tok(args[i + 1])})
        try:
            text = urlopen(rq, 30).read().decode()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("#") or " " not in line:
                continue
            k, v = line.rsplit(" ", 1)
            v = float(v)
            if k.startswith("vigil_verifier_rounds_total{"):
                keys["rounds"] += v
            elif k == "vigil_verifier_late_rounds_total":
                keys["late_total"] += v
            elif k == "vigil_verifier_agents_late":
                keys["late_now"] = max(keys["late_now"], v)
            elif k == "vigil_verifier_round_duration_seconds_sum":
                keys["dur_sum"] += v
            elif k == "vigil_verifier_round_duration_seconds_count":
                keys["dur_count"] += v
            elif k == 'vigil_verifier_agents{state="registered"}':
                keys["registered"] = v
    print(" ".join("%.6g" % keys[k] for k in
                   ("rounds", "late_total", "late_now", "dur_sum", "dur_count", "registered")))


def read_qlog(path):
    per = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1].isdigit():
                per.setdefault(p[0], []).append(int(p[1]))
    return per


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else 0


def gaps(path, t0, t1, interval):
    per = read_qlog(path)
    gs, nq, below = [], 0, 0
    for ts in per.values():
        ts = [t for t in ts if t0 <= t <= t1]
        nq += len(ts)
        g = [b - a for a, b in zip(ts, ts[1:])]
        gs += g
        if any(x < interval / 2 for x in g):
            below += 1
    print(len(per), nq, min(gs) if gs else 0, pct(gs, 0.5), max(gs) if gs else 0, below)


def recovery(path, kill, idsfile):
    per = read_qlog(path)
    ids = [x.strip() for x in open(idsfile) if x.strip()] if idsfile != "-" else list(per)
    dt, missing = [], 0
    for i in ids:
        after = [t for t in per.get(i, []) if t > kill]
        if after:
            dt.append(min(after) - kill)
        else:
            missing += 1
    print(len(ids), max(dt) if dt else 0, pct(dt, 0.5), missing)


def assign(verifier, tokfile, prefix, lo, hi, policy, par=4):
    t = tok(tokfile)
    ok, bad, first = 0, 0, None

    def one(i):
        rq = urllib.request.Request("%s/v1/agents/%s%05d/policy" % (verifier, prefix, i),
                                    data=json.dumps({"policy": policy}).encode(), method="PUT",
                                    headers={"Authorization": "Bearer " + t,
                                             "Content-Type": "application/json"})
        for attempt in range(3):
            try:
                with urlopen(rq, 60) as r:
                    return r.status, ""
            except urllib.error.HTTPError as e:
                return e.code, e.read()[:200].decode(errors="replace")
            except OSError as e:
                if attempt == 2:
                    return 0, str(e)
                time.sleep(0.5)
        return 0, "?"

    t0 = time.time()
    with ThreadPoolExecutor(max_workers=par) as ex:
        for code, msg in ex.map(one, range(lo, hi)):
            if code == 200:
                ok += 1
            else:
                bad += 1
                first = first or "%s %s" % (code, msg)
    print(ok, bad, "%.1f" % (time.time() - t0))
    if first:
        print(first)


def tamperlat(verifier, tokfile, simout, qlog, timeout):
    t = tok(tokfile)
    end = time.time() + timeout
    sig, ids = None, []
    while time.time() < end and sig is None:
        for line in open(simout):
            if "tampering from " in line:
                head, _, rest = line.partition("(wall ms):")
                sig, ids = int(head.split("tampering from ")[1]), rest.split()
        time.sleep(0.05)
    failed = {}

    def state(i):
        rq = urllib.request.Request("%s/v1/agents/%s" % (verifier, i),
                                    headers={"Authorization": "Bearer " + t})
        try:
            return json.loads(urlopen(rq, 30).read()).get("state")
        except (OSError, ValueError):
            return None

    with ThreadPoolExecutor(max_workers=8) as ex:
        while time.time() < end and len(failed) < len(ids):
            todo = [i for i in ids if i not in failed]
            for i, st in zip(todo, ex.map(state, todo)):
                if st == "failed":
                    failed[i] = int(time.time() * 1000)
            time.sleep(0.2)
    time.sleep(1.5)
    first = {}
    for line in open(qlog):
        p = line.split()
        if len(p) == 4 and p[3] == "tampered" and p[0] in failed and p[0] not in first:
            first[p[0]] = int(p[1])
    lat = [failed[i] - first[i] for i in first]
    sigl = [failed[i] - sig for i in failed]
    print(len(ids), pct(lat, 0.5), pct(lat, 0.99), max(lat) if lat else 0, len(ids) - len(failed),
          pct(sigl, 0.5), pct(sigl, 0.99))


def pushlog(path, t0, t1, interval):
    per, codes = {}, {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) != 4 or not p[1].isdigit():
                continue
            ts = int(p[1])
            if p[2] == "200":
                per.setdefault(p[0], []).append(ts)
            if t0 <= ts <= t1:
                codes[p[2]] = codes.get(p[2], 0) + 1
    gaps, above = [], 0
    for ts in per.values():
        ts = [x for x in ts if t0 - interval - 2000 <= x <= t1]
        g = [b - a for a, b in zip(ts, ts[1:])]
        gaps += g
        if any(x > interval + 2000 for x in g):
            above += 1
    judged = codes.get("200", 0)
    agents = sum(1 for ts in per.values() if any(t0 <= x <= t1 for x in ts))
    print(agents, judged, codes.get("409", 0), sum(codes.values()) - judged - codes.get("409", 0),
          above, max(gaps) if gaps else 0)


def children():
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    s = f.read()
                ppid = int(s[s.rindex(")") + 2:].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except (OSError, ValueError):
                pass
    return kids


def procs(pid):
    kids, out, todo = children(), [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    print("\n".join(str(p) for p in out))


def cpu(pids):
    hz = os.sysconf("SC_CLK_TCK")
    tot = 0
    for p in pids:
        try:
            with open("/proc/%s/stat" % p) as f:
                s = f.read()
            x = s[s.rindex(")") + 2:].split()
            tot += sum(int(v) for v in x[11:15])
        except (OSError, ValueError):
            pass
    print("%.2f" % (tot / hz))


def rss(pids):
    tot = 0
    for p in pids:
        try:
            with open("/proc/%s/status" % p) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        tot += int(line.split()[1])
        except OSError:
            pass
    print(tot)


def main(a):
    if a[0] == "register":
        register(a[1], a[2], a[3], a[4], int(a[5]), int(a[6]), a[7], int(a[8]) if len(a) > 8 else 4)
    elif a[0] == "metrics":
        metrics(a[1:])
    elif a[0] == "gaps":
        gaps(a[1], int(a[2]), int(a[3]), int(a[4]))
    elif a[0] == "recovery":
        recovery(a[1], int(a[2]), a[3])
    elif a[0] == "assign":
        assign(a[1], a[2], a[3], int(a[4]), int(a[5]), a[6], int(a[7]) if len(a) > 7 else 4)
    elif a[0] == "tamperlat":
        tamperlat(a[1], a[2], a[3], a[4], float(a[5]))
    elif a[0] == "pushlog":
        pushlog(a[1], int(a[2]), int(a[3]), int(a[4]))
    elif a[0] == "procs":
        procs(int(a[1]))
    elif a[0] == "cpu":
        cpu(a[1:])
    elif a[0] == "rss":
        rss(a[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
