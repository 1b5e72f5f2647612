#!/usr/bin/python3
# ear_check.py - an EAR from vigil-verifier checked with an independent
# JOSE implementation (Debian's python3-jwcrypto), for t0525:
#
#   ear_check.py verify PUB.pem ALG JWT [STATUS.json [HISTORY.json [NONCE]]]
#       the JWS verifies with the public key under ALG (and the header says
#       ALG); with STATUS (vigil attest status --json ID), the claims match
#       it: profile, agent id, state, the AR4SI status for that state,
#       failure count, policy id; with HISTORY (status --history --json), the
#       failures listed are the history's newest ones, in order; with NONCE,
#       eat_nonce is it (else absent). Prints the claims (JSON) on success.
#   ear_check.py same JWT1 JWT2 PUB.pem
#       both verify, and their submodules agree on ear.status, the vector,
#       the failure count and every failure's (id, entry, path, digest).
# Exit 0 when all holds; 1 with the reason on stderr.
import json
import sys
import time

from jwcrypto import jwk, jws

TIER = {"trusted": "affirming", "failed": "contraindicated", "registered": "none",
        "unreachable": "none"}


def fail(msg):
    print("ear_check: " + msg, file=sys.stderr)
    sys.exit(1)


def verified(pub, token, alg=None):
    key = jwk.JWK.from_pem(open(pub, "rb").read())
    s = jws.JWS()
    s.deserialize(token.strip())
    hdr_alg = s.jose_header.get("alg")
    if alg and hdr_alg != alg:
        fail("header alg %s, expected %s" % (hdr_alg, alg))
    try:
        s.verify(key, alg=hdr_alg)
    except Exception as e:  # jwcrypto's InvalidJWSSignature and friends
        fail("the signature does not verify: %r" % (e,))
    if s.jose_header.get("typ") != "JWT":
        fail("typ %r" % s.jose_header.get("typ"))
    return json.loads(s.payload)


def only_submod(c):
    subs = c.get("submods")
    if not isinstance(subs, dict) or len(subs) != 1:
        fail("submods: %r" % (subs,))
    return next(iter(subs.items()))


def failures(sub):
    return [(f.get("id"), f.get("entry"), f.get("path"), f.get("digest"))
            for f in sub["vigil.failures"]]


def main(a):
    if a[0] == "verify":
        pub, alg, token = a[1], a[2], open(a[3]).read()
        c = verified(pub, token, alg)
        if c.get("eat_profile") != "tag:github.com,2023:veraison/ear":
            fail("eat_profile %r" % c.get("eat_profile"))
        if not isinstance(c.get("iat"), int) or abs(c["iat"] - time.time()) > 600:
            fail("iat %r" % c.get("iat"))
        vid = c.get("ear.verifier-id", {})
        if vid.get("developer") != "vigil" or not vid.get("build", "").startswith("vigil-verifier"):
            fail("ear.verifier-id %r" % vid)
        name, sub = only_submod(c)
        nonce = a[6] if len(a) > 6 and a[6] else None
        if c.get("eat_nonce") != nonce:
            fail("eat_nonce %r, expected %r" % (c.get("eat_nonce"), nonce))
        if len(a) > 4 and a[4]:
            st = json.load(open(a[4]))
            if name != st["id"] or sub.get("vigil.agent-id") != st["id"]:
                fail("submodule %r / agent id %r, expected %r" % (name, sub.get("vigil.agent-id"),
                                                                 st["id"]))
            if sub.get("vigil.state") != st["state"]:
                fail("vigil.state %r, status says %r" % (sub.get("vigil.state"), st["state"]))
            if sub.get("ear.status") != TIER[st["state"]]:
                fail("ear.status %r for a %s agent" % (sub.get("ear.status"), st["state"]))
            if sub.get("vigil.failure-count") != st["failure_count"]:
                fail("vigil.failure-count %r, status failure_count %r"
                     % (sub.get("vigil.failure-count"), st["failure_count"]))
            if not sub.get("ear.appraisal-policy-id", "").startswith(st["policy"] + "@sha256:"):
                fail("ear.appraisal-policy-id %r" % sub.get("ear.appraisal-policy-id"))
            tv = sub.get("ear.trustworthiness-vector", {})
            if st["state"] == "trusted" and tv != {"instance-identity": 2, "executables": 2}:
                fail("vector %r for a trusted agent" % tv)
            if st["state"] == "failed" and max(tv.values()) < 32:
                fail("vector %r for a failed agent" % tv)
            if st["state"] == "trusted" and sub["vigil.failures"]:
                fail("failures listed for a trusted agent")
        if len(a) > 5 and a[5]:
            h = json.load(open(a[5]))["history"]
            n = len(sub["vigil.failures"])
            want = [(x["failure"], x["entry"] if x["entry"] >= 0 else None, x["path"] or None,
                     x["digest"] or None) for x in h[:n]]
            got = [(i, e, p, d) for (i, e, p, d) in failures(sub)]
            if got != want or n != min(st["failure_count"], 64):
                fail("failures %r, history %r" % (got, want))
            if sub["vigil.failures"][0]["message"] != h[0]["message"]:
                fail("first message %r, history %r" % (sub["vigil.failures"][0]["message"],
                                                      h[0]["message"]))
        print(json.dumps(c, sort_keys=True))
        return
    if a[0] == "same":
        c1 = verified(a[3], open(a[1]).read())
        c2 = verified(a[3], open(a[2]).read())
        s1, s2 = only_submod(c1)[1], only_submod(c2)[1]
        for k in ("ear.status", "ear.trustworthiness-vector", "vigil.failure-count"):
            if s1.get(k) != s2.get(k):
                fail("%s: %r != %r" % (k, s1.get(k), s2.get(k)))
        if failures(s1) != failures(s2):
            fail("failures %r != %r" % (failures(s1), failures(s2)))
        return
    fail("usage")


main(sys.argv[1:])
