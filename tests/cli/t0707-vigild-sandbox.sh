#!/usr/bin/env bash
# vigild's appraisers are confined (issue 18): they run as the unprivileged
# appraiser user with no capability, no new privileges and a seccomp
# filter; a missing or root appraiser user stops vigild before it is
# ready; an appraiser's forbidden system call (socket, execve, a read of
# its copy of the fanotify group) kills it,
# the event gets the fail action and a replacement appraiser gives the
# later events their verdicts; a sanitizer report from an appraiser still
# reaches vigild's log. The misbehaviour is triggered through the
# test-only build $VIGILD_TEST (files starting with VIGILD-TEST-...).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
head -c 32 /dev/urandom >hk
vg_ext4 "$T/fs" 32
F=$T/fs
trap '_rc=$?; vd_stop; (exit $_rc); vg_cleanup' EXIT

for f in good1 good2 good3 tampered; do echo "content of $f" >"$F/$f"; done
for m in SOCKET GROUP EXECVE UBSAN ASAN; do echo "VIGILD-TEST-$m" >"$F/$m"; done
"$VIGIL" label -q --hmac-key hk "$F"/good* "$F/tampered" "$F"/SOCKET "$F"/GROUP "$F"/EXECVE "$F"/UBSAN "$F"/ASAN
echo more >>"$F/tampered"
printf 'appraise func=FILE_CHECK mask=MAY_READ\n' >pol
vuid=$(id -u vigil)

# 1. the appraiser user
check_rc 2 "a missing appraiser user: vigild refuses to start" timeout 20 "$VIGILD" --policy pol --watch "$F" \
	--control "$T/ctl" --appraiser-user vigil-no-such-user --foreground
timeout 20 "$VIGILD" --policy pol --watch "$F" --control "$T/ctl" --appraiser-user vigil-no-such-user \
	--foreground 2>err
check "... naming the user and how to create it" grep -q "appraiser user 'vigil-no-such-user' does not exist.*useradd" err
check "... before it is ready" sh -c '! grep -q ready err'
check_rc 2 "appraiser user root: refused" timeout 20 "$VIGILD" --policy pol --watch "$F" --control "$T/ctl" \
	--appraiser-user root --foreground
timeout 20 "$VIGILD" --policy pol --watch "$F" --control "$T/ctl" --appraiser-user root --foreground 2>err
check "... saying why" grep -q "must not run as root" err

check "vigild starts (default appraiser user vigil)" vd_start --policy pol --watch "$F" --hmac-key hk -j 2
apps=$(ps -o pid= --ppid "$VD_PID" | tr -d ' ')
check_eq "two appraisers" "$(echo "$apps" | wc -w)" 2
for p in $apps; do
	check_eq "appraiser $p: every uid is vigil's" \
		"$(awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/$p/status")" "$vuid $vuid $vuid $vuid"
	check_eq "appraiser $p: no supplementary group" "$(awk '/^Groups:/ {print $2}' "/proc/$p/status")" ""
	check_eq "appraiser $p: no capability" "$(awk '/^CapEff:/ {print $2}' "/proc/$p/status")$(awk '/^CapPrm:/ {print $2}' "/proc/$p/status")" \
		00000000000000000000000000000000
	check_eq "appraiser $p: no new privileges" "$(awk '/^NoNewPrivs:/ {print $2}' "/proc/$p/status")" 1
	check_eq "appraiser $p: seccomp filter" "$(awk '/^Seccomp:/ {print $2}' "/proc/$p/status")" 2
	check_eq "appraiser $p: its descriptors are stdio, the socket and the group" \
		"$(ls "/proc/$p/fd" | sort -n | tr '\n' ' ')" "0 1 2 3 4 "
	check "appraiser $p: descriptor 4 is the fanotify group" grep -q '^fanotify flags:' "/proc/$p/fdinfo/4"
done
check "a labeled file is read" cat "$F/good1"
check_rc 1 "a tampered file is denied" cat "$F/tampered"
check "the shipped vigild has no test hook: the magic file is just a labeled file" cat "$F/SOCKET"
check "vigild stops cleanly" vd_stop

# 1b. each vigild process as /proc shows it, the table t0535 prints for the
# verifier's and the agent's: uid, capabilities, NoNewPrivs, Seccomp, and
# the Landlock state, which /proc does not show: vigild-test's appraisers
# try to write a file in a directory every uid may write to, once in
# Landlock and before their seccomp filter (common/sandbox.h's probe; the
# filter refuses open itself), which only Landlock refuses them.
chmod 755 "$T"
mkdir -p "$T/open"
chmod 1777 "$T/open"
VG_TEST_PROBE_WRITE=$T/open VIGILD=$VIGILD_TEST check "vigild-test starts (with the Landlock probe)" \
	vd_start --policy pol --watch "$F" --hmac-key hk -j 2
apps=$(ps -o pid= --ppid "$VD_PID" | tr -d ' ')
st() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status" 2>/dev/null; }
probes() { grep -cF "vigild appraiser: probe: write $T/open: $1" "$T/vigild.err"; }
echo "# process                   pid     uid    CapEff           NoNewPrivs Seccomp Landlock"
row() {	# NAME PID LANDLOCK
	printf '# %-25s %-7s %-6s %-16s %-10s %-7s %s\n' "$1" "$2" "$(st "$2" Uid)" \
		"$(st "$2" CapEff)" "$(st "$2" NoNewPrivs)" "$(st "$2" Seccomp)" "$3"
}
row "vigild monitor" "$VD_PID" none
for p in $apps; do
	row "vigild appraiser" "$p" "$([ "$(probes "Permission denied")" -gt 0 ] && echo on || echo off)"
done
check_eq "two appraisers probed, each refused by Landlock (root cannot write where anyone may)" \
	"$(probes "Permission denied") $(probes written)" "2 0"
check_eq "the monitor: uid 0 (it holds the fanotify group, the TPM, the log)" "$(st "$VD_PID" Uid)" 0
check_eq "the monitor: no seccomp filter (it parses kernel structures and fixed messages only)" \
	"$(st "$VD_PID" Seccomp)" 0
for p in $apps; do
	check_eq "appraiser $p: uid vigil, no capability, no new privileges, seccomp" \
		"$(st "$p" Uid) $(st "$p" CapEff)$(st "$p" CapPrm) $(st "$p" NoNewPrivs) $(st "$p" Seccomp)" \
		"$vuid 00000000000000000000000000000000 1 2"
done
check "vigild-test stops cleanly" vd_stop

# 2. forbidden system calls (test-only build); GROUP reads the fanotify
# group the appraiser holds only to write its allows to (vigild.h)
for m in SOCKET GROUP EXECVE; do
	VIGILD=$VIGILD_TEST check "vigild-test starts" vd_start --policy pol --watch "$F" --hmac-key hk -j 1
	before=$(ps -o pid= --ppid "$VD_PID" | tr -d ' ')
	check_rc 1 "$m in an appraiser: the read gets the fail action (denied)" cat "$F/$m"
	check_eq "... audited as appraiser-died" "$(vd_audit_reason "/$m" deny-on-failure)" appraiser-died
	check "... vigild says the appraiser died" grep -Eq "appraiser 0 \(pid $before\) (exited|killed by signal)" "$T/vigild.err"
	sleep 0.2
	after=$(ps -o pid= --ppid "$VD_PID" | tr -d ' ')
	check "... a replacement appraiser runs ($before -> $after)" test -n "$after" -a "$after" != "$before"
	check "... later events get verdicts: a labeled file is read" cat "$F/good2"
	check_rc 1 "... and a tampered one denied" cat "$F/tampered"
	check_eq "... audited as invalid-hash" "$(vd_audit_reason /tampered deny)" invalid-hash
	check "vigild-test stops cleanly" vd_stop
done

# 3. a sanitizer report from an appraiser reaches the log (sanitizer builds)
if grep -q __asan_init "$VIGILD_TEST" 2>/dev/null; then
	VIGILD=$VIGILD_TEST check "vigild-test starts" vd_start --policy pol --watch "$F" --hmac-key hk -j 1
	# whether the appraiser then halts is UBSan's halt_on_error: the read is answered either way
	check "UBSan error in an appraiser: the read is answered" sh -c "cat '$F/UBSAN' || true"
	check "... UBSan's report is in vigild's log" grep -q 'runtime error: signed integer overflow' "$T/vigild.err"
	check_rc 1 "ASan error in an appraiser: the read gets the fail action" cat "$F/ASAN"
	check "... ASan's report is in vigild's log" grep -q 'AddressSanitizer: heap-buffer-overflow' "$T/vigild.err"
	check "... later events get verdicts" cat "$F/good3"
	check "vigild-test stops cleanly" vd_stop
fi
