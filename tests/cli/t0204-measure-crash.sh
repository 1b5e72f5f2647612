#!/usr/bin/env bash
# Crash test of the log writer: `vigil measure` is killed with SIGKILL at
# random points (while hashing, appending, syncing, extending, or during
# its own recovery), then restarted, $VG_CRASH_ITER times (default 200).
# After every restart: the restart succeeds, replay equals the software
# PCR bank, and every entry that was acknowledged (printed) is in the log.
# The log lives on ext4, so fdatasync is real work and kills land inside commits.
. "$SRCDIR/tests/lib.sh"
vg_init
N=${VG_CRASH_ITER:-200}
# ext4 on a loop device: fdatasync takes real time, so kills land between
# the log sync, the extends and the bank sync (on tmpfs they never would)
vg_ext4 "$T/fs" 256
mkdir d
L=$T/fs/log
bad_restart=0 bad_replay=0 missing=0 acked=0 recovered=0
# the kills fall anywhere in a run: their delays scale with how long a whole
# run of 40 files takes here and now (ASan, a loaded machine: several times
# longer than alone, and fixed delays would all land before the first commit)
for j in $(seq 1 40); do head -c 2000 /dev/urandom >"$T/d/probe.$j"; done
t0=$(date +%s%N)
"$VIGIL" measure --log "$T/fs/probe.log" --batch 4 "$T"/d/probe.* >/dev/null 2>&1
run_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$run_ms" -ge 100 ] || run_ms=100
rm -f "$T/fs/probe.log" "$T/fs/probe.log.pcrs" "$T"/d/probe.*
echo "# a whole run of 40 files: $run_ms ms; kills within 1.2 times that"
# sleep for a random part of 1.2 run_ms (or of 0.6 run_ms with "short")
ksleep() {
	local ms=$(( RANDOM * 12 * run_ms / 10 / 32768 ))
	[ "${1:-}" = short ] && ms=$((ms / 2))
	sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
}
# one kill and restart; returns 1 when a restart failed (stop)
one() {
	local i=$1 pid out
	files=()
	for j in $(seq 1 $((RANDOM % 40 + 1))); do
		f=$T/d/f.$i.$j
		head -c $((RANDOM % 3000)) /dev/urandom >"$f"
		files+=("$f")
	done
	"$VIGIL" measure --log "$L" --batch $((RANDOM % 8 + 1)) "${files[@]}" >"ack" 2>/dev/null &
	pid=$!
	ksleep
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	if [ $((RANDOM % 4)) = 0 ]; then	# crash the recovery too
		"$VIGIL" measure --log "$L" >/dev/null 2>&1 &
		pid=$!
		ksleep short
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
	fi
	if ! out=$("$VIGIL" measure --log "$L" 2>&1); then
		bad_restart=$((bad_restart + 1))
		echo "# iteration $i: restart failed: $out"
		return 1
	fi
	grep -q recovered <<<"$out" && recovered=$((recovered + 1))
	"$VIGIL" log replay --pcrs "$L.pcrs" "$L" >/dev/null 2>&1 || bad_replay=$((bad_replay + 1))
	if [ -s ack ]; then
		acked=$((acked + $(wc -l <ack)))
		"$VIGIL" log show "$L" | awk '{print $4 "  " $5}' | grep -c -F -x -f ack >hits
		[ "$(cat hits)" -ge "$(wc -l <ack)" ] || { missing=$((missing + 1)); echo "# iteration $i: acknowledged entry missing"; }
	fi
	return 0
}
for i in $(seq 1 "$N"); do
	one "$i" || break
done
# Whether a kill lands inside a commit is chance (a loaded machine shifts the
# timing): go on, up to N/2 more, until one has, so that the repair path is
# exercised at least once; the checks above hold for every kill either way
n=$N
while [ "$recovered" -eq 0 ] && [ "$bad_restart" -eq 0 ] && [ "$n" -lt $((N + N / 2)) ]; do
	n=$((n + 1))
	one "$n" || break
done
echo "# $n kills, $acked acknowledged entries, $recovered restarts repaired something"
check_eq "every restart after SIGKILL succeeds" "$bad_restart" 0
check_eq "after every restart replay equals the PCR bank" "$bad_replay" 0
check_eq "no acknowledged entry is missing" "$missing" 0
check "the kills hit both before and after acknowledgements (some entries acknowledged)" test "$acked" -gt 0
check "some restarts had something to repair (kills landed inside commits)" test "$recovered" -gt 0
entries=$("$VIGIL" log show "$L" | wc -l)
check "the log holds at least every acknowledged entry + boot_aggregate" test "$entries" -ge $((acked + 1))
check "the final log is accepted by evmctl with the bank's values" bash -c "
	sed -n 's/^\(PCR-[0-9]*\) sha1:/\1 /p' '$L.pcrs' >p1; sed -n 's/^\(PCR-[0-9]*\) sha256:/\1 /p' '$L.pcrs' >p256
	evmctl ima_measurement --pcrs sha1,p1 --pcrs sha256,p256 '$L'"
