#!/usr/bin/env bash
# t0708: vigild's counters in the Prometheus text format (issue 15, item
# 5): `vigil status --prometheus` and --metrics-file FILE (a textfile for
# node_exporter, written before ready, every 5 s and at exit, replaced
# whole: no temporary left beside it) both pass tests/helpers/prom_check.py
# (every sample typed, valid names, counters NAME_total, histogram buckets
# cumulative up to +Inf == _count) and count what happened: decisions by
# verdict and reason, the latency histogram, cache hits and misses,
# appraiser restarts. The metrics file may be on the marked filesystem
# itself (its writer's opens are vigild's own events: no deadlock). A
# --metrics-file that cannot be written stops the start (exit 2, naming
# it, never ready; the control socket it leaves is the startup's
# cleanup, not checked here). The checker itself fails on broken texts.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
trap '_rc=$?; vd_stop; (exit $_rc); vg_cleanup' EXIT
PC="/usr/bin/python3 $SRCDIR/tests/helpers/prom_check.py"
head -c 32 /dev/urandom >hk
mkdir "$T/fs" && mount -t tmpfs -o size=16m vigil-t0708 "$T/fs"
F=$T/fs
cp /usr/bin/true "$F/good"; cp /usr/bin/true "$F/bad"
"$VIGIL" label -q --hmac-key hk "$F/good"
printf 'appraise func=BPRM_CHECK\n' >pol
mkdir "$T/metrics"
# value NAME{LABELS} FILE: the value of that sample
value() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

umask 077	# the unit's UMask: the textfile must still be readable by node_exporter
check "vigild starts with --metrics-file" vd_start --policy pol --watch "$F" --hmac-key hk \
	--no-tpm --metrics-file "$T/metrics/vigild.prom"
check "the file is there at ready" test -s "$T/metrics/vigild.prom"
check "... and valid" $PC "$T/metrics/vigild.prom"
check_eq "... mode 0644" "$(stat -c %a "$T/metrics/vigild.prom")" 644
umask 022
"$F/good"; "$F/good"; "$F/bad" 2>/dev/null; "$F/bad" 2>/dev/null
"$VIGIL" status --control "$T/ctl" --prometheus >st.prom
check_eq "vigil status --prometheus: exit 0" "$?" 0
check "... valid, with the families asked for" $PC st.prom \
	--require vigild_decisions_total --require vigild_decision_reasons_total \
	--require vigild_decision_latency_seconds --require vigild_cache_hits_total \
	--require vigild_cache_misses_total --require vigild_appraiser_restarts_total \
	--require vigild_mode
check "... denials counted" test "$(value 'vigild_decisions_total{verdict="deny"}' st.prom)" -ge 2
check "... by reason" grep -q '^vigild_decision_reasons_total{reason="[a-z-]*"} [1-9]' st.prom
check "... allows counted" test "$(value 'vigild_decisions_total{verdict="allow"}' st.prom)" -ge 2
check "... the mode" grep -qx 'vigild_mode{mode="enforce"} 1' st.prom
check "... the histogram counts every decision" test \
	"$(value vigild_decision_latency_seconds_count st.prom)" -ge 4
check "... cache hits + misses counted" test \
	$(( $(value vigild_cache_hits_total st.prom) + $(value vigild_cache_misses_total st.prom) )) -ge 1
"$VIGIL" status --control "$T/ctl" --json >st.json
check "--json carries the histogram" /usr/bin/python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert len(o["latency_buckets_us"]) == 32 and o["latency_sum_us"] > 0' st.json
check_rc 2 "--prometheus with --json: usage error" "$VIGIL" status --control "$T/ctl" --prometheus --json
sleep 6
check "the file was rewritten within 5 s: the denials are in it" \
	test "$(value 'vigild_decisions_total{verdict="deny"}' "$T/metrics/vigild.prom")" -ge 2
check "... still valid" $PC "$T/metrics/vigild.prom"
check_eq "no temporary beside it" "$(ls -A "$T/metrics")" vigild.prom
"$F/bad" 2>/dev/null
check "vigild stops" vd_stop
check "at exit: the last denial is in the file" \
	test "$(value 'vigild_decisions_total{verdict="deny"}' "$T/metrics/vigild.prom")" -ge 3
check_eq "... no temporary beside it" "$(ls -A "$T/metrics")" vigild.prom

# ---- the file on the marked filesystem ----
check "vigild with its metrics file on the marked filesystem" vd_start --policy pol \
	--watch "$F" --hmac-key hk --no-tpm --metrics-file "$F/vigild.prom"
sleep 6
"$F/good"
check "... still answers after a rewrite" "$VIGIL" status --control "$T/ctl"
check "... the file is valid" $PC "$F/vigild.prom"
check "vigild stops" vd_stop

# ---- refused at start ----
timeout 30 "$VIGILD" --policy pol --watch "$F" --hmac-key hk --no-tpm --control "$T/ctl2" \
	--foreground --metrics-file "$T/nodir/vigild.prom" >/dev/null 2>err
check_eq "--metrics-file in a missing directory: exit 2" "$?" 2
check "... naming the file" grep -q "^vigild: --metrics-file $T/nodir/vigild.prom: " err
check "... never ready" sh -c '! grep -q ready err'

# ---- the checker fails on broken texts ----
bad() { # WHAT TEXT: prom_check refuses TEXT
	printf '%b' "$2" >bad.prom
	check_rc 1 "prom_check refuses $1" $PC bad.prom
}
H='# TYPE h histogram\n'
bad "a sample without TYPE" 'x_total 1\n'
bad "an invalid name" '# TYPE 1x gauge\n1x 1\n'
bad "a counter not named _total" '# TYPE x counter\nx 1\n'
bad "a negative counter" '# TYPE x_total counter\nx_total -1\n'
bad "buckets not cumulative" "$H"'h_bucket{le="1"} 5\nh_bucket{le="2"} 3\nh_bucket{le="+Inf"} 5\nh_sum 1\nh_count 5\n'
bad "no +Inf bucket" "$H"'h_bucket{le="1"} 5\nh_sum 1\nh_count 5\n'
bad "+Inf != _count" "$H"'h_bucket{le="1"} 5\nh_bucket{le="+Inf"} 5\nh_sum 1\nh_count 6\n'
bad "a bad escape" '# TYPE g gauge\ng{a="\\x"} 1\n'
bad "families interleaved" '# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na{x="y"} 2\n'
printf '%b' "$H"'h_bucket{le="1"} 3\nh_bucket{le="+Inf"} 5\nh_sum 1\nh_count 5\n' >good.prom
check "prom_check accepts a right histogram" $PC good.prom
