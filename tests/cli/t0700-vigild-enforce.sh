#!/usr/bin/env bash
# vigild end to end on a test ext4 mount (private namespace, marked alone):
# labeled binaries and scripts run; changed content, mode, owner, a copied
# foreign security.ima, a missing label, an untrusted signature are denied
# at exec and at open, with the reason in the audit record; permissive
# allows and records the same; fix labels then allows; measurements appear
# once per file version and the log replays to the TPM's PCR 10 (swtpm);
# status counters add up; SIGHUP reloads (a bad policy keeps the old).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
vg_tpm_start
K=$VECTORS/evmctl/keys
head -c 32 /dev/urandom >hk
vg_ext4 "$T/fs" 64
F=$T/fs
trap '_rc=$?; vd_stop; bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT

cp /usr/bin/true /usr/bin/cat "$F/"
printf '#!/bin/sh\necho script-ran\n' >"$F/script.sh"; chmod 755 "$F/script.sh"
for b in content mode owner transplant unlabeled untrusted later true2; do cp /usr/bin/true "$F/$b"; done
echo data >"$F/data.txt"; echo data2 >"$F/data2.txt"
"$VIGIL" label -q --hmac-key hk "$F/true" "$F/cat" "$F/script.sh" "$F/content" "$F/mode" \
	"$F/owner" "$F/transplant" "$F/data.txt" "$F/data2.txt" "$F/later" "$F/true2"
"$VIGIL" sign --key "$K/rsa2048.key.pem" "$F/untrusted" && "$VIGIL" evm --hmac-key hk "$F/untrusted"
# the offline attacks
printf 'x' >>"$F/content"
chmod 4755 "$F/mode"
chown 1 "$F/owner"
setfattr -n security.ima -v "$(getfattr -n security.ima -e hex "$F/cat" | sed -n 's/^security.ima=//p')" "$F/transplant"
cat >pol <<P
appraise func=BPRM_CHECK
appraise func=FILE_CHECK mask=MAY_READ
measure func=BPRM_CHECK
measure func=FILE_CHECK mask=MAY_READ
P

check "vigild starts (enforce, TPM)" vd_start --policy pol --watch "$F" --hmac-key hk \
	--keyring "$K/ecp256.cert.pem" --log "$T/log"
check "a labeled binary runs" "$F/true"
check_eq "a labeled script runs" "$("$F/script.sh" 2>&1)" "script-ran"
check_eq "a labeled file opens" "$(cat "$F/data.txt")" "data"
check_eq "a labeled binary reads a labeled file" "$("$F/cat" "$F/data.txt")" "data"
denied() { # NAME REASON: exec is refused (exit 126) and the audit says why
	local rc
	"$F/$1" 2>/dev/null; rc=$?
	check_eq "$1: exec denied" "$rc" 126
	check_eq "$1: audit reason" "$(vd_audit_reason "/$1" deny)" "$2"
	check_rc 1 "$1: open denied too" cat "$F/$1"
}
denied content invalid-hash
denied mode invalid-HMAC
denied owner invalid-HMAC
denied transplant invalid-HMAC
denied unlabeled missing-hash
denied untrusted unknown-key
check_eq "the audit record names the rule" \
	"$(python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; r=[x for x in r if x["path"].endswith("/content") and x["event"]=="exec"][-1]; print(r["rule"], r["pid"]>0, r["exe"], r["uid"], r["ino"]>0)' "$T/audit")" \
	"appraise func=BPRM_CHECK True /usr/bin/bash 0 True"
# a program named by whoever made it: not UTF-8, with a terminal escape.
# Its denial is still a valid UTF-8 JSON line (read strictly, as a SIEM's
# ingest may), the name in vigil's escaped form (common/json_text.h)
odd="$F/odd$(printf '\377\033')[2J"
cp /usr/bin/true "$odd"
check_rc 126 "an unlabeled program whose name is not UTF-8: denied" "$odd"
check_eq "... its audit line is valid UTF-8 JSON, the name escaped" \
	"$(python3 -c 'import json,sys; r=[json.loads(l.decode()) for l in open(sys.argv[1],"rb").read().splitlines()]; print([x["path"].rsplit("/",1)[1] for x in r if "/odd" in x["path"]][-1])' "$T/audit")" \
	'odd\xff\x1b[2J'
rm -f "$odd"
# the same from an unprivileged user, who picks the name, writes the file
# and runs it: denied, the audit line names the user and stays valid UTF-8,
# and the measurement list's record of it reads back as valid JSON too
mkdir "$F/pub" && chmod 1777 "$F/pub"
check_rc 126 "an unprivileged user's program named with invalid UTF-8: denied" \
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	sh -c 'cp /usr/bin/true "$1" && exec "$1"' sh "$F/pub/nb$(printf '\376\033')]0;x"
check_eq "... its audit line: valid UTF-8 JSON, the user and the name escaped" \
	"$(python3 -c 'import json,sys; r=[json.loads(l.decode()) for l in open(sys.argv[1],"rb").read().splitlines()]; x=[x for x in r if "/pub/nb" in x["path"]][-1]; print(x["uid"], x["reason"], x["path"].rsplit("/",1)[1])' "$T/audit")" \
	'65534 missing-hash nb\xfe\x1b]0;x'
check_eq "... the measurement list's JSON is valid UTF-8, the name escaped" \
	"$("$VIGIL" log show --format json "$T/log" | python3 -c 'import json,sys; d=json.loads(sys.stdin.buffer.read().decode()); print([f["value"] for e in d for f in e["fields"] if f["id"] == "n-ng" and "/pub/nb" in f["value"]][-1].rsplit("/",1)[1])')" \
	'nb\xfe\x1b]0;x'

# the second exec of an unchanged file costs no hashing (a kernel ignore mark or a cache hit)
hashed() { "$VIGIL" status --control "$T/ctl" --json | python3 -c 'import json,sys; c=json.load(sys.stdin)["counters"]; print(c["hashed_bytes"], c["ignore_marks"] > 0)'; }
before=$(hashed)
"$F/true"; "$F/true"; cat "$F/data.txt" >/dev/null
check_eq "exec and open of unchanged files again: nothing hashed" "$(hashed)" "$before"
check "ignore marks are in use" grep -q ' True$' <<<"$before"
# verdicts cached as kernel ignore marks are dropped on chmod / setxattr (FAN_ATTRIB)
check "a file run once is allowed (and cached)" "$F/true2"
chmod 4755 "$F/true2"; sleep 0.2
check_rc 126 "chmod after caching: denied at the next exec" "$F/true2"
chmod 0755 "$F/true2"; sleep 0.2
check "chmod back: allowed again" "$F/true2"
setfattr -n security.ima -v 0x0401 "$F/true2"; sleep 0.2
check_rc 126 "setxattr after caching: denied" "$F/true2"
# a changed file is appraised again (and now fails)
printf 'y' >>"$F/data2.txt"
check_rc 1 "a file changed while vigild runs is denied at the next open" cat "$F/data2.txt"

# measurements: once per version, replay = TPM PCR 10
"$F/true"
n_true=$("$VIGIL" log show "$T/log" | grep -c " $F/true\$")
check_eq "true measured once, however often it ran" "$n_true" 1
js=$("$VIGIL" status --control "$T/ctl" --json)
check "status: counters add up (events = allowed + denied + own)" python3 -c '
import json,sys
c=json.loads(sys.argv[1])["counters"]
assert c["events"]==c["allowed"]+c["denied"], c
assert c["denied"]>=12 and c["denied_by_reason"]["invalid-HMAC"]>=6, c' "$js"
check "status: human output" "$VIGIL" status --control "$T/ctl"

# reload: a bad policy is refused and the old one stays; a good one applies
cp pol pol.good
echo 'appraise func=NOPE' >pol
kill -HUP "$VD_PID"; sleep 0.5
check "a bad policy on SIGHUP is refused" grep -q 'policy reload refused, the old policy stays: .*pol:1' "$T/vigild.err"
check_rc 126 "the old policy still denies" "$F/content"
echo 'measure func=BPRM_CHECK' >pol
kill -HUP "$VD_PID"; sleep 0.5
check "a good policy is loaded on SIGHUP" grep -q 'policy reloaded (1 rules' "$T/vigild.err"
check "the new policy (measure only) allows the tampered binary" "$F/content"
check "vigild stops on SIGTERM, exit 0" vd_stop
check "the log replays to the TPM's PCR 10" "$VIGIL" log replay --tpm "$T/log"
check_eq "the tampered binary's new version was measured" \
	"$("$VIGIL" log show "$T/log" | grep -c " $F/content\$")" 1

# permissive: allowed, recorded as would-deny
cp pol.good pol
check "vigild starts (permissive, software PCRs)" vd_start --policy pol --watch "$F" --hmac-key hk \
	--mode permissive --log "$T/log2" --no-tpm
check "permissive: a tampered binary runs" "$F/mode"
check_eq "permissive: recorded as would-deny" "$(vd_audit_reason /mode would-deny)" invalid-HMAC
check "permissive: a file without label opens" cat "$F/unlabeled"
check_eq "permissive: status says so" "$("$VIGIL" status --control "$T/ctl" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["mode"])')" permissive
# switch to enforce at run time
"$VIGIL" status --control "$T/ctl" --mode enforce >/dev/null
check_rc 126 "after --mode enforce the same binary is denied" "$F/mode"
vd_stop

# fix: a missing hash is written from current content, then allowed; signatures are never overwritten
cp /usr/bin/true "$F/fresh"
check "vigild starts (fix)" vd_start --policy pol --watch "$F" --hmac-key hk --mode fix
check "fix: an unlabeled binary runs" "$F/fresh"
check "fix: and now has security.ima" getfattr -n security.ima "$F/fresh"
check_eq "fix: recorded" "$(vd_audit_reason /fresh fixed)" label-written
sig_before=$(xhex "$F/untrusted" security.ima)
"$F/untrusted" 2>/dev/null
check_eq "fix: a signature is not overwritten" "$(xhex "$F/untrusted" security.ima)" "$sig_before"
vd_stop
check "after fix mode the file appraises" "$VIGIL" appraise --hmac-key hk "$F/fresh"

# bad invocations
check_rc 2 "no policy" "$VIGILD" --watch "$F"
check_rc 2 "no --watch" "$VIGILD" --policy pol
echo 'appraise func=BOGUS' >bad.pol
check_rc 2 "a bad policy at start" "$VIGILD" --policy bad.pol --watch "$F"
"$VIGILD" --policy bad.pol --watch "$F" 2>err
check "... with file:line:col" grep -q 'bad.pol:1:' err
check_rc 2 "a bad mode" "$VIGILD" --policy pol --watch "$F" --mode lax
check_rc 2 "vigil status without vigild" "$VIGIL" status --control "$T/nonexistent"
