#!/usr/bin/env bash
# vigild fails early and says why (issue 15, item 4): each bad setting
# exits 2 with a message naming the file and the problem, never reports
# ready (no READY=1 on a test notify socket) and leaves no control socket,
# lock or temporary file behind. A second vigild never takes the first
# one's socket; an appraiser that cannot start stops vigild (exit 2 before
# ready, 3 after); `vigil status --reload` waits for the result and exits 2
# with the parse error. A good start sends READY=1 with a STATUS, a reload
# RELOADING=1 then READY=1, a stop STOPPING=1. The defaults (no --control,
# no --log, no TPM device) run on the test's throwaway /run.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
. "$SRCDIR/tests/lib-notify.sh"
vg_init
K=$VECTORS/evmctl/keys
trap '_rc=$?; vd_stop; nt_stop; (exit $_rc); vg_cleanup' EXIT
vg_ext4 "$T/fs" 32
F=$T/fs
cp /usr/bin/true "$F/true"
head -c 32 /dev/urandom >hk
"$VIGIL" label -q --hmac-key hk "$F/true"
printf 'appraise func=BPRM_CHECK\nmeasure func=BPRM_CHECK\n' >pol
nt_start

never_ready() { sleep 0.2; ! nt_ready; }
no_leftovers() { # [log]: and no measurement list either
	local left
	left=$(ls -A "$T" | grep -E "^ctl|vigil-tmp|\.pid\$${1:+|^log}")
	left+=$(find "$T" -xdev -name '*.vigil-tmp*' 2>/dev/null)
	[ -z "$left" ] || { echo "left behind: $left"; return 1; }
}
# refused WHAT TEXT ARGS...: vigild exits 2 saying TEXT, never ready, leaves nothing
# (no control socket or lock, no measurement list, no temporary file)
refused() {
	local what=$1 text=$2 rc
	shift 2
	nt_clear
	rm -f "$T"/log "$T"/log.*	# a started vigild's list: a refused one must make none
	timeout -s KILL 60 "${VD_BIN:-$VIGILD}" --control "$T/ctl" --foreground "$@" 2>err
	rc=$?
	check_eq "$what: exit 2" "$rc" 2
	check "$what: says '$text'" grep -qF -- "$text" err
	check "$what: never ready" never_ready
	check "$what: leaves no socket, lock, list or temporary file" no_leftovers log
	[ "$rc" = 2 ] && grep -qF -- "$text" err || sed 's/^/#   /' err
}
base=(--policy pol --watch "$F" --hmac-key hk --no-tpm --log "$T/log")

# ---- files named and refused ----
refused "missing --config" "$T/nope.conf" "${base[@]}" --config "$T/nope.conf"
echo garbage >bad.pem
refused "bad keyring" "keyring $T/bad.pem:" "${base[@]}" --keyring "$T/bad.pem"
: >empty.pem
refused "a keyring with no key" "keyring $T/empty.pem" "${base[@]}" --keyring "$T/empty.pem"
printf abc >short.key
refused "bad HMAC key" "HMAC key $T/short.key: a raw EVM HMAC key is 32 to 128 bytes, this file has 3" --policy pol --watch "$F" \
	--hmac-key "$T/short.key" --no-tpm
echo 'appraise func=BOGUS' >bad.pol
refused "bad policy at start" "policy refused: $T/bad.pol:1:" --policy "$T/bad.pol" --watch "$F" --no-tpm
printf 'appraise func=BPRM_CHECK trust=archive\n' >trust.pol
refused "trust=archive, the trust database missing" "trust database $T/nodb.db" --policy "$T/trust.pol" \
	--watch "$F" --hmac-key hk --no-tpm --trust-db "$T/nodb.db"
echo garbage >notdb.db
refused "trust=archive, not a trust database" "trust database $T/notdb.db" --policy "$T/trust.pol" \
	--watch "$F" --hmac-key hk --no-tpm --trust-db "$T/notdb.db"
mkdir ro; mount -t tmpfs -o ro,size=1m vigil-ro "$T/ro"
refused "unwritable log directory" "measurement log $T/ro/log: its directory $T/ro is on a read-only filesystem" \
	--policy pol --watch "$F" --hmac-key hk --no-tpm --log "$T/ro/log"
refused "missing log directory" "measurement log $T/none/log: its directory $T/none does not exist" \
	--policy pol --watch "$F" --hmac-key hk --no-tpm --log "$T/none/log"
refused "unwritable audit directory" "audit file $T/ro/audit: its directory $T/ro is on a read-only filesystem" \
	"${base[@]}" --audit "$T/ro/audit"
# a link where vigild (root) writes: whoever may write in that directory
# could have it append to any file
echo precious >precious; ln -s "$T/precious" lnk-audit; ln -s "$T/precious" lnk-log
refused "an audit file that is a symbolic link" "audit file $T/lnk-audit: a symbolic link" \
	"${base[@]}" --audit "$T/lnk-audit"
refused "a measurement log that is a symbolic link" "measurement log $T/lnk-log: a symbolic link" \
	--policy pol --watch "$F" --hmac-key hk --no-tpm --log "$T/lnk-log"
check_eq "... the file they point to untouched" "$(cat precious)" "precious"

# ---- passphrase keys: --passphrase-file, $VIGIL_PASSPHRASE_FILE, the systemd credential ----
echo 'correct horse' >pass; echo 'wrong horse' >wrong
"$VIGIL" key create --passphrase --passphrase-file pass --scrypt-logn 10 -o p.key >/dev/null
refused "passphrase key without a passphrase" "HMAC key $T/p.key is a passphrase key: give its passphrase" \
	--policy pol --watch "$F" --hmac-key "$T/p.key" --no-tpm
refused "wrong passphrase" "HMAC key $T/p.key: wrong passphrase" \
	--policy pol --watch "$F" --hmac-key "$T/p.key" --no-tpm --passphrase-file wrong
VIGIL_PASSPHRASE_FILE=$T/wrong refused "wrong passphrase (\$VIGIL_PASSPHRASE_FILE)" \
	"HMAC key $T/p.key: wrong passphrase" --policy pol --watch "$F" --hmac-key "$T/p.key" --no-tpm
refused "a missing passphrase file" "passphrase file $T/nopass" \
	--policy pol --watch "$F" --hmac-key "$T/p.key" --no-tpm --passphrase-file "$T/nopass"
"$VIGIL" label -q --hmac-key p.key --passphrase-file pass "$F/true"
check "a passphrase key with --passphrase-file: vigild starts" vd_start --policy pol --watch "$F" \
	--hmac-key "$T/p.key" --passphrase-file pass --no-tpm --log "$T/log"
check "... and the label made with that key passes" "$F/true"
vd_stop
mkdir cred; cp pass cred/vigil-passphrase
CREDENTIALS_DIRECTORY=$T/cred check "... with the systemd credential vigil-passphrase" vd_start \
	--policy pol --watch "$F" --hmac-key "$T/p.key" --no-tpm --log "$T/log"
check "... passes" "$F/true"
vd_stop
check "the passphrase is never in an appraiser's command line" \
	sh -c "! grep -rqF 'correct horse' $T/vigild.err"
"$VIGIL" label -q --hmac-key hk "$F/true"

# ---- a TPM that was asked for must answer ----
refused "no TPM (--tcti)" "TPM swtpm:host=127.0.0.1,port=1 (--tcti, tpm.tcti or \$VIGIL_TCTI) cannot be reached" \
	--policy pol --watch "$F" --hmac-key hk --log "$T/log" --tcti swtpm:host=127.0.0.1,port=1
VIGIL_TCTI=swtpm:host=127.0.0.1,port=1 refused "no TPM (\$VIGIL_TCTI)" "TPM swtpm:host=127.0.0.1,port=1" \
	--policy pol --watch "$F" --hmac-key hk --log "$T/log"

# ---- a signature rule without any trusted key ----
printf 'measure func=BPRM_CHECK\nappraise func=BPRM_CHECK appraise_type=imasig\n' >sig.pol
refused "empty keyring with imasig rules" "$T/sig.pol:2:1: this rule needs a signature (appraise_type=imasig) but no trusted key is loaded" \
	--policy "$T/sig.pol" --watch "$F" --hmac-key hk --no-tpm
check "... --allow-empty-keyring starts it" vd_start --policy "$T/sig.pol" --watch "$F" --hmac-key hk \
	--no-tpm --log "$T/log" --allow-empty-keyring
vd_stop
check "... a keyring starts it" vd_start --policy "$T/sig.pol" --watch "$F" --hmac-key hk \
	--no-tpm --log "$T/log" --keyring "$K/ecp256.cert.pem"
vd_stop

# ---- readiness, reload results, a second vigild ----
nt_clear
check "vigild starts" vd_start "${base[@]}"
check "READY=1 with a STATUS" grep -q 'READY=1 | STATUS=enforce: 2 policy rules, 1 marks, 2 appraisers' "$NT_LOG"
check_eq "the lock file holds its pid" "$(cat "$T/ctl.lock")" "$VD_PID"
nt_clear
timeout 60 "$VIGILD" --control "$T/ctl" --foreground "${base[@]}" 2>err; rc=$?
check_eq "a second vigild: exit 2" "$rc" 2
check "... naming the socket and the first one's pid" \
	grep -qF "control socket $T/ctl: another vigild (pid $VD_PID) runs with it" err
check "... never ready" never_ready
check "... the first one's socket is still there and answers" "$VIGIL" status --control "$T/ctl"
check "... so is its lock" test -f "$T/ctl.lock"
cp pol pol.good
echo 'appraise func=BOGUS' >pol
nt_clear
out=$("$VIGIL" status --control "$T/ctl" --reload 2>&1); rc=$?
check_eq "status --reload of a bad policy: exit 2" "$rc" 2
check "... printing the parse error" grep -qF "vigild refused: pol:1:" <<<"$out"
check "... the daemon logged it too" grep -q 'policy reload refused, the old policy stays' "$T/vigild.err"
check "... RELOADING=1 then READY=1" sh -c "grep -q RELOADING=1 '$NT_LOG' && tail -1 '$NT_LOG' | grep -q READY=1"
printf 'measure func=BPRM_CHECK\nappraise func=BPRM_CHECK appraise_type=imasig\n' >pol
out=$("$VIGIL" status --control "$T/ctl" --reload 2>&1); rc=$?
check_eq "status --reload of an imasig policy without keyring: exit 2" "$rc" 2
check "... naming file, line and the missing key" grep -qF "vigild refused: pol:2:1: this rule needs a signature" <<<"$out"
cp pol.good pol
out=$("$VIGIL" status --control "$T/ctl" --reload 2>&1); rc=$?
check_eq "status --reload of a good policy: exit 0" "$rc" 0
check "... applied, with its rules" grep -q '"reload":"applied","policy_rules":2' <<<"$out"
kill -HUP "$VD_PID"; sleep 0.5
check "SIGHUP still reloads" sh -c "grep -c 'policy reloaded (2 rules' '$T/vigild.err' | grep -qx 2"
nt_clear
check "vigild stops on SIGTERM, exit 0" vd_stop
check "STOPPING=1" nt_has STOPPING=1
check "... its socket and lock are gone" no_leftovers
# a dead vigild's socket is replaced; something else at the path is not
/usr/bin/python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/ctl"
check "a dead vigild's socket is replaced" vd_start "${base[@]}"
vd_stop
echo precious >"$T/ctl"
nt_clear
timeout -s KILL 60 "$VIGILD" --control "$T/ctl" --foreground "${base[@]}" 2>err; rc=$?
check_eq "a file at the control socket's path: exit 2" "$rc" 2
check "... saying so" grep -qF "control socket $T/ctl: exists and is not a socket: not replacing it" err
check "... never ready" never_ready
check_eq "... that file is untouched" "$(cat "$T/ctl" 2>/dev/null)" precious
rm -f "$T/ctl"
check "... and nothing else is left" no_leftovers

# ---- appraisers that cannot start ----
touch failflag
VIGILD_TEST_APPRAISER_FAIL=$T/failflag VD_BIN=$VIGILD_TEST refused "an appraiser that cannot start" \
	"appraiser 0 could not start 5 times in a row (last: exited with status 2" "${base[@]}"
check "... its own reason is shown" grep -q 'vigild appraiser: test hook: failing at start' err
rm failflag
nt_clear
VIGILD_TEST_APPRAISER_FAIL=$T/failflag VIGILD=$VIGILD_TEST check "vigild-test starts" vd_start "${base[@]}" -j 1
touch failflag
kill -KILL "$(pgrep -P "$VD_PID" | head -1)"
for _ in $(seq 100); do kill -0 "$VD_TIMEOUT" 2>/dev/null || break; sleep 0.1; done
vd_stop; rc=$?
check_eq "appraisers dying at start after ready: vigild stops, exit 3" "$rc" 3
check "... saying why" grep -q 'FATAL: appraisers died before they could serve 5 times in a row' "$T/vigild.err"
check "... not 70 times a second for ever: 6 appraisers in all" \
	test "$(grep -c 'test hook: failing at start' "$T/vigild.err")" -le 6
check "... STOPPING=1" nt_has STOPPING=1
check "... its socket and lock are gone" no_leftovers
rm failflag

# ---- the defaults: /run/vigil (a tmpfs in this test's namespace) ----
if [ -e /dev/tpmrm0 ]; then
	echo "# /dev/tpmrm0 exists: the software-bank default is not tried here"
else
	nt_clear
	vd_host_gaps
	timeout -s KILL 60 "$VIGILD" --policy pol --watch "$F" --hmac-key hk --foreground "${VD_GAP_ARGS[@]}" 2>err &
	tpid=$!
	for _ in $(seq 100); do grep -q '^vigild: ready' err && break; sleep 0.05; done
	check "no --control, no --log, no TPM device: vigild starts" grep -q '^vigild: ready' err
	check "... saying plainly that the list is not attestable" \
		grep -qF "software bank (/run/vigil/binary_runtime_measurements.pcrs): the measurement list /run/vigil/binary_runtime_measurements is NOT attestable" err
	check "... READY=1 says so too" grep -q 'READY=1.*software PCR bank, not attestable' "$NT_LOG"
	check "... vigil status finds it at /run/vigil/vigild.sock" "$VIGIL" status
	"$F/true"
	check "... and it measures into /run/vigil/binary_runtime_measurements" \
		sh -c "'$VIGIL' log show /run/vigil/binary_runtime_measurements | grep -q '$F/true'"
	kill -TERM "$(pgrep -P $tpid | head -1)"; wait $tpid
	check "... its socket and lock are gone" sh -c '! ls /run/vigil/vigild.sock* 2>/dev/null'
fi
