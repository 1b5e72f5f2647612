#!/usr/bin/env bash
# tests/fuzz/seed.sh - (re)make the seed corpora of tests/fuzz/corpus/ from
# the evmctl vectors (tests/vectors/evmctl/manifest.tsv, keys/, data/).
# Writes only files named seed-*; regression inputs (crash-*, regress-*)
# found by fuzzing are kept. Deterministic: running it twice changes
# nothing. Usage: bash tests/fuzz/seed.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec python3 - "$here" "$here/../vectors/evmctl" <<'PY'
import csv, hashlib, hmac, os, struct, sys

out, vec = sys.argv[1] + "/corpus", sys.argv[2]
corpora = {}

def seed(corpus, name, data):
    corpora.setdefault(corpus, {})["seed-" + name] = data

rows = list(csv.DictReader(open(vec + "/manifest.tsv"), delimiter="\t"))
cases = {}
for r in rows:
    cases.setdefault(r["case"], {"row": r, "x": {}})["x"][r["xattr"]] = bytes.fromhex(r["value_hex"])

# security.ima, security.evm and signature headers, one seed per distinct value
seen = set()
for c, v in cases.items():
    for name, val in v["x"].items():
        if val in seen:
            continue
        seen.add(val)
        if name == "security.ima":
            seed("ima_xattr", c, val)
        elif name == "security.evm":
            seed("evm_xattr", c, val)
        if val[0] in (3, 5, 6) and (c.split(".")[1] in ("empty", "one") or "lsm" in c):
            seed("sig_v2", c + "." + name.split(".")[1], val)

# forms no vector has: md5 legacy (17, and 21 with zero tail), digest-ng with
# trailing bytes, md4 in 04, sha1 in 04, a sigv3 (06) header, an HMAC
md5 = hashlib.md5(b"").digest()
sha1 = hashlib.sha1(b"").digest()
sha256 = hashlib.sha256(b"").digest()
seed("ima_xattr", "md5-17", b"\x01" + md5)
seed("ima_xattr", "md5-21", b"\x01" + md5 + b"\0" * 4)
seed("ima_xattr", "ng-trailing", b"\x04\x04" + sha256 + b"\xff")
seed("ima_xattr", "ng-md4", b"\x04\x00" + hashlib.new("md4", b"").digest()
     if "md4" in hashlib.algorithms_available else b"\x04\x00" + md5)
seed("ima_xattr", "ng-sha1", b"\x04\x02" + sha1)
seed("ima_xattr", "sigv3", b"\x06\x03\x04\xf5\x32\x73\x0b\x00\x04\x30\x02\x00\x00")
seed("evm_xattr", "hmac-zero", b"\x02" + b"\0" * 20)

# certificates and public keys, PEM and DER, and a PEM bundle
keys = vec + "/keys/"
for k in ("rsa2048", "ecp256", "rsa4096"):
    for suffix in ("cert.pem", "cert.der", "pub.pem"):
        if k == "rsa4096" and suffix != "cert.der":
            continue
        seed("keyring", k + "." + suffix, open(keys + k + "." + suffix, "rb").read())
seed("keyring", "bundle.pem", open(keys + "ecp256.cert.pem", "rb").read() +
     open(keys + "rsa2048.pub.pem", "rb").read())
seed("keyring", "ecp256.key.pem", open(keys + "ecp256.key.pem", "rb").read())
pub = open(keys + "ecp256.pub.pem", "rb").read().decode()
import base64
der = base64.b64decode("".join(l for l in pub.splitlines() if not l.startswith("-----")))
seed("keyring", "ecp256.pub.der", der)

# hex and UUIDs: string, NUL, output capacity byte
for i, v in enumerate(sorted({r["value_hex"] for r in rows if len(r["value_hex"]) < 140})[:6]):
    seed("hex", "value%d" % i, v.encode() + b"\0" + bytes([len(v) // 2]))
seed("hex", "upper", b"DEADbeef0123\0\x06")
seed("hex", "short-cap", b"00112233\0\x03")
seed("hex", "uuid", b"6a1f4e2c-3b5d-4c7e-9f80-112233445566")
seed("hex", "uuid-upper", b"6A1F4E2C-3B5D-4C7E-9F80-112233445566\0\x10")

# whole appraisals: flags | be16 ima | be16 evm | be16 selinux | content,
# metadata pinned as in fuzz_appraise.c (the vectors' fixed metadata)
F_EXEC, F_HMAC_KEY, F_NO_UUID = 1, 2, 16
INO, GEN = 123456, 987654321
UUID = bytes.fromhex("6a1f4e2c3b5d4c7e9f80112233445566")
key = open(keys + "evm-key-plain.bin", "rb").read()

def chunk(b):
    return struct.pack(">H", len(b)) + b

def appraise(name, flags, ima, evm, content, sel=b""):
    seed("appraise", name, bytes([flags]) + chunk(ima) + chunk(evm) + chunk(sel) + content)

data = {f: open(vec + "/data/%s.bin" % f, "rb").read() for f in ("empty", "one", "page")}
for c, v in sorted(cases.items()):
    r, x = v["row"], v["x"]
    f = r["file"][5:-4]
    if f not in data or "lsm" in c or "hmac" in r["kind"]:
        continue
    if f == "page" and c not in ("ima-hash.page.sha256", "evm-portable.page.rsa2048.sha256.imasig"):
        continue
    flags = (F_EXEC if r["mode_octal"] == "100755" else 0) | (F_NO_UUID if "nouuid" in c else 0)
    appraise(c, flags, x["security.ima"], x.get("security.evm", b""), data[f])

# HMACs over the pinned metadata (the kernel's input, key zero-padded to 128)
for f in ("empty", "one"):
    ima = b"\x01" + hashlib.sha1(data[f]).digest()
    for sel, tag in ((b"", ""), (b"system_u:object_r:bin_t:s0\0", ".selinux")):
        for nouuid in (False, True):
            msg = sel + ima + struct.pack("=QIIIH2x", INO, GEN, 0, 0, 0o100644)
            if not nouuid:
                msg += UUID
            mac = hmac.new(key.ljust(128, b"\0"), msg, hashlib.sha1).digest()
            appraise("hmac.%s%s%s" % (f, tag, ".nouuid" if nouuid else ""),
                     F_HMAC_KEY | (F_NO_UUID if nouuid else 0), ima, b"\x02" + mac, data[f], sel)

for corpus, files in corpora.items():
    d = os.path.join(out, corpus)
    os.makedirs(d, exist_ok=True)
    for old in os.listdir(d):
        if old.startswith("seed-") and old not in files:
            os.unlink(os.path.join(d, old))
    for n, b in files.items():
        p = os.path.join(d, n)
        if not os.path.exists(p) or open(p, "rb").read() != b:
            open(p, "wb").write(b)
    print("%-10s %3d seeds, %6d bytes" % (corpus, len(files), sum(map(len, files.values()))))
PY
