#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Make the learned-keys vectors (run once; outputs committed, not run in CI).

An EC P-256 key and a self-signed certificate with a Subject Key
Identifier; an ascii IMA list with an ima-buf entry of the ".ima" keyring
carrying the certificate (DER), then ima-sig entries signed with the key
(signature v2, keyid = the SKID's last 4 bytes, as the kernel and Keylime
find it), and the same entries in the other order; Keylime runtime
policies that allow the keyring's buffer or not. Template hashes are the
kernel's (sha1 over the length-prefixed fields), so the lists replay.

usage: make-learned-keys.py OUTDIR
"""
import datetime
import hashlib
import json
import struct
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils
from cryptography.x509.oid import NameOID

out = sys.argv[1]


def once(fn):
    """Files already made are kept (the recorded verdicts name their digests)."""
    import os
    return not os.path.exists(f"{out}/{fn}")


key = ec.generate_private_key(ec.SECP256R1())
name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "vigil learned-keys test")])
ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
now = datetime.datetime(2026, 1, 1)
cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(1)
        .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(ski, critical=False).sign(key, hashes.SHA256()))
der = cert.public_bytes(serialization.Encoding.DER)
keyid = ski.digest[-4:]


def field(b):
    return struct.pack("<I", len(b)) + b


def dng(d):
    return b"sha256:\0" + d


def line(tmpl, d, name, last):
    data = field(dng(d)) + field(name.encode() + b"\0") + field(last)
    th = hashlib.sha1(data).hexdigest()
    return f"10 {th} {tmpl} sha256:{d.hex()} {name} {last.hex()}\n"


def sig_entry(path, content):
    d = hashlib.sha256(content).digest()
    s = key.sign(d, ec.ECDSA(utils.Prehashed(hashes.SHA256())))
    blob = b"\x03\x02\x04" + keyid + struct.pack(">H", len(s)) + s
    return line("ima-sig", d, path, blob)


# a keyring entry whose key cannot verify file signatures (Ed25519): Keylime's invalid_key
if once("learned-keys-ed25519.ima"):
    from cryptography.hazmat.primitives.asymmetric import ed25519
    ek = ed25519.Ed25519PrivateKey.generate()
    ec_ = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
           .public_key(ek.public_key()).serial_number(2)
           .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
           .sign(ek, None))
    edder = ec_.public_bytes(serialization.Encoding.DER)
    open(f"{out}/learned-keys-ed25519.ima", "w").write(
        line("ima-buf", hashlib.sha256(edder).digest(), ".ima", edder))
    json.dump({"meta": {"version": 1, "generator": 0}, "release": 0, "digests": {},
               "excludes": [], "keyrings": {".ima": [hashlib.sha256(edder).hexdigest()]},
               "ima": {"ignored_keyrings": [], "log_hash_alg": "sha1", "dm_policy": None},
               "ima-buf": {}, "verification-keys": ""},
              open(f"{out}/learned-keys-ed25519-policy.json", "w"), indent=1)
if not once("learned-keys.ima"):
    sys.exit(0)
buf = line("ima-buf", hashlib.sha256(der).digest(), ".ima", der)
sigs = [sig_entry("/usr/bin/signed-one", b"one\n"), sig_entry("/usr/bin/signed-two", b"two\n")]
open(f"{out}/learned-keys.ima", "w").write(buf + "".join(sigs))
open(f"{out}/learned-keys-sig-first.ima", "w").write(sigs[0] + buf + sigs[1])
open(f"{out}/learned-keys-cert.der", "wb").write(der)


def policy(keyrings, ignored=(), excludes=()):
    return {
        "meta": {"version": 1, "generator": 0},
        "release": 0,
        "digests": {},
        "excludes": list(excludes),
        "keyrings": keyrings,
        "ima": {"ignored_keyrings": list(ignored), "log_hash_alg": "sha1", "dm_policy": None},
        "ima-buf": {},
        "verification-keys": "",
    }


kd = hashlib.sha256(der).hexdigest()
for fn, p in [("learned-keys-policy.json", policy({".ima": [kd]})),
              ("learned-keys-policy-nokeyring.json", policy({})),
              ("learned-keys-policy-wrongdigest.json", policy({".ima": ["00" * 32]})),
              ("learned-keys-policy-ignored.json", policy({".ima": [kd]}, ignored=[".ima"])),
              ("learned-keys-policy-excluded.json", policy({}, excludes=[r"\.ima"]))]:
    json.dump(p, open(f"{out}/{fn}", "w"), indent=1)
    open(f"{out}/{fn}", "a").write("\n")
