#!/usr/bin/env bash
# vigil hash: digests equal openssl dgst for every algorithm OpenSSL has,
# on empty, small, buffer-edge and >4 GiB files; output format "ALGO:HEX  FILE".
. "$SRCDIR/tests/lib.sh"
vg_init

printf 'abc' >abc
: >empty
head -c $((3 * 1024 * 1024 + 7)) /dev/urandom >edge
head -c $((1024 * 1024)) /dev/urandom >mib

for a in md5 sha1 sha224 sha256 sha384 sha512 sm3 sha3-256 sha3-384 sha3-512; do
	for f in abc empty edge mib; do
		want=$(openssl dgst -"$a" -r "$f" | cut -d' ' -f1)
		check_eq "hash -a $a $f equals openssl dgst" "$("$VIGIL" hash -a "$a" "$f")" "$a:$want  $f"
	done
done

check_eq "default algorithm is sha256" "$("$VIGIL" hash abc)" \
	"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  abc"
check_eq "several files, one line each" "$("$VIGIL" hash -a sha1 abc empty | wc -l)" 2

# a sparse file past 4 GiB: no 32-bit size arithmetic anywhere
truncate -s $((4 * 1024 * 1024 * 1024 + 12345)) huge
printf 'tail' | dd of=huge bs=1 seek=$((4 * 1024 * 1024 * 1024 + 100)) conv=notrunc status=none
want=$(openssl dgst -sha256 -r huge | cut -d' ' -f1)
check_eq "4 GiB + 12345 bytes equals openssl dgst" "$("$VIGIL" hash huge)" "sha256:$want  huge"
rm -f huge

# names with a newline or a backslash are escaped, one line per file
f=$'new\nline'
printf x >"$f"
check_eq "newline in a name is escaped" "$("$VIGIL" hash -a sha1 "$f" | cut -d' ' -f3)" 'new\nline'
