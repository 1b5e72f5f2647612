#!/usr/bin/env python3
# bench/mklog.py N OUT PCRS_PREFIX - a kernel-format ima-ng list of N
# entries (sha256 file digests, /usr-like paths, sha1 template digests)
# and the PCR-10 values it gives, as evmctl --pcrs files
# PCRS_PREFIX.sha1 / PCRS_PREFIX.sha256 (all 24 PCRs, others zero).
import hashlib
import struct
import sys

n, out, pfx = int(sys.argv[1]), sys.argv[2], sys.argv[3]
p1, p256 = bytes(20), bytes(32)
dirs = ["/usr/bin/", "/usr/lib/x86_64-linux-gnu/", "/usr/lib/python3/dist-packages/pkg/", "/usr/sbin/"]
with open(out, "wb") as f:
    buf = []
    for i in range(n):
        name = ("boot_aggregate" if i == 0 else "%s%s-%07d.so.1" % (dirs[i % 4], "libexample", i)).encode() + b"\0"
        dng = b"sha256:\0" + hashlib.sha256(b"%d" % i).digest()
        data = struct.pack("<I", len(dng)) + dng + struct.pack("<I", len(name)) + name
        t1 = hashlib.sha1(data).digest()
        p1 = hashlib.sha1(p1 + t1).digest()
        p256 = hashlib.sha256(p256 + hashlib.sha256(data).digest()).digest()
        buf.append(struct.pack("<I", 10) + t1 + struct.pack("<I", 6) + b"ima-ng" + struct.pack("<I", len(data)) + data)
        if len(buf) == 65536:
            f.write(b"".join(buf))
            buf = []
    f.write(b"".join(buf))
for bank, v, size in (("sha1", p1, 20), ("sha256", p256, 32)):
    with open("%s.%s" % (pfx, bank), "w") as g:
        for i in range(24):
            g.write("PCR-%02d %s\n" % (i, v.hex() if i == 10 else "00" * size))
