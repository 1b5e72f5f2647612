#!/usr/bin/env bash
# vigil label / appraise -r on bad input: filesystems without xattrs,
# read-only filesystems, unreadable files, a security.evm that cannot be
# written after security.ima was (reported, and fixed by labeling again),
# a bad configuration. Each gets a precise message and a counted reason,
# the run goes on, and the exit code says something failed.
. "$SRCDIR/tests/lib.sh"
vg_init
K=$VECTORS/evmctl/keys
HK=$K/evm-key-plain.bin
export VIGIL_CONFIG=/dev/null

# a filesystem without xattr support (ramfs)
mkdir rf; mount -t ramfs r rf
echo a >rf/a; echo b >rf/b
out=$("$VIGIL" label -r --hmac-key "$HK" rf 2>err); rc=$?
check_eq "ramfs: label exits 1" "$rc" 1
check "ramfs: counted as no-xattr-support" grep -qx '  no-xattr-support: 2' <<<"$out"
check "ramfs: the message names the file and the problem" \
	grep -q '^vigil label: rf/a: security.ima not written: .*not supported' err

# a read-only filesystem: every file reported, the run completes
vg_ext4 ro 16
for i in 1 2 3; do echo $i >ro/f$i; done
mount -o remount,ro ro
out=$("$VIGIL" label -r --hmac-key "$HK" ro 2>err); rc=$?
check_eq "read-only fs: label exits 1" "$rc" 1
check "read-only fs: counted" grep -qx '  read-only-fs: 3' <<<"$out"
check_eq "read-only fs: one message per file" "$(grep -c 'Read-only file system' err)" 3

# an unreadable file (appraising as an unprivileged user)
mkdir -p t/d; echo secret >t/d/secret; echo open >t/d/open
"$VIGIL" label -r -q --hmac-key "$HK" t
chmod 0600 t/d/secret; chmod 0755 t t/d; chmod 0644 t/d/open; chmod 0644 "$HK" 2>/dev/null
cp "$HK" hk.bin; chmod 0644 hk.bin
"$VIGIL" label -q --hmac-key "$HK" t/d/secret t/d/open
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$VIGIL" appraise -r --hmac-key hk.bin t 2>err); rc=$?
check_eq "unreadable: appraise exits 2 (could not judge)" "$rc" 2
check "unreadable: the message names the file" grep -q 't/d/secret: cannot open: Permission denied' err
check "unreadable: counted" grep -qx '  unreadable: 1' <<<"$out"
check "unreadable: the other file was still checked" grep -q '1 passed' <<<"$out"

# security.ima written, security.evm not: fill the inode's xattr space
vg_ext4 full 16
echo content >full/f
"$VIGIL" label -q --no-evm full/f
n=0
while :; do
	lo=0; hi=4096
	setfattr -n user.p$n -v "" full/f 2>/dev/null || break
	while [ $((hi - lo)) -gt 1 ]; do
		mid=$(((lo + hi) / 2))
		if setfattr -n user.p$n -v "0x$(head -c $mid /dev/zero | od -An -tx1 -v | tr -d ' \n')" full/f 2>/dev/null; then lo=$mid; else hi=$mid; fi
	done
	setfattr -n user.p$n -v "0x$(head -c $lo /dev/zero | od -An -tx1 -v | tr -d ' \n')" full/f
	n=$((n + 1))
	[ $n -gt 20 ] && break
done
out=$("$VIGIL" label --hmac-key "$HK" full/f 2>err); rc=$?
check_eq "no room for security.evm: exit 1" "$rc" 1
check "reported as security.ima written, security.evm not" \
	grep -q 'full/f: security.ima written, security.evm not: .*label it again' err
check "counted as evm-not-written" grep -qx '  evm-not-written: 1' <<<"$out"
check_rc 1 "appraise reports the half-labeled file" "$VIGIL" appraise --hmac-key "$HK" full/f
for i in $(seq 0 $((n - 1))); do setfattr -x user.p$i full/f; done
check "labeling again fixes it" "$VIGIL" label -q --hmac-key "$HK" full/f
check "and then it appraises" "$VIGIL" appraise --hmac-key "$HK" full/f

# configuration errors name the file and line; nothing is labeled
echo x >cf
printf 'hash = sha256\nskip path=relative\n' >bad.conf
check_rc 2 "bad config: exit 2" "$VIGIL" label --config bad.conf --hmac-key "$HK" cf
"$VIGIL" label --config bad.conf --hmac-key "$HK" cf 2>err
check_eq "bad config: file:line: problem" "$(cat err)" \
	"vigil label: config: bad.conf:2: path= needs an absolute path, not 'relative'"
check_rc 1 "bad config: nothing was labeled" getfattr -n security.ima cf
printf 'hash = md17\n' >bad2.conf
"$VIGIL" label --config bad2.conf --hmac-key "$HK" cf 2>err
check_eq "unknown hash in config" "$(cat err)" "vigil label: config: bad2.conf:1: unknown hash algorithm 'md17'"
printf 'frobnicate = 1\n' >bad3.conf
"$VIGIL" label --config bad3.conf --hmac-key "$HK" cf 2>err
check_eq "unknown setting" "$(cat err)" "vigil label: config: bad3.conf:1: unknown setting 'frobnicate'"
check_rc 2 "a missing --config is an error" "$VIGIL" label --config nonexistent.conf --hmac-key "$HK" cf
