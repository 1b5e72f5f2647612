#!/usr/bin/env bash
# vigild's measurement writer and a full disk (issue 19 item 7): while the
# filesystem holding the log is full, binaries that policy says to measure
# are denied (measurement-failed), again and again; once space returns,
# without a restart, the next one is measured and allowed, and the log
# still replays exactly to the PCRs: the software bank beside it (the
# bank's own sync is what fails first on a full tmpfs) and the TPM (there
# the log append itself fails). Before, the writer stayed broken until
# vigild restarted. The log lives on the test's own small tmpfs.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
vg_tpm_start
head -c 32 /dev/urandom >hk
vg_ext4 "$T/fs" 32
F=$T/fs
trap '_rc=$?; vd_stop; bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
for i in $(seq 0 99); do cp /usr/bin/true "$F/t$i"; printf '%d' "$i" >>"$F/t$i"; done
"$VIGIL" label -q --hmac-key hk "$F"/t*
printf 'measure func=BPRM_CHECK\n' >pol
fill() { # fill the filesystem at $1 (the test's own file $1/fill)
	dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null
	dd if=/dev/zero of="$1/fill2" bs=1 count=100000 2>/dev/null
	true
}
inlog() { "$VIGIL" log show "$1" | grep -c "$F/$2\$"; }

# 1. software bank (--no-tpm): the log and LOG.pcrs on a 64 KiB tmpfs
mkdir small; mount -t tmpfs -o size=64k small small
L=$T/small/log
check "vigild starts (software PCRs, log on a 64 KiB tmpfs)" vd_start --policy pol --watch "$F" \
	--hmac-key hk --log "$L" --no-tpm
check "a binary runs and is measured" "$F/t0"
fill "$T/small"
i=1
while "$F/t$i" 2>/dev/null && [ $i -lt 40 ]; do i=$((i + 1)); done
check "disk full: a binary is denied ($i binaries in)" test $i -lt 40
check_eq "... audited as measurement-failed" "$(vd_audit_reason "/t$i" deny)" measurement-failed
check_rc 126 "... and denied again while the disk stays full" "$F/t$i"
check_rc 126 "... as is another one" "$F/t$((i + 1))"
check "... vigild says why" grep -q "measurement of .*t$i failed" "$T/vigild.err"
rm -f "$T/small/fill" "$T/small/fill2"
check "space back, no restart: the denied binary runs" "$F/t$i"
check "... it is in the log" test "$(inlog "$L" "t$i")" -ge 1
check "... vigild says the writer recovered" grep -q "measurement log $L recovered" "$T/vigild.err"
check "... so does the next one" "$F/t$((i + 2))"
check_eq "... measured once" "$(inlog "$L" "t$((i + 2))")" 1
check "... while vigild runs, the log replays exactly to the software bank" \
	"$VIGIL" log replay --pcrs "$L.pcrs" "$L"
check "vigild stops cleanly" vd_stop
check "the log replays exactly to the software bank" "$VIGIL" log replay --pcrs "$L.pcrs" "$L"
check "no temporary file left beside the bank" test -z "$(ls -A "$T/small" | grep vigil-tmp)"

# 2. the TPM: the log on a 16 KiB tmpfs, the append itself fails when full
mkdir small2; mount -t tmpfs -o size=16k small2 small2
L2=$T/small2/log
check "vigild starts (TPM, log on a 16 KiB tmpfs)" vd_start --policy pol --watch "$F" \
	--hmac-key hk --log "$L2"
fill "$T/small2"
j=50
while "$F/t$j" 2>/dev/null && [ $j -lt 99 ]; do j=$((j + 1)); done
check "disk full: a binary is denied ($((j - 50)) ran first)" test $j -lt 99
check_eq "... audited as measurement-failed" "$(vd_audit_reason "/t$j" deny)" measurement-failed
check_rc 126 "... and denied again" "$F/t$j"
size=$(stat -c %s "$L2")
rm -f "$T/small2/fill" "$T/small2/fill2"
check "space back, no restart: the denied binary runs" "$F/t$j"
check_eq "... measured once (the failed appends left nothing)" "$(inlog "$L2" "t$j")" 1
check "... the log grew from $size bytes" test "$(stat -c %s "$L2")" -gt "$size"
check "vigild stops cleanly" vd_stop
check "the log replays exactly to the TPM's PCR 10" "$VIGIL" log replay --tpm "$L2"
