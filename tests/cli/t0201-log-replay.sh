#!/usr/bin/env bash
# vigil log replay: real lists replay to the PCR values stated beside them
# (a real TPM quote's PCR 10; evmctl-checked vectors in both banks, the
# legacy zero-padded bank, the 'ima' template); evmctl agrees on the same
# files; a PCR mismatch exits 1 naming the first entry the PCRs do not
# reflect; a tampered entry exits 1 naming it; malformed lists exit 2
# naming the entry index and offset; --state resumes a replay.
. "$SRCDIR/tests/lib.sh"
vg_init
V=$VECTORS/imalog
E=$VECTORS/evmctl/ima-log
run() { OUT=$("$@" 2>&1); RC=$?; }
flip() { python3 -c 'import sys; f=open(sys.argv[1],"r+b"); o=int(sys.argv[2]); f.seek(o); b=f.read(1); f.seek(o); f.write(bytes([b[0]^1]))' "$1" "$2"; }

run "$VIGIL" log replay --pcrs "$V/embrave.pcrs-sha1.txt" "$V/embrave.binary_runtime_measurements"
check_eq "embrave: replay matches the stated sha1 PCR 10 (exit 0)" "$RC" 0
check "... and says so" grep -q "matches the PCRs (922 entries)" <<<"$OUT"
check "... printing PCR-10 sha1:f38695bb..." grep -q "^PCR-10 sha1:f38695bbd9479953543813fb13bb88235440504e$" <<<"$OUT"
# evmctl 1.4 wants all 24 PCRs in its --pcrs file; the others are not extended by the log
for i in $(seq 0 23); do printf 'PCR-%02d %s\n' "$i" "$(printf '0%.0s' $(seq 40))"; done |
	sed "s/^PCR-10 .*/$(cat "$V/embrave.pcrs-sha1.txt")/" >embrave-all.txt
check "evmctl accepts the same list with the same PCR" \
	evmctl ima_measurement --pcrs sha1,embrave-all.txt "$V/embrave.binary_runtime_measurements"
check "... as does vigil with that file" \
	"$VIGIL" log replay --pcrs sha1,embrave-all.txt "$V/embrave.binary_runtime_measurements"

run "$VIGIL" log replay --pcrs "$V/keylime-perf.quote-pcr10-sha256.txt" "$V/keylime-perf-ima_log.txt"
check_eq "keylime-perf (real Ubuntu list, ascii): replay equals the real TPM quote's PCR 10" "$RC" 0
check "... sha256:0a1447c3..." grep -q "^PCR-10 sha256:0a1447c37555073b670b94072e7aaf60ace6bd320a7c81fe8dec9a10289b85c8$" <<<"$OUT"

for l in binary_runtime_measurements binary_runtime_measurements_sha256 ascii_runtime_measurements ascii_runtime_measurements_sha256; do
	check "evmctl vectors $l: both banks match" \
		"$VIGIL" log replay --pcrs "$E/pcrs-sha1.txt" --pcrs "$E/pcrs-sha256.txt" "$E/$l"
done
check "evmctl --pcrs ALGO,FILE syntax is accepted" \
	"$VIGIL" log replay --pcrs sha1,"$E/pcrs-sha1.txt" --pcrs sha256,"$E/pcrs-sha256.txt" "$E/binary_runtime_measurements"
check "evmctl itself matches those PCRs (violations as 0xff: --ignore-violations)" \
	evmctl ima_measurement --ignore-violations --pcrs sha1,"$E/pcrs-sha1.txt" --pcrs sha256,"$E/pcrs-sha256.txt" "$E/binary_runtime_measurements"
check "legacy kernels: --legacy-padded matches the zero-padded sha256 bank" \
	"$VIGIL" log replay --legacy-padded --pcrs "$E/pcrs-sha256-legacy-padded.txt" "$E/binary_runtime_measurements"
check_rc 1 "... and without --legacy-padded it does not" \
	"$VIGIL" log replay --pcrs "$E/pcrs-sha256-legacy-padded.txt" "$E/binary_runtime_measurements"
check "'ima' template list: both banks match" \
	"$VIGIL" log replay --pcrs "$E/ima-template.pcrs-sha1.txt" --pcrs "$E/ima-template.pcrs-sha256.txt" \
	"$E/ima-template.binary_runtime_measurements"
run "$VIGIL" log replay "$V/ibmtss-imatest.log"
check_eq "ibmtss: every template digest checks (exit 0)" "$RC" 0
run "$VIGIL" log replay --bank sha384 --bank sha512 "$E/binary_runtime_measurements"
check "--bank sha384 --bank sha512 prints exactly those banks" \
	test "$(grep -c '^PCR-10 sha384:' <<<"$OUT")$(grep -c '^PCR-10 sha512:' <<<"$OUT")$(grep -c sha1: <<<"$OUT")" = 110

# --- mismatch ---
sed 's/^PCR-10 ./PCR-10 0/' "$E/pcrs-sha256.txt" >wrong.txt
cmp -s wrong.txt "$E/pcrs-sha256.txt" && sed -i 's/^PCR-10 ./PCR-10 1/' wrong.txt
run "$VIGIL" log replay --pcrs wrong.txt "$E/binary_runtime_measurements"
check_eq "a wrong PCR-10 exits 1" "$RC" 1
check "... naming PCR and bank" grep -q "PCR-10 sha256 replays to" <<<"$OUT"
check_rc 1 "evmctl rejects it too" evmctl ima_measurement --ignore-violations --pcrs sha256,wrong.txt "$E/binary_runtime_measurements"

# a log that runs ahead of the PCRs: 3 more entries than the quote saw
head -n 920 "$V/embrave.ascii_runtime_measurements" >short.txt
"$VIGIL" log replay short.txt | sed 's/sha1://' | grep '^PCR-10 [0-9a-f]\{40\}$' >short.pcrs
run "$VIGIL" log replay --pcrs short.pcrs "$V/embrave.ascii_runtime_measurements"
check_eq "log ahead of the PCRs: exit 1 by default" "$RC" 1
check "... naming entry 920 as the first the PCRs do not reflect" grep -q "entry 920 at offset" <<<"$OUT"
check "... --allow-prefix accepts it" "$VIGIL" log replay --allow-prefix --pcrs short.pcrs "$V/embrave.binary_runtime_measurements"

# --- a tampered entry: one byte of entry 1's file digest ---
cp "$E/binary_runtime_measurements" t.bin
nl=$(od -An -tu4 -j24 -N4 t.bin | tr -d ' ')
e1=$((4 + 20 + 4 + nl + 4 + $(od -An -tu4 -j$((28 + nl)) -N4 t.bin | tr -d ' ')))
off=$((e1 + 4 + 20 + 4 + 6 + 4 + 4 + 8 + 3))
flip t.bin $off
run "$VIGIL" log replay t.bin
check_eq "tampered file digest: exit 1" "$RC" 1
check "... naming entry 1 and its offset" grep -q "entry 1 at offset $e1 (ima-ng): template digest does not match its data" <<<"$OUT"
check_rc 1 "evmctl also fails it" evmctl ima_measurement --ignore-violations --pcrs sha1,"$E/pcrs-sha1.txt" t.bin
run "$VIGIL" log replay "$V/bad-template-digest-keylime-BAD_SIGNATURES.ima"
check_eq "keylime BAD_SIGNATURES (template digest mismatch): exit 1" "$RC" 1
check "... names entry 0" grep -q "entry 0 at offset 0" <<<"$OUT"

# --- malformed lists: exit 2, entry index and offset ---
L=$E/binary_runtime_measurements
size=$(stat -c %s "$L")
head -c $((size - 5)) "$L" >trunc.bin
run "$VIGIL" log replay trunc.bin
check_eq "truncated last entry: exit 2" "$RC" 2
check "... 'entry 12 at offset N: truncated'" grep -q "entry 12 at offset [0-9]*: truncated" <<<"$OUT"
cp "$L" absurd.bin
printf '\xff\xff\xff\x7f' | dd of=absurd.bin bs=1 seek=24 conv=notrunc status=none
run "$VIGIL" log replay absurd.bin
check_eq "absurd template name length: exit 2" "$RC" 2
check "... says 'entry 0 at offset 0: template name length ... is absurd'" grep -q "entry 0 at offset 0: template name length 2147483647 is absurd" <<<"$OUT"
cp "$L" absurd2.bin
printf '\xff\xff\xff\x7f' | dd of=absurd2.bin bs=1 seek=$((28 + nl)) conv=notrunc status=none
run "$VIGIL" log replay absurd2.bin
check "absurd template data length: exit 2 naming entry 0" \
	test $RC = 2 -a -n "$(grep 'entry 0 at offset 0: template data length 2147483647 is absurd' <<<"$OUT")"
cp "$L" unk.bin
printf 'xxx-ng' | dd of=unk.bin bs=1 seek=$((e1 + 28)) conv=notrunc status=none
run "$VIGIL" log replay unk.bin
check "unknown template: exit 2 naming entry 1 and its offset" \
	test $RC = 2 -a -n "$(grep "entry 1 at offset $e1: unknown template 'xxx-ng'" <<<"$OUT")"
cp "$L" pcr.bin
printf '\x63' | dd of=pcr.bin bs=1 seek=$e1 conv=notrunc status=none
run "$VIGIL" log replay pcr.bin
check "pcr 99: exit 2 naming entry 1" test $RC = 2 -a -n "$(grep "entry 1 at offset $e1: pcr 99" <<<"$OUT")"
run "$VIGIL" log replay "$V/bad-sig-column-missing.ascii"
check "ascii line missing a column: exit 2 naming line 1" \
	test $RC = 2 -a -n "$(grep "line 1: 2 fields for template ima-sig, which has 3" <<<"$OUT")"
sed '3s/sha256:/sha999:/' "$E/ascii_runtime_measurements" >badalgo.txt
run "$VIGIL" log replay badalgo.txt
check "ascii unknown digest algorithm: exit 2 naming line 3" \
	test $RC = 2 -a -n "$(grep "line 3: .*unknown algorithm 'sha999'" <<<"$OUT")"
check_rc 2 "--pcrs file without the replayed PCR" "$VIGIL" log replay --pcrs <(echo "PCR-11 sha1:$(printf '0%.0s' $(seq 40))") "$L"
check_rc 2 "--pcrs garbage" "$VIGIL" log replay --pcrs "$V/bad-not-a-log.txt" "$L"
: >empty
check "an empty list replays (nothing extended)" "$VIGIL" log replay empty

# --- incremental replay: --state ---
head -n 400 "$V/embrave.ascii_runtime_measurements" >part.txt
check "--state: first 400 entries, state saved" "$VIGIL" log replay --state st part.txt
check "... the state names offset and entry count" grep -q "^# entries 400$" st
run "$VIGIL" log replay --state st --pcrs "$V/embrave.pcrs-sha1.txt" "$V/embrave.binary_runtime_measurements"
check_eq "--state: resuming over the whole list matches the real PCR 10" "$RC" 0
check "... counting all 922 entries" grep -q "matches the PCRs (922 entries)" <<<"$OUT"
check_eq "... and the state moved to the end" "$(sed -n 's/^# entries //p' st)" 922
check_rc 2 "--state past the end of a shorter list: refused" "$VIGIL" log replay --state st part.txt
rm -f st2
"$VIGIL" log replay --state st2 "$E/binary_runtime_measurements" >/dev/null
check_rc 2 "--state of another list: refused" "$VIGIL" log replay --state st2 "$V/embrave.binary_runtime_measurements"
cp st st3; sed -i 's/^PCR-10 sha1:./PCR-10 sha1:0/' st3; grep -q '^PCR-10 sha1:0' st3 || sed -i 's/^PCR-10 sha1:./PCR-10 sha1:1/' st3
printf 'extra line\n' >>st3
check_rc 2 "--state file that is not a state: refused" "$VIGIL" log replay --state st3 "$V/embrave.binary_runtime_measurements"
