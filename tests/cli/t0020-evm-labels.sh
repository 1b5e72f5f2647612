#!/usr/bin/env bash
# vigil evm: portable (05) and inode-bound (03) signatures evmctl verify
# accepts; HMACs equal to evmctl 1.4's `hmac -a sha1` without the UUID,
# and to an openssl recomputation with it (the kernel's default).
. "$SRCDIR/tests/lib.sh"
vg_init
K=$VECTORS/evmctl/keys
vg_ext4 fs
UUID=$(blkid -s UUID -o value "$T"/.ext4-*.img)
cd fs || exit 1
head -c 10000 /dev/urandom >f
chmod 0750 f
chown 1000:1001 f

for k in rsa2048 ecp256; do
	"$VIGIL" sign --key "$K/$k.key.pem" f
	"$VIGIL" evm --key "$K/$k.key.pem" --portable f
	check_eq "portable $k: type 05" "$(xhex f security.evm | cut -c1-4)" 0502
	check "portable $k: evmctl verify accepts" evmctl verify --key "$K/$k.cert.der" f
	check "portable $k: vigil appraise accepts" "$VIGIL" appraise --keyring "$K/$k.cert.pem" f

	"$VIGIL" evm --key "$K/$k.key.pem" --uuid "$UUID" f
	check_eq "bound $k: type 03" "$(xhex f security.evm | cut -c1-4)" 0302
	check "bound $k: evmctl verify --uuid accepts" evmctl verify --key "$K/$k.cert.der" --uuid="$UUID" f
	"$VIGIL" evm --key "$K/$k.key.pem" f
	check "bound $k, UUID read from the filesystem: evmctl agrees" evmctl verify --key "$K/$k.cert.der" --uuid="$UUID" f
	check "bound $k: vigil appraise accepts" "$VIGIL" appraise --keyring "$K/$k.cert.pem" f
	"$VIGIL" evm --key "$K/$k.key.pem" --no-uuid f
	check "bound $k --no-uuid: evmctl verify --uuid (none) accepts" evmctl verify --key "$K/$k.cert.der" --uuid f
	check_rc 1 "bound $k --no-uuid: fails where the UUID is expected" "$VIGIL" appraise --keyring "$K/$k.cert.pem" f
	check "bound $k --no-uuid: passes with --no-uuid" "$VIGIL" appraise --no-uuid --keyring "$K/$k.cert.pem" f
done

# portable signatures survive a copy to another inode, bound ones do not
"$VIGIL" evm --key "$K/rsa2048.key.pem" --portable f
# cp -a leaves security.evm behind (/etc/xattr.conf): copy it by hand
cpx() { rm -f "$2"; cp -a "$1" "$2"; setfattr -n security.evm -v "0x$(xhex "$1" security.evm)" "$2"; }
KR=(--keyring "$K/rsa2048.cert.pem" --keyring "$K/ecp256.cert.pem" --require-evm)
cpx f copy
check "portable label survives a copy with xattrs" "$VIGIL" appraise "${KR[@]}" copy
"$VIGIL" evm --key "$K/rsa2048.key.pem" f
cpx f copy
check_eq "bound label does not: copy to another inode" \
	"$("$VIGIL" appraise "${KR[@]}" copy)" "copy: fail (invalid-HMAC)"

# HMAC against evmctl 1.4, which reads the key from /etc/keys/evm-key-plain
mkdir -p "$T/etckeys"
cp "$K/evm-key-plain.bin" "$T/etckeys/evm-key-plain"
mkdir -p /etc/keys
mount --bind "$T/etckeys" /etc/keys
"$VIGIL" hash -w f >/dev/null
cp -a f g
"$VIGIL" evm --hmac-key "$K/evm-key-plain.bin" --no-uuid f
evmctl hmac -a sha1 g >/dev/null 2>&1
ino_f=$(stat -c %i f)
gen_f=$(lsattr -v f | awk '{print $1}')
evmctl_hmac=$(xhex g security.evm)
# evmctl hashed g's own inode; recompute ours for g's inode to compare bytes
"$VIGIL" evm --hmac-key "$K/evm-key-plain.bin" --no-uuid g
check_eq "HMAC --no-uuid equals evmctl 1.4 hmac -a sha1 byte for byte" "$(xhex g security.evm)" "$evmctl_hmac"
check_eq "HMAC is 02 + 20 bytes" "$(($(xhex f security.evm | wc -c) / 2)):$(xhex f security.evm | cut -c1-2)" "21:02"
check "HMAC --no-uuid appraises with --no-uuid" "$VIGIL" appraise --no-uuid --hmac-key "$K/evm-key-plain.bin" f

# with the UUID (the kernel's CONFIG_EVM_ATTR_FSUUID=y): recompute in openssl
"$VIGIL" evm --hmac-key "$K/evm-key-plain.bin" f
key=$(od -An -tx1 -v "$K/evm-key-plain.bin" | tr -d ' \n')
key=$key$(printf '%0*d' $((256 - ${#key})) 0)
le() { local v=$1 n=$2 i; for ((i = 0; i < n; i++)); do printf '%02x' $(((v >> (8 * i)) & 255)); done; }
misc=$(le "$ino_f" 8)$(le "$gen_f" 4)$(le 1000 4)$(le 1001 4)$(le $((0100750)) 2)0000
input=$(xhex f security.ima)$misc${UUID//-/}
want=$(echo -n "$input" | xxd -r -p | openssl dgst -sha1 -mac HMAC -macopt hexkey:"$key" -r | cut -d' ' -f1)
check_eq "HMAC with UUID equals openssl over xattrs||h_misc||uuid" "$(xhex f security.evm)" "02$want"
check "HMAC with UUID appraises" "$VIGIL" appraise --hmac-key "$K/evm-key-plain.bin" f
check_rc 1 "... and differs from evmctl 1.4 (no UUID): the documented difference" \
	"$VIGIL" appraise --no-uuid --hmac-key "$K/evm-key-plain.bin" f

# protected extra attributes
setfattr -n security.vigil.revision -v 7 f
"$VIGIL" evm --hmac-key "$K/evm-key-plain.bin" --evm-xattr security.vigil.revision f
check "extra protected xattr: appraises when listed" "$VIGIL" appraise --hmac-key "$K/evm-key-plain.bin" --evm-xattr security.vigil.revision f
setfattr -n security.vigil.revision -v 6 f
check_eq "extra protected xattr: a change is invalid-HMAC" \
	"$("$VIGIL" appraise --hmac-key "$K/evm-key-plain.bin" --evm-xattr security.vigil.revision f)" "f: fail (invalid-HMAC)"

# the evm command writes nothing when it fails
: >nolabel
setfattr -x security.evm nolabel 2>/dev/null
check_rc 2 "portable signature without security.ima is refused" "$VIGIL" evm --key "$K/rsa2048.key.pem" --portable nolabel
check_eq "... and nothing is written" "$(xhex nolabel security.evm)" ""
