#!/usr/bin/env python3
# tests/helpers/eventlog_oracle.py - independent readers of TCG boot event logs
# for t0206 (none shares code with vigil):
#   eventlog_oracle.py tools LOG   tpm2_eventlog's `pcrs:` section as
#                                  "PCR-NN ALGO:HEX" lines (exit 3 if
#                                  tpm2_eventlog fails on LOG)
#   eventlog_oracle.py replay LOG  a small replay in Python (hashlib): the
#                                  Spec ID sizes, EV_NO_ACTION skipped,
#                                  StartupLocality as PCR 0's start value,
#                                  a record without a bank's digest skipped
#                                  in that bank; same output form
#   eventlog_oracle.py count LOG   number of records
import hashlib, re, struct, subprocess, sys

ALGS = {0x0004: "sha1", 0x000B: "sha256", 0x000C: "sha384", 0x000D: "sha512"}


def tools(path):
    p = subprocess.run(["tpm2_eventlog", path], capture_output=True, text=True, errors="replace")
    if p.returncode != 0:
        sys.exit(3)
    out, bank = [], None
    sec = p.stdout.split("\npcrs:\n", 1)
    for line in (sec[1].splitlines() if len(sec) == 2 else []):
        m = re.match(r"^  (\w+):$", line)
        if m:
            bank = m.group(1)
            continue
        m = re.match(r"^\s+(\d+)\s*:\s*0x([0-9a-fA-F]+)$", line)
        if m:
            out.append((bank, int(m.group(1)), m.group(2).lower()))
    return out


def records(b):
    pcr, typ = struct.unpack_from("<II", b, 0)
    size = struct.unpack_from("<I", b, 28)[0]
    agile = typ == 3 and size >= 16 and b[32:48] == b"Spec ID Event03\0"
    sizes = {0x0004: 20}
    yield pcr, typ, {0x0004: b[8:28]}, b[32:32 + size]
    off = 32 + size
    if agile:
        spec = b[32:32 + size]
        n = struct.unpack_from("<I", spec, 24)[0]
        sizes = dict(struct.unpack_from("<HH", spec, 28 + 4 * i) for i in range(n))
    while off < len(b):
        if agile:
            pcr, typ, cnt = struct.unpack_from("<III", b, off)
            off += 12
            dg = {}
            for _ in range(cnt):
                a = struct.unpack_from("<H", b, off)[0]
                dg[a] = b[off + 2:off + 2 + sizes[a]]
                off += 2 + sizes[a]
        else:
            pcr, typ = struct.unpack_from("<II", b, off)
            dg = {0x0004: b[off + 8:off + 28]}
            off += 28
        es = struct.unpack_from("<I", b, off)[0]
        yield pcr, typ, dg, b[off + 4:off + 4 + es]
        off += 4 + es
    yield sizes


def replay(path):
    b = open(path, "rb").read()
    recs = list(records(b))
    sizes = recs.pop()
    out = []
    for alg in sizes:
        if alg not in ALGS:
            continue
        h = ALGS[alg]
        n = hashlib.new(h).digest_size
        pcrs = {}
        for pcr, typ, dg, data in recs:
            if typ == 3:
                if data[:16] == b"StartupLocality\0" and pcr == 0:
                    pcrs[0] = bytes(n - 1) + data[16:17]
                continue
            if alg not in dg:
                continue
            pcrs[pcr] = hashlib.new(h, pcrs.get(pcr, bytes(n)) + dg[alg]).digest()
        out += [(h, k, v.hex()) for k, v in sorted(pcrs.items())]
    return out


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "count":
        print(len(list(records(open(path, "rb").read()))) - 1)
        return
    rows = tools(path) if cmd == "tools" else replay(path)
    for bank, pcr, hx in sorted(rows, key=lambda r: (r[0], r[1])):
        print("PCR-%02d %s:%s" % (pcr, bank, hx))


main()
