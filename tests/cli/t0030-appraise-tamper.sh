#!/usr/bin/env bash
# vigil appraise: every kind of tampering is caught with the kernel's cause,
# for HMAC labels (02) and portable signatures (05), on tmpfs and ext4.
. "$SRCDIR/tests/lib.sh"
vg_init
K=$VECTORS/evmctl/keys
HK=$K/evm-key-plain.bin
vg_ext4 ext4

ap_hmac() { "$VIGIL" appraise --hmac-key "$HK" "$@"; }
ap_sig() { "$VIGIL" appraise --keyring "$K/rsa2048.cert.pem" --keyring "$K/ecp256.cert.pem" "$@"; }

for fs in . ext4; do
	mk() { head -c 3000 /dev/urandom >"$d/$1"; chmod 0644 "$d/$1"; }
	lab_hmac() { "$VIGIL" hash -w "$d/$1" >/dev/null && "$VIGIL" evm --hmac-key "$HK" "$d/$1"; }
	lab_sig() { "$VIGIL" sign --key "$K/ecp256.key.pem" "$d/$1" && "$VIGIL" evm --portable --key "$K/rsa2048.key.pem" "$d/$1"; }
	for kind in hmac sig; do
		d=$fs/t-$kind
		mkdir -p "$d"
		ap=ap_$kind
		lab=lab_$kind
		imm=$([ $kind = sig ] && echo invalid-fail-immutable || echo invalid-HMAC)
		content=$([ $kind = sig ] && echo invalid-signature || echo invalid-hash)

		mk good; $lab good
		check_eq "$fs $kind: a labeled file passes" "$($ap "$d/good")" "$d/good: ok"

		mk c; $lab c; flip_last_byte "$d/c"
		check_eq "$fs $kind: one content byte" "$($ap "$d/c")" "$d/c: fail ($content)"
		mk c2; $lab c2; printf x >>"$d/c2"
		check_eq "$fs $kind: an appended byte" "$($ap "$d/c2")" "$d/c2: fail ($content)"
		mk m; $lab m; chmod 0645 "$d/m"
		check_eq "$fs $kind: mode o+x" "$($ap "$d/m")" "$d/m: fail ($imm)"
		mk m2; $lab m2; chmod u+s "$d/m2"
		check_eq "$fs $kind: setuid bit" "$($ap "$d/m2")" "$d/m2: fail ($imm)"
		mk u; $lab u; chown 1 "$d/u"
		check_eq "$fs $kind: uid" "$($ap "$d/u")" "$d/u: fail ($imm)"
		mk g; $lab g; chgrp 1 "$d/g"
		check_eq "$fs $kind: gid" "$($ap "$d/g")" "$d/g: fail ($imm)"
		mk xi; $lab xi; flip_xattr "$d/xi" security.ima
		check_eq "$fs $kind: one byte of security.ima" "$($ap "$d/xi")" "$d/xi: fail ($imm)"
		mk xe; $lab xe; flip_xattr "$d/xe" security.evm
		check_eq "$fs $kind: one byte of security.evm" "$($ap "$d/xe")" "$d/xe: fail ($imm)"
		mk xs; $lab xs; setfattr -n security.selinux -v system_u:object_r:bin_t:s0 "$d/xs"
		check_eq "$fs $kind: a new protected xattr (selinux)" "$($ap "$d/xs")" "$d/xs: fail ($imm)"
		mk ne; $lab ne; setfattr -x security.evm "$d/ne"
		if [ $kind = hmac ]; then
			check_eq "$fs $kind: security.evm removed" "$($ap "$d/ne")" "$d/ne: fail (missing-HMAC)"
		else
			check_eq "$fs $kind: security.evm removed, --require-evm" "$($ap --require-evm "$d/ne")" "$d/ne: fail (missing-HMAC)"
		fi
		mk ni; $lab ni; setfattr -x security.ima "$d/ni"
		check_eq "$fs $kind: security.ima removed" "$($ap "$d/ni")" "$d/ni: fail (missing-hash)"
		# a label moved from one file to another (swap)
		mk s1; mk s2; $lab s1; $lab s2
		v1=$(xhex "$d/s1" security.ima); e1=$(xhex "$d/s1" security.evm)
		setfattr -n security.ima -v "0x$(xhex "$d/s2" security.ima)" "$d/s1"
		setfattr -n security.evm -v "0x$(xhex "$d/s2" security.evm)" "$d/s1"
		setfattr -n security.ima -v "0x$v1" "$d/s2"
		setfattr -n security.evm -v "0x$e1" "$d/s2"
		if [ $kind = hmac ]; then
			check_eq "$fs $kind: labels swapped between two files" "$($ap "$d/s1")" "$d/s1: fail (invalid-HMAC)"
		else
			# a portable pair is valid anywhere: the content then decides
			check_eq "$fs $kind: labels swapped between two files" "$($ap "$d/s1")" "$d/s1: fail (invalid-signature)"
		fi
		# the whole file copied with all its xattrs to another inode (cp -a
		# skips security.evm, see /etc/xattr.conf: copy them by hand)
		mk cp1; $lab cp1; cp -a "$d/cp1" "$d/cp2"
		setfattr -n security.evm -v "0x$(xhex "$d/cp1" security.evm)" "$d/cp2"
		if [ $kind = hmac ]; then
			check_eq "$fs $kind: copy with xattrs to another inode" "$($ap "$d/cp2")" "$d/cp2: fail (invalid-HMAC)"
		else
			check_eq "$fs $kind: portable label is valid on a copy" "$($ap "$d/cp2")" "$d/cp2: ok"
		fi
	done
done

# wrong keys
mk() { head -c 100 /dev/urandom >"$1"; }
mk w; "$VIGIL" hash -w w >/dev/null; "$VIGIL" evm --hmac-key "$HK" w
head -c 32 /dev/urandom >other.key
check_eq "another HMAC key: invalid-HMAC" "$("$VIGIL" appraise --hmac-key other.key w)" "w: fail (invalid-HMAC)"
mk w2; "$VIGIL" sign --key "$K/rsa4096.key.pem" w2
check_eq "signature by a key not in the keyring" "$(ap_sig w2)" "w2: fail (unknown-key)"
check_eq "-v says which keyid" "$(ap_sig -v w2)" "w2: fail (unknown-key): no trusted key with keyid 7d279e7f"
"$VIGIL" hash -w w2 >/dev/null
check_eq "--require-sig refuses a hash" "$(ap_sig --require-sig w2)" "w2: fail (IMA-signature-required)"
setfattr -n security.ima -v 0x0a0102 w2
check_eq "unknown security.ima type" "$(ap_sig w2)" "w2: fail (unknown-ima-data)"

# exit codes over several files
mk p1; "$VIGIL" hash -w p1 >/dev/null
check_rc 0 "all pass: exit 0" "$VIGIL" appraise p1 p1
check_rc 1 "any fails: exit 1" "$VIGIL" appraise p1 w2
