#!/usr/bin/env bash
# t0714: the thread that answers vigild's events never waits on a file, the
# TPM or the journal (issue 40 item 2-3). vigild answers every open of a
# watched filesystem itself, so a wait of its own there is for ever: the
# shipped unit (--watch /) hung a booted host at its first denial, whose
# audit record made glibc open /etc/localtime. Reproduced here with TZ
# naming a zone file on the test's watched ext4. Also: a TPM that stops
# answering (swtpm stopped) holds only the measured accesses, which get the
# fail action at the deadline, not every access; denials go to the
# journal's native socket (a receiver of the test's own), and a journal
# that stops reading costs entries (counted), never an answer; WATCHDOG=1
# comes from the loop, and stops when the loop is stuck (the test build
# makes it open a watched file on SIGUSR2).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
vg_tpm_start
head -c 32 /dev/urandom >hk
vg_ext4 "$T/fs" 32
F=$T/fs
RECV=
NOTIFY=
trap '_rc=$?; vd_stop; [ -n "$RECV" ] && kill -CONT $RECV 2>/dev/null && kill $RECV 2>/dev/null;
	[ -n "$NOTIFY" ] && kill $NOTIFY 2>/dev/null;
	bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
cp /usr/bin/true "$F/good"
cp /usr/bin/true "$F/good2"; printf 2 >>"$F/good2"
cp /usr/bin/true "$F/good3"; printf 3 >>"$F/good3"
echo data >"$F/data"
"$VIGIL" label -q --hmac-key hk "$F/good" "$F/good2" "$F/good3" "$F/data"
cp /usr/bin/true "$F/bad"; printf x >>"$F/bad"
cp /usr/share/zoneinfo/Europe/Paris "$F/zone"
"$VIGIL" label -q --hmac-key hk "$F/zone"
status() { "$VIGIL" status --control "$T/ctl" --json | python3 -c "import json,sys; print(json.load(sys.stdin)['counters']['$1'])"; }

# 1. the hang: the first audit record's time zone on the watched filesystem
printf 'appraise func=BPRM_CHECK\nappraise func=FILE_CHECK mask=MAY_READ\n' >pol
TZ="$F/zone" check "vigild starts with TZ naming a zone file on its watched filesystem" \
	vd_start --policy pol --watch "$F" --hmac-key hk --no-tpm
check_rc 126 "an unlabeled program is denied, and the denial does not hang (its record is written)" \
	timeout 10 "$F/bad"
check "... then a labeled program runs at once" timeout 5 "$F/good"
check "... and a labeled file is read" timeout 5 cat "$F/data"
check "... the record's time is UTC, to the microsecond" \
	grep -qE '"time":"20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\.[0-9]{6}Z"' "$T/audit"
check "... vigild stops cleanly" vd_stop

# 2. a TPM that stops answering: only the measured accesses wait, to their deadline
printf 'measure func=BPRM_CHECK\nappraise func=BPRM_CHECK\nappraise func=FILE_CHECK mask=MAY_READ\n' >pol2
check "vigild starts, measuring into the swtpm" vd_start --policy pol2 --watch "$F" --hmac-key hk \
	--log "$T/ml" --timeout-ms 1500
check "a labeled program runs and is measured" timeout 5 "$F/good"
SWTPM=$(cat "$TPMDIR/swtpm.pid" 2>/dev/null || pgrep -f "swtpm.*$TPMDIR" | head -1)
check "swtpm is stopped (SIGSTOP): the TPM answers nothing" kill -STOP "$SWTPM"
t0=$(date +%s%N)
check_rc 126 "... a program to measure waits for its deadline, then gets the fail action" timeout 10 "$F/good2"
ms=$((($(date +%s%N) - t0) / 1000000))
check "... after the deadline, not for ever ($ms ms)" test "$ms" -ge 1200 -a "$ms" -lt 8000
check_eq "... audited as measurement-timeout" "$(vd_audit_reason /good2 deny-on-failure)" measurement-timeout
t0=$(date +%s%N)
check "... meanwhile an open the policy does not measure is answered at once" timeout 5 cat "$F/data"
ms=$((($(date +%s%N) - t0) / 1000000))
check "... within 500 ms ($ms ms)" test "$ms" -lt 500
check "... and vigild answers its control socket" timeout 5 "$VIGIL" status --control "$T/ctl"
kill -CONT "$SWTPM"
check "swtpm answers again: a program is measured and runs" timeout 10 "$F/good3"
check "... it is in the list" bash -c "'$VIGIL' log show '$T/ml' | grep -q '$F/good3\$'"
check "... which replays to the TPM's PCR 10" "$VIGIL" log replay --tpm "$T/ml"
check "vigild stops cleanly" vd_stop

# 3. the journal: every denial there, never waited for
python3 "$SRCDIR/tests/helpers/journal-recv.py" "$T/j.sock" "$T/journal" &
RECV=$!
for _ in $(seq 100); do [ -S "$T/j.sock" ] && break; sleep 0.05; done
check_rc 2 "--journal naming no socket: refused before ready" \
	"$VIGILD" --policy pol --watch "$F" --hmac-key hk --no-tpm --control "$T/ctl2" --journal "$T/nothing"
check "vigild starts with --journal" vd_start --policy pol --watch "$F" --hmac-key hk --no-tpm \
	--journal "$T/j.sock"
check_rc 126 "an unlabeled program is denied" "$F/bad"
sleep 0.3
entry() { python3 -c '
import json, sys
want = dict(a.split("=", 1) for a in sys.argv[2:])
for line in open(sys.argv[1]):
    e = json.loads(line)
    if all(e.get(k) == v for k, v in want.items()):
        print(json.dumps(e)); break
else:
    sys.exit(1)' "$T/journal" "$@"; }
check "... the journal has the denial: priority 4, the record's fields" entry PRIORITY=4 \
	VIGIL_ACTION=deny VIGIL_REASON=missing-hash VIGIL_EVENT=exec VIGIL_PATH="$F/bad" \
	SYSLOG_IDENTIFIER=vigild MESSAGE_ID=7e0c5a3f1b9d4c2e8f6a0b1c2d3e4f5a VIGIL_UID=0 \
	VIGIL_RULE="appraise func=BPRM_CHECK" VIGIL_RULE_LINE=1 VIGIL_MODE=enforce
check "... its MESSAGE says what, whose and why" bash -c "grep -F '\"MESSAGE\": \"deny exec of $F/bad by pid' '$T/journal' | grep -q 'missing-hash (rule: appraise func=BPRM_CHECK)'"
check "... no malformed entry" bash -c "! grep -q _malformed '$T/journal'"
"$VIGIL" status --control "$T/ctl" --mode permissive >/dev/null
check "permissive: the unlabeled program runs" "$F/bad"
sleep 0.3
check "... and the journal has the would-deny at priority 5" entry PRIORITY=5 VIGIL_ACTION=would-deny \
	VIGIL_PATH="$F/bad"
"$VIGIL" status --control "$T/ctl" --mode enforce >/dev/null
check_eq "journal_sent counts the entries the journal has" "$(status journal_sent)" "$(wc -l <"$T/journal")"
kill -STOP $RECV
python3 -c '
import os, sys
n = 0
for i in range(3000):
    try:
        os.close(os.open(sys.argv[1], os.O_RDONLY))
    except PermissionError:
        n += 1
print(n)' "$F/bad" >denials
check_eq "a journal that stops reading: 3000 denials go on" "$(cat denials)" 3000
t0=$(date +%s%N)
check "... a labeled program still runs at once" timeout 5 "$F/good"
ms=$((($(date +%s%N) - t0) / 1000000))
check "... within 500 ms ($ms ms)" test "$ms" -lt 500
check "... the entries the journal did not take are counted as dropped" test "$(status journal_dropped)" -gt 0
kill -CONT $RECV
check "vigild stops cleanly" vd_stop
kill $RECV; wait $RECV 2>/dev/null; RECV=

# 4. the watchdog: WATCHDOG=1 from the loop, and none once the loop is stuck
python3 "$SRCDIR/tests/helpers/notify-recv.py" "$T/notify" "$T/notify.log" &
NOTIFY=$!
for _ in $(seq 100); do [ -S "$T/notify" ] && break; sleep 0.05; done
export NOTIFY_SOCKET=$T/notify WATCHDOG_USEC=400000 VIGILD_TEST_LOOP_OPEN=$F/data
VIGILD=$VIGILD_TEST
check "the test build starts under a watchdog of 0.4 s" vd_start --policy pol --watch "$F" \
	--hmac-key hk --no-tpm
unset NOTIFY_SOCKET WATCHDOG_USEC
sleep 1.5
n1=$(grep -c 'WATCHDOG=1' "$T/notify.log")
check "... WATCHDOG=1 at least every 0.2 s ($n1 in 1.5 s)" test "$n1" -ge 5
check "... said at start" grep -q 'watchdog: every 0.2 s' "$T/vigild.err"
kill -USR2 "$VD_PID"	# the loop opens a watched file: it waits for itself
sleep 0.5
n2=$(grep -c 'WATCHDOG=1' "$T/notify.log")
sleep 1.5
n3=$(grep -c 'WATCHDOG=1' "$T/notify.log")
check_eq "... a loop stuck in an open of a watched file sends no more ($n2, then $n3)" "$n3" "$n2"
kill -KILL "$VD_PID"; wait "$VD_TIMEOUT" 2>/dev/null; VD_PID= VD_TIMEOUT=
kill $NOTIFY; wait $NOTIFY 2>/dev/null; NOTIFY=
