#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Compare vigil's verdicts with Keylime's recorded ones (t0524).

usage: keylime-verdicts.py VIGIL VECTORS/attest

For every case of keylime-ima-verdicts.json (Keylime's keylime/ima/ima.py
at the commit it names, recorded by record-keylime-ima.py), runs
`vigil attest policy check --policy POLICY --json LOG` and compares:

  - the verdict (pass / fail);
  - the failing entries: vigil's failure_count is the number of entries
    Keylime failed, and the entries vigil lists (at most 64, in log
    order) are Keylime's first ones.

Deliberately different, said where it applies (docs/attest-states.md):
an entry that does not parse or whose template hash is not its content's
(log.malformed, log.entry_digest; Keylime's "parser" and "ima_hash")
ends vigil's judgement: nothing after it can be trusted, where Keylime
goes on judging the rest. There the comparison is up to and including
that entry: the same entries fail before it, and Keylime fails it too.

Prints one TAP line per case naming the Keylime case it comes from, then
"# agreement: N of M".
"""
import json
import subprocess
import sys

vigil, vec = sys.argv[1], sys.argv[2]
doc = json.load(open(f"{vec}/keylime-ima-verdicts.json"))
ENDS = {"log.malformed", "log.entry_digest"}
n = agree = exact = 0
for c in doc["cases"]:
    n += 1
    r = subprocess.run([vigil, "attest", "policy", "check", "--policy", f"{vec}/{c['policy']}",
                        "--json", f"{vec}/{c['log']}"], capture_output=True, text=True)
    why = ""
    try:
        v = json.loads(r.stdout)
    except ValueError:
        v = {"result": f"no JSON (exit {r.returncode}): {r.stderr.strip()[:200]}"}
    kl = c["failing_entries"]
    note = ""
    if v["result"] == "ok":
        ok = c["verdict"] == "pass" and r.returncode == 0
        why = f"vigil passes, Keylime fails entries {kl[:8]}" if not ok else ""
    elif v["result"] == "fail":
        listed = [f.get("entry", -1) for f in v["failures"]]
        ends = v["failures"][-1]["failure"] in ENDS
        if ends:
            k = listed[-1]
            want = [e for e in kl if e <= k]
            ok = c["verdict"] == "fail" and listed == want and r.returncode == 1
            note = (f" (deliberately different: vigil's {v['failures'][-1]['failure']} at entry {k} "
                    f"ends its judgement; Keylime's {len(kl)} failing entries compared up to it)")
            why = f"vigil {listed}, Keylime up to {k}: {want}" if not ok else ""
        else:
            ok = (c["verdict"] == "fail" and v["failure_count"] == len(kl) and
                  listed == kl[:len(listed)] and r.returncode == 1)
            why = (f"vigil {v['failure_count']} failures {listed[:8]} "
                   f"({[f['failure'] for f in v['failures'][:4]]}), "
                   f"Keylime {len(kl)} {kl[:8]} ({c['events'][:4]})") if not ok else ""
    else:
        ok = False
        why = f"vigil: {v.get('result')} {v.get('message', '')}"
    agree += ok
    # the same failing entries, each one, without the rule above
    same = (v["result"] == "ok" and c["verdict"] == "pass") or (
        v["result"] == "fail" and v["failure_count"] == len(kl) and
        [f.get("entry", -1) for f in v["failures"]] == kl[:len(v["failures"])])
    exact += ok and same
    print(f"{'ok' if ok else 'not ok'} {n} - {c['name']}: Keylime {c['verdict']} "
          f"({len(kl)} failing), from {c['keylime_case']}{note}")
    if why:
        print(f"#   {why}")
print(f"1..{n}")
print(f"# agreement: {agree} of {n} (Keylime {doc['keylime_commit'][:7]}); the same failing "
      f"entries, every one, in {exact} of {n} (the others: an entry that ends vigil's judgement)")
for x in doc.get("exclusions", []):
    print(f"# excluded: {x['what']}: {x['reason']}")
