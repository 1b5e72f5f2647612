#!/usr/bin/env bash
# The threat model's rollback limits (docs/security.md, section 3): a
# measurement list rolled back *together with* its software PCR bank, and a
# scan database rolled back together with the tree it describes, are
# self-consistent and pass; only a TPM's PCR, which cannot be rolled back
# without a reboot, catches the first, and a TPM NV counter the second.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
vg_tpm_start
HK=$VECTORS/evmctl/keys/evm-key-plain.bin
mkdir d
echo one >d/a; echo two >d/b

# software bank: the log and the bank rolled back as a pair
"$VIGIL" measure --log sw.log d/a >/dev/null 2>&1
cp sw.log sw.old; cp sw.log.pcrs sw.pcrs.old
"$VIGIL" measure --log sw.log d/b >/dev/null 2>&1
check_eq "software bank: 3 entries after the second file" "$("$VIGIL" log show sw.log | wc -l)" 3
cp sw.old sw.log; cp sw.pcrs.old sw.log.pcrs
check "limit: the rolled-back pair replays (nothing can tell)" "$VIGIL" log replay --pcrs sw.log.pcrs sw.log
check "limit: and the writer reopens it without complaint" "$VIGIL" measure --log sw.log 2>/dev/null
check_eq "limit: the second measurement is gone" "$("$VIGIL" log show sw.log | wc -l)" 2

# TPM: the same rollback of the log alone
"$VIGIL" measure --tpm --log tpm.log d/a >/dev/null 2>&1
cp tpm.log tpm.old
"$VIGIL" measure --tpm --log tpm.log d/b >/dev/null 2>&1
cp tpm.old tpm.log
check_rc 1 "TPM: the rolled-back log no longer replays to PCR 10" "$VIGIL" log replay --tpm tpm.log
"$VIGIL" measure --tpm --log tpm.log d/a >/dev/null 2>err; rc=$?
check_eq "TPM: the writer refuses to go on with it (exit 2)" "$rc" 2
check "... saying why" grep -q "match no prefix of the log" err

# scan database: tree and database rolled back together (an offline
# attacker with the filesystem image): the MAC is valid, --check is clean
vg_ext4 fs 16
echo "version 1" >fs/r
umount fs
img=$(ls "$T"/.ext4-*.img)
cp "$img" image.v1
mount -o loop "$img" fs
"$VIGIL" scan --init -q -o v1.db --hmac-key "$HK" "$T/fs"
echo "version 2" >fs/r
"$VIGIL" scan --init -q -o v2.db --hmac-key "$HK" "$T/fs"
check_rc 1 "scan: the tree of version 2 against the version-1 database: changes" \
	"$VIGIL" scan --check v1.db -q --hmac-key "$HK"
umount fs
cp image.v1 "$img"
mount -o loop "$img" fs
cp v1.db current.db
check "limit: image and database both rolled back to version 1: no change reported" \
	"$VIGIL" scan --check current.db -q --hmac-key "$HK"
check_rc 1 "... the version-2 database would have said so" "$VIGIL" scan --check v2.db -q --hmac-key "$HK"

# the same rollback of image and database, the database bound to a TPM NV
# counter (docs/scan.md, "Rollback"): the older copy is refused
"$VIGIL" scan --init -q --tpm-counter -o c.db --hmac-key "$HK" "$T/fs" 2>/dev/null
cp c.db c.v1.db
umount fs
cp "$img" image.c1
mount -o loop "$img" fs
echo "version 2" >fs/r
check_rc 1 "TPM counter: --update records version 2" "$VIGIL" scan --update c.db -q --hmac-key "$HK"
umount fs
cp image.c1 "$img"
mount -o loop "$img" fs
cp c.v1.db c.db
check_rc 2 "TPM counter: image and database both rolled back: refused" \
	"$VIGIL" scan --check c.db -q --hmac-key "$HK"
cp "$T/.out" err
check "... as rolled-back" grep -q "c.db: rolled-back" err
