#!/usr/bin/env bash
# t0715: no unprivileged user can freeze vigild or step around it (issue 38).
#  1. Freeze: ten files of the user's own under write leases, opened at
#     once; a FIFO held open; a FUSE filesystem of the user's whose server
#     never answers, watched: another user's open of a labeled file is
#     answered within 1 s each time, and the user's own accesses are
#     refused or wait alone. Also with FAN_REPORT_FD_ERROR forced off (as
#     on Debian 12's 6.1).
#  2. Around: a FUSE program is judged (and cannot pass an appraisal); a
#     filesystem users can write and run from that is not watched, memfd
#     and user namespaces are refused at start in enforce mode under a
#     policy that judges execution, each naming itself and how to close it
#     (memfd also with vm.memfd_noexec forced absent), or listed when
#     accepted; `vigild --close-gaps` closes memfd (in a pid namespace of
#     the test's, where vm.memfd_noexec is its own) and a memfd program is
#     then refused by the kernel; --watch-mounts watches a tmpfs mounted
#     1777 after ready (with fanotify's mount events, and with them forced
#     off), and the time a program on it runs unseen is measured.
#  3. Before: a tampered program running before vigild starts is measured
#     and reported (ran-before-ready), and counted.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
PY=/usr/bin/python3
FUSE=
trap '_rc=$?; vd_stop; [ -n "$FUSE" ] && kill $FUSE 2>/dev/null; for m in $(awk -v t="$T" "\$5 ~ t\"/u/\" {print \$5}" /proc/self/mountinfo); do umount -l "$m"; done; (exit $_rc); vg_cleanup' EXIT
head -c 32 /dev/urandom >hk
vg_ext4 "$T/fs" 64
F=$T/fs
mkdir -m 1777 "$F/pub"
echo data >"$F/data"
cp /usr/bin/true "$F/good"
"$VIGIL" label -q --hmac-key hk "$F/data" "$F/good"
cp /usr/bin/true "$T/unlabeled"
chmod 755 "$T/unlabeled"
printf 'appraise func=BPRM_CHECK\nappraise func=FILE_CHECK mask=MAY_READ\n' >pol
nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
# the helpers run as nobody are given as text (python3 -c): the source tree
# may be below a directory nobody cannot search (a clone under mktemp -d)
other() { setpriv --reuid 65533 --regid 65533 --clear-groups "$@"; }
ms_of() { local t0; t0=$(date +%s%N); "$@" >/dev/null 2>&1; echo $((($(date +%s%N) - t0) / 1000000)); }
status() { "$VIGIL" status --control "$T/ctl" --json | $PY -c "import json,sys; print(json.load(sys.stdin)['counters']['$1'])"; }

# ---- 1. freeze ----
freeze_checks() {	# $1: what the kernel has
	nobody $PY -c "$(cat "$SRCDIR/tests/helpers/lease-opens.py")" "$F/pub" 10 >"$T/lease.out" 2>&1 &
	local lp=$! worst=0 ms
	for _ in $(seq 10); do
		ms=$(ms_of other timeout 20 cat "$F/data")
		[ "$ms" -gt "$worst" ] && worst=$ms
		sleep 0.05
	done
	wait $lp
	check "$1: ten leased files of a user's opened at once: another user's opens answered within 1 s (worst $worst ms)" \
		test "$worst" -lt 1000
	check "... the user's own opens refused at once, not held ($(cat "$T/lease.out"))" \
		grep -qE 'opened 0 refused 10 seconds 0\.' "$T/lease.out"
	check "... counted as open_errors" test "$(status open_errors)" -ge 10
	rm -f "$F/pub"/lease*
}
check "vigild starts" vd_start --policy pol --watch "$F" --hmac-key hk --no-tpm
freeze_checks "FAN_REPORT_FD_ERROR"
check "... each refusal audited with the opener (FAN_REPORT_FD_ERROR)" \
	test "$(grep -c '"action":"deny".*"reason":"unopenable: Resource temporarily unavailable"' "$T/audit")" -ge 10
check "... the opener's uid is in the record" grep -q '"uid":65534,.*"reason":"unopenable' "$T/audit"
mkfifo -m 666 "$F/pub/fifo"
setpriv --reuid 65534 --regid 65534 --clear-groups sh -c "exec 3<'$F/pub/fifo'; exec sleep 30" &
FIFO=$!
sleep 0.3
ms=$(ms_of other timeout 20 cat "$F/data")
check "a FIFO held open by the user: another user's open answered within 1 s ($ms ms)" test "$ms" -lt 1000
kill $FIFO 2>/dev/null
vd_stop
VIGILD=$VIGILD_TEST VIGILD_TEST_NO_FD_ERROR=1 check "vigild starts, FAN_REPORT_FD_ERROR forced off (Linux 6.1)" \
	vd_start --policy pol --watch "$F" --hmac-key hk --no-tpm
freeze_checks "no FAN_REPORT_FD_ERROR"
vd_stop

# a FUSE filesystem of the user's, watched: its server never answers. Root
# can reach (and mark) a user's FUSE filesystem only when it is mounted with
# allow_other, which /etc/fuse.conf must allow: this test's own, bound over
# the host's in the test's mount namespace.
printf 'user_allow_other\n' >"$T/fuse.conf"
mount --bind "$T/fuse.conf" /etc/fuse.conf
mkdir -p "$T/u/fuse" "$T/u/fuse2" "$T/u/fuse3"
chown 65534 "$T/u" "$T/u/fuse" "$T/u/fuse2" "$T/u/fuse3"
cp /usr/bin/true "$T/prog.src"; chmod 644 "$T/prog.src"
check "vigild starts, watching the mounts under $T/u as they appear" \
	vd_start --policy pol --watch "$F" --watch-mounts "$T/u" --hmac-key hk --no-tpm
setpriv --reuid 65534 --regid 65534 --clear-groups $PY -c "$(cat "$SRCDIR/tests/helpers/fuse-server.py")" "$T/u/fuse" \
	"$T/prog.src" hang allow_other >"$T/fuse.out" 2>&1 &
FUSE=$!
for _ in $(seq 100); do grep -q mounted "$T/fuse.out" && break; sleep 0.05; done
check "the user mounts a FUSE filesystem whose server never answers" grep -q mounted "$T/fuse.out"
sleep 0.5
check "... vigild gives it a reader of its own" sh -c "'$VIGIL' status --control '$T/ctl' | grep -q 'watched: $T/u/fuse (fuse.vigiltest, own reader'"
nobody timeout 5 sh -c "cat '$T/u/fuse/prog' >/dev/null" &	# waits on its own server
sleep 0.3
worst=0
for _ in $(seq 10); do
	ms=$(ms_of other timeout 20 cat "$F/data")
	[ "$ms" -gt "$worst" ] && worst=$ms
done
check "... another user's opens of a labeled file answered within 1 s (worst $worst ms)" test "$worst" -lt 1000
check "... and a labeled program runs" timeout 5 "$F/good"
check_rc 0 "... the control socket answers" timeout 5 "$VIGIL" status --control "$T/ctl"
fusermount3 -u -z "$T/u/fuse" 2>/dev/null || umount -l "$T/u/fuse"
kill $FUSE 2>/dev/null; wait $FUSE 2>/dev/null; FUSE=

# a FUSE filesystem that answers: its program is judged, and cannot pass an appraisal
setpriv --reuid 65534 --regid 65534 --clear-groups $PY -c "$(cat "$SRCDIR/tests/helpers/fuse-server.py")" "$T/u/fuse2" \
	"$T/prog.src" allow_other >"$T/fuse2.out" 2>&1 &
FUSE=$!
for _ in $(seq 100); do grep -q mounted "$T/fuse2.out" && break; sleep 0.05; done
sleep 0.5
check_rc 126 "a program on the user's FUSE filesystem: denied" nobody timeout 10 "$T/u/fuse2/prog"
check_eq "... as unverifiable" "$(vd_audit_reason /prog deny)" unverifiable-filesystem
fusermount3 -u -z "$T/u/fuse2" 2>/dev/null || umount -l "$T/u/fuse2"
kill $FUSE 2>/dev/null; wait $FUSE 2>/dev/null; FUSE=

# without allow_other, FUSE refuses root itself: it cannot be marked, a gap that is said
setpriv --reuid 65534 --regid 65534 --clear-groups $PY -c "$(cat "$SRCDIR/tests/helpers/fuse-server.py")" "$T/u/fuse3" \
	"$T/prog.src" >"$T/fuse3.out" 2>&1 &
FUSE=$!
for _ in $(seq 100); do grep -q mounted "$T/fuse3.out" && break; sleep 0.05; done
sleep 0.5
check "a FUSE filesystem without allow_other: cannot be marked, and vigild says why" \
	grep -q "cannot mark the filesystem of $T/u/fuse3 (fuse.vigiltest): Permission denied: not watched (a FUSE filesystem mounted without allow_other" "$T/vigild.err"
check "... listed as an open gap" sh -c "'$VIGIL' status --control '$T/ctl' | grep -q 'gap mount:$T/u/fuse3: open'"
check "... the program on it runs unseen (what the fuse gap says)" nobody timeout 10 "$T/u/fuse3/prog"
fusermount3 -u -z "$T/u/fuse3" 2>/dev/null || umount -l "$T/u/fuse3"
kill $FUSE 2>/dev/null; wait $FUSE 2>/dev/null; FUSE=
vd_stop

# ---- 2. around ----
mkdir "$T/pubtmp"; mount -t tmpfs -o mode=1777 pubtmp "$T/pubtmp"
cp "$T/unlabeled" "$T/pubtmp/prog"
strict() { VD_GAPS=strict vd_start "$@"; }
refused() {	# $1: what; $2: the gap it must name; the rest: vigild's options
	local what=$1 gap=$2
	shift 2
	VD_GAPS=strict check_rc 2 "$what: refused at start" timeout -s KILL 60 "$VIGILD" --control "$T/ctl" \
		--foreground "$@"
	cp "$T/.out" "$T/refused.out"
	check "... naming gap $gap and how to close it" grep -q "gap $gap: .*accept it: --accept-gap $gap" "$T/refused.out"
	check "... never ready" bash -c "! grep -q 'vigild: ready' '$T/refused.out'"
}
mem_args=(--accept-gap memfd --accept-gap userns --accept-gap fuse)
host_mounts=()
while read -r _ _ _ _ p _; do
	p=$(printf '%b' "$p")
	case "$p" in "$T/pubtmp") ;; *) host_mounts+=(--accept-gap "mount:$p") ;; esac
done </proc/self/mountinfo
refused "a tmpfs users can write and run from, not watched" "mount:$T/pubtmp" --policy pol --watch "$F" \
	--hmac-key hk --no-tpm "${mem_args[@]}" "${host_mounts[@]}"
check "... started when it is accepted" strict --policy pol --watch "$F" --hmac-key hk --no-tpm "${mem_args[@]}" \
	"${host_mounts[@]}" --accept-gap "mount:$T/pubtmp"
check "... listed as accepted" sh -c "'$VIGIL' status --control '$T/ctl' | grep -A1 'gap mount:$T/pubtmp: accepted' | grep -q 'can be written by users'"
check "... where a program runs unseen (the gap is real)" nobody "$T/pubtmp/prog"
vd_stop
check "... watched instead (--watch-mounts): started" strict --policy pol --watch "$F" --hmac-key hk --no-tpm \
	"${mem_args[@]}" "${host_mounts[@]}" --watch-mounts "$T/pubtmp"
check_rc 126 "... and the unlabeled program there is denied" nobody "$T/pubtmp/prog"
check "... permissive mode is not refused: it lists the gaps" true
vd_stop
check "permissive mode with every gap open: started" strict --policy pol --watch "$F" --hmac-key hk \
	--no-tpm --mode permissive
check "... gap memfd listed" sh -c "'$VIGIL' status --control '$T/ctl' --json | grep -q '\"name\": *\"memfd\", *\"state\": *\"open\"'"
vd_stop

all_mounts=()
while read -r _ _ _ _ p _; do all_mounts+=(--accept-gap "mount:$(printf '%b' "$p")"); done </proc/self/mountinfo
if [ "$(cat /proc/sys/vm/memfd_noexec 2>/dev/null)" != 2 ]; then
	refused "memfd, open" memfd --policy pol --watch "$F" --hmac-key hk --no-tpm --accept-gap userns \
		--accept-gap fuse "${all_mounts[@]}"
	check "... naming what closing it breaks" grep -q 'runc' "$T/refused.out"
	check "a memfd program runs unseen while the gap is open" nobody $PY -c '
import os, sys
fd = os.memfd_create("x", 0)
os.write(fd, open(sys.argv[1], "rb").read())
os.execve(fd, ["x"], {})' "$T/unlabeled"
fi
VIGILD=$VIGILD_TEST VIGILD_TEST_NO_MEMFD_NOEXEC=1 refused "memfd, vm.memfd_noexec absent (before Linux 6.3)" \
	memfd --policy pol --watch "$F" --hmac-key hk --no-tpm --accept-gap userns --accept-gap fuse \
	"${all_mounts[@]}"
check "... saying the kernel has none" grep -q 'this kernel has no vm.memfd_noexec (Linux 6.3)' "$T/refused.out"
# vigild --close-gaps closes memfd: in a pid namespace of the test's own, whose
# vm.memfd_noexec is its own (the host's stays as it is)
if [ -e /proc/sys/vm/memfd_noexec ]; then
	unshare -p -f --mount-proc bash -c "
		'$VIGILD' --close-gaps --policy pol --watch '$F' --hmac-key hk --accept-gap userns 2>'$T/close.err'
		echo close=\$?
		echo noexec=\$(cat /proc/sys/vm/memfd_noexec)
		setpriv --reuid 65534 --regid 65534 --clear-groups $PY -c '
import os, sys
fd = os.memfd_create(\"x\", 0)
os.write(fd, open(sys.argv[1], \"rb\").read())
try:
    os.execve(fd, [\"x\"], {})
except OSError as e:
    print(\"memfd exec:\", e.strerror)' '$T/unlabeled'
	" >"$T/close.out" 2>&1
	check "vigild --close-gaps: exit 0" grep -q 'close=0' "$T/close.out"
	check "... vm.memfd_noexec = 2 in its pid namespace" grep -q 'noexec=2' "$T/close.out"
	check "... said so" grep -q 'vm.memfd_noexec: [01] -> 2' "$T/close.err"
	check "... a memfd program is refused" grep -q 'memfd exec: Permission denied' "$T/close.out"
	check "... the host's is untouched" test "$(cat /proc/sys/vm/memfd_noexec)" != 2
	unshare -p -f --mount-proc bash -c "
		'$VIGILD' --close-gaps --policy pol --watch '$F' --hmac-key hk --accept-gap userns --mode permissive 2>/dev/null
		echo noexec=\$(cat /proc/sys/vm/memfd_noexec)" >"$T/close2.out" 2>&1
	check "... not in permissive mode (nothing to enforce)" grep -q 'noexec=0' "$T/close2.out"
fi
if [ "$(cat /proc/sys/user/max_user_namespaces)" != 0 ]; then
	refused "user namespaces, open" userns --policy pol --watch "$F" --hmac-key hk --no-tpm --accept-gap memfd \
		--accept-gap fuse "${all_mounts[@]}"
	check "... saying what closing them stops" grep -q "user.max_user_namespaces = 0, which stops root's too" "$T/refused.out"
	check "a user's own tmpfs in his own namespace runs a program unseen while the gap is open" \
		nobody unshare -Urm sh -c "mount -t tmpfs t /mnt && cp '$T/unlabeled' /mnt/p && /mnt/p"
fi
if [ -u /usr/bin/fusermount3 ]; then
	refused "users' FUSE mounts, open" fuse --policy pol --watch "$F" --hmac-key hk --no-tpm \
		--accept-gap memfd --accept-gap userns "${all_mounts[@]}"
	check "... saying how to close it" grep -q 'dpkg-statoverride --update --add root root 0755 /usr/bin/fusermount3' "$T/refused.out"
fi
# a policy scoped to a directory by path=: a memfd's program and one on a
# user's own mount in his namespace have no name in vigild's namespace, so
# no path= pattern matches them: those gaps are outside the policy, and
# enforce mode starts with them open
printf 'appraise func=BPRM_CHECK path=%s/**\n' "$F" >pol-path
check "a policy scoped to a directory by path=: enforce mode starts, memfd and userns not accepted" \
	strict --policy pol-path --watch "$F" --hmac-key hk --no-tpm --accept-gap fuse "${all_mounts[@]}"
"$VIGIL" status --control "$T/ctl" --json >gaps-path.json
check "... memfd and userns outside the policy (or closed)" $PY -c '
import json, sys
g = {x["name"]: x["state"] for x in json.load(open(sys.argv[1]))["gaps"]}
sys.exit(0 if g.get("memfd") in ("outside-policy", "closed") and g.get("userns") in ("outside-policy", "closed") else 1)' gaps-path.json
cp "$T/unlabeled" "$F/unlabeled-here"
check_rc 126 "... and the directory is enforced: an unlabeled program there is denied" "$F/unlabeled-here"
check "... a labeled one runs" "$F/good"
vd_stop
printf 'appraise func=BPRM_CHECK path=/nowhere/**\nappraise func=BPRM_CHECK path=%s/*\n' "$T" >pol-path2
check "a path= pattern that may match under a public mount keeps that mount in the policy" \
	strict --policy pol-path2 --watch "$F" --hmac-key hk --no-tpm --accept-gap fuse "${all_mounts[@]}"
"$VIGIL" status --control "$T/ctl" --json >gaps-path2.json
check "... $T/pubtmp judged (accepted), not outside" $PY -c '
import json, sys
g = {x["name"]: x["state"] for x in json.load(open(sys.argv[1]))["gaps"]}
sys.exit(0 if g.get("mount:" + sys.argv[2]) == "accepted" else 1)' gaps-path2.json "$T/pubtmp"
vd_stop
check_rc 2 "--accept-gap of no such gap: a usage error" "$VIGILD" --policy pol --watch "$F" --accept-gap fifo

# --watch-mounts: a tmpfs root mounts 1777 after ready is watched as it appears
later_checks() {	# $1: how mounts are seen, $2: its name in vigil status, $3: a new mount point
	local n L=$3
	check "$1: vigild starts (--watch-mounts $L)" vd_start --policy pol --watch "$F" --hmac-key hk \
		--no-tpm --watch-mounts "$L"
	check "... says how it sees new mounts" sh -c "'$VIGIL' status --control '$T/ctl' | grep -q 'as they appear: $2'"
	mkdir -p "$L"
	n=$($PY - "$L" "$T/unlabeled" <<'PY'
import ctypes, os, shutil, subprocess, sys, time
libc = ctypes.CDLL(None, use_errno=True)
d, src = sys.argv[1], sys.argv[2]
t0 = time.monotonic()
if libc.mount(b"later", d.encode(), b"tmpfs", 0, b"mode=1777") != 0:
    sys.exit("mount: %s" % os.strerror(ctypes.get_errno()))
shutil.copy(src, d + "/p")
os.chmod(d + "/p", 0o755)
ran = 0
while time.monotonic() - t0 < 5:
    try:
        if subprocess.call([d + "/p"], stderr=subprocess.DEVNULL) != 0:
            break
    except OSError:	# execve refused
        break
    ran += 1
print("%d %d" % (ran, (time.monotonic() - t0) * 1e6))
PY
)
	echo "# $1: a program on the new tmpfs ran $(echo "$n" | cut -d' ' -f1) times, for $(echo "$n" | cut -d' ' -f2) us after the mount, before its mark"
	check_rc 126 "... the unlabeled program on it is denied from then on" nobody "$L/p"
	check "... watched: it is listed" sh -c "'$VIGIL' status --control '$T/ctl' | grep -q 'watched: $L (tmpfs, main reader)'"
	check "... within 5 s of the mount" test "$(echo "$n" | cut -d' ' -f2)" -lt 5000000
	# vigild's leases keep a file of it open; unused for 10 s they are dropped
	local k=0
	while ! umount "$L" 2>/dev/null && [ $k -lt 300 ]; do sleep 0.1; k=$((k + 1)); done
	check "... it can be unmounted once idle, within 15 s ($((k / 10)) s)" test $k -lt 150
	sleep 0.3
	check "... unmounted: no longer listed" sh -c "! '$VIGIL' status --control '$T/ctl' | grep -q 'watched: $L'"
	vd_stop
}
later_checks "fanotify's mount events" fanotify "$T/later1"
VIGILD=$VIGILD_TEST VIGILD_TEST_NO_MNT_EVENTS=1 later_checks "mount events forced off (before Linux 6.14)" \
	mountinfo "$T/later2"

# ---- 3. before ----
cp /usr/bin/sleep "$F/sleeper"; cp /usr/bin/sleep "$F/sleeper2"; printf 2 >>"$F/sleeper2"
"$VIGIL" label -q --hmac-key hk "$F/sleeper" "$F/sleeper2"
printf 'X' | dd of="$F/sleeper" bs=1 seek=200 conv=notrunc status=none	# tampered after labeling
"$F/sleeper" 60 &
S1=$!
"$F/sleeper2" 60 &
S2=$!
printf 'measure func=BPRM_CHECK\nappraise func=BPRM_CHECK\n' >pol2
check "vigild starts with two programs of its filesystem already running" vd_start --policy pol2 --watch "$F" \
	--hmac-key hk --no-tpm --log "$T/ml"
check "... the tampered one is reported: ran-before-ready, invalid-hash" \
	test "$(vd_audit_reason /sleeper ran-before-ready)" = invalid-hash
check "... with its pid" grep -q "\"pid\":$S1,.*\"action\":\"ran-before-ready\"" "$T/audit"
check "... the labeled one is not" sh -c "! grep -q 'sleeper2.*ran-before-ready' '$T/audit'"
check "... both are in the measurement list" sh -c "'$VIGIL' log show '$T/ml' | grep -q '$F/sleeper\$' && '$VIGIL' log show '$T/ml' | grep -q '$F/sleeper2\$'"
check_eq "... counted: ran_before_ready_failed" "$(status ran_before_ready_failed)" 1
check "... and the processes that predate vigild" test "$(status ran_before_ready)" -ge 2
check "... vigild says so" grep -q 'processes were running before vigild: 1 of their programs failed' "$T/vigild.err"
kill $S1 $S2
vd_stop
