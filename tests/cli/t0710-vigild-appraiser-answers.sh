#!/usr/bin/env bash
# An appraiser answers a clean pass itself (issue 22): where the monitor's
# decision is an allow exactly when the appraisal passes, the appraiser
# writes that allow to the kernel (VD_ANSWER, daemon/vigild.h) and the
# opener does not wait for the monitor to wake up. Each first access is
# still one full appraisal; a failure is still the monitor's deny; where a
# measurement or an audit record must come first, the monitor answers,
# after writing it. An appraiser that writes an allow it was not given
# (the test-only LIE hook, what a compromised one could do) is seen,
# killed and replaced; its read of the group is in t0707. Appraisers die
# with the monitor (their copy of the group must not keep openers waiting).
# An exec is the monitor's to answer, after the ignore mark, which spares
# the open event the kernel raises next (when that open needs nothing).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
head -c 32 /dev/urandom >hk
vg_ext4 "$T/fs" 32
F=$T/fs
trap '_rc=$?; vd_stop; (exit $_rc); vg_cleanup' EXIT

for i in $(seq 1 20); do echo "file $i" >"$F/f$i"; done
for i in $(seq 1 5); do echo "measured $i" >"$F/m$i"; echo "audited $i" >"$F/a$i"; done
echo "will change" >"$F/tampered"
echo "VIGILD-TEST-LIE" >"$F/LIE"
for i in 1 2 3 4 5 6; do cp /usr/bin/true "$F/x$i"; done
cp /usr/bin/true "$F/xbad"
"$VIGIL" label -r -q --hmac-key hk "$F"
echo more >>"$F/tampered"
echo more >>"$F/LIE"
printf 'x' >>"$F/xbad"
# KEY...: the counters named, space-separated
counters() {
	"$VIGIL" status --control "$T/ctl" --json | python3 -c '
import json, sys
c = json.load(sys.stdin)["counters"]
print(" ".join(str(c[k]) for k in sys.argv[1:]))' "$@"
}

# 1. appraisal only: the appraiser answers every clean first access
printf 'appraise func=FILE_CHECK mask=MAY_READ\n' >pol
check "vigild starts (appraise only)" vd_start --policy pol --watch "$F" --hmac-key hk -j 1 --no-tpm
ok=0
for i in $(seq 1 20); do [ "$(cat "$F/f$i")" = "file $i" ] && ok=$((ok + 1)); done
check_eq "20 new labeled files are read" "$ok" 20
check_eq "... 20 full appraisals, each answered by the appraiser itself" \
	"$(counters appraisals appraiser_answers)" "20 20"
check_eq "... counted as allowed" "$(counters allowed denied)" "20 0"
for i in $(seq 1 20); do cat "$F/f$i" >/dev/null; done
check_eq "read again: no appraisal, nothing more for the appraiser to answer" \
	"$(counters appraisals appraiser_answers)" "20 20"
check_rc 1 "a changed file is denied" cat "$F/tampered"
check_eq "... by the monitor: audited invalid-hash" "$(vd_audit_reason /tampered deny)" invalid-hash
check_eq "... one more appraisal, no allow from the appraiser" "$(counters appraisals appraiser_answers denied)" "21 20 1"
check "vigild stops" vd_stop

# 2. a measurement comes first: the monitor answers, after the log has it
printf 'appraise func=FILE_CHECK mask=MAY_READ\nmeasure func=FILE_CHECK mask=MAY_READ\n' >pol
check "vigild starts (appraise and measure)" vd_start --policy pol --watch "$F" --hmac-key hk -j 1 \
	--no-tpm --log "$T/log"
inlog=0
for i in $(seq 1 5); do
	cat "$F/m$i" >/dev/null && "$VIGIL" log show "$T/log" | grep -q " $F/m$i\$" && inlog=$((inlog + 1))
done
check_eq "each file is in the measurement list when its read returns" "$inlog" 5
check_eq "... 5 appraisals, none answered by the appraiser" "$(counters appraisals appraiser_answers measured)" "5 0 5"
check "vigild stops" vd_stop

# 3. an audit record comes first: the monitor answers, after writing it
printf 'appraise func=FILE_CHECK mask=MAY_READ\naudit func=FILE_CHECK mask=MAY_READ\n' >pol
check "vigild starts (appraise and audit)" vd_start --policy pol --watch "$F" --hmac-key hk -j 1 --no-tpm
rec=0
for i in $(seq 1 5); do
	cat "$F/a$i" >/dev/null && [ "$(vd_audit_reason "/a$i" allow)" = audit ] && rec=$((rec + 1))
done
check_eq "each read's audit record is written when the read returns" "$rec" 5
check_eq "... 5 appraisals, none answered by the appraiser" "$(counters appraisals appraiser_answers)" "5 0"
check "vigild stops" vd_stop

# 4. an appraiser that allows a file that failed (test-only build)
printf 'appraise func=FILE_CHECK mask=MAY_READ\n' >pol
VIGILD=$VIGILD_TEST check "vigild-test starts" vd_start --policy pol --watch "$F" --hmac-key hk -j 1 --no-tpm
before=$(ps -o pid= --ppid "$VD_PID" | tr -d ' ')
# the kernel takes the first answer: the lie is out, as any compromised appraiser's reply would be
check "a lying appraiser's allow reaches the kernel" cat "$F/LIE"
# the kernel has the allow as soon as the appraiser writes it; the monitor
# reads the appraiser's reply after, on its loop's next turn: wait for it
for _ in $(seq 50); do
	grep -Eq "appraiser 0 \(pid $before\) answered an event it may not answer" "$T/vigild.err" && break
	sleep 0.1
done
check "... the monitor sees it: the allow was for a file that did not pass" \
	grep -Eq "appraiser 0 \(pid $before\) answered an event it may not answer" "$T/vigild.err"
for _ in $(seq 50); do
	after=$(ps -o pid= --ppid "$VD_PID" | tr -d ' ')
	[ -n "$after" ] && [ "$after" != "$before" ] && break
	sleep 0.1
done
check "... kills it and starts another ($before -> $after)" test -n "$after" -a "$after" != "$before"
check_rc 1 "... which denies the changed file" cat "$F/tampered"
check_eq "... audited invalid-hash" "$(vd_audit_reason /tampered deny)" invalid-hash
check "... and allows a labeled one" cat "$F/f1"
check "vigild-test stops" vd_stop

# 6 (before 5, which kills vigild). An exec is answered by the monitor,
# after the ignore mark: the open event the kernel raises right after an
# exec's is then never raised, when that open would need nothing more
printf 'appraise func=BPRM_CHECK\nappraise func=FILE_CHECK mask=MAY_READ\n' >pol
check "vigild starts (appraise exec and open)" vd_start --policy pol --watch "$F" --hmac-key hk -j 1 --no-tpm
before=$(counters events appraisals appraiser_answers ignore_marks)
ran=0
for i in 1 2 3 4 5; do "$F/x$i" && ran=$((ran + 1)); done
check_eq "5 new labeled programs run" "$ran" 5
read -r ev0 ap0 an0 im0 <<<"$before"
read -r ev1 ap1 an1 im1 <<<"$(counters events appraisals appraiser_answers ignore_marks)"
check_eq "... one event each (no open event after the exec's), one appraisal each, answered by the monitor, marked" \
	"$((ev1 - ev0)) $((ap1 - ap0)) $((an1 - an0)) $((im1 - im0))" "5 5 0 5"
for i in 1 2 3 4 5; do cat "$F/x$i" >/dev/null; done
check_eq "... reading them raises no event" "$(counters events)" "$ev1"
check_rc 126 "a changed program is denied" "$F/xbad"
check_eq "... audited invalid-hash" "$(vd_audit_reason /xbad deny)" invalid-hash
check "vigild stops" vd_stop
printf 'appraise func=BPRM_CHECK\nappraise func=FILE_CHECK mask=MAY_READ\nmeasure func=FILE_CHECK mask=MAY_READ\n' >pol
check "vigild starts (the open also measured)" vd_start --policy pol --watch "$F" --hmac-key hk -j 1 \
	--no-tpm --log "$T/log2"
ev0=$(counters events)
check "a new labeled program runs" "$F/x6"
check_eq "... its open after the exec is seen (it must be measured): two events" "$(( $(counters events) - ev0 ))" 2
check "... and measured" sh -c "'$VIGIL' log show '$T/log2' | grep -q ' $F/x6\$'"
check "vigild stops" vd_stop

# 5. the appraisers hold a copy of the group: the monitor killed, they go
# too, and the kernel allows what is pending (no opener is left waiting)
printf 'appraise func=FILE_CHECK mask=MAY_READ\n' >pol
check "vigild starts" vd_start --policy pol --watch "$F" --hmac-key hk -j 2 --no-tpm
apps=$(ps -o pid= --ppid "$VD_PID" | tr -d ' ' | tr '\n' ' ')
check_eq "two appraisers" "$(echo $apps | wc -w)" 2
kill -KILL "$VD_PID"
gone=no
for _ in $(seq 50); do
	alive=0
	for p in $apps; do kill -0 "$p" 2>/dev/null && alive=1; done
	[ $alive = 0 ] && { gone=yes; break; }
	sleep 0.1
done
check_eq "SIGKILL to the monitor: its appraisers are gone within 5 s" "$gone" yes
check "... and a file on the mount opens at once" timeout 5 cat "$F/f2"
vd_stop 2>/dev/null || true	# it was killed: its status is 137
