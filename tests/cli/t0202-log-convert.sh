#!/usr/bin/env bash
# vigil log convert: ascii <-> binary round trips on every real list, a
# property test on random lists of every template (written by
# imalog_gen.py, an independent model of the kernel's layout and digests:
# binary -> ascii -> binary and ascii -> binary -> ascii are identity, and
# replay equals the model's PCRs), and bank conversion (sha1 list ->
# the kernel's binary_runtime_measurements_sha256, byte for byte).
. "$SRCDIR/tests/lib.sh"
vg_init
V=$VECTORS/imalog
E=$VECTORS/evmctl/ima-log
GEN=$SRCDIR/tests/helpers/imalog_gen.py

for f in "$V/embrave.binary_runtime_measurements" "$V/ibmtss-imatest.log" "$E/binary_runtime_measurements" \
	"$E/binary_runtime_measurements_sha256" "$E/ima-template.binary_runtime_measurements"; do
	n=$(basename "$f")
	"$VIGIL" log convert "$f" -o a.txt
	"$VIGIL" log convert a.txt -o b.bin
	check "$n: binary -> ascii -> binary is identity" cmp b.bin "$f"
done
for f in "$V"/*.ascii_runtime_measurements "$V/keylime-perf-ima_log.txt" "$V/keylime-KEYRINGS.ima" \
	"$V/keylime-SIGNATURES.ima" "$V/ima-evm-utils-test_ascii_runtime_measurements" "$E"/ascii_runtime_measurements*; do
	n=$(basename "$f")
	"$VIGIL" log convert "$f" -o b.bin
	"$VIGIL" log convert --to ascii b.bin -o a.txt
	check "$n: ascii -> binary -> ascii is identity" cmp a.txt "$f"
done

"$VIGIL" log convert --to binary --bank sha256 "$E/binary_runtime_measurements" -o s256.bin
check "sha1 list -> --bank sha256 equals the kernel-layout binary_runtime_measurements_sha256" \
	cmp s256.bin "$E/binary_runtime_measurements_sha256"
"$VIGIL" log convert --to ascii --bank sha256 "$E/ascii_runtime_measurements" -o s256.txt
check "... and in ascii equals ascii_runtime_measurements_sha256" cmp s256.txt "$E/ascii_runtime_measurements_sha256"
"$VIGIL" log convert --to binary --bank sha1 "$E/binary_runtime_measurements_sha256" -o s1.bin
check "sha256 list -> --bank sha1 gives the sha1 list back" cmp s1.bin "$E/binary_runtime_measurements"

# property test: random lists of every template, both directions, and replay
for seed in $(seq 1 ${VG_ROUNDTRIP_SEEDS:-12}); do
	python3 "$GEN" "$seed" 300 r.bin r.pcrs
	"$VIGIL" log convert r.bin -o r.txt && "$VIGIL" log convert r.txt -o r2.bin
	ok=$?
	cmp -s r2.bin r.bin || ok=1
	"$VIGIL" log convert --to ascii r2.bin -o r2.txt
	cmp -s r2.txt r.txt || ok=1
	"$VIGIL" log replay --pcrs r.pcrs r.bin >/dev/null 2>&1 || ok=1
	"$VIGIL" log replay --pcrs r.pcrs r.txt >/dev/null 2>&1 || ok=1
	check_eq "random list seed $seed (300 entries): round trips and replay equal the model" "$ok" 0
done

check_rc 2 "convert: bad --to" "$VIGIL" log convert --to yaml r.bin
check_rc 2 "convert: malformed input writes nothing" "$VIGIL" log convert "$V/bad-not-a-log.txt" -o nothing.bin
check "... no output file" test ! -e nothing.bin
check "... and no temp file left" test -z "$(ls nothing.bin* 2>/dev/null)"
