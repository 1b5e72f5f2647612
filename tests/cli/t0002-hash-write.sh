#!/usr/bin/env bash
# vigil hash --write stores security.ima byte for byte as evmctl ima_hash
# does: 01||digest for md5/sha1, 04||algo||digest otherwise.
. "$SRCDIR/tests/lib.sh"
vg_init

head -c 5000 /dev/urandom >a
cp a b
for algo in md5 sha1 sha256 sha384 sha512 sha224 sm3; do
	"$VIGIL" hash --write -a "$algo" a >/dev/null
	evmctl ima_hash -a "$algo" b >/dev/null 2>&1
	check_eq "--write -a $algo equals evmctl ima_hash" "$(xhex a security.ima)" "$(xhex b security.ima)"
done
"$VIGIL" hash -w -a sha256 a >/dev/null
check_eq "sha256 value starts 0404" "$(xhex a security.ima | cut -c1-4)" 0404
"$VIGIL" hash -w -a sha1 a >/dev/null
check_eq "sha1 value starts 01 and is 21 bytes" "$(xhex a security.ima | cut -c1-2):$(($(xhex a security.ima | wc -c) / 2))" "01:21"
"$VIGIL" hash -w -a sha3-256 a >/dev/null
check_eq "sha3-256 (id 20) is written as 0414" "$(xhex a security.ima | cut -c1-4)" 0414
check "a written label appraises" "$VIGIL" appraise a
