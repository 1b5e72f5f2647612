#!/usr/bin/env bash
# t0523: allowlists and runtime policies with a detached signature
# (`vigil attest policy import --allowlist-sig SIG --allowlist-sig-key KEY`,
# Keylime's tenant formats, keylime/signing.py verify_signature): Keylime's
# own signed files give Keylime's answers (an OpenPGP and an ECDSA
# signature that verify; a signature by an expired key, by another key,
# and one that is neither, refused); signatures made here with gpg (a
# temporary GNUPGHOME) and openssl verify, and the same files tampered
# with by one byte, another key, an RSA key, a missing or empty signature
# are refused with the file and the reason named, exit 1 (2 for usage or
# an unreadable file), nothing written, no temporary GNUPGHOME left.
. "$SRCDIR/tests/lib.sh"
vg_init
A=$VECTORS/attest
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"

imp() {	# imp OUT POLICY SIG KEY: import, stderr to err
	"$VIGIL" attest policy import "$2" --allowlist-sig "$3" --allowlist-sig-key "$4" \
		-o "$1" 2>err
}

# ---- Keylime's own files (its verify_signature gives the same answers) ----
imp pgp.json "$A/keylime-files-allowlist.json" "$A/keylime-files-allowlist-pgp-sig.sig" \
	"$A/keylime-files-allowlist-pgp-key.pgp"
check_eq "Keylime's OpenPGP-signed allowlist imports" "$?" 0
"$VIGIL" attest policy import "$A/keylime-files-allowlist.json" -o plain.json
check "... to the unsigned import" cmp pgp.json plain.json
imp ec.json "$A/keylime-files-allowlist.json" "$A/keylime-files-allowlist-ec-sig.bin" \
	"$A/keylime-files-allowlist-ec-key.pem"
check_eq "Keylime's ECDSA-signed allowlist imports" "$?" 0
check "... to the unsigned import" cmp ec.json plain.json

imp bad.json "$A/keylime-files-allowlist.json" "$A/keylime-files-allowlist-invalid-sig.sig" \
	"$A/keylime-files-allowlist-ec-key.pem"
check_eq "a signature that is not one: exit 1 (EC key)" "$?" 1
check "... the message names the policy, the signature and the reason" \
	grep -q "keylime-files-allowlist.json: signature .*keylime-files-allowlist-invalid-sig.sig does not verify with key .*: the ECDSA (SHA-256) signature does not verify" err
check_rc 1 "... nothing written" test -e bad.json
imp bad.json "$A/keylime-files-allowlist.json" "$A/keylime-files-allowlist-invalid-sig.sig" \
	"$A/keylime-files-allowlist-pgp-key.pgp"
check_eq "a signature that is not one: exit 1 (OpenPGP key)" "$?" 1
check_rc 1 "... nothing written" test -e bad.json
imp bad.json "$A/ima-allowlist-short.txt" "$A/ima-allowlist-short.sig" "$A/gpg-sig.pub"
check_eq "Keylime's flat allowlist signed by a key since expired: exit 1 (Keylime: False)" "$?" 1
check "... the reason is the expired key" grep -q "Key expired" err
imp bad.json "$A/ima-allowlist-short.txt" "$A/ima-allowlist-bad.sig" "$A/gpg-sig.pub"
check_eq "its -bad.sig, by another key: exit 1" "$?" 1
check "... no public key for it" grep -q "No public key" err
imp bad.json "$A/keylime-files-allowlist.json" "$A/keylime-files-allowlist-ec-sig.bin" \
	"$A/ec-p521-public.pem"
check_eq "an ECDSA signature checked with another EC key (P-521): exit 1" "$?" 1
check_rc 1 "... nothing written" test -e bad.json

# ---- signatures made here: OpenPGP with gpg ----
G=$T/gnupg
mkdir -m 700 "$G"
gpg --homedir "$G" --batch --passphrase '' --quick-gen-key 'vigil t0523 <t0523@example.invalid>' \
	ed25519 sign never >/dev/null 2>&1
gpg --homedir "$G" --batch --armor --export >key.asc
cp "$A/ima-allowlist-short.txt" al.txt
gpg --homedir "$G" --batch --detach-sign -o al.txt.sig al.txt 2>/dev/null
gpg --homedir "$G" --batch --armor --detach-sign -o al.txt.asc al.txt 2>/dev/null
gpgconf --homedir "$G" --kill all 2>/dev/null
imp ok.json al.txt al.txt.sig key.asc
check_eq "a gpg detached signature (binary) made here verifies" "$?" 0
check "... and the allowlist is imported" grep -q '"digests"' ok.json
imp ok2.json al.txt al.txt.asc key.asc
check_eq "... and an armored one" "$?" 0
cp al.txt tampered.txt
flip_last_byte tampered.txt
imp bad.json tampered.txt al.txt.sig key.asc
check_eq "the allowlist with its last byte flipped: exit 1" "$?" 1
check "... Bad signature, the file named" grep -q "tampered.txt: signature .*Bad signature" err
check_rc 1 "... nothing written" test -e bad.json
G2=$T/gnupg2
mkdir -m 700 "$G2"
gpg --homedir "$G2" --batch --passphrase '' --quick-gen-key 'other <o@example.invalid>' \
	ed25519 sign never >/dev/null 2>&1
gpg --homedir "$G2" --batch --armor --export >other.asc
gpgconf --homedir "$G2" --kill all 2>/dev/null
imp bad.json al.txt al.txt.sig other.asc
check_eq "the signature checked with another OpenPGP key: exit 1" "$?" 1
check "... No public key" grep -q "No public key" err

# ---- signatures made here: ECDSA with openssl ----
openssl ecparam -name prime256v1 -genkey -noout -out ec.key 2>/dev/null
openssl pkey -in ec.key -pubout -out ec.pub
cp "$A/runtime-policy-test.json" rp.json
openssl dgst -sha256 -sign ec.key -out rp.json.sig rp.json
imp ok3.json rp.json rp.json.sig ec.pub
check_eq "an openssl ECDSA-SHA256 signature of a runtime policy verifies" "$?" 0
"$VIGIL" attest policy import rp.json -o rp-plain.json
check "... to the unsigned import" cmp ok3.json rp-plain.json
sed 's/a7d52aaa18c2/a7d52aaa18c3/' rp.json >rp-tampered.json
imp bad.json rp-tampered.json rp.json.sig ec.pub
check_eq "the policy with one digest changed: exit 1" "$?" 1
check_rc 1 "... nothing written" test -e bad.json
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.key 2>/dev/null
openssl pkey -in rsa.key -pubout -out rsa.pub
openssl dgst -sha256 -sign rsa.key -out rp.json.rsasig rp.json
imp bad.json rp.json rp.json.rsasig rsa.pub
check_eq "an RSA key (Keylime: unsupported): exit 2" "$?" 2
check "... the reason" grep -q "not an EC key" err
: >empty.sig
imp bad.json rp.json empty.sig ec.pub
check_eq "an empty signature file: exit 1" "$?" 1
check "... said" grep -q "the signature file is empty" err

# ---- usage ----
imp bad.json rp.json missing.sig ec.pub
check_eq "a missing signature file: exit 2" "$?" 2
check "... named" grep -q "missing.sig" err
"$VIGIL" attest policy import rp.json --allowlist-sig rp.json.sig -o bad.json 2>err
check_eq "--allowlist-sig without --allowlist-sig-key: exit 2" "$?" 2
check "... said" grep -q "go together" err
imp bad.json rp.json rp.json.sig rp.json
check_eq "a key file that is no key: exit 2" "$?" 2
check_rc 1 "nothing written by any refused import" test -e bad.json
check_eq "no temporary GNUPGHOME left" "$(find "$TMPDIR" -maxdepth 1 -name 'vigil-gpg.*' | wc -l)" 0
check "--help names the options" sh -c '"$VIGIL" attest policy import --help | grep -q -- --allowlist-sig-key'
