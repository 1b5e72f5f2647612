#!/usr/bin/env bash
# scripts/demo.sh BUILD - vigil end to end, on embedded defaults.
#
# Runs as root inside a private mount namespace, on its own ext4 image and
# tmpfs: nothing outside is labeled, mounted or changed. Each step prints
# what it does and what vigil answered; the demo fails (exit 1) if any
# answer is not the expected one.
set -u
BUILD=${1:-build}
SRC=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$SRC/$BUILD ;; esac
VIGIL=$BUILD/cli/vigil
VIGILD=$BUILD/daemon/vigild
export VIGIL_CONFIG=/dev/null

[ -x "$VIGIL" ] || { echo "demo: $VIGIL not built (make build)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "demo: run as root (security.* xattrs, mounts)" >&2; exit 2; }
if [ -z "${VG_DEMO_NS:-}" ]; then
	export VG_DEMO_NS=1
	exec unshare -m --propagation private bash "$0" "$@"
fi

D=$(mktemp -d /tmp/vigil-demo.XXXXXX)
mount -t tmpfs -o size=512m vigil-demo "$D"
cleanup() {
	local rc=$?
	[ -f "$D/tpm/pid" ] && bash "$SRC/scripts/swtpm.sh" stop "$D/tpm" >/dev/null 2>&1
	cd /
	umount -l "$D/root" 2>/dev/null
	umount -l "$D" 2>/dev/null
	rmdir "$D" 2>/dev/null
	exit $rc
}
trap cleanup EXIT
cd "$D" || exit 2

failed=0
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
expect() {	# expect RC DESCRIPTION -- command...
	local want=$1 what=$2 rc
	shift 3
	printf '$ %s\n' "$*"
	"$@"
	rc=$?
	if [ "$rc" -eq "$want" ]; then
		printf '   -> %s (exit %d, as expected)\n' "$what" "$rc"
	else
		printf '   -> UNEXPECTED: exit %d, wanted %d (%s)\n' "$rc" "$want" "$what"
		failed=$((failed + 1))
	fi
}

step "a small root filesystem on ext4 (real inode numbers, generations, UUID)"
dd if=/dev/zero of=root.img bs=1M count=64 status=none
mkfs.ext4 -q -F -b 4096 -I 256 -O ^has_journal root.img
mkdir root && mount -o loop root.img root
mkdir -p root/usr/bin root/usr/lib root/etc root/var/log
for i in $(seq 1 200); do head -c $((i * 211 % 20000 + 1)) /dev/urandom >root/usr/lib/lib$i.so; done
for t in ls cat sh; do cp "/usr/bin/$t" root/usr/bin/; done
echo 'root:x:0:0:root:/root:/bin/sh' >root/etc/passwd
echo 'log line' >root/var/log/messages
ln -s ../lib/lib1.so root/usr/bin/link
echo "generated $(find root -type f | wc -l) files under $D/root"

step "an EVM HMAC key and a signing key"
run head -c 32 /dev/urandom >evm.key
run openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
	-subj /CN=vigil-demo-ima -keyout ima.key -out ima.crt -outform PEM -batch 2>/dev/null
openssl x509 -in ima.crt -outform DER -out ima.der
cat >vigil.conf <<EOF
# what the demo labels: everything but the logs
hash = sha256
evm.xattr = security.vigil.integrity
key.hmac = $D/evm.key
skip path=$D/root/var/log
EOF
cat vigil.conf

step "label the tree: security.ima (hash) then security.evm (HMAC over metadata)"
expect 0 "every selected file labeled" -- "$VIGIL" label -r --config vigil.conf root
run getfattr -d -m security -e hex root/usr/bin/ls
step "label the binaries with signatures instead (security.ima type 03)"
expect 0 "signed" -- "$VIGIL" label -r -q --config vigil.conf --key ima.key root/usr/bin
expect 0 "evmctl (the kernel's userspace tool) verifies vigil's signature" -- \
	evmctl ima_verify --key ima.der root/usr/bin/ls

step "appraise the whole tree"
expect 0 "all pass" -- "$VIGIL" appraise -r --config vigil.conf --keyring ima.crt root

step "record the tree AIDE-style in an HMAC'ed database"
expect 0 "recorded" -- "$VIGIL" scan --init --config vigil.conf -o scan.db root

step "an offline attacker: change one library's content and another's mode"
run dd if=/dev/urandom of=root/usr/lib/lib7.so bs=1 count=1 seek=3 conv=notrunc status=none
run chmod 4755 root/usr/lib/lib9.so
expect 1 "both caught, each with the kernel's reason" -- \
	"$VIGIL" appraise -r --config vigil.conf --keyring ima.crt root
expect 1 "the scan reports exactly what changed" -- \
	"$VIGIL" scan --check scan.db --config vigil.conf

step "the attacker copies a labeled file's xattrs onto a trojan (label transplant)"
run cp root/usr/lib/lib20.so root/usr/lib/trojan.so
for x in security.ima security.evm; do
	v=$(getfattr -n $x -e hex root/usr/lib/lib20.so 2>/dev/null | sed -n "s/^$x=//p")
	run setfattr -n $x -v "$v" root/usr/lib/trojan.so
done
expect 1 "refused: the HMAC binds the inode, generation and filesystem" -- \
	"$VIGIL" appraise --config vigil.conf root/usr/lib/trojan.so

step "the attacker edits the scan database to hide the change"
run sqlite3 scan.db "UPDATE files SET mode = 35309 WHERE path = CAST('root/usr/lib/lib9.so' AS BLOB)"
expect 2 "refused: the database's MAC no longer matches" -- \
	"$VIGIL" scan --check scan.db --config vigil.conf

step "relabel after a legitimate update, and everything passes again"
rm root/usr/lib/trojan.so
expect 0 "relabeled" -- "$VIGIL" label -r -q --config vigil.conf root/usr/lib
expect 0 "all pass" -- "$VIGIL" appraise -r --config vigil.conf --keyring ima.crt root

# the EVM key sealed by the TPM, and the offline attack (issue 4)
. "$SRC/scripts/demo-key.sh"

step "vigild: the integrity hooks, enforcing on this filesystem only"
# appraisal scoped to the demo filesystem (fsuuid=): a policy that judged
# execution everywhere would make vigild refuse to start while the machine's
# own ways around it (memfd, user namespaces, unwatched writable mounts) are
# open (docs/vigild.md, "Gaps")
uuid=$(findmnt -no UUID root)
cat >vigild.policy <<EOF
# appraise everything executed or read on the demo filesystem, measure executables
measure func=BPRM_CHECK
appraise func=BPRM_CHECK fsuuid=$uuid
appraise func=FILE_CHECK mask=MAY_READ fsuuid=$uuid
EOF
cat vigild.policy
# vigild's appraisers run as this unprivileged system user (the package creates it)
getent passwd vigil >/dev/null || useradd --system --no-create-home --shell /usr/sbin/nologin vigil
# LOG N: wait (10 s at most) until vigild's LOG says "vigild: ready" N
# times in all; else print LOG and return 1 (demo-attest.sh's vigild too)
vigild_ready() {
	for _ in $(seq 100); do [ "$(grep -cx "vigild: ready" "$1")" -ge "$2" ] && return 0; sleep 0.1; done
	echo "vigild did not start:"
	cat "$1"
	return 1
}
start_vigild() {
	timeout -s KILL 120 "$VIGILD" --config vigil.conf --policy vigild.policy --watch root \
		--keyring ima.crt --log "$D/measurements" --no-tpm --control "$D/vigild.sock" \
		--audit "$D/audit.jsonl" --foreground 2>>vigild.err &
	VD=$!
	vigild_ready vigild.err "$1"
	VDPID=$(ps -o pid= --ppid $VD | head -1 | tr -d ' ')
	[ -z "$VDPID" ] || echo "vigild running (pid $VDPID)"
}
stop_vigild() { kill -TERM "$VDPID"; wait $VD; }
start_vigild 1
expect 0 "a labeled, signed binary runs" -- root/usr/bin/ls root/usr
expect 0 "a labeled binary reads a labeled file" -- root/usr/bin/cat root/etc/passwd
stop_vigild
step "offline, vigild stopped: an attacker patches /usr/bin/sh on the disk"
run dd if=/dev/urandom of=root/usr/bin/sh bs=1 count=1 seek=2000 conv=notrunc status=none
start_vigild 2
expect 126 "the tampered binary is refused at exec" -- root/usr/bin/sh -c true
expect 1 "and cannot be opened either" -- cat root/usr/bin/sh
run tail -1 audit.jsonl
expect 0 "vigil status" -- "$VIGIL" status --control "$D/vigild.sock"
stop_vigild
step "the measurement list vigild wrote (the kernel's ima-ng format), replayed"
expect 0 "shown as the kernel's ascii list" -- "$VIGIL" log show "$D/measurements"
expect 0 "replays" -- "$VIGIL" log replay "$D/measurements"

# remote attestation: swtpm, vigild measuring, vigil-agent, vigil-verifier on SQLite
. "$SRC/scripts/demo-attest.sh"

echo
if [ $failed -eq 0 ]; then
	echo "demo: every step gave the expected answer"
	exit 0
fi
echo "demo: $failed step(s) gave an unexpected answer"
exit 1
