#!/usr/bin/env python3
# imalog_gen.py - random kernel-format measurement lists for the property
# tests of t0202, written independently of vigil from the kernel's rules
# (ima_fs.c ima_measurements_show, ima_crypto.c ima_calc_field_array_hash):
#
#   imalog_gen.py SEED N OUT.bin OUT.pcrs
#
# OUT.bin: N random entries of every template (built-in and custom
# formats, violations included), sha1 template digests; OUT.pcrs: the
# PCR values (sha1 and sha256 banks, 'PCR-NN ALGO:HEX') a kernel with
# per-bank digests would reach.
import hashlib
import random
import struct
import sys

ALGOS = {"sha1": 20, "sha256": 32, "sha384": 48, "sha512": 64, "md5": 16, "sha224": 28}
BUILTIN = {
    "ima": "d|n",
    "ima-ng": "d-ng|n-ng",
    "ima-sig": "d-ng|n-ng|sig",
    "ima-ngv2": "d-ngv2|n-ng",
    "ima-sigv2": "d-ngv2|n-ng|sig",
    "ima-buf": "d-ng|n-ng|buf",
    "ima-modsig": "d-ng|n-ng|sig|d-modsig|modsig",
    "evm-sig": "d-ng|n-ng|evmsig|xattrnames|xattrlengths|xattrvalues|iuid|igid|imode",
}
CUSTOM = ["d-ng|n-ng|sig|iuid|igid", "n-ng|d-ng", "d|n-ng", "d-ngv2|n-ng|buf|imode", "sig", "n"]
NAMECH = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-"


def rstr(r, lo, hi):
    return "".join(r.choice(NAMECH) for _ in range(r.randint(lo, hi))).encode()


def field(r, fid, violation):
    if fid == "d":
        return bytes(20) if violation else r.randbytes(20)
    if fid in ("d-ng", "d-modsig"):
        if fid == "d-modsig" and r.random() < 0.3:
            return b""
        a = r.choice(list(ALGOS))
        return a.encode() + b":\0" + (bytes(ALGOS[a]) if violation else r.randbytes(ALGOS[a]))
    if fid == "d-ngv2":
        a = r.choice(list(ALGOS))
        t = r.choice(["ima", "verity"])
        return (t + ":" + a + ":").encode() + b"\0" + r.randbytes(ALGOS[a])
    if fid in ("n", "n-ng"):
        return rstr(r, 0 if fid == "n-ng" else 1, 60) + b"\0"
    if fid == "xattrnames":
        return b"" if r.random() < 0.3 else b"security.ima|security.selinux\0"
    if fid in ("iuid", "igid"):
        return b"" if r.random() < 0.2 else struct.pack("<I", r.randrange(2**32))
    if fid == "imode":
        return struct.pack("<H", r.randrange(2**16))
    # sig buf modsig evmsig xattrlengths xattrvalues: any bytes, often empty
    return b"" if r.random() < 0.3 else r.randbytes(r.randint(1, 300))


def main():
    seed, n, out, pcrs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    r = random.Random(seed)
    pcr = {"sha1": {}, "sha256": {}}
    blob = bytearray()
    for i in range(n):
        name = r.choice(list(BUILTIN) + CUSTOM)
        fmt = BUILTIN.get(name, name).split("|")
        violation = i > 0 and r.random() < 0.05
        fields = [field(r, f, violation) for f in fmt]
        idx = r.choice([10, 10, 10, 11, 0, 23])
        if name == "ima":
            d, nm = fields[0], fields[1].rstrip(b"\0")
            body = d + struct.pack("<I", len(nm)) + nm
            hashed = d + nm + bytes(256 - len(nm))
        else:
            data = b"".join(struct.pack("<I", len(f)) + f for f in fields)
            body = struct.pack("<I", len(data)) + data
            hashed = data
        if violation:
            td = bytes(20)
            ext = {"sha1": b"\xff" * 20, "sha256": b"\xff" * 32}
        else:
            td = hashlib.sha1(hashed).digest()
            ext = {"sha1": td, "sha256": hashlib.sha256(hashed).digest()}
        blob += struct.pack("<I", idx) + td + struct.pack("<I", len(name)) + name.encode() + body
        for b, h in (("sha1", hashlib.sha1), ("sha256", hashlib.sha256)):
            old = pcr[b].get(idx, bytes(h().digest_size))
            pcr[b][idx] = h(old + ext[b]).digest()
    open(out, "wb").write(blob)
    with open(pcrs, "w") as f:
        for b in ("sha1", "sha256"):
            for idx in sorted(pcr[b]):
                f.write("PCR-%02d %s:%s\n" % (idx, b, pcr[b][idx].hex()))


main()
