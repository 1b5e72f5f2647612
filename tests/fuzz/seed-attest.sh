#!/usr/bin/env bash
# tests/fuzz/seed-attest.sh - (re)make the seed-* files of the attestation
# corpora (attest_quote, attest_ak, refpolicy, http_api) from
# tests/vectors/attest and tests/vectors/imalog, plus Keylime's policies and
# allowlists from /work/shared/attest-data when that directory is there.
# Files named swtpm-* (captured once from vigil-agent on swtpm, see
# tests/fuzz/README.md) and regress-* are kept. Deterministic.
# Usage: bash tests/fuzz/seed-attest.sh [SHARED_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec python3 - "$here/corpus" "$here/../vectors" "${1:-/work/shared/attest-data}" <<'PY'
import base64, json, os, struct, sys

out, vec, shared = sys.argv[1:4]
att = os.path.join(vec, "attest")
corpora = {n: {} for n in ("attest_quote", "attest_ak", "refpolicy", "http_api")}

def rd(*p):
    return open(os.path.join(*p), "rb").read()

def seed(c, name, data):
    corpora[c]["seed-" + name] = data

hw = json.load(open(os.path.join(att, "keylime-perf-tests__hw_quote_pcr0-16.json")))
hq = base64.b64decode(hw["tpms_attest_b64"])
hs = base64.b64decode(hw["tpmt_signature_b64"])
hp = base64.b64decode(hw["pcrs_tpm2tools_serialized_b64"])
hak = base64.b64decode(hw["ak_tpm_b64_TPM2B_PUBLIC"])
kq, ks, kp, kak = (rd(att, f) for f in ("quote.out", "quotesig.out", "quotepcr.out", "ak.pub"))

# attest_quote: mode byte, then the structure
seed("attest_quote", "attest-keylime", b"\0" + kq)
seed("attest_quote", "attest-hw", b"\0" + hq)
seed("attest_quote", "sig-keylime", b"\1" + ks)
seed("attest_quote", "sig-hw", b"\1" + hs)
seed("attest_quote", "sig-ecdsa", b"\1" + bytes.fromhex("0018000b0020") + bytes(range(32)) +
     bytes.fromhex("0020") + bytes(range(32, 64)))
seed("attest_quote", "verify-keylime", b"\2" + struct.pack(">H", len(kq)) + kq + ks)
seed("attest_quote", "verify-hw", b"\2" + struct.pack(">H", len(hq)) + hq + hs)
seed("attest_quote", "pcrs-keylime", b"\3" + kp)
seed("attest_quote", "pcrs-hw", b"\3" + hp)

# attest_ak: a TPM2B_PUBLIC
seed("attest_ak", "keylime", kak)
seed("attest_ak", "hw", hak)

# refpolicy: every policy and allowlist we have
for f in sorted(os.listdir(att)):
    if f.endswith(".json") and "hw_quote" not in f:
        seed("refpolicy", f.replace(".json", ""), rd(att, f))
extra = [
    "keylime-tests/functional/keylime_create_policy-static-data/test4/allowlist-1",
    "keylime-tests/functional/keylime_create_policy-static-data/test3/output3.json",
    "keylime-tests/functional/keylime-policy-commands/allowlist.txt",
    "keylime-tests/functional/keylime-policy-commands/base_policy.json",
    "keylime/test/data/create-runtime-policy/allowlist-sha1",
    "keylime/test/data/create-runtime-policy/allowlist-sha512",
    "keylime/test/data/create-runtime-policy/allowlist-unknown",
    "keylime/test/data/sign-runtime-policy/runtime-policy-bogus.json",
    "keylime/test/data/sign-runtime-policy/runtime-policy-empty.json",
    "keylime/test/data/sign-runtime-policy/runtime-policy.json",
    "keylime/test/data/ima-allowlist-short.txt",
    "keylime/test-data/files/allowlist.json",
]
for f in extra:
    p = os.path.join(shared, f)
    if os.path.exists(p):
        seed("refpolicy", "shared-" + f.split("/")[-2] + "-" + f.split("/")[-1], rd(p))
pem = rd(att, "keylime__test__data__ima_keys__secp256k1.pub.pem").decode()
seed("refpolicy", "vigil-keys", json.dumps({
    "vigil_refpolicy": 1,
    "digests": {"/usr/bin/dd": ["sha256:d33d5d13792292e202dbf69a6f1b07bc8a02f01424db8489ba7bb7d43c0290ef"],
                "/bin/x": ["0" * 40]},
    "excludes": ["^/tmp/", "^/var/(log|cache)/"], "keys": [pem],
    "boot_aggregate": ["sha1:" + "0" * 40], "ima_buf": {".ima": ["sha256:" + "1" * 64]},
    "ignored_keyrings": [".builtin_trusted_keys"], "ignore_violations": True}, indent=1).encode())
seed("refpolicy", "dsse", json.dumps({
    "payloadType": "application/vnd.keylime+json",
    "payload": base64.b64encode(rd(att, "keylime__test_ima_verification__RUNTIME_POLICY_TEST.json")).decode(),
    "signatures": []}).encode())

# http_api: parser byte, then its input
for i, (m, u) in enumerate([(0, "/v1/agents"), (1, "/v1/agents/"), (0, "/v1/agents/host1"),
                            (3, "/v1/agents/host1"), (0, "/v1/agents/host1/history"),
                            (1, "/v1/agents/host1/reactivate"), (2, "/v1/agents/host1/policy"),
                            (2, "/v1/policies/good"), (0, "/v1/policies/a.b-c_d"),
                            (4, "/v1/agents/x/y"), (0, "/v1/agents/../etc")]):
    seed("http_api", "route-%d" % i, b"\0" + bytes([m]) + u.encode())
seed("http_api", "register", b"\1" + b'{"id": "host1", "url": "http://127.0.0.1:9002", "policy": "good"}')
seed("http_api", "register-nopolicy", b"\1" + b'{"id":"h","url":"https://agent.example:443/x","policy":""}')
seed("http_api", "assign", b"\2" + b'{"policy": "good2"}')
seed("http_api", "quote-query", b"\3" + b"00112233445566778899aabbccddeeff00112233\0sha256\0400")
seed("http_api", "quote-query-all", b"\3" + b"0011223344556677\0sha1\0ffffff")
seed("http_api", "log-query", b"\4" + b"1234")
blob = base64.b64encode(bytes(range(200))).decode()
seed("http_api", "activate", b"\5" + json.dumps({"id_object": blob, "enc_secret": blob}).encode())
seed("http_api", "identity", b"\6" + json.dumps({"id": "host1",
     "ek_pub": base64.b64encode(kak).decode(), "ek_cert": "",
     "ak_pub": base64.b64encode(hak).decode()}).encode())
seed("http_api", "proof", b"\7" + json.dumps({"proof": "ab" * 32}).encode())
seed("http_api", "quote-sha256", b"\x08\x01" + json.dumps({
    "attest": base64.b64encode(hq).decode(), "sig": base64.b64encode(hs).decode(), "bank": "sha256",
    "pcrs": {"10": "00" * 32, "0": "ff" * 32}}).encode())
seed("http_api", "quote-sha1", b"\x08\x00" + json.dumps({
    "attest": base64.b64encode(kq).decode(), "sig": base64.b64encode(ks).decode(),
    "pcrs": {"23": "12" * 20}}).encode())
# the first entries of a real binary list (sha1 layout)
b = rd(vec, "imalog", "embrave.binary_runtime_measurements")
off = 0
for _ in range(6):
    nl = struct.unpack_from("<I", b, off + 24)[0]
    dl = struct.unpack_from("<I", b, off + 28 + nl)[0]
    off += 32 + nl + dl
seed("http_api", "log-chunk", b"\x09" + b[:off])

for c, files in corpora.items():
    d = os.path.join(out, c)
    os.makedirs(d, exist_ok=True)
    for old in os.listdir(d):
        if old.startswith("seed-") and old not in files:
            os.unlink(os.path.join(d, old))
    for n, data in files.items():
        p = os.path.join(d, n)
        if not os.path.exists(p) or open(p, "rb").read() != data:
            open(p, "wb").write(data)
    print("%-12s %3d seeds, %6d bytes" % (c, len(files), sum(map(len, files.values()))))
PY
