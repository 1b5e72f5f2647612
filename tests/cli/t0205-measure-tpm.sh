#!/usr/bin/env bash
# vigil measure --tpm against swtpm: the log vigil writes replays to the
# TPM's PCR 10 in both banks (tpm2_pcrread), its boot_aggregate equals
# evmctl ima_boot_aggregate over the TPM's PCRs 0-9, evmctl accepts the
# log with the TPM's values, `log replay --tpm` matches; a PCR 10
# extended behind the writer's back is refused; SIGKILLed writers
# ($VG_CRASH_ITER_TPM times, default 40) always restart to a log that
# replays to the TPM with every acknowledged entry present.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
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
