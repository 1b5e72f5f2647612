#!/usr/bin/env bash
# The offline attack: files on ext4 are labeled with an HMAC key sealed by
# the TPM to the boot PCRs 0-7. The attacker boots another system (PCR 4,
# the boot loader, differs), cannot unseal the key, and tampers with files
# and xattrs, including relabeling with a key of their own. After the
# machine boots the approved system again (PCRs back to the sealed
# values), the sealed key unseals and appraisal catches every tampered file.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
vg_tpm_start
vg_ext4 fs
rmdir fs/lost+found
run() { OUT=$("$@" 2>&1); RC=$?; }
said() { grep -q -- "$1" <<<"$OUT"; }

# --- approved boot: create the key, label the files ---
check "create the sealed key (PCRs 0-7)" "$VIGIL" key create --tpm -o "$T/evm.key"
files="keep1 keep2 keep3 keep4 content rehash relabel setuid chown swapped noevm noima selfseal"
for f in $files; do
	head -c $((RANDOM % 8000 + 1)) /dev/urandom >fs/$f
	chmod 0755 fs/$f
	"$VIGIL" hash -w fs/$f >/dev/null
	"$VIGIL" evm --hmac-key "$T/evm.key" fs/$f || echo "not ok - labeling $f"
done
check_eq "every file appraises in the approved state" \
	"$("$VIGIL" appraise --hmac-key "$T/evm.key" fs/* | grep -vc ': ok$')" 0

# --- the attacker boots another OS: reboot, a different boot loader in PCR 4 ---
vg_tpm_reset
tpm2_pcrextend 4:sha1=$(printf evil-loader | sha1sum | cut -c1-40),sha256=$(printf evil-loader | sha256sum | cut -c1-64)
run "$VIGIL" key unseal "$T/evm.key"
check_eq "the attacker cannot unseal the key" "$RC" 2
check "... and is told PCR 4 differs" said "PCR 4 (sha256) differs from the sealed state"
run "$VIGIL" evm --hmac-key "$T/evm.key" fs/keep1
check_eq "the attacker cannot make labels with it" "$RC" 2
# the attacker's own key, even one sealed to the attacker's boot state
head -c 32 /dev/urandom >"$T/attacker.key"
"$VIGIL" key create --tpm -o "$T/attacker-sealed.key" >/dev/null
check "the attacker can seal keys of their own" "$VIGIL" key unseal "$T/attacker-sealed.key"

printf 'evil' >>fs/content                                   # content only
printf 'evil' >>fs/rehash; "$VIGIL" hash -w fs/rehash >/dev/null  # content + security.ima
printf 'evil' >>fs/relabel; "$VIGIL" hash -w fs/relabel >/dev/null
"$VIGIL" evm --hmac-key "$T/attacker.key" fs/relabel          # + HMAC with the attacker's key
chmod u+s fs/setuid                                          # metadata
chown 1000:1000 fs/chown
setfattr -n security.evm -v "0x$(xhex fs/keep1 security.evm)" fs/swapped   # a valid HMAC of another file
setfattr -n security.ima -v "0x$(xhex fs/keep1 security.ima)" fs/swapped
setfattr -x security.evm fs/noevm                             # label removed
printf 'evil' >>fs/noima; setfattr -x security.ima fs/noima
printf 'evil' >>fs/selfseal; "$VIGIL" hash -w fs/selfseal >/dev/null
"$VIGIL" evm --hmac-key "$T/attacker-sealed.key" fs/selfseal
check_eq "in the attacker's system, the attacker's labels look fine" \
	"$("$VIGIL" appraise --hmac-key "$T/attacker.key" fs/relabel)" "fs/relabel: ok"

# --- the approved system boots again ---
vg_tpm_reset
check "back in the approved state the key unseals" "$VIGIL" key unseal "$T/evm.key"
check_rc 2 "and the attacker's sealed key does not" "$VIGIL" key unseal "$T/attacker-sealed.key"
out=$("$VIGIL" appraise --hmac-key "$T/evm.key" fs/*)
check_eq "appraisal catches every tampered file, and only those" "$out" \
"fs/chown: fail (invalid-HMAC)
fs/content: fail (invalid-hash)
fs/keep1: ok
fs/keep2: ok
fs/keep3: ok
fs/keep4: ok
fs/noevm: fail (missing-HMAC)
fs/noima: fail (missing-hash)
fs/rehash: fail (invalid-HMAC)
fs/relabel: fail (invalid-HMAC)
fs/selfseal: fail (invalid-HMAC)
fs/setuid: fail (invalid-HMAC)
fs/swapped: fail (invalid-HMAC)"
check_rc 1 "appraise exits 1" "$VIGIL" appraise --hmac-key "$T/evm.key" fs/*
