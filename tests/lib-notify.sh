# shellcheck shell=bash
# tests/lib-notify.sh - a notify socket for a daemon under test (after
# vg_init): what a daemon tells the service manager lands in $NT_LOG.
#
#   nt_start        start tests/helpers/notify-recv.py at $T/notify.sock and export
#                   NOTIFY_SOCKET; stopped by PID when the script ends (nt_stop)
#   nt_clear        forget what arrived so far
#   nt_ready        true if READY=1 arrived (since nt_clear)
#   nt_has TEXT     true if a datagram containing TEXT arrived
#   nt_stop         stop the receiver
NT_LOG=
NT_PID=

nt_start() {
	NT_LOG=$T/notify.log
	: >"$NT_LOG"
	/usr/bin/python3 "$SRCDIR/tests/helpers/notify-recv.py" "$T/notify.sock" "$NT_LOG" &
	NT_PID=$!
	for _ in $(seq 100); do
		[ -S "$T/notify.sock" ] && break
		sleep 0.05
	done
	export NOTIFY_SOCKET=$T/notify.sock
}

nt_clear() { : >"$NT_LOG"; }
nt_ready() { grep -q 'READY=1' "$NT_LOG"; }
nt_has() { grep -qF -- "$1" "$NT_LOG"; }

nt_stop() {
	[ -n "$NT_PID" ] || return 0
	kill -TERM "$NT_PID" 2>/dev/null
	wait "$NT_PID" 2>/dev/null
	NT_PID=
}
