#!/bin/bash
# tests/helpers/hold-storm-in.sh KILLS [COMMAND] - run inside t0730's booted host (issue 41):
# the unprivileged user nobody runs /usr/local/bin/planted (unlabeled) in a
# loop, appending to /tmp/storm/runs each time it ran; root runs
# /usr/bin/hostname (from the archive) in a loop, one line per run in
# /tmp/storm/lat ("RC START END", bash's $EPOCHREALTIME); vigild's monitor
# (the child of the unit's main process, the holder) is SIGKILLed KILLS
# times, 0.4-0.9 s apart; then COMMAND, if any, runs (bash -c) before the
# loops stop. Prints COMMAND's output, then
# "kills N holder_before H holder_after H".
set -u
K=$1
H=$(systemctl show -P MainPID vigild)
rm -rf /tmp/storm && mkdir -m 1777 /tmp/storm
: >/tmp/storm/runs && chmod 666 /tmp/storm/runs
setpriv --reuid=65534 --regid=65534 --clear-groups bash -c \
	'while :; do /usr/local/bin/planted 2>/dev/null && echo r >>/tmp/storm/runs; done' &
U=$!
(
	while [ ! -e /tmp/storm/stop ]; do
		t0=$EPOCHREALTIME
		/usr/bin/hostname >/dev/null 2>&1
		rc=$?
		echo "$rc $t0 $EPOCHREALTIME" >>/tmp/storm/lat
	done
) &
L=$!
n=0
while [ $n -lt "$K" ]; do
	sleep "0.$((RANDOM % 6 + 4))"
	M=
	read -r M _ <"/proc/$H/task/$H/children" 2>/dev/null
	[ -n "$M" ] && kill -9 "$M" 2>/dev/null && n=$((n + 1))
done
sleep 1
[ -n "${2:-}" ] && bash -c "$2"
touch /tmp/storm/stop
wait "$L"
kill -9 "$U" 2>/dev/null
wait "$U" 2>/dev/null
echo "kills $n holder_before $H holder_after $(systemctl show -P MainPID vigild)"
