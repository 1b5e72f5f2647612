# shellcheck shell=bash
# tests/lib.sh - helpers for vigil's shell tests.
#
# A test script sources this file, calls `vg_init` (which re-runs the
# script inside a private mount namespace with a fresh tmpfs at $T, so
# security.* xattrs and mounts never touch the host), then makes checks:
#
#   check "what is checked" command args...     # passes if it exits 0
#   check_rc 1 "what" command args...           # passes if it exits 1
#   check_eq "what" "$got" "$want"
#
# Output is TAP ("ok N - what" / "not ok N - what" and the plan at the
# end), which the test runner sums into "N passed, M failed".
# Environment from meson: VIGIL (the binary), VECTORS (tests/vectors),
# SRCDIR (the source tree).
set -u

_n=0
_failed=0

vg_init() {
	if [ -z "${VG_IN_NS:-}" ]; then
		if [ "$(id -u)" -ne 0 ]; then
			echo "1..0 # SKIP needs root (security.* xattrs, mounts)"
			exit 0
		fi
		export VG_IN_NS=1
		exec unshare -m --propagation private bash "$0" "$@"
	fi
	T=$(mktemp -d /tmp/vigil-test.XXXXXX)
	mount -t tmpfs -o size=256m vigil-test "$T"
	trap vg_cleanup EXIT
	cd "$T" || exit 1
}

# Every gpg-agent a test's GnuPG home started (gpg starts one by itself and
# leaves it running): ended, or it outlives the test with the namespace and
# its loop devices, and takes inotify instances the next tests need.
vg_gpg_agents_stop() {
	local h
	for h in $(find "$T" -maxdepth 3 -type d \( -name 'gnupg*' -o -name '.gnupg' \) 2>/dev/null); do
		[ -e "$h/pubring.kbx" ] || [ -d "$h/private-keys-v1.d" ] || continue
		gpgconf --homedir "$h" --kill all 2>/dev/null
	done
	for h in $(pgrep -f "gpg-agent --homedir $T/" 2>/dev/null); do
		kill "$h" 2>/dev/null
	done
}

vg_cleanup() {
	local rc=$?
	vg_gpg_agents_stop
	cd /
	# loop devices are detached when their last mount goes away
	for m in $(awk -v t="$T" '$5 ~ "^"t {print $5}' /proc/self/mountinfo | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	umount -l "$T" 2>/dev/null
	rmdir "$T" 2>/dev/null
	echo "1..$_n"
	[ $_failed -eq 0 ] && [ $rc -eq 0 ] && exit 0
	exit 1
}

# vg_ext4 DIR [SIZE_MB]: mount a fresh ext4 (real inode generations, real
# superblock UUID) at DIR; prints nothing. The image lives on the tmpfs.
vg_ext4() {
	local dir=$1 size=${2:-64} img
	mkdir -p "$dir"
	img=$(mktemp "$T/.ext4-XXXXXX.img")
	dd if=/dev/zero of="$img" bs=1M count="$size" status=none
	mkfs.ext4 -q -F -b 4096 -I 256 -O ^has_journal "$img"
	mount -o loop "$img" "$dir"
}

_report() {
	_n=$((_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $_n - $2"
	else
		echo "not ok $_n - $2"
		_failed=$((_failed + 1))
		if [ -s "$T/.out" ]; then sed 's/^/#   /' "$T/.out" | head -20; fi
	fi
}

check() {
	local what=$1
	shift
	"$@" >"$T/.out" 2>&1
	_report $? "$what"
}

check_rc() {
	local want=$1 what=$2 rc
	shift 2
	"$@" >"$T/.out" 2>&1
	rc=$?
	[ $rc -eq "$want" ]
	local ok=$?
	[ $ok -ne 0 ] && echo "exit $rc, wanted $want" >>"$T/.out"
	_report $ok "$what"
}

check_eq() {
	if [ "$2" = "$3" ]; then
		: >"$T/.out"
		_report 0 "$1"
	else
		printf 'got:  %s\nwant: %s\n' "$2" "$3" >"$T/.out"
		_report 1 "$1"
	fi
}

# hex value of xattr NAME on FILE, without 0x
xhex() {
	getfattr --absolute-names -n "$2" -e hex "$1" 2>/dev/null | sed -n "s/^$2=0x//p"
}

# flip the last byte of FILE in place (an empty file gets one zero byte)
flip_last_byte() {
	local f=$1 size last
	size=$(stat -c %s "$f")
	if [ "$size" -eq 0 ]; then printf '\0' >"$f"; return; fi
	last=$(tail -c1 "$f" | od -An -tx1 | tr -d ' \n')
	printf "\\x$(printf '%02x' $((0x$last ^ 1)))" |
		dd of="$f" bs=1 seek=$((size - 1)) conv=notrunc status=none
}

# flip every bit of the byte at OFFSET of FILE in place: always a change
# (writing a fixed value leaves the byte as it was 1 time in 256)
flip_byte() {
	python3 -c 'import sys; f = open(sys.argv[1], "r+b"); o = int(sys.argv[2]); f.seek(o); b = f.read(1)[0]; f.seek(o); f.write(bytes([b ^ 0xff]))' "$1" "$2"
}

# flip the last byte of xattr NAME on FILE
flip_xattr() {
	local f=$1 x=$2 v n last
	v=$(xhex "$f" "$x")
	n=${#v}
	last=${v:n-2:2}
	setfattr -n "$x" -v "0x${v:0:n-2}$(printf '%02x' $((0x$last ^ 1)))" "$f"
}
