#!/usr/bin/env bash
# t0716: no window across vigild's crashes (issue 41, item 1). With --hold
# the process started is a holder that keeps the fanotify group while the
# monitor dies and a new one takes it over (daemon/hold.h): an access made
# meanwhile waits and is judged by the new monitor, one the dead monitor
# had read is denied, never allowed. The storm: an unprivileged user runs
# an unlabeled program in a loop while the monitor is SIGKILLed at random
# instants (100 here, within the holder's start limit; bench/hold runs
# 1,000) and root runs a labeled
# program, timed; 0 runs of the unlabeled one. The same storm without
# --hold shows the window the holder closes (the test can fail). Then the
# holder's own watchdog (a monitor whose loop stops is killed, the group
# kept), renewal from an upgraded binary (SIGUSR1, the postinst's), a
# refusal at start (exit 2 from the holder), a holder killed (its
# monitor ends with it), SIGTERM (a clean stop, logged).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
KILLS=${VG_HOLD_KILLS:-100}
# vigild's safety timeout (tests/lib-vigild.sh, 300 s) must outlast the storm
# on a loaded machine: each kill waits for the next monitor, which an ASan
# build under load 8 starts in seconds; at 300 s the timeout killed the
# holder mid-storm (36 kills in), and with it the group (the runs that
# followed were the timeout's, not a window of the holder's)
: "${VD_TIMEOUT_S:=900}"
export VD_TIMEOUT_S
trap '_rc=$?; vd_stop; (exit $_rc); vg_cleanup' EXIT
mkdir "$T/fs" && mount -t tmpfs -o size=64m,mode=755 hold-fs "$T/fs"
F=$T/fs
mkdir -m 1777 "$T/out"
head -c 32 /dev/urandom >hk
cp /usr/bin/true "$F/good"
cp /usr/bin/true "$F/bad"; printf x >>"$F/bad"
"$VIGIL" label -q --hmac-key hk "$F/good"
printf 'appraise func=BPRM_CHECK\n' >pol
monitor_of() { cat "/proc/$1/task/$1/children" 2>/dev/null | awk '{print $1}'; }
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$T/storm.json" "$1"; }

# 1. the holder and its monitor
check "vigild --hold starts" vd_start --hold --policy pol --watch "$F" --hmac-key hk --no-tpm
H=$VD_PID
M=$(monitor_of "$H")
check "... as two processes: the holder, and the monitor its child" test -n "$M" -a "$M" != "$H"
check "... the monitor answers: a labeled program runs" "$F/good"
check_rc 126 "... an unlabeled one is denied" "$F/bad"
check "... vigil status answers" "$VIGIL" status --control "$T/ctl"

# 2. one kill, by hand: what waits is judged by the next monitor
kill -9 "$M"
check_rc 126 "the monitor killed: an unlabeled program run at once waits, then is denied" timeout 30 "$F/bad"
check "... a labeled program runs" timeout 30 "$F/good"
M2=$(monitor_of "$H")
check "... a new monitor, the same holder" test -n "$M2" -a "$M2" != "$M" -a -d "/proc/$H"
check "... which says it took the group over" grep -q 'took the fanotify group over from the holder (restart 1)' "$T/vigild.err"

# 3. the storm
python3 "$SRCDIR/tests/helpers/hold-storm.py" "$H" "$KILLS" "$F/good" "$F/bad" "$T/out" >"$T/storm.json"
echo "# storm with --hold: $(cat "$T/storm.json")"
check_eq "$KILLS SIGKILLs of the monitor at random instants" "$(field kills)" "$KILLS"
check_eq "... the unprivileged user's unlabeled program ran 0 times" "$(field bad_runs)" 0
check "... the labeled program kept running ($(field good_runs) runs)" test "$(field good_runs)" -gt "$KILLS"
# an exec in flight when its monitor is killed is denied (one at most per kill: the loop runs one at a time)
check "... failed only when in flight at a kill ($(field good_failures) of $KILLS kills)" \
	test "$(field good_failures)" -le "$KILLS"
check "... no run waited longer than a restart and the deadline ($(field good_max_ms) ms)" \
	python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 15000)" "$(field good_max_ms)"
check "... the holder is the one started" test -d "/proc/$H"
check_eq "... restarts counted" "$(grep -c 'the monitor died:' "$T/vigild.err")" $((KILLS + 1))
check "... and still: a labeled program runs" timeout 30 "$F/good"
check_rc 126 "... an unlabeled one is denied" timeout 30 "$F/bad"
check "... vigil status answers" timeout 30 "$VIGIL" status --control "$T/ctl"
check "SIGTERM to the holder: a clean stop (exit 0)" vd_stop
check "... logged as the end of enforcement" grep -q 'the monitor stopped: vigild no longer enforces' "$T/vigild.err"
check "... no monitor is left" test -z "$(monitor_of "$H")"

# 4. without --hold: the window the holder closes
check "vigild --no-hold starts" vd_start --no-hold --policy pol --watch "$F" --hmac-key hk --no-tpm
: >"$T/out/runs"
setpriv --reuid=65534 --regid=65534 --clear-groups bash -c \
	"while :; do '$F/bad' 2>/dev/null && echo r >>'$T/out/runs'; done" &
U=$!
sleep 0.3
kill -9 "$VD_PID"; wait "$VD_TIMEOUT" 2>/dev/null; VD_TIMEOUT=
sleep 0.1	# the unit's RestartSec=100ms
vd_start --no-hold --policy pol --watch "$F" --hmac-key hk --no-tpm
sleep 0.3
kill "$U"; wait "$U" 2>/dev/null
nruns=$(wc -l <"$T/out/runs")
echo "# without --hold: the unlabeled program ran $nruns times across one kill and restart"
check "... one SIGKILL and a restart: the unlabeled program ran (the window)" test "$nruns" -gt 0
vd_stop

# 5. the holder's watchdog: a monitor whose loop stops is killed, the group kept
if [ -x "${VIGILD_TEST:-}" ]; then
	echo data >"$F/data"
	VIGILD=$VIGILD_TEST VIGILD_TEST_LOOP_OPEN="$F/data" WATCHDOG_USEC=1500000 \
		check "vigild-test --hold with WATCHDOG_USEC=1.5 s starts" \
		vd_start --hold --policy pol --watch "$F" --hmac-key hk --no-tpm
	H=$VD_PID
	M=$(monitor_of "$H")
	kill -USR2 "$M"	# the test build's loop opens a watched file: it waits on itself
	t0=$(date +%s%N)
	check "a stuck monitor: a labeled program still runs, after the holder kills it" timeout 30 "$F/good"
	ms=$((($(date +%s%N) - t0) / 1000000))
	check "... within the watchdog's period and a restart ($ms ms)" test "$ms" -lt 10000
	check "... the holder said why" grep -q "the monitor's loop stopped turning" "$T/vigild.err"
	check "... and kept the group: the same holder" test -d "/proc/$H" -a "$(monitor_of "$H")" != "$M"
	check_rc 126 "... an unlabeled program is denied" timeout 30 "$F/bad"
	vd_stop
fi

# 6. renewal (SIGUSR1, what the package's postinst sends on upgrade): the
# monitor drains and ends, a new one from the binary's path takes the group
mkdir "$T/bin" && cp "$VIGILD" "$T/bin/vigild"
VIGILD=$T/bin/vigild check "vigild --hold from a copy of its binary starts" \
	vd_start --hold --policy pol --watch "$F" --hmac-key hk --no-tpm
H=$VD_PID
cp "$VIGILD" "$T/bin/vigild.new" && mv -f "$T/bin/vigild.new" "$T/bin/vigild"	# an upgrade
: >"$T/out/runs"
setpriv --reuid=65534 --regid=65534 --clear-groups bash -c \
	"while :; do '$F/bad' 2>/dev/null && echo r >>'$T/out/runs'; done" &
U=$!
renewed=0
for _ in 1 2 3 4 5; do
	M=$(monitor_of "$H")
	sleep 0.3
	kill -USR1 "$H"
	for _ in $(seq 200); do
		M2=$(monitor_of "$H")
		[ -n "$M2" ] && [ "$M2" != "$M" ] && break
		sleep 0.02
	done
	[ -n "$M2" ] && [ "$M2" != "$M" ] && renewed=$((renewed + 1))
	for _ in $(seq 200); do grep -q "vigild: ready" <(tail -3 "$T/vigild.err") && break; sleep 0.02; done
done
kill "$U"; wait "$U" 2>/dev/null
check_eq "SIGUSR1 to the holder, 5 times: 5 new monitors" "$renewed" 5
check_eq "... the unprivileged user's unlabeled program ran 0 times meanwhile" "$(wc -l <"$T/out/runs")" 0
M=$(monitor_of "$H")
check_eq "... the monitor runs the binary now at the path" "$(readlink "/proc/$M/exe")" "$T/bin/vigild"
check "... the holder, the one started, the binary before (deleted)" \
	bash -c "readlink /proc/$H/exe | grep -q ' (deleted)\$'"
check "... said as a renewal, not a death" grep -q 'stopped to be renewed' "$T/vigild.err"
check "... a labeled program runs" timeout 30 "$F/good"
check_rc 126 "... an unlabeled one is denied" timeout 30 "$F/bad"
vd_stop
printf 'appraise func=BPRM_CHECK\n' >pol
check "without --hold, SIGUSR1 is said and ignored" vd_start --no-hold --policy pol --watch "$F" --hmac-key hk --no-tpm
kill -USR1 "$VD_PID"
sleep 0.5
check "... vigild still runs" kill -0 "$VD_PID"
check "... and said why" grep -q 'SIGUSR1 renews the monitor under --hold' "$T/vigild.err"
vd_stop

# 7. a refusal at start is the holder's exit status; a holder killed takes its monitor with it
printf 'appraise func=NOT_A_HOOK\n' >badpol
check_rc 2 "--hold with a policy it refuses: exit 2" \
	timeout 60 "$VIGILD" --hold --control "$T/ctl" --foreground --policy badpol --watch "$F" --hmac-key hk --no-tpm
check_rc 2 "--hold with --background: refused" \
	timeout 60 "$VIGILD" --hold --background --control "$T/ctl" --policy pol --watch "$F" --hmac-key hk --no-tpm
check "vigild --hold starts again" vd_start --hold --policy pol --watch "$F" --hmac-key hk --no-tpm
H=$VD_PID
M=$(monitor_of "$H")
kill -9 "$H"
for _ in $(seq 100); do [ -d "/proc/$M" ] || break; sleep 0.05; done
check "the holder killed: its monitor ends too (the kernel allows again: the unit restarts vigild)" \
	test ! -d "/proc/$M"
wait "$VD_TIMEOUT" 2>/dev/null; VD_TIMEOUT=
