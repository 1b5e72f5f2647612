#!/usr/bin/python3
"""Record Keylime's measured-boot verdicts (tests/vectors/attest/keylime-mb-verdicts.json).

Not run by the tests (Keylime cannot run in CI): run once, by hand, from
the vigil source tree, with Debian's python3 (bookworm: python3-packaging,
libefivar1, tpm2-tools for tpm2_eventlog) and a Keylime checkout:

  git --git-dir=/work/.mirror/keylime+keylime/repo archive 9b1f6e6 keylime | tar -x -C /tmp/keylime-mb
  PYTHONPATH=/tmp/keylime-mb /usr/bin/python3 tests/vectors/attest/keylime_mb_record.py

It makes Keylime's reference states with its own create_mb_policy.py
(keylime-policy create measured-boot -e LOG -i), two variants of the
secure-boot one (another vendor_db certificate; no vendor_db key, as made
before Keylime knew it), builds the tampered logs
with tests/helpers/mb_tamper.py, and evaluates every case with Keylime's
"example" measured-boot policy (keylime/mba/elchecking), as
python3 -m keylime.mba.elchecking does (without its mba.load_imports(),
which needs a keylime.conf).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from keylime.mba.elchecking import example, policies  # noqa: F401  (registers "example")
from keylime.mba.elparsing import tpm2_tools_elparser
from keylime.policy import create_mb_policy

SRC = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(SRC, "..", "..", ".."))
EL = os.path.join(TOP, "tests", "vectors", "eventlog")
SB = "keylime__binary_bios_measurements-secureboot"
NOSB = "keylime__binary_bios_measurements"
KLDATA = "/work/shared/attest-data/keylime/test/data/create-mb-policy"


def refstate(log, out):
    a = argparse.Namespace(eventlog_file=log, without_secureboot=True, output=out)
    if not create_mb_policy.create_mb_refstate(a):
        sys.exit("create_mb_refstate failed on " + log)


def evaluate(ref, log):
    fail, data = tpm2_tools_elparser.parse_binary_bootlog(open(log, "rb").read())
    if fail or not data:
        return "error", "parse: " + str([e.context for e in fail.events] if fail else "no data")
    why = policies.get_policy("example").evaluate(json.load(open(ref)), data)
    return ("fail", str(why)[:400]) if why else ("pass", "")


def main():
    tmp = tempfile.mkdtemp()
    refs = {"refstate-secureboot": SB, "refstate-nosecureboot": NOSB}
    for name, log in refs.items():
        refstate(os.path.join(EL, log), os.path.join(SRC, "keylime-mb-" + name + ".json"))
    # vendor_db (issue 39): the reference state with another vendor_db certificate
    # (its SignatureData's last byte changed), and one made before vendor_db (the key absent)
    sb = json.load(open(os.path.join(SRC, "keylime-mb-refstate-secureboot.json")))
    other = json.loads(json.dumps(sb))
    d = other["vendor_db"][0]["SignatureData"]
    other["vendor_db"][0]["SignatureData"] = d[:-2] + "%02x" % (int(d[-2:], 16) ^ 1)
    json.dump(other, open(os.path.join(SRC, "keylime-mb-refstate-secureboot-other-vendor-db.json"), "w"))
    old = {k: v for k, v in sb.items() if k != "vendor_db"}
    json.dump(old, open(os.path.join(SRC, "keylime-mb-refstate-secureboot-no-vendor-db.json"), "w"))
    cases = []
    for tamper in ("none", "secureboot-off", "db-changed", "kernel-unsigned", "cmdline",
                   "kernel-foreign-key"):
        out = os.path.join(tmp, tamper)
        ev = subprocess.run([sys.executable, os.path.join(TOP, "tests", "cli", "mb_tamper.py"),
                             tamper, os.path.join(EL, SB), out],
                            check=True, capture_output=True, text=True).stdout.strip()
        cases.append(("secureboot-" + tamper, SB, tamper, int(ev), "refstate-secureboot", out))
    cases.append(("nosecureboot-none", NOSB, "none", -1, "refstate-nosecureboot", os.path.join(EL, NOSB)))
    cases.append(("secureboot-log-nosecureboot-refstate", SB, "none", -1, "refstate-nosecureboot",
                  os.path.join(EL, SB)))
    cases.append(("nosecureboot-log-secureboot-refstate", NOSB, "none", -1, "refstate-secureboot",
                  os.path.join(EL, NOSB)))
    for ref in ("refstate-secureboot-other-vendor-db", "refstate-secureboot-no-vendor-db"):
        cases.append(("secureboot-" + ref.replace("refstate-secureboot-", ""), SB, "none", -1, ref,
                      os.path.join(EL, SB)))
    for f in ("empty", "bogus"):
        cases.append(("log-" + f, "keylime:test/data/create-mb-policy/binary_bios_measurements-" + f,
                      "none", -1, "refstate-secureboot", os.path.join(KLDATA, "binary_bios_measurements-" + f)))
    res = []
    for name, log, tamper, ev, ref, path in cases:
        verdict, reason = evaluate(os.path.join(SRC, "keylime-mb-" + ref + ".json"), path)
        res.append({"case": name, "log": log, "tamper": tamper, "event_changed": ev,
                    "refstate": "keylime-mb-" + ref + ".json", "keylime": verdict, "reason": reason})
        print(name, verdict, reason[:100])
    doc = {
        "keylime_commit": "9b1f6e6a917f86c792bac680ea7d36312d5914a5",
        "keylime_policy": "example (keylime/mba/elchecking/example.py)",
        "refstates_by": "keylime/policy/create_mb_policy.py create_mb_refstate(-e LOG -i)",
        "parser": "tpm2_eventlog (tpm2-tools %s) via keylime/mba/elparsing/tpm2_tools_elparser.py" %
                  subprocess.run(["tpm2_eventlog", "--version"], capture_output=True, text=True).stdout.split("version=")[-1].split()[0],
        "python": sys.version.split()[0],
        "command": "PYTHONPATH=/tmp/keylime-mb /usr/bin/python3 tests/vectors/attest/keylime_mb_record.py",
        "cases": res,
    }
    with open(os.path.join(SRC, "keylime-mb-verdicts.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


main()
