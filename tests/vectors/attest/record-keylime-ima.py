#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Record Keylime's own runtime (IMA) verdicts on the attestation vectors.

Run once, not in CI (Keylime is not installed; its source is run with
Debian's python3 packages):

  git --git-dir=/work/.mirror/keylime+keylime/repo archive 9b1f6e6 keylime test \\
      | tar -x -C /tmp/keylime
  cd tests/vectors/attest && /usr/bin/python3 record-keylime-ima.py /tmp/keylime

It writes keylime-ima-verdicts.json: for every case (a list and a
policy), Keylime's verdict from keylime/ima/ima.py process_measurement_list
(as test/test_ima_verification.py calls it: an AgentAttestState, the
runtime policy dict, ImaKeyrings with the policy's "verification-keys" as
the tenant keyring, no PCR value), and the index of every entry whose
validation failed (its events), counted like the list's entries (every
non-empty line). The policies it derives (Keylime's test dicts written as
files, and the policies Keylime's own `keylime-policy create runtime`
makes from the create-runtime-policy lists are not: see "exclusions")
are written beside it once as keylime-derived__*.json, so vigil judges
the same documents.

psutil (imported by keylime/policy/create_runtime_policy.py for its
--rootfs mount scan, not used here) is not a Debian package installed
here: a stub module stands in for it.
"""
import copy
import json
import os
import sys
import types

KL = sys.argv[1] if len(sys.argv) > 1 else "/tmp/keylime"
sys.path.insert(0, KL)
sys.modules.setdefault("psutil", types.ModuleType("psutil"))

import logging  # noqa: E402

logging.disable(logging.CRITICAL)

from keylime.agentstates import AgentAttestState  # noqa: E402
from keylime.ima import ast, file_signatures, ima  # noqa: E402

COMMIT = "9b1f6e6a917f86c792bac680ea7d36312d5914a5"
HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = "/work/shared/attest-data/keylime/test/data/create-runtime-policy"
KT = "keylime__test_ima_verification__"


def load(name):
    return json.load(open(os.path.join(HERE, name)))


def derived(name, policy):
    """Write a derived policy once (kept as committed), return its file name."""
    fn = f"keylime-derived__{name}.json"
    path = os.path.join(HERE, fn)
    if not os.path.exists(path):
        with open(path, "w") as f:
            json.dump(policy, f, indent=1, sort_keys=True)
            f.write("\n")
    return fn


# ---- failing entries: the index of each Entry whose validation failed ----
_state = {"idx": -1, "failed": {}}
_orig_init = ast.Entry.__init__
_orig_invalid = ast.Entry.invalid


def _init(self, *a, **kw):
    _state["idx"] += 1
    self._vg_idx = _state["idx"]
    try:
        _orig_init(self, *a, **kw)
    except ast.ParserError:
        _state["failed"].setdefault(self._vg_idx, []).append("parser")
        raise


def _invalid(self):
    f = _orig_invalid(self)
    if f:
        _state["failed"].setdefault(self._vg_idx, []).extend(f.get_event_ids())
    return f


ast.Entry.__init__ = _init
ast.Entry.invalid = _invalid


def judge(log, policy_file):
    lines = open(os.path.join(HERE, log) if not log.startswith("/") else log).read().splitlines()
    policy = load(policy_file) if policy_file else None
    if policy is not None and policy.get("payload"):
        policy = ima.deserialize_runtime_policy(json.dumps(policy))
    keyrings = file_signatures.ImaKeyrings()
    if policy is not None:
        keyrings.set_tenant_keyring(
            file_signatures.ImaKeyring.from_string(policy.get("verification-keys") or ""))
    _state["idx"] = -1
    _state["failed"] = {}
    _, failure = ima.process_measurement_list(
        AgentAttestState("1"), lines, copy.deepcopy(policy), ima_keyrings=keyrings)
    events = failure.get_event_ids() if failure else []
    return {
        "verdict": "fail" if failure else "pass",
        "failing_entries": sorted(_state["failed"]),
        "entry_events": {str(k): v for k, v in sorted(_state["failed"].items())},
        "events": events,
    }


cases = []


def case(name, keylime_case, log, policy):
    r = judge(log, policy)
    cases.append({"name": name, "keylime_case": keylime_case, "log": log, "policy": policy, **r})


# ---- test/test_ima_verification.py's data, its dicts written as files ----
TEST, WRONG = load(KT + "RUNTIME_POLICY_TEST.json"), load(KT + "RUNTIME_POLICY_WRONG.json")
EXCL = load(KT + "EXCLUDES.json")
KEYS = open(os.path.join(HERE, KT + "IMA_KEYRING_STRING.json")).read().strip()
EMPTY = ima.empty_policy()


def with_(p, **kw):
    p = copy.deepcopy(p)
    p.update(kw)
    return p


P = {
    "test": KT + "RUNTIME_POLICY_TEST.json",
    "wrong": KT + "RUNTIME_POLICY_WRONG.json",
    "vkeys": KT + "RUNTIME_POLICY_WITH_VERIFICATION_KEYS.json",
    "empty": derived("EMPTY_RUNTIME_POLICY", EMPTY),
    "test_keys": derived("RUNTIME_POLICY_TEST_with_keys", with_(TEST, **{"verification-keys": KEYS})),
    "wrong_keys": derived("RUNTIME_POLICY_WRONG_with_keys", with_(WRONG, **{"verification-keys": KEYS})),
    "empty_keys": derived("EMPTY_RUNTIME_POLICY_with_keys", with_(EMPTY, **{"verification-keys": KEYS})),
    "excl": derived("RUNTIME_POLICY_WITH_EXCLUDES", with_(EMPTY, excludes=EXCL)),
    "excl_keys": derived("RUNTIME_POLICY_WITH_EXCLUDES_with_keys",
                         with_(EMPTY, excludes=EXCL, **{"verification-keys": KEYS})),
    "wrong_excl": derived("RUNTIME_POLICY_WRONG_WITH_EXCLUDES", with_(WRONG, excludes=EXCL)),
}
T = "test/test_ima_verification.py "
M, S, B, K = (KT + x + ".ima" for x in ("MEASUREMENTS", "SIGNATURES", "BAD_SIGNATURES", "KEYRINGS"))
case("measurements-test", T + "test_measurment_verification: RUNTIME_POLICY_TEST", M, P["test"])
case("measurements-empty", T + "test_measurment_verification: EMPTY_RUNTIME_POLICY", M, P["empty"])
case("measurements-wrong", T + "(RUNTIME_POLICY_WRONG on MEASUREMENTS)", M, P["wrong"])
case("measurements-wrong-excludes", T + "test_mixed_verfication: RUNTIME_POLICY_WRONG_WITH_EXCLUDES", M, P["wrong_excl"])
case("measurements-excludes", T + "(RUNTIME_POLICY_WITH_EXCLUDES on MEASUREMENTS)", M, P["excl"])
case("signatures-nokeys-empty", T + "test_signature_verification: empty keyring", S, P["empty"])
case("signatures-vkeys", T + "RUNTIME_POLICY_WITH_VERIFICATION_KEYS (both keys)", S, P["vkeys"])
case("signatures-wrong-keys", T + "test_mixed_verfication: valid signature, wrong hash", S, P["wrong_keys"])
case("signatures-empty-keys", T + "test_mixed_verfication: valid signature, not in allowlist", S, P["empty_keys"])
case("signatures-test-nokeys", T + "test_mixed_verfication: invalid signature, right hash", S, P["test"])
case("signatures-wrong-nokeys", T + "(RUNTIME_POLICY_WRONG, no keys)", S, P["wrong"])
case("signatures-excludes-keys", T + "test_mixed_verfication: excluded, signatures", S, P["excl_keys"])
case("bad-signatures-excludes", T + "test_mixed_verfication: malformed signature, excluded", B, P["excl"])
case("bad-signatures-test", T + "test_mixed_verfication: malformed signature, in allowlist", B, P["test"])
case("bad-signatures-vkeys", T + "(BAD_SIGNATURES with the verification keys)", B, P["vkeys"])
case("keyrings-test", T + "test_ima_buf_verification: KEYRINGS, RUNTIME_POLICY_TEST", K, P["test"])
case("keyrings-wrong", T + "(KEYRINGS, RUNTIME_POLICY_WRONG: no keyrings)", K, P["wrong"])
case("keyrings-empty", T + "(KEYRINGS, EMPTY_RUNTIME_POLICY)", K, P["empty"])
case("keyrings-test-with-keys", T + "(KEYRINGS, RUNTIME_POLICY_TEST with keys)", K, P["test_keys"])

# ---- keys learned from the log (make-learned-keys.py) ----
for p in ("policy", "policy-nokeyring", "policy-wrongdigest", "policy-ignored", "policy-excluded"):
    case(f"learned-keys-{p}", "ima.py _validate_ima_buf + _validate_ima_sig (vectors made by "
         "make-learned-keys.py)", "learned-keys.ima", f"learned-keys-{p}.json")
case("learned-keys-ed25519", "ima.py _validate_ima_buf: a key of an unsupported type (invalid_key)",
     "learned-keys-ed25519.ima", "learned-keys-ed25519-policy.json")
case("learned-keys-sig-first", "ima.py: a key learned verifies only later entries",
     "learned-keys-sig-first.ima", "learned-keys-policy.json")

# ---- the DSSE-wrapped test policy and its payload on the real lists ----
for log in ("rust_ascii_runtime_measurements", "perf_ima_log.txt"):
    case(f"{log}-runtime-policy-test", "test/data/runtime-policy-test.json on a real list", log,
         "runtime-policy-test.json")
    case(f"{log}-runtime-policy-test-signed", "test/data/runtime-policy-test-signed.json "
         "(DSSE, payload unwrapped)", log, "runtime-policy-test-signed.json")
    case(f"{log}-empty", "EMPTY_RUNTIME_POLICY on a real list", log, P["empty"])

# ---- keylime-tests test2: keylime_create_policy outputs on their lists ----
for out in ("output1", "output3", "output4", "output6"):
    for n in ("1", "2"):
        case(f"kt_test2-{n}-{out}", f"keylime-tests functional/keylime_create_policy-static-data/"
             f"test2 {out}.json on ascii_runtime_measurements-{n}",
             f"kt_test2_ascii_runtime_measurements-{n}", f"kt_test2_{out}.json")

# ---- create-runtime-policy: a policy per digest algorithm ----
for alg in ("sha1", "sha256", "sha384", "sha512", "sm3_256", "unknown"):
    log = f"keylime__create-runtime-policy__ima-log-{alg}"
    if not os.path.exists(os.path.join(HERE, log)):
        open(os.path.join(HERE, log), "w").write(open(f"{SHARED}/ima-log-{alg}").read())
    base = f"keylime__create-runtime-policy__policy-{alg}.json"
    if not os.path.exists(os.path.join(HERE, base)):
        open(os.path.join(HERE, base), "w").write(open(f"{SHARED}/policy-{alg}").read())
    case(f"create-runtime-policy-{alg}-base", f"test/data/create-runtime-policy/policy-{alg} "
         f"on ima-log-{alg}", log, base)

doc = {
    "what": "Keylime's runtime (IMA) verdicts on tests/vectors/attest, recorded by "
            "record-keylime-ima.py; compared case by case by tests/unit/test_keylime_verdicts.c",
    "keylime_commit": COMMIT,
    "command": "git --git-dir=/work/.mirror/keylime+keylime/repo archive 9b1f6e6 keylime test | "
               "tar -x -C /tmp/keylime && cd tests/vectors/attest && "
               "/usr/bin/python3 record-keylime-ima.py /tmp/keylime",
    "python": sys.version.split()[0],
    "call": "keylime.ima.ima.process_measurement_list(AgentAttestState('1'), lines, policy, "
            "ima_keyrings=ImaKeyrings() with the policy's verification-keys as tenant keyring)",
    "cases": cases,
    "exclusions": [
        {"what": "policies Keylime's keylime-policy create runtime makes from the "
                 "create-runtime-policy lists",
         "reason": "keylime/policy/create_runtime_policy.py imports keylime.models, which needs "
                   "python3-sqlalchemy (not installed here); the policies keylime_create_policy "
                   "made from lists are covered by the keylime-tests test2 outputs (kt_test2-*)"},
        {"what": "keylime-tests test2 output5.json",
         "reason": "not among the vectors (tests/vectors/attest/SOURCES.md): output4 and output6 "
                   "cover its --keyrings reading"},
        {"what": "rust-keylime's ima_log.txt, invalid_ima_log.txt, empty_ima_log.txt and the "
                 "keylime-policy-commands ima_log.txt",
         "reason": "not among tests/vectors/attest (a 1-entry list, a malformed one, an empty one)"},
        {"what": "measured boot (mb_log, create-mb-policy logs)",
         "reason": "not runtime policies: this file is keylime/ima/ima.py's verdicts only"},
    ],
}
with open(os.path.join(HERE, "keylime-ima-verdicts.json"), "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
print(f"{len(cases)} cases")
