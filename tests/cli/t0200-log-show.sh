#!/usr/bin/env bash
# vigil log show: real kernel lists (binary) print byte for byte as their
# ascii twins; every real list in tests/vectors parses; ascii input gives
# the binary list back; JSON has one object per entry.
. "$SRCDIR/tests/lib.sh"
vg_init
V=$VECTORS/imalog
E=$VECTORS/evmctl/ima-log

"$VIGIL" log show "$V/embrave.binary_runtime_measurements" >embrave.txt
check "embrave (922 real ima-ng entries): show equals the kernel's ascii list" \
	cmp embrave.txt "$V/embrave.ascii_runtime_measurements"
"$VIGIL" log show --format ascii "$E/binary_runtime_measurements" >v1.txt
check "evmctl vectors (sha1 list): show equals ascii_runtime_measurements" \
	cmp v1.txt "$E/ascii_runtime_measurements"
"$VIGIL" log show "$E/binary_runtime_measurements_sha256" >v256.txt
check "evmctl vectors (sha256 per-bank list, detected): show equals its ascii" \
	cmp v256.txt "$E/ascii_runtime_measurements_sha256"
"$VIGIL" log show "$E/ima-template.binary_runtime_measurements" >ima.txt
check "'ima' template list: show equals its ascii" cmp ima.txt "$E/ima-template.ascii_runtime_measurements"

"$VIGIL" log show --format binary "$V/embrave.ascii_runtime_measurements" >embrave.bin
check "embrave ascii -> binary equals the kernel's binary list" \
	cmp embrave.bin "$V/embrave.binary_runtime_measurements"
"$VIGIL" log show --format binary "$E/ascii_runtime_measurements_sha256" >v256.bin
check "sha256 ascii list -> binary equals binary_runtime_measurements_sha256" \
	cmp v256.bin "$E/binary_runtime_measurements_sha256"

"$VIGIL" log show "$V/ibmtss-imatest.log" >ibm.txt
check "ibmtss list (every template, custom formats) parses" test -s ibm.txt
check_eq "... 17 entries" "$(wc -l <ibm.txt)" 17
for t in ima ima-ng ima-sig ima-sigv2 ima-ngv2 ima-buf ima-modsig evm-sig 'n-ng|d-ng'; do
	check "... has a '$t' entry" grep -qF " $t " ibm.txt
done
check "... the ima-sigv2 digest keeps its 'ima:sha256:' prefix" grep -q ' ima-sigv2 ima:sha256:e3b0c442' ibm.txt
check "... an unsigned ima-sig line ends with a space" grep -q ' ima-sig sha1:7c47327b7a9d33ac594d6ffd0ec88401be242b23 boot_aggregate $' ibm.txt

for f in keylime-perf-ima_log.txt rust-keylime-agent.ascii_runtime_measurements \
	ima-evm-utils-test_ascii_runtime_measurements keylime-KEYRINGS.ima keylime-SIGNATURES.ima \
	keylime-tests-test2.ascii_runtime_measurements; do
	"$VIGIL" log show "$V/$f" >out.txt
	check "$f (ascii) parses and prints back unchanged" cmp out.txt "$V/$f"
done

"$VIGIL" log show --format json "$V/ibmtss-imatest.log" >ibm.json
check_eq "json: one object per entry" \
	"$(python3 -c 'import json,sys; print(len(json.load(open("ibm.json"))))')" 17
check_eq "json: the violation is marked and extends 0xff" \
	"$(python3 -c 'import json; e=[x for x in json.load(open("ibm.json")) if x["violation"]]; print(len(e), e[0]["extends"]["sha256"])')" \
	"1 $(printf 'f%.0s' $(seq 64))"
check_eq "json: d-ng algorithm and digest of the ima-buf key entry" \
	"$(python3 -c 'import json; e=[x for x in json.load(open("ibm.json")) if x["template_name"]=="ima-buf"][0]; print(e["fields"][0]["algo"], e["fields"][1]["value"])')" \
	"sha256 .builtin_trusted_keys"
check_eq "json: template_hash equals the sha1 'extends' digest (entry 1)" \
	"$(python3 -c 'import json; e=json.load(open("ibm.json"))[1]; print(e["template_hash"]==e["extends"]["sha1"])')" True

check_rc 2 "show: not a measurement list" "$VIGIL" log show "$V/bad-not-a-log.txt"
"$VIGIL" log show "$V/bad-not-a-log.txt" 2>err
check "... the error names the file" grep -q "bad-not-a-log.txt: not a measurement list" err
check_rc 2 "show: missing file" "$VIGIL" log show no-such-file
check_rc 2 "show: bad --format" "$VIGIL" log show --format xml "$V/ibmtss-imatest.log"
check "log --help" "$VIGIL" log --help
check "help log" "$VIGIL" help log
check "measure --help" "$VIGIL" measure --help
check_rc 2 "log without subcommand exits 2" "$VIGIL" log
check_rc 2 "log frobnicate exits 2" "$VIGIL" log frobnicate
check_rc 2 "log show --bogus exits 2" "$VIGIL" log show --bogus x
check_rc 2 "log replay without FILE exits 2" "$VIGIL" log replay
check_rc 2 "measure --bogus exits 2" "$VIGIL" measure --bogus
