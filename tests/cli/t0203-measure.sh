#!/usr/bin/env bash
# vigil measure: a log vigil writes is a kernel list (evmctl
# ima_measurement --pcrs accepts it in both banks, --verify-sig checks its
# ima-sig entries) that replays to its software PCR bank; reopening
# recovers a torn last entry cut at every byte, a zero-filled tail, and
# entries logged but not extended; a damaged log, a bank that matches no
# prefix of the log, or a second writer are refused and nothing changes.
. "$SRCDIR/tests/lib.sh"
vg_init
K=$VECTORS/evmctl/keys
run() { OUT=$("$@" 2>&1); RC=$?; }
evmpcrs() { # bank file -> evmctl --pcrs file for bank $2
	sed -n "s/^\(PCR-[0-9]*\) $2:/\1 /p" "$1"
}
flip() { python3 -c 'import sys; f=open(sys.argv[1],"r+b"); o=int(sys.argv[2]); f.seek(o); b=f.read(1); f.seek(o); f.write(bytes([b[0]^1]))' "$1" "$2"; }
mkdir d
for i in 1 2 3 4 5; do head -c $((i * 1000)) /dev/urandom >"d/f$i"; done
printf 'spaced' >"d/with space"

run "$VIGIL" measure --log log d/f1 d/f2 "d/with space"
check_eq "measure three files: exit 0" "$RC" 0
check "... a new log says its software bank is not attestable" grep -q "not attestable" <<<"$OUT"
check "... the bank file says so too" grep -q "NOT ATTESTABLE" log.pcrs
check_eq "... one acknowledgement line per file" "$(grep -c '^sha256:' <<<"$OUT")" 3
check_eq "... with the file's sha256" "$(grep ' d/f2$' <<<"$OUT" | cut -d' ' -f1)" "sha256:$(sha256sum d/f2 | cut -d' ' -f1)"
"$VIGIL" log show log >log.txt
check_eq "log: boot_aggregate (zeros: no TPM) + 3 entries" "$(wc -l <log.txt)" 4
check "... first entry is the boot_aggregate" \
	grep -q "^10 [0-9a-f]\{40\} ima-ng sha256:$(printf '0%.0s' $(seq 64)) boot_aggregate$" <(head -1 log.txt)
check "... names are absolute, spaces stored as '_'" grep -q " $T/d/with_space$" log.txt
check "replay equals the software bank" "$VIGIL" log replay --pcrs log.pcrs log
evmpcrs log.pcrs sha1 >p1; evmpcrs log.pcrs sha256 >p256
run evmctl ima_measurement --pcrs sha1,p1 --pcrs sha256,p256 log
check "evmctl ima_measurement --pcrs accepts the vigil log in both banks" \
	test $RC = 0 -a -n "$(grep 'Matched per TPM bank calculated digest(s).' <<<"$OUT")"

# ima-sig: a signed file's security.ima goes into the log; evmctl verifies it
cp d/f3 signed
"$VIGIL" sign --key "$K/rsa2048.key.pem" signed
run "$VIGIL" measure --log log --sig signed d/f4
check_eq "measure --sig: exit 0" "$RC" 0
"$VIGIL" log show log >log.txt
check "... ima-sig entry carrying security.ima" grep -q " ima-sig sha256:[0-9a-f]* $T/signed $(xhex signed security.ima)$" log.txt
check "... an unsigned file gets an empty sig field" grep -q " ima-sig sha256:[0-9a-f]* $T/d/f4 $" log.txt
evmpcrs log.pcrs sha1 >p1; evmpcrs log.pcrs sha256 >p256
run evmctl -v ima_measurement --verify-sig --key "$K/rsa2048.cert.der" --pcrs sha1,p1 --pcrs sha256,p256 log
check "evmctl --verify-sig: signature verified and PCRs matched" \
	test $RC = 0 -a -n "$(grep 'verification is OK' <<<"$OUT")" -a -n "$(grep 'Matched per TPM' <<<"$OUT")"
check "reopened log still replays to the bank" "$VIGIL" log replay --pcrs log.pcrs log
check "--pcr 11 and --algo sha512" "$VIGIL" measure --log log --pcr 11 --algo sha512 d/f5
check "... replay covers PCR 10 and 11" "$VIGIL" log replay --pcrs log.pcrs log
check_eq "... PCR 11 replayed" "$("$VIGIL" log replay log | grep -c '^PCR-11 ')" 2

# one writer at a time
flock log sleep 3 &
sleep 0.5
run "$VIGIL" measure --log log d/f1
check "a second writer is refused (exit 2)" test $RC = 2 -a -n "$(grep 'another writer' <<<"$OUT")"
wait

# --- recovery ---
cp log log0; cp log.pcrs pcrs0
"$VIGIL" measure --log log d/f5 >/dev/null 2>&1
cp log log1
s0=$(stat -c %s log0); s1=$(stat -c %s log1)
bad=0
for cut in $(seq 1 $((s1 - s0 - 1))); do
	head -c $((s0 + cut)) log1 >log; cp pcrs0 log.pcrs
	out=$("$VIGIL" measure --log log 2>&1) || { bad=1; echo "# cut $cut: $out"; }
	grep -q "removed a torn last entry ($cut bytes)" <<<"$out" || bad=1
	cmp -s log log0 || bad=1
	"$VIGIL" log replay --pcrs log.pcrs log >/dev/null 2>&1 || bad=1
done
check_eq "torn last entry cut at each of its $((s1 - s0 - 1)) inner bytes: truncated, replay matches" "$bad" 0
cp log0 log; head -c $((s1 - s0)) /dev/zero >>log; cp pcrs0 log.pcrs
run "$VIGIL" measure --log log
check "a zero-filled tail (lost data blocks) is removed" \
	test $RC = 0 -a -n "$(grep 'removed a torn last entry' <<<"$OUT")"
check "... log back to its last good entry" cmp log log0
half=$(( (s1 - s0) / 2 ))
head -c $((s0 + half)) log1 >log; head -c $((s1 - s0 - half + 4096)) /dev/zero >>log; cp pcrs0 log.pcrs
run "$VIGIL" measure --log log
check "half an entry then zeros (partly written blocks) is removed" \
	test $RC = 0 -a -n "$(grep 'removed a torn last entry' <<<"$OUT")"
check "... log back to its last good entry" cmp log log0
cp log1 log; printf 'garbage!' >>log; cp pcrs0 log.pcrs; cp log damaged
run "$VIGIL" measure --log log
check "a tail that is no entry prefix (garbage) is refused" \
	test $RC = 2 -a -n "$(grep 'not repairing' <<<"$OUT")"
check "... log untouched" cmp log damaged
cp log1 log; cp pcrs0 log.pcrs
run "$VIGIL" measure --log log
check "entry logged but not extended (crash between sync and extend) is extended" \
	test $RC = 0 -a -n "$(grep 'extended 1 logged entries' <<<"$OUT")"
check "... log unchanged" cmp log log1
check "... and replay equals the bank" "$VIGIL" log replay --pcrs log.pcrs log

# --- refusals: nothing is changed ---
cp log1 log; cp log.pcrs pcrsgood
nl=$(od -An -tu4 -j24 -N4 log | tr -d ' ')
e1=$((4 + 20 + 4 + nl + 4 + $(od -An -tu4 -j$((28 + nl)) -N4 log | tr -d ' ')))
flip log $((e1 + 60))
cp log damaged
run "$VIGIL" measure --log log d/f1
check "damaged entry in the middle: exit 2" test $RC = 2
check "... naming entry 1" grep -q "entry 1 at offset $e1" <<<"$OUT"
check "... log untouched" cmp log damaged
check "... bank untouched" cmp log.pcrs pcrsgood
cp log1 log
printf '\xff\xff\xff\x0f' | dd of=log bs=1 seek=$((e1 + 28 + 6)) conv=notrunc status=none
cp log damaged
run "$VIGIL" measure --log log d/f1
check "absurd length in the middle (would look truncated): refused" \
	test $RC = 2 -a -n "$(grep 'not repairing' <<<"$OUT")"
check "... log untouched" cmp log damaged
cp log1 log
# change the first hex digit (to f, or to 0 when it is f: one run in 16 it was)
sed -i -e 's/^PCR-10 sha256:f/PCR-10 sha256:0/' -e t -e 's/^PCR-10 sha256:./PCR-10 sha256:f/' log.pcrs
cp log.pcrs pcrsbad
run "$VIGIL" measure --log log d/f1
check "a PCR that matches no prefix of the log: exit 2" \
	test $RC = 2 -a -n "$(grep 'match no prefix of the log' <<<"$OUT")"
check "... log untouched" cmp log log1
check "... bank untouched" cmp log.pcrs pcrsbad
echo garbage >log.pcrs
run "$VIGIL" measure --log log d/f1
check "an unreadable bank file is refused, not reset" \
	test $RC = 2 -a -n "$(grep 'not resetting' <<<"$OUT")"
check_rc 2 "measure: a missing file exits 2" "$VIGIL" measure --log new.log no-such-file
check_rc 2 "measure: --pcr 24 exits 2" "$VIGIL" measure --log new.log --pcr 24 d/f1
# a link where the log goes: whoever may write in that directory could have
# the writer (root) append to any file
echo precious >precious; ln -s "$T/precious" linked.log
run "$VIGIL" measure --log linked.log d/f1
check "a log that is a symbolic link: exit 2, said" \
	test $RC = 2 -a -n "$(grep 'linked.log: a symbolic link' <<<"$OUT")"
check_eq "... the file it points to untouched" "$(cat precious)" "precious"
check "... no PCR bank or lock made for it left behind" sh -c "! ls '$T'/linked.log.pcrs* 2>/dev/null | grep -q ."
run "$VIGIL" measure --log linked2.log d/f1
check "a fresh log beside it still works" test $RC = 0 -a -s linked2.log -a -s linked2.log.pcrs
