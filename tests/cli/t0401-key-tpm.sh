#!/usr/bin/env bash
# vigil key create --tpm against swtpm: seal, unseal, HMAC labels made and
# appraised with the sealed key; after extending a bound PCR, unseal fails
# naming the PCR, and no HMAC label can be made or verified (signature
# labels still appraise); reseal to the new state works, and so does
# sealing ahead to expected values; corrupted blobs are rejected cleanly.
# Cross-checked with tpm2-tools on the same swtpm.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
vg_tpm_start
K=$VECTORS/evmctl/keys
run() { OUT=$("$@" 2>&1); RC=$?; }
said() { grep -q -- "$1" <<<"$OUT"; }
Z=0000000000000000000000000000000000000000000000000000000000000000

# --- tpm2-tools and vigil see the same PCRs ---
tpm2_pcrextend 16:sha1=$(printf a | sha1sum | cut -c1-40),sha256=$(printf a | sha256sum | cut -c1-64)
tools=$(tpm2_pcrread sha256:16 | sed -n 's/.*16 *: 0x//p' | tr A-F a-f)
check "create --tpm bound to sha256:16,23" "$VIGIL" key create --tpm --pcrs sha256:16,23 -o k16.key
check_eq "vigil's PCR 16 (as sealed) equals tpm2_pcrread" \
	"$("$VIGIL" key show --json k16.key | python3 -c 'import json,sys; print(json.load(sys.stdin)["pcr_values"]["16"])')" "$tools"
want=$(python3 -c "import hashlib; print(hashlib.sha256(bytes(32) + hashlib.sha256(b'a').digest()).hexdigest())")
check_eq "... and the software replay of one extend" "$tools" "$want"
tpm2_createpolicy --policy-pcr -l sha256:16,23 -L pol.bin >/dev/null
check_eq "the policy digest vigil shows equals tpm2_createpolicy's" \
	"$("$VIGIL" key show k16.key | sed -n 's/^  policy: //p')" "$(od -An -tx1 -v pol.bin | tr -d ' \n')"

# --- seal and use ---
check "create --tpm (default PCRs 0-7 + 23)" "$VIGIL" key create --tpm --pcrs 0-7,23 -o sealed.key
check_eq "sealed.key is 0600" "$(stat -c %a sealed.key)" 600
check_eq "show: bound PCRs" "$("$VIGIL" key show sealed.key | sed -n 's/^  sealed to: //p')" "sha256 PCRs 0,1,2,3,4,5,6,7,23"
check_eq "unseal: available" "$("$VIGIL" key unseal sealed.key)" "sealed.key: key available (tpm, 32 bytes)"
for f in a b c; do head -c 4000 /dev/urandom >$f; chmod 0644 $f; "$VIGIL" hash -w $f >/dev/null; done
check "evm --hmac-key SEALED" "$VIGIL" evm --hmac-key sealed.key a b
check_eq "appraise with the sealed key" "$("$VIGIL" appraise --hmac-key sealed.key a b)" "a: ok
b: ok"
check_eq "--tcti overrides \$VIGIL_TCTI" \
	"$(VIGIL_TCTI=swtpm:path=/nonexistent "$VIGIL" appraise --tcti "$VIGIL_TCTI" --hmac-key sealed.key a)" "a: ok"
run env VIGIL_TCTI=swtpm:path=/nonexistent/sock "$VIGIL" appraise --hmac-key sealed.key a
check_eq "an unreachable TPM: exit 2" "$RC" 2
check "... naming the TCTI" said "TCTI 'swtpm:path=/nonexistent/sock'"
flip_last_byte b
check_eq "a tampered file fails with the sealed key" "$("$VIGIL" appraise --hmac-key sealed.key b)" "b: fail (invalid-hash)"
# a signature-labelled file, for later
"$VIGIL" sign --key "$K/ecp256.key.pem" c && "$VIGIL" evm --portable --key "$K/rsa2048.key.pem" c
check_eq "signature labels appraise" \
	"$("$VIGIL" appraise --keyring "$K/rsa2048.cert.pem" --keyring "$K/ecp256.cert.pem" c)" "c: ok"

# --- the boot state changes: PCR 23 extended with tpm2-tools ---
tpm2_pcrextend 23:sha256=$(printf other-os | sha256sum | cut -c1-64)
run "$VIGIL" key unseal sealed.key
check_eq "unseal after the change: exit 2" "$RC" 2
check_eq "... naming the PCR" "$OUT" \
	"vigil key: HMAC key sealed.key: the TPM refused to unseal: PCR 23 (sha256) differs from the sealed state"
run "$VIGIL" appraise --hmac-key sealed.key a
check_eq "appraise with the unavailable key: exit 2" "$RC" 2
check "... naming PCR 23" said "PCR 23 (sha256) differs"
check_eq "... and no verdict is printed" "$(grep -c ': ok\|: fail' <<<"$OUT")" 0
cp a a.before; getfattr -d -m security -e hex a >a.x1 2>/dev/null
run "$VIGIL" evm --hmac-key sealed.key a
check_eq "no HMAC label can be made: exit 2" "$RC" 2
check_eq "... and security.evm is untouched" "$(getfattr -d -m security -e hex a 2>/dev/null)" "$(cat a.x1)"
check_eq "signature labels still appraise" \
	"$("$VIGIL" appraise --keyring "$K/rsa2048.cert.pem" --keyring "$K/ecp256.cert.pem" c)" "c: ok"

# --- two PCRs changed: both named ---
tpm2_pcrextend 7:sha256=$(printf shim | sha256sum | cut -c1-64)
run "$VIGIL" key unseal sealed.key
check "two changed PCRs are both named" said "PCRs 7, 23 (sha256) differ from the sealed state"

# --- reseal: the old key is gone with the old state, so it needs a backup ---
run "$VIGIL" key reseal sealed.key
check_eq "reseal without the key: exit 2" "$RC" 2
check "... saying a backup is needed" said "give --from BACKUP"
# backup: a passphrase key cannot equal a random key, so import a raw one
head -c 32 /dev/urandom >backup.raw
check "create --tpm --from a raw key (import)" "$VIGIL" key create --tpm --pcrs 7,23 --from backup.raw -o imp.key
check "the imported key unseals now" "$VIGIL" key unseal imp.key
"$VIGIL" evm --hmac-key imp.key b
check_eq "its labels verify with the raw key (same key)" "$("$VIGIL" appraise --hmac-key backup.raw b)" "b: fail (invalid-hash)"
flip_last_byte b
check_eq "... both ways" "$("$VIGIL" appraise --hmac-key backup.raw b)" "b: ok"
tpm2_pcrextend 23:sha256=$Z
check_rc 2 "imported key after a change: unavailable" "$VIGIL" appraise --hmac-key imp.key b
check "reseal --from the backup to the new state" "$VIGIL" key reseal --from backup.raw imp.key
check_eq "after reseal the key unseals again" "$("$VIGIL" appraise --hmac-key imp.key b)" "b: ok"
check "reseal from itself while available (no backup needed)" "$VIGIL" key reseal --pcrs 0,7,23 -o imp2.key imp.key
check_eq "... to a new selection" "$("$VIGIL" key show imp2.key | sed -n 's/^  sealed to: //p')" "sha256 PCRs 0,7,23"
check_eq "... same key" "$("$VIGIL" appraise --hmac-key imp2.key b)" "b: ok"

# --- seal ahead: bind to the value PCR 23 will have after an approved update ---
cur=$(tpm2_pcrread sha256:23 | sed -n 's/.*23 *: 0x//p' | tr A-F a-f)
upd=$(printf new-kernel | sha256sum | cut -c1-64)
next=$(python3 -c "import hashlib; print(hashlib.sha256(bytes.fromhex('$cur') + bytes.fromhex('$upd')).hexdigest())")
check "reseal --pcr-value 23=NEXT (expected after the update)" \
	"$VIGIL" key reseal --pcr-value 23="$next" -o ahead.key imp.key
check_rc 2 "before the update it does not unseal" "$VIGIL" key unseal ahead.key
tpm2_pcrextend 23:sha256="$upd"
check "after the update it does" "$VIGIL" key unseal ahead.key
check_eq "... same key" "$("$VIGIL" appraise --hmac-key ahead.key b)" "b: ok"
check_rc 2 "--pcr-value with a short value" "$VIGIL" key reseal --pcr-value 23=abcd -o x.key ahead.key
check_rc 2 "--pcrs with PCR 24" "$VIGIL" key create --tpm --pcrs 24 -o x.key
check_rc 2 "--pcrs with an unknown bank" "$VIGIL" key create --tpm --pcrs md5:1 -o x.key
check_rc 1 "... nothing written" test -e x.key
check "a sha1-bank key" "$VIGIL" key create --tpm --pcrs sha1:0-3 -o s1.key
check "... unseals" "$VIGIL" key unseal s1.key

# --- corrupted and doctored blobs ---
size=$(stat -c %s ahead.key)
for off in 30 100 200 $((size - 1)); do
	cp ahead.key bad.key
	flip_byte bad.key $off
	run "$VIGIL" key unseal bad.key
	check_eq "a byte changed at $off: exit 2" "$RC" 2
	check_eq "... one clean message" "$(wc -l <<<"$OUT")" 1
done
head -c $((size - 10)) ahead.key >trunc.key
run "$VIGIL" key unseal trunc.key
check_eq "a truncated blob: exit 2" "$RC" 2
check "... malformed" said "trunc.key: "
# the file claims PCR 22 is bound too (policy mismatch)
python3 - ahead.key lie.key <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
assert b[13:19] == bytes([0, 0x0b, 0, 0x80, 0, 0x80])   # sha256, PCRs 7 and 23
b[16] |= 0x40                   # mask byte of PCRs 16..23: add PCR 22
b[19 + 32:19 + 32] = bytes([0xff]) * 32   # PCR 22's value, before 23's (all ones on swtpm)
n = int.from_bytes(b[11:13], 'big') + 32
b[11:13] = n.to_bytes(2, 'big')
open(sys.argv[2], 'wb').write(b)
PY
run "$VIGIL" key unseal lie.key
check_eq "a file that misstates the binding: exit 2" "$RC" 2
check "... the policy does not match" said "not the PCR binding the key file states"
check "no TPM objects leaked" bash -c '[ -z "$(tpm2_getcap handles-transient)" ]'
check_rc 2 "key show flags the misstated binding without a TPM" env VIGIL_TCTI=swtpm:path=/nonexistent "$VIGIL" key show lie.key
check "key show accepts the honest file" "$VIGIL" key show ahead.key

# --- a passphrase as the recovery path: seal a passphrase key, reseal with the passphrase ---
echo 'recovery words' >pw
"$VIGIL" key create --passphrase --passphrase-file pw --scrypt-logn 12 -o rec.key >/dev/null
check "seal the passphrase key into the TPM (no passphrase needed day to day)" \
	"$VIGIL" key create --tpm --pcrs 23 --from rec.key --passphrase-file pw -o day.key
"$VIGIL" evm --hmac-key day.key a
check_eq "labels made with the sealed copy verify with the passphrase" \
	"$("$VIGIL" appraise --hmac-key rec.key --passphrase-file pw a)" "a: ok"
tpm2_pcrextend 23:sha256=$(printf upgrade | sha256sum | cut -c1-64)
check_rc 2 "after a boot-state change the sealed copy is unavailable" "$VIGIL" key unseal day.key
check "reseal --from the passphrase key" "$VIGIL" key reseal --from rec.key --passphrase-file pw day.key
check_eq "the resealed copy works again, same key" "$("$VIGIL" appraise --hmac-key day.key a)" "a: ok"
run "$VIGIL" key reseal --from rec.key --passphrase-file pw0 day.key
check_eq "reseal with an unreadable passphrase file: exit 2" "$RC" 2
check "no TPM objects leaked at the end" bash -c '[ -z "$(tpm2_getcap handles-transient)" ]'
