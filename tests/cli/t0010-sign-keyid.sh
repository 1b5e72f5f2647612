#!/usr/bin/env bash
# vigil sign: signatures evmctl ima_verify accepts; RSA bytes equal
# evmctl ima_sign's; keyid from the certificate's SKID as the kernel looks
# keys up (evmctl 1.4's verifier differs: it recomputes the keyid).
. "$SRCDIR/tests/lib.sh"
vg_init
K=$VECTORS/evmctl/keys
vg_ext4 fs
cd fs || exit 1
head -c 70000 /dev/urandom >f

for k in rsa2048 ecp256 rsa4096; do
	for a in sha1 sha256 sha384 sha512; do
		"$VIGIL" sign --key "$K/$k.key.pem" -a "$a" f
		check "sign $k $a: evmctl ima_verify accepts" evmctl ima_verify --key "$K/$k.cert.der" f
		check "sign $k $a: vigil appraise accepts" "$VIGIL" appraise --keyring "$K/$k.cert.pem" f
	done
done

cp f g
"$VIGIL" sign --key "$K/rsa2048.key.pem" -a sha256 f
evmctl ima_sign --key "$K/rsa2048.key.pem" -a sha256 g >/dev/null 2>&1
check_eq "RSA signature bytes equal evmctl ima_sign" "$(xhex f security.ima)" "$(xhex g security.ima)"
check_eq "keyid in the header is the key's" "$(xhex f security.ima | cut -c7-14)" f532730b

flip_last_byte f
check_rc 1 "content change: evmctl ima_verify refuses" evmctl ima_verify --key "$K/rsa2048.cert.der" f
check_rc 1 "content change: invalid-signature" "$VIGIL" appraise --keyring "$K/rsa2048.cert.pem" f
check_eq "cause printed" "$("$VIGIL" appraise --keyring "$K/rsa2048.cert.pem" f)" "f: fail (invalid-signature)"
check_eq "untrusted key: unknown-key" "$("$VIGIL" appraise --keyring "$K/ecp256.cert.pem" g)" "g: fail (unknown-key)"

# A certificate whose SKID is not SHA-1 of the key: the kernel finds the
# key by the SKID's last 4 bytes.
openssl req -x509 -new -key "$K/ecp256.key.pem" -subj /CN=skid -days 30 \
	-addext subjectKeyIdentifier=0102030405060708090a0b0c0d0e0f10c0ffee01 \
	-out skid.pem 2>/dev/null
openssl x509 -in skid.pem -outform der -out skid.der
cat "$K/ecp256.key.pem" skid.pem >key+cert.pem
"$VIGIL" sign --key key+cert.pem f
check_eq "key file with its certificate: keyid from SKID" "$(xhex f security.ima | cut -c7-14)" c0ffee01
check "the SKID certificate verifies it (kernel semantics)" "$VIGIL" appraise --keyring skid.pem f
check "... also as DER" "$VIGIL" appraise --keyring skid.der f
check_rc 1 "evmctl 1.4 ima_verify misses it (recomputes keyid): the documented difference" \
	evmctl ima_verify --key skid.der f
"$VIGIL" sign --key "$K/ecp256.key.pem" --keyid c0ffee01 g
check_eq "--keyid sets the keyid" "$(xhex g security.ima | cut -c7-14)" c0ffee01
check "--keyid signature verifies against the SKID certificate" "$VIGIL" appraise --keyring skid.pem g
