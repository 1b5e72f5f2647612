#!/usr/bin/env bash
# The threat model's claims about labels (docs/security.md), each shown on
# ext4 with real inode numbers, generations and superblock UUIDs:
# offline tampering without the keys is caught, including relabeling with
# the attacker's own hash or key; an HMAC or 03 label moved to another
# inode (even one that reuses the inode number) or another filesystem
# fails; and the documented limits: a portable (05) label is valid on a
# copy by design, a hash label without EVM can be recomputed by anyone,
# and a file rolled back with its own old labels still appraises.
. "$SRCDIR/tests/lib.sh"
vg_init
K=$VECTORS/evmctl/keys
HK=$K/evm-key-plain.bin
KR=(--keyring "$K/rsa2048.cert.pem" --keyring "$K/ecp256.cert.pem")
vg_ext4 a
vg_ext4 b
ino() { stat -c %i "$1"; }
gen() { lsattr -v "$1" | awk '{print $1}'; }
uuid() { blkid -s UUID -o value "$(findmnt -n -o SOURCE "$1")"; }
copy_labels() {	# copy_labels FROM TO: the attacker's offline copy of both xattrs
	setfattr -n security.ima -v "0x$(xhex "$1" security.ima)" "$2"
	setfattr -n security.evm -v "0x$(xhex "$1" security.evm)" "$2"
}

# --- offline tampering by someone without the keys
head -c 5000 /dev/urandom >a/t1; "$VIGIL" hash -w a/t1 >/dev/null; "$VIGIL" evm --hmac-key "$HK" a/t1
printf evil >>a/t1; "$VIGIL" hash -w a/t1 >/dev/null
check_eq "content changed and security.ima recomputed: EVM catches it" \
	"$("$VIGIL" appraise --hmac-key "$HK" a/t1)" "a/t1: fail (invalid-HMAC)"
head -c 32 /dev/urandom >attacker.key
head -c 5000 /dev/urandom >a/t2; "$VIGIL" hash -w a/t2 >/dev/null; "$VIGIL" evm --hmac-key attacker.key a/t2
check_eq "relabeled with the attacker's own HMAC key" \
	"$("$VIGIL" appraise --hmac-key "$HK" a/t2)" "a/t2: fail (invalid-HMAC)"
head -c 5000 /dev/urandom >a/t3; "$VIGIL" sign --key "$K/rsa4096.key.pem" a/t3
"$VIGIL" evm --portable --key "$K/rsa4096.key.pem" a/t3
check_eq "re-signed with a key the keyring does not trust" \
	"$("$VIGIL" appraise "${KR[@]}" a/t3)" "a/t3: fail (unknown-key)"
head -c 5000 /dev/urandom >a/t4; "$VIGIL" sign --key "$K/rsa2048.key.pem" --keyid 7d279e7f a/t4
check_eq "a signature claiming another key's keyid" \
	"$("$VIGIL" appraise --keyring "$K/rsa4096.cert.pem" a/t4)" "a/t4: fail (invalid-signature)"
head -c 5000 /dev/urandom >a/t5; "$VIGIL" sign --key "$K/rsa2048.key.pem" a/t5
flip_byte a/t5 100
check_eq "content changed under a signature (no EVM)" \
	"$("$VIGIL" appraise "${KR[@]}" a/t5)" "a/t5: fail (invalid-signature)"
# limit: a bare hash label is a checksum, not a signature: anyone can redo it
head -c 5000 /dev/urandom >a/t6; "$VIGIL" hash -w a/t6 >/dev/null
printf evil >>a/t6; "$VIGIL" hash -w a/t6 >/dev/null
check_eq "limit: hash-only label recomputed by the attacker passes without EVM" \
	"$("$VIGIL" appraise a/t6)" "a/t6: ok"
check_eq "... which --require-sig refuses" \
	"$("$VIGIL" appraise --require-sig a/t6)" "a/t6: fail (IMA-signature-required)"

# --- label transplant: same filesystem, another inode
for kind in hmac sig03; do
	head -c 4000 /dev/urandom >a/src-$kind
	"$VIGIL" hash -w a/src-$kind >/dev/null
	if [ $kind = hmac ]; then
		"$VIGIL" evm --hmac-key "$HK" a/src-$kind; opt=(--hmac-key "$HK")
	else
		"$VIGIL" evm --key "$K/rsa2048.key.pem" a/src-$kind; opt=("${KR[@]}")
	fi
	check_eq "$kind: the original passes" "$("$VIGIL" appraise "${opt[@]}" a/src-$kind)" "a/src-$kind: ok"
	cp a/src-$kind a/dst-$kind; copy_labels a/src-$kind a/dst-$kind
	check_eq "$kind: same content and labels on another inode" \
		"$("$VIGIL" appraise "${opt[@]}" a/dst-$kind)" "a/dst-$kind: fail (invalid-HMAC)"
	# inode reuse: the attacker deletes the file and gets its inode number
	# again; the generation is what differs (checked with the old number)
	i=$(ino a/src-$kind); g=$(gen a/src-$kind)
	check "$kind: the copy has another generation" test "$(gen a/dst-$kind)" != "$g"
	check_eq "$kind: same inode number, other generation" \
		"$("$VIGIL" appraise "${opt[@]}" --inode "$i" a/dst-$kind)" "a/dst-$kind: fail (invalid-HMAC)"
	check_eq "$kind: control: with the old generation too it would pass" \
		"$("$VIGIL" appraise "${opt[@]}" --inode "$i" --generation "$g" a/dst-$kind)" "a/dst-$kind: ok"

	# --- another filesystem (other UUID), same inode and generation
	cp a/src-$kind b/x-$kind; copy_labels a/src-$kind b/x-$kind
	check "$kind: the two filesystems have different UUIDs" test "$(uuid a)" != "$(uuid b)"
	check_eq "$kind: moved to another filesystem, inode and generation kept" \
		"$("$VIGIL" appraise "${opt[@]}" --inode "$i" --generation "$g" b/x-$kind)" "b/x-$kind: fail (invalid-HMAC)"
	check_eq "$kind: control: with the first filesystem's UUID it would pass" \
		"$("$VIGIL" appraise "${opt[@]}" --inode "$i" --generation "$g" --uuid "$(uuid a)" b/x-$kind)" "b/x-$kind: ok"
done
# by design: a portable (05) label is valid on any copy
head -c 4000 /dev/urandom >a/p; "$VIGIL" sign --key "$K/ecp256.key.pem" a/p
"$VIGIL" evm --portable --key "$K/rsa2048.key.pem" a/p
cp a/p b/p; copy_labels a/p b/p
check_eq "limit: a portable label is valid on another filesystem" "$("$VIGIL" appraise "${KR[@]}" b/p)" "b/p: ok"

# --- rollback: an older version with its own valid labels
printf 'version 1 (vulnerable)\n' >a/r; "$VIGIL" sign --key "$K/rsa2048.key.pem" a/r
"$VIGIL" evm --key "$K/rsa2048.key.pem" a/r
cp a/r v1.content; v1i=$(xhex a/r security.ima); v1e=$(xhex a/r security.evm)
printf 'version 2 (fixed)\n' >a/r; "$VIGIL" sign --key "$K/rsa2048.key.pem" a/r
"$VIGIL" evm --key "$K/rsa2048.key.pem" a/r
check_eq "rollback: version 2 passes" "$("$VIGIL" appraise "${KR[@]}" a/r)" "a/r: ok"
cat v1.content >a/r
check_eq "rollback: version 1's content under version 2's labels fails" \
	"$("$VIGIL" appraise "${KR[@]}" a/r)" "a/r: fail (invalid-signature)"
setfattr -n security.ima -v "0x$v1i" a/r; setfattr -n security.evm -v "0x$v1e" a/r
check_eq "limit: version 1 restored in place with its own labels appraises" \
	"$("$VIGIL" appraise "${KR[@]}" a/r)" "a/r: ok"
# ... what catches it: attestation against a reference policy made when
# version 2 was current (the verifier judges each entry with this code)
mkdir -p pol
printf 'version 2 (fixed)\n' >pol/r
"$VIGIL" measure --log v2.log "$PWD/pol/r" >/dev/null
"$VIGIL" attest policy create --log v2.log -o v2.json >/dev/null
cp v1.content pol/r
"$VIGIL" measure --log v1.log "$PWD/pol/r" >/dev/null
"$VIGIL" attest policy check --policy v2.json v1.log >out 2>&1; rc=$?
check_eq "rollback caught: version 1 measured fails the version-2 policy (exit 1)" "$rc" 1
check "... naming the file and the digest the policy does not allow" \
	grep -q "FAIL policy.digest entry=1 path=$PWD/pol/r digest=sha256:$(sha256sum <v1.content | cut -c1-64)" out
"$VIGIL" attest policy create --log v1.log -o v1.json >/dev/null
check "... while a policy that still lists version 1 lets it pass" \
	"$VIGIL" attest policy check --policy v1.json v1.log
