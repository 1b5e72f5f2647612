#!/usr/bin/env bash
# vigil measure --tpm against swtpm: the log vigil writes replays to the
# TPM's PCR 10 in both banks (tpm2_pcrread), its boot_aggregate equals
# evmctl ima_boot_aggregate over the TPM's PCRs 0-9, evmctl accepts the
# log with the TPM's values, `log replay --tpm` matches; a PCR 10
# extended behind the writer's back is refused; SIGKILLed writers
# ($VG_CRASH_ITER_TPM times, default 40) always restart to a log that
# replays to the TPM with every acknowledged entry present. After a TPM
# reset (a reboot) the previous boot's list at the same path is refused,
# not replayed into the fresh PCR 10: by the resetCount recorded beside it
# (LOG.boot), by its boot_aggregate, or, with neither, because the PCRs
# have seen none of it; a fresh path, or the list moved aside, starts anew.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
. "$SRCDIR/tests/lib-vigild.sh"	# the appraiser user
VIGILD=${VIGILD:-$(dirname "$VIGIL")/../daemon/vigild}
vg_init
vg_tpm_start
run() { OUT=$("$@" 2>&1); RC=$?; }
tpmpcr() { # BANK PCR -> lowercase hex
	tpm2_pcrread "$1:$2" | sed -n "s/^ *$2 *: 0x//p" | tr A-F a-f
}
evm_pcrs() { # BANK -> evmctl --pcrs file of PCRs 0-23
	for i in $(seq 0 23); do printf 'PCR-%02d %s\n' "$i" "$(tpmpcr "$1" "$i")"; done
}
vg_ext4 "$T/fs" 64
mkdir d
for i in 1 2 3; do head -c $((i * 777)) /dev/urandom >"d/f$i"; done
# boot measurements in PCRs 0-9 first, so the boot_aggregate is not trivial
for p in 0 4 7 8 9; do
	tpm2_pcrextend "$p:sha1=$(printf "b$p" | sha1sum | cut -c1-40),sha256=$(printf "b$p" | sha256sum | cut -c1-64)"
done
L=$T/fs/log

run "$VIGIL" measure --tpm --log "$L" d/f1 d/f2 d/f3
check_eq "measure --tpm: exit 0" "$RC" 0
check "... no software bank was made" test ! -e "$L.pcrs"
"$VIGIL" log replay "$L" >replay.txt
check_eq "replay = TPM PCR 10 sha1" "$(sed -n 's/^PCR-10 sha1://p' replay.txt)" "$(tpmpcr sha1 10)"
check_eq "replay = TPM PCR 10 sha256" "$(sed -n 's/^PCR-10 sha256://p' replay.txt)" "$(tpmpcr sha256 10)"
check "log replay --tpm matches" "$VIGIL" log replay --tpm "$L"
evm_pcrs sha1 >p1; evm_pcrs sha256 >p256
ba=$(evmctl ima_boot_aggregate --pcrs sha256,p256 | sed -n 's/^sha256:/sha256:/p')
check_eq "boot_aggregate = evmctl ima_boot_aggregate over the TPM's PCRs 0-9" \
	"$("$VIGIL" log show "$L" | head -1 | cut -d' ' -f4)" "$ba"
run evmctl ima_measurement --pcrs sha1,p1 --pcrs sha256,p256 "$L"
check "evmctl ima_measurement accepts the log with the TPM's PCRs" \
	test $RC = 0 -a -n "$(grep 'Matched per TPM bank' <<<"$OUT")"

tpm2_pcrextend "10:sha1=$(printf x | sha1sum | cut -c1-40),sha256=$(printf x | sha256sum | cut -c1-64)"
cp "$L" before
run "$VIGIL" measure --tpm --log "$L" d/f1
check "PCR 10 extended behind the writer's back: refused (exit 2)" \
	test $RC = 2 -a -n "$(grep 'match no prefix of the log' <<<"$OUT")"
check "... the log is untouched" cmp "$L" before
check_rc 1 "... and log replay --tpm says mismatch" "$VIGIL" log replay --tpm "$L"

# issue 19 item 7: the previous boot's list at the same path after a TPM reset
boot_pcrs() { # extend PCRs 0-9 as a boot would (same values every boot)
	for p in 0 4 7 8 9; do
		tpm2_pcrextend "$p:sha1=$(printf "b$p" | sha1sum | cut -c1-40),sha256=$(printf "b$p" | sha256sum | cut -c1-64)"
	done
}
resetcount() { tpm2_readclock | sed -n 's/^ *reset_count: *//p'; }
zeros=$(printf '%064d' 0)
vg_tpm_reset >/dev/null; boot_pcrs
L2=$T/fs/log2
rc1=$(resetcount)
run "$VIGIL" measure --tpm --log "$L2" d/f1 d/f2
check_eq "boot 1: measure --tpm on a new list: exit 0" "$RC" 0
check_eq "... its boot is recorded beside it (LOG.boot: resetCount)" \
	"$(sed -n 's/^resetCount //p' "$L2.boot")" "$rc1"
cp "$L2" l2.before
vg_tpm_reset >/dev/null; boot_pcrs
rc2=$(resetcount)
check "boot 2: the TPM's resetCount moved ($rc1 -> $rc2), the boot PCRs are the same" test "$rc1" != "$rc2"
run "$VIGIL" measure --tpm --log "$L2" d/f3
check_eq "the earlier boot's list at the same path is refused (exit 2)" "$RC" 2
check "... naming the list, the boot record and both resetCounts" \
	grep -q "$L2: the list belongs to an earlier boot: it was started at the TPM's resetCount $rc1 ($L2.boot), the TPM is at resetCount $rc2 now; move the list and its boot record aside" <<<"$OUT"
check "... the list is untouched" cmp "$L2" l2.before
check_eq "... nothing was replayed into the fresh PCR 10" "$(tpmpcr sha256 10)" "$zeros"
check "... and it was not renamed or deleted: still there with its record" test -s "$L2" -a -s "$L2.boot"
run "$VIGIL" measure --tpm --log "$T/fs/log3" d/f1
check_eq "a fresh path in this boot works" "$RC" 0
check "... and replays to the TPM" "$VIGIL" log replay --tpm "$T/fs/log3"
# without a boot record (a list of an older vigil), after a reset:
mv "$L2.boot" l2.boot.saved
vg_tpm_reset >/dev/null	# no boot PCRs this time: another boot_aggregate
run "$VIGIL" measure --tpm --log "$L2" d/f3
check "no record, another boot_aggregate: refused naming it (exit 2)" \
	test $RC = 2 -a -n "$(grep "$L2: the list belongs to an earlier boot: its boot_aggregate sha256:[0-9a-f]* is not this boot's" <<<"$OUT")"
check_eq "... nothing replayed into PCR 10" "$(tpmpcr sha256 10)" "$zeros"
vg_tpm_reset >/dev/null; boot_pcrs
run "$VIGIL" measure --tpm --log "$L2" d/f3
check "no record, the same boot_aggregate, PCR 10 at its reset value: refused (exit 2)" \
	test $RC = 2 -a -n "$(grep "$L2: the list belongs to an earlier boot: the TPM's PCRs have seen none of its 3 entries" <<<"$OUT")"
check_eq "... nothing replayed into PCR 10" "$(tpmpcr sha256 10)" "$zeros"
check "... the list is untouched" cmp "$L2" l2.before
# vigild refuses it too (before marking anything)
printf 'measure func=BPRM_CHECK\n' >pol
head -c 32 /dev/urandom >hk
mv l2.boot.saved "$L2.boot"
run timeout 60 "$VIGILD" --foreground --control "$T/ctl" --audit "$T/audit" --policy pol \
	--watch "$T/fs" --hmac-key hk --log "$L2"
check "vigild with the earlier boot's list: exits 2, naming it" \
	test $RC = 2 -a -n "$(grep "measurement log $L2: the list belongs to an earlier boot" <<<"$OUT")"
check "... the list is untouched" cmp "$L2" l2.before
mv "$L2" "$L2.old"; mv "$L2.boot" "$L2.boot.old"
run "$VIGIL" measure --tpm --log "$L2" d/f3
check_eq "moved aside by the operator: a new list starts at the path" "$RC" 0
check "... and replays to the TPM" "$VIGIL" log replay --tpm "$L2"
check_eq "... recorded at this boot's resetCount" "$(sed -n 's/^resetCount //p' "$L2.boot")" "$(resetcount)"

# a TPM Restart (Shutdown(STATE), Startup(CLEAR): PCRs reset, resetCount kept)
rc3=$(resetcount)
tpm2_shutdown; swtpm_ioctl --unix "$TPMDIR/sock.ctrl" -i >/dev/null; tpm2_startup -c; boot_pcrs
check_eq "TPM Restart: the resetCount is kept" "$(resetcount)" "$rc3"
cp "$L2" l2.before
run "$VIGIL" measure --tpm --log "$L2" d/f1
check "... the list (record matching) is refused: its PCRs were reset (exit 2)" \
	test $RC = 2 -a -n "$(grep "$L2: the list belongs to an earlier boot: the TPM's PCRs have seen none of its 2 entries" <<<"$OUT")"
check "... untouched" cmp "$L2" l2.before
L4=$T/fs/log4
run "$VIGIL" measure --tpm --log "$L4" d/f1
check_eq "a new list after the restart" "$RC" 0
tpm2_pcrextend "9:sha1=$(printf late | sha1sum | cut -c1-40),sha256=$(printf late | sha256sum | cut -c1-64)"
run "$VIGIL" measure --tpm --log "$L4" d/f2
check_eq "PCR 9 extended after the list began: still this boot's list (its record says so)" "$RC" 0
check "... and it replays to the TPM" "$VIGIL" log replay --tpm "$L4"

# crash loop against the TPM (fresh PCR 10: reboot the TPM, new log)
vg_tpm_reset >/dev/null
rm -f "$L"
N=${VG_CRASH_ITER_TPM:-40}
bad=0 missing=0 acked=0 recovered=0
for i in $(seq 1 "$N"); do
	files=()
	for j in $(seq 1 $((RANDOM % 10 + 1))); do
		f=$T/d/c.$i.$j; head -c $((RANDOM % 2000)) /dev/urandom >"$f"; files+=("$f")
	done
	"$VIGIL" measure --tpm --log "$L" --batch $((RANDOM % 4 + 1)) "${files[@]}" >ack 2>/dev/null &
	pid=$!
	sleep "0.0$(printf '%02d' $((RANDOM % 80)))"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	if ! out=$("$VIGIL" measure --tpm --log "$L" 2>&1); then
		bad=$((bad + 1)); echo "# iteration $i: $out"; break
	fi
	grep -q recovered <<<"$out" && recovered=$((recovered + 1))
	"$VIGIL" log replay --tpm "$L" >/dev/null 2>&1 || { bad=$((bad + 1)); echo "# iteration $i: replay != TPM"; }
	if [ -s ack ]; then
		acked=$((acked + $(wc -l <ack)))
		hits=$("$VIGIL" log show "$L" | awk '{print $4 "  " $5}' | grep -c -F -x -f ack)
		[ "$hits" -ge "$(wc -l <ack)" ] || missing=$((missing + 1))
	fi
done
echo "# $N kills against swtpm, $acked acknowledged, $recovered restarts repaired something"
check_eq "$N SIGKILLed writers: every restart succeeds and replays to the TPM" "$bad" 0
check_eq "... no acknowledged entry is missing" "$missing" 0
"$VIGIL" log replay "$L" >replay.txt
check_eq "final log: replay = TPM PCR 10 sha256" "$(sed -n 's/^PCR-10 sha256://p' replay.txt)" "$(tpmpcr sha256 10)"
