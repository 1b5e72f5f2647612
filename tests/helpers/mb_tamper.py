#!/usr/bin/env python3
"""mb_tamper.py CASE IN OUT - a TCG boot event log (crypto-agile) with one
event changed and that event's digests recomputed in every bank it has, so
that the log stays self-consistent (its replay is what a TPM that booted it
would hold) and only the event itself is wrong. Written for t0520/t0521,
independent of vigil's C parser.

CASE:
  secureboot-off   EV_EFI_VARIABLE_DRIVER_CONFIG SecureBoot: 1 -> 0
  db-changed       EV_EFI_VARIABLE_DRIVER_CONFIG db: one byte of its last
                   certificate flipped
  kernel-unsigned  the third EV_EFI_BOOT_SERVICES_APPLICATION (PCR 4, the
                   kernel after shim and GRUB): another image's authenticode
                   digest (what a kernel not signed by the allowed keys,
                   loaded anyway, measures)
  cmdline          GRUB's PCR 8 "kernel_cmdline: ..." with " init=/bin/sh"
                   appended (digest over the line without its prefix and NUL,
                   as GRUB measures it)
  mok-foreign      shim's PCR 14 EV_IPL "MokList": the digest of another MOK
                   list (a key of the host's own enrolled)
  none             unchanged (re-encoded: must equal the input)
Prints the index of the event changed.
"""
import hashlib
import struct
import sys

ALGS = {0x0004: "sha1", 0x000b: "sha256", 0x000c: "sha384", 0x000d: "sha512"}


def parse(b):
    pcr, typ = struct.unpack_from("<II", b, 0)
    size, = struct.unpack_from("<I", b, 28)
    head = b[:32 + size]
    spec = b[32:32 + size]
    assert spec[:16] == b"Spec ID Event03\0", "not a crypto-agile log"
    n, = struct.unpack_from("<I", spec, 24)
    sizes = {}
    for i in range(n):
        a, s = struct.unpack_from("<HH", spec, 28 + 4 * i)
        sizes[a] = s
    off = len(head)
    evs = []
    while off < len(b):
        pcr, typ, cnt = struct.unpack_from("<III", b, off)
        off += 12
        digs = []
        for _ in range(cnt):
            a, = struct.unpack_from("<H", b, off)
            digs.append([a, b[off + 2:off + 2 + sizes[a]]])
            off += 2 + sizes[a]
        ds, = struct.unpack_from("<I", b, off)
        off += 4
        evs.append({"pcr": pcr, "type": typ, "digests": digs, "data": b[off:off + ds]})
        off += ds
    return head, evs


def encode(head, evs):
    out = bytearray(head)
    for e in evs:
        out += struct.pack("<III", e["pcr"], e["type"], len(e["digests"]))
        for a, d in e["digests"]:
            out += struct.pack("<H", a) + d
        out += struct.pack("<I", len(e["data"])) + e["data"]
    return bytes(out)


def rehash(e, data):
    e["digests"] = [[a, hashlib.new(ALGS[a], data).digest()] for a, _ in e["digests"]]


def var_name(data):
    nl, = struct.unpack_from("<Q", data, 16)
    return data[32:32 + 2 * nl].decode("utf-16-le")


def main():
    case, src, dst = sys.argv[1:4]
    b = open(src, "rb").read()
    head, evs = parse(b)
    # event indices count the header record as event 0 (as vigil and tpm2_eventlog do)
    changed = None
    if case in ("secureboot-off", "db-changed"):
        want = "SecureBoot" if case == "secureboot-off" else "db"
        for i, e in enumerate(evs):
            if e["type"] == 0x80000001 and e["pcr"] == 7 and var_name(e["data"]) == want:
                d = bytearray(e["data"])
                if case == "secureboot-off":
                    assert d[-1] == 1
                    d[-1] = 0
                else:
                    d[-40] ^= 1
                e["data"] = bytes(d)
                rehash(e, e["data"])
                changed = i
                break
    elif case == "kernel-unsigned":
        apps = [i for i, e in enumerate(evs) if e["type"] == 0x80000003 and e["pcr"] == 4]
        i = apps[2]
        e = evs[i]
        e["digests"] = [[a, hashlib.new(ALGS[a], b"vigil t0520: a kernel no allowed key signed").digest()]
                        for a, _ in e["digests"]]
        changed = i
    elif case == "kernel-foreign-key":
        # the certificate that verified GRUB and the kernel (shim's vendor_db authority) is
        # another one: a kernel signed by a key the policy does not allow
        for i, e in enumerate(evs):
            if e["type"] == 0x800000E0 and e["pcr"] == 7 and var_name(e["data"]) == "vendor_db":
                d = bytearray(e["data"])
                d[-1] ^= 1
                e["data"] = bytes(d)
                rehash(e, e["data"])
                changed = i
                break
    elif case == "mok-foreign":
        for i, e in enumerate(evs):
            if e["type"] == 0xd and e["pcr"] == 14 and e["data"].rstrip(b"\0") == b"MokList":
                e["digests"] = [[a, hashlib.new(ALGS[a], b"vigil t0520: a MOK list with another key").digest()]
                                for a, _ in e["digests"]]
                changed = i
                break
    elif case == "cmdline":
        for i, e in enumerate(evs):
            if e["type"] == 0xd and e["pcr"] == 8 and e["data"].startswith(b"kernel_cmdline: "):
                line = e["data"][16:].rstrip(b"\0") + b" init=/bin/sh"
                e["data"] = b"kernel_cmdline: " + line + b"\0"
                rehash(e, line)
                changed = i
                break
    elif case != "none":
        sys.exit("unknown case " + case)
    if case != "none" and changed is None:
        sys.exit("no event to change for " + case)
    out = encode(head, evs)
    if case == "none":
        assert out == b, "re-encoding changed the log"
    open(dst, "wb").write(out)
    print(changed + 1 if changed is not None else -1)


main()
