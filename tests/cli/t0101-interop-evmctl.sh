#!/usr/bin/env bash
# The other direction on a whole set of files: vigil labels, evmctl checks.
# For every vector data file and key: vigil sign -> evmctl ima_verify;
# vigil evm --portable -> evmctl verify; vigil evm (03) -> evmctl verify
# --uuid; and a one-byte change makes evmctl refuse.
. "$SRCDIR/tests/lib.sh"
vg_init
V=$VECTORS/evmctl
K=$V/keys
vg_ext4 fs 64
UUID=$(blkid -s UUID -o value "$T"/.ext4-*.img)

for f in empty one page big; do
	for k in rsa2048 ecp256 rsa4096; do
		d=fs/$f.$k
		mkdir -p "$d"
		cp "$V/data/$f.bin" "$d/f"
		"$VIGIL" sign --key "$K/$k.key.pem" "$d/f"
		check "$f $k: evmctl ima_verify" evmctl ima_verify --key "$K/$k.cert.der" "$d/f"
		"$VIGIL" evm --portable --key "$K/$k.key.pem" "$d/f"
		check "$f $k: evmctl verify (portable)" evmctl verify --key "$K/$k.cert.der" "$d/f"
		"$VIGIL" evm --key "$K/$k.key.pem" "$d/f"
		check "$f $k: evmctl verify --uuid (inode-bound)" evmctl verify --key "$K/$k.cert.der" --uuid="$UUID" "$d/f"
		chmod g+w "$d/f"
		check_rc 1 "$f $k: mode change, evmctl verify refuses" evmctl verify --key "$K/$k.cert.der" --uuid="$UUID" "$d/f"
		check_rc 1 "$f $k: mode change, vigil refuses" "$VIGIL" appraise --keyring "$K/$k.cert.pem" "$d/f"
	done
done
