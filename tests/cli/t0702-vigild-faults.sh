#!/usr/bin/env bash
# vigild faults: the TPM gone mid-run (swtpm killed), the disk holding the
# log full, the log's filesystem made read-only, the policy replaced by
# garbage on reload. Each ends in a clear error and a safe state: nothing
# runs unmeasured that policy says to measure (denied, audited as
# measurement-failed), vigild keeps answering, acknowledged log entries
# are not lost, and the old policy stays.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
vg_tpm_start
head -c 32 /dev/urandom >hk
vg_ext4 "$T/fs" 64
F=$T/fs
trap '_rc=$?; vd_stop; bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
for i in $(seq 0 59); do cp /usr/bin/true "$F/t$i"; printf '%d' "$i" >>"$F/t$i"; done
"$VIGIL" label -q --hmac-key hk "$F"/t*
printf 'measure func=BPRM_CHECK\nappraise func=BPRM_CHECK\n' >pol

# 1. the TPM disappears
check "vigild starts with the TPM" vd_start --policy pol --watch "$F" --hmac-key hk --log "$T/log"
check "a binary runs and is measured" "$F/t0"
bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1
check_rc 126 "TPM gone: a new binary is denied (it cannot be measured)" "$F/t1"
check_eq "... audited as measurement-failed" "$(vd_audit_reason /t1 deny)" measurement-failed
check "... vigild says why" grep -q 'measurement of .*t1 failed' "$T/vigild.err"
check "... and keeps answering" "$VIGIL" status --control "$T/ctl"
check "... the binary measured before still runs" "$F/t0"
check "vigild stops cleanly" vd_stop
check_eq "the log keeps the acknowledged entry" "$("$VIGIL" log show "$T/log" | grep -c '/t0$')" 1

# 2. the disk holding the log fills up
mkdir small; mount -t tmpfs -o size=12k small small
check "vigild starts (software PCRs, log on a 12 KiB tmpfs)" vd_start --policy pol --watch "$F" \
	--hmac-key hk --log "$T/small/log" --no-tpm
ran=0 denied=0
for i in $(seq 2 59); do
	if "$F/t$i" 2>/dev/null; then ran=$((ran + 1)); else denied=$((denied + 1)); fi
done
check "disk full: some binaries ran before it filled ($ran)" test $ran -gt 0
check "disk full: the rest were denied ($denied)" test $denied -gt 0
check_eq "... audited as measurement-failed" "$(vd_audit_reason /t59 deny)" measurement-failed
check "... vigild keeps answering" "$VIGIL" status --control "$T/ctl"
check "vigild stops cleanly" vd_stop
inlog=$("$VIGIL" log show "$T/small/log" | grep -c "$F/t")
check "every binary that ran is in the log: nothing acknowledged was lost ($inlog >= $ran)" \
	test "$inlog" -ge "$ran" -a "$inlog" -le $((ran + 1))
check "the software PCRs are the replay of the log (or of all but its unacknowledged last entry)" \
	"$VIGIL" log replay --allow-prefix --pcrs "$T/small/log.pcrs" "$T/small/log"

# 3. the log file made read-only (immutable) while vigild writes it
vg_ext4 "$T/lg" 16
check "vigild starts (log on ext4)" vd_start --policy pol --watch "$F" --hmac-key hk \
	--log "$T/lg/log" --no-tpm
check "a binary runs" "$F/t2"
chattr +i "$T/lg/log"
check_rc 126 "read-only log: a new binary is denied" "$F/t3"
check_eq "... audited as measurement-failed" "$(vd_audit_reason /t3 deny)" measurement-failed

# 4. the policy replaced by garbage
cp pol pol.good
head -c 4096 /dev/urandom >pol
kill -HUP "$VD_PID"; sleep 0.5
check "garbage policy on reload: refused" grep -q 'policy reload refused, the old policy stays' "$T/vigild.err"
check_rc 126 "... the old policy still applies (measure: still denied)" "$F/t4"
check "vigild stops cleanly" vd_stop
check "vigild stops cleanly" vd_stop
check_rc 2 "an immutable log: vigild refuses to start" "$VIGILD" --policy pol.good --watch "$F" --log "$T/lg/log" --no-tpm
"$VIGILD" --policy pol.good --watch "$F" --log "$T/lg/log" --no-tpm 2>err
check "... naming the log and the problem" grep -q "$T/lg/log.*not permitted" err
chattr -i "$T/lg/log"
