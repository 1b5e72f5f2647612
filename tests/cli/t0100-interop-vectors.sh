#!/usr/bin/env bash
# Every evmctl 1.4 vector (tests/vectors/evmctl, see its README) restored
# on fresh copies of its file, appraised by vigil; tampered copies fail
# for the kernel's reason. Runs on ext4 (evmctl needs FS_IOC_GETVERSION).
. "$SRCDIR/tests/lib.sh"
vg_init
V=$VECTORS/evmctl
M=$V/manifest.tsv
K=$V/keys
vg_ext4 fs 128
KR=(--keyring "$K/rsa2048.cert.pem" --keyring "$K/ecp256.cert.der" --keyring "$K/rsa4096.cert.pem")
FIXED=(--inode 123456 --generation 987654321)
FIXED_UUID=6a1f4e2c-3b5d-4c7e-9f80-112233445566

# restore CASE DIR: copy the case's file into DIR, set owner, mode, xattrs
restore() {
	local c=$1 d=$2 file mode uid gid
	rm -rf "$d"
	mkdir -p "$d"
	IFS=$'\t' read -r _ _ file mode uid gid _ < <(awk -F'\t' -v c="$c" 'NR>1 && $1==c' "$M" | head -1)
	cp "$V/$file" "$d/f"
	chown "$uid:$gid" "$d/f"
	chmod "$(printf '%o' $((8#$mode & 07777)))" "$d/f"
	awk -F'\t' -v c="$c" 'NR>1 && $1==c {print $10 "\t" $11}' "$M" |
		while IFS=$'\t' read -r x v; do setfattr -n "$x" -v "0x$v" "$d/f"; done
}
col() { awk -F'\t' -v c="$1" -v n="$2" 'NR>1 && $1==c {print $n; exit}' "$M"; }

# expect CASE TAMPER WANT CMD...: restore, tamper, run, compare the line
expect() {
	local c=$1 tamper=$2 want=$3 d=fs/$1
	shift 3
	restore "$c" "$d"
	case $tamper in
	none) ;;
	data) flip_last_byte "$d/f" ;;
	xattr:*) flip_xattr "$d/f" "${tamper#xattr:}" ;;
	chmod) chmod o+w "$d/f" ;;
	chown) chown "$(($(stat -c %u "$d/f") + 1))" "$d/f" ;;
	add-smack-exec) setfattr -n security.SMACK64EXEC -v _ "$d/f" ;;
	esac
	check_eq "$c [$tamper]" "$("$@" "$d/f" 2>&1 | sed "s|^$d/f: ||")" "$want"
}

cases=$(awk -F'\t' 'NR>1 {print $1 "\t" $2}' "$M" | sort -u)
n=0
while IFS=$'\t' read -r c kind; do
	n=$((n + 1))
	case $kind in
	ima_hash)
		expect "$c" none ok "$VIGIL" appraise
		expect "$c" data "fail (invalid-hash)" "$VIGIL" appraise
		expect "$c" xattr:security.ima "fail (invalid-hash)" "$VIGIL" appraise
		;;
	ima_sign | ima_sigfile)
		expect "$c" none ok "$VIGIL" appraise "${KR[@]}"
		expect "$c" none ok "$VIGIL" appraise --require-sig "${KR[@]}"
		expect "$c" data "fail (invalid-signature)" "$VIGIL" appraise "${KR[@]}"
		expect "$c" xattr:security.ima "fail (invalid-signature)" "$VIGIL" appraise "${KR[@]}"
		expect "$c" none "fail (unknown-key)" "$VIGIL" appraise
		;;
	evm_portable)
		expect "$c" none ok "$VIGIL" appraise "${KR[@]}"
		expect "$c" none ok "$VIGIL" appraise --require-sig "${KR[@]}"
		if [[ $c == *.imasig ]]; then
			expect "$c" data "fail (invalid-signature)" "$VIGIL" appraise "${KR[@]}"
		else
			expect "$c" data "fail (invalid-hash)" "$VIGIL" appraise "${KR[@]}"
		fi
		expect "$c" xattr:security.ima "fail (invalid-fail-immutable)" "$VIGIL" appraise "${KR[@]}"
		expect "$c" xattr:security.evm "fail (invalid-fail-immutable)" "$VIGIL" appraise "${KR[@]}"
		expect "$c" chmod "fail (invalid-fail-immutable)" "$VIGIL" appraise "${KR[@]}"
		expect "$c" chown "fail (invalid-fail-immutable)" "$VIGIL" appraise "${KR[@]}"
		;;
	evm_sig_fixedmeta)
		expect "$c" none ok "$VIGIL" appraise "${KR[@]}" "${FIXED[@]}" --uuid "$FIXED_UUID"
		expect "$c" none "fail (invalid-HMAC)" "$VIGIL" appraise "${KR[@]}" --uuid "$FIXED_UUID"
		expect "$c" none "fail (invalid-HMAC)" "$VIGIL" appraise "${KR[@]}" "${FIXED[@]}" --no-uuid
		expect "$c" chmod "fail (invalid-HMAC)" "$VIGIL" appraise "${KR[@]}" "${FIXED[@]}" --uuid "$FIXED_UUID"
		expect "$c" xattr:security.ima "fail (invalid-HMAC)" "$VIGIL" appraise "${KR[@]}" "${FIXED[@]}" --uuid "$FIXED_UUID"
		expect "$c" data "fail (invalid-hash)" "$VIGIL" appraise "${KR[@]}" "${FIXED[@]}" --uuid "$FIXED_UUID"
		;;
	evm_sig_fixedmeta_nouuid)
		expect "$c" none ok "$VIGIL" appraise "${KR[@]}" "${FIXED[@]}" --no-uuid
		expect "$c" none "fail (invalid-HMAC)" "$VIGIL" appraise "${KR[@]}" "${FIXED[@]}" --uuid "$FIXED_UUID"
		expect "$c" chown "fail (invalid-HMAC)" "$VIGIL" appraise "${KR[@]}" "${FIXED[@]}" --no-uuid
		;;
	evm_hmac)
		# evmctl 1.4: no UUID; the file's inode and generation at creation
		meta=(--inode "$(col "$c" 8)" --generation "$(col "$c" 9)" --no-uuid)
		if [[ $c == *.sha1 ]]; then
			expect "$c" none ok "$VIGIL" appraise --hmac-key "$K/evm-key-plain.bin" "${meta[@]}"
			expect "$c" chmod "fail (invalid-HMAC)" "$VIGIL" appraise --hmac-key "$K/evm-key-plain.bin" "${meta[@]}"
			expect "$c" xattr:security.ima "fail (invalid-HMAC)" "$VIGIL" appraise --hmac-key "$K/evm-key-plain.bin" "${meta[@]}"
			expect "$c" xattr:security.evm "fail (invalid-HMAC)" "$VIGIL" appraise --hmac-key "$K/evm-key-plain.bin" "${meta[@]}"
			expect "$c" none "fail (invalid-HMAC)" "$VIGIL" appraise --hmac-key "$K/evm-key-plain.bin" --no-uuid
		else
			# evmctl 1.4's default -a sha256 gives 33 bytes: the kernel rejects it
			expect "$c" none "fail (invalid-HMAC)" "$VIGIL" appraise --hmac-key "$K/evm-key-plain.bin" "${meta[@]}"
		fi
		;;
	evm_portable_lsm)
		expect "$c" none ok "$VIGIL" appraise "${KR[@]}"
		for x in security.selinux security.apparmor security.SMACK64 security.capability; do
			expect "$c" "xattr:$x" "fail (invalid-fail-immutable)" "$VIGIL" appraise "${KR[@]}"
		done
		# the kernel puts every configured name in a portable signature,
		# evmctl 1.4 only its 5 defaults: kernel semantics here
		expect "$c" add-smack-exec "fail (invalid-fail-immutable)" "$VIGIL" appraise "${KR[@]}"
		restore "$c" fs/lsm-evmctl
		setfattr -n security.SMACK64EXEC -v _ fs/lsm-evmctl/f
		check "$c [add-smack-exec]: evmctl 1.4 still accepts (the documented difference)" \
			evmctl verify --key "$K/rsa2048.cert.der" fs/lsm-evmctl/f
		;;
	*)
		check "unknown vector kind $kind" false
		;;
	esac
done <<<"$cases"
check_eq "all 62 vector cases were exercised" "$n" 62
