#!/usr/bin/env bash
# vigil label -r / appraise -r: whole trees on ext4 (real inode numbers,
# generations, UUID): label then appraise passes; every kind of tampering
# is reported with its reason and counted; the labels equal what the
# single-file commands write; hard links once, symlinks not followed,
# mount points not crossed; odd names survive; exit codes.
. "$SRCDIR/tests/lib.sh"
vg_init
K=$VECTORS/evmctl/keys
HK=$K/evm-key-plain.bin
export VIGIL_CONFIG=/dev/null
vg_ext4 fs 64
R=fs/tree

mkdir -p $R/a/b/c $R/d $R/e
for i in $(seq 1 200); do head -c $((i * 97 % 9000)) /dev/urandom >$R/a/f$i; done
for i in $(seq 1 40); do echo "$i" >$R/a/b/g$i; done
head -c 3000000 /dev/urandom >$R/a/b/c/big
: >$R/d/empty
echo linked >$R/d/x; ln $R/d/x $R/d/x-hardlink
ln -s x $R/d/sym; ln -s /etc/passwd $R/d/abs-sym
mkfifo $R/d/fifo
printf 'nl' >"$R/e/$(printf 'new\nline')"
printf 'ff' >"$R/e/$(printf 'bad\xffname')"
printf 'sp' >"$R/e/with space"
# a mount point below the root: not entered
mkdir $R/mnt; mount -t tmpfs inner $R/mnt; echo inner >$R/mnt/inside

check "label -r with an HMAC key" "$VIGIL" label -r -q --hmac-key "$HK" $R
out=$("$VIGIL" label -r --hmac-key "$HK" $R)
check_eq "summary counts files, skips link, symlinks, fifo" \
	"$(echo "$out" | head -1 | sed 's/ in [0-9.]* s//')" \
	"labeled 246 of 246 files (3.8 MB); 0 failed, 0 errors, 4 skipped"
check "the hard link is skipped once" grep -qx '  hard-link: 1' <<<"$out"
check "two symlinks skipped" grep -qx '  symlink: 2' <<<"$out"
check "the fifo skipped" grep -qx '  special: 1' <<<"$out"
check_rc 1 "the mount point was not entered" getfattr -n security.ima $R/mnt/inside
check_rc 1 "the symlink target outside is untouched" getfattr -n security.ima /etc/passwd
check "a name with a newline is labeled" getfattr -n security.ima "$R/e/$(printf 'new\nline')"
check "a name with invalid UTF-8 is labeled" getfattr -n security.ima "$R/e/$(printf 'bad\xffname')"

# the labels are what the single-file commands write
cp -p $R/a/f7 fs/single
"$VIGIL" hash -w fs/single >/dev/null
check_eq "security.ima equals vigil hash -w" "$(xhex $R/a/f7 security.ima)" "$(xhex fs/single security.ima)"
check "security.evm verifies as single-file appraise" "$VIGIL" appraise --hmac-key "$HK" $R/a/f7

out=$("$VIGIL" appraise -r --hmac-key "$HK" $R)
check_eq "appraise -r passes everything" "$(echo "$out" | head -1 | sed 's/ in [0-9.]* s//')" \
	"checked 246 files (3.8 MB): 246 passed, 0 failed, 0 errors, 4 skipped"
check "appraise -r exit 0" "$VIGIL" appraise -r -q --hmac-key "$HK" $R
check_eq "appraise -r -v prints every file" "$("$VIGIL" appraise -r -v --hmac-key "$HK" $R | grep -c ': ok$')" 246

# tampering, one kind per file
flip_last_byte $R/a/f1
chmod 0600 $R/a/f2
chown 7 $R/a/f3
chgrp 7 $R/a/f4
setfattr -n security.selinux -v system_u:object_r:etc_t:s0 $R/a/f5
flip_xattr $R/a/f6 security.evm
setfattr -x security.ima $R/a/f8
setfattr -x security.evm $R/a/f9
# f10's content and labels replaced by f11's (a swapped file)
cp $R/a/f11 fs/tmp11 && cat fs/tmp11 >$R/a/f10
setfattr -n security.ima -v 0x"$(xhex $R/a/f11 security.ima)" $R/a/f10
setfattr -n security.evm -v 0x"$(xhex $R/a/f11 security.evm)" $R/a/f10
# a file copied with its xattrs to another inode (HMAC binds the inode)
cp $R/a/f12 $R/a/copy12
setfattr -n security.ima -v 0x"$(xhex $R/a/f12 security.ima)" $R/a/copy12
setfattr -n security.evm -v 0x"$(xhex $R/a/f12 security.evm)" $R/a/copy12
chmod 0644 $R/a/copy12; chown --reference=$R/a/f12 $R/a/copy12

out=$("$VIGIL" appraise -r --hmac-key "$HK" $R); rc=$?
check_eq "appraise -r exits 1 on failures" "$rc" 1
want="$R/a/copy12: fail (invalid-HMAC)
$R/a/f10: fail (invalid-HMAC)
$R/a/f1: fail (invalid-hash)
$R/a/f2: fail (invalid-HMAC)
$R/a/f3: fail (invalid-HMAC)
$R/a/f4: fail (invalid-HMAC)
$R/a/f5: fail (invalid-HMAC)
$R/a/f6: fail (invalid-HMAC)
$R/a/f8: fail (missing-hash)
$R/a/f9: fail (missing-HMAC)"
check_eq "each tampered file, and only those, with its reason" "$(echo "$out" | grep ': fail' | LC_ALL=C sort)" "$want"
check_eq "the summary counts them" "$(echo "$out" | grep '^checked' | sed 's/ in [0-9.]* s//')" \
	"checked 247 files (3.8 MB): 237 passed, 10 failed, 0 errors, 4 skipped"
check "failures by reason: invalid-HMAC 7" grep -qx '  invalid-HMAC: 7' <<<"$out"
check "failures by reason: invalid-hash 1" grep -qx '  invalid-hash: 1' <<<"$out"

js=$("$VIGIL" appraise -r --json --hmac-key "$HK" $R)
check_eq "--json: one object per failing file and a summary" "$(echo "$js" | wc -l)" 11
check "--json lines are valid JSON" python3 -c '
import json,sys
objs=[json.loads(l) for l in sys.stdin]
s=objs[-1]
assert s["summary"] and s["failed"]==10 and s["passed"]==237, s
assert s["failed_by_reason"]=={"invalid-hash":1,"invalid-HMAC":7,"missing-hash":1,"missing-HMAC":1}, s
assert all(o["result"]=="fail" for o in objs[:-1])' <<<"$js"

out=$("$VIGIL" appraise -r --metadata-only --hmac-key "$HK" $R)
check_eq "--metadata-only: every metadata change, not the content change" \
	"$(echo "$out" | grep ': fail' | LC_ALL=C sort | tr '\n' ' ')" \
	"$(echo "$want" | grep -v 'invalid-hash' | tr '\n' ' ')"
check_rc 1 "--metadata-only without a key: a file without security.evm fails" \
	"$VIGIL" appraise --metadata-only $R/a/f9

# label again fixes everything
check "label -r again" "$VIGIL" label -r -q --hmac-key "$HK" $R
check "then appraise -r passes" "$VIGIL" appraise -r -q --hmac-key "$HK" $R

# signatures: security.ima signed, security.evm portable
check "label -r --key --evm-key --portable" "$VIGIL" label -r -q --key "$K/ecp256.key.pem" \
	--evm-key "$K/rsa2048.key.pem" --portable $R/a/b
check_eq "security.ima is a signature (03)" "$(xhex $R/a/b/g1 security.ima | cut -c1-2)" 03
check_eq "security.evm is portable (05)" "$(xhex $R/a/b/g1 security.evm | cut -c1-2)" 05
check "appraise -r with the keyring" "$VIGIL" appraise -r -q --keyring "$K/ecp256.cert.pem" \
	--keyring "$K/rsa2048.cert.pem" --require-sig $R/a/b
check "evmctl verifies a portable label vigil wrote in the tree" \
	evmctl ima_verify --key "$K/ecp256.cert.der" $R/a/b/g2

# errors: a directory without -r, a missing path, an unreadable file
check_rc 2 "appraise DIR without -r is an error" "$VIGIL" appraise --hmac-key "$HK" $R
check_rc 2 "a missing root is an error" "$VIGIL" appraise -r -q --hmac-key "$HK" fs/nonexistent
check_rc 2 "label with no path" "$VIGIL" label --hmac-key "$HK"
check_rc 2 "bad --jobs" "$VIGIL" label -j 0 --hmac-key "$HK" $R
check "label --jobs 1 works too" "$VIGIL" label -r -q -j 1 --hmac-key "$HK" $R
