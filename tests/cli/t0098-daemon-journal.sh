#!/usr/bin/env bash
# t0098: the daemons' diagnostic lines (common/log.h). When stderr is the
# journal ($JOURNAL_STREAM names stderr's dev:ino, here a file's), each line
# starts with its priority (<3> error, <4> warning, <6> info) and has no
# program name; otherwise (no $JOURNAL_STREAM, or one naming another file,
# or malformed) it is "PROGRAM: MESSAGE" as before.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
vg_init
att_auth
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
VERIFIER=${VIGIL_VERIFIER_BIN:?}
PIDS=
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null; (exit $_rc); vg_cleanup' EXIT

# run_j FILE CMD...: CMD with stderr to FILE and $JOURNAL_STREAM naming FILE
run_j() { local f=$1; shift; : >"$f"; JOURNAL_STREAM=$(stat -c %d:%i "$f") "$@" 2>>"$f"; }

# ---- vigild: an error ----
run_j j.err timeout 10 "$VIGILD" --mode bogus --policy /dev/null --watch "$T" >/dev/null
check_eq "vigild, bad --mode: exit 2" "$?" 2
check "journal: <3> and no program name" grep -qx "<3>--mode must be enforce, permissive or fix, not 'bogus'" j.err
check "journal: every line has a priority" sh -c "! grep -qv '^<[0-7]>' j.err"
timeout 10 "$VIGILD" --mode bogus --policy /dev/null --watch "$T" >/dev/null 2>p.err
check "no JOURNAL_STREAM: the plain form" grep -qx "vigild: --mode must be enforce, permissive or fix, not 'bogus'" p.err
: >other
JOURNAL_STREAM=$(stat -c %d:%i other) timeout 10 "$VIGILD" --mode bogus --policy /dev/null \
	--watch "$T" >/dev/null 2>o.err
check "JOURNAL_STREAM naming another file: plain" grep -q "^vigild: --mode must" o.err
: >m.err
JOURNAL_STREAM="$(stat -c %d:%i m.err)x" timeout 10 "$VIGILD" --mode bogus --policy /dev/null \
	--watch "$T" >/dev/null 2>>m.err
check "a malformed JOURNAL_STREAM: plain" grep -q "^vigild: --mode must" m.err

# ---- vigild's appraiser: its own lines go the same way (daemon/worker.c) ----
run_j a.err timeout 10 "$VIGILD" --appraiser 99 --keyring "$T/no-such-keyring" >/dev/null
check_eq "vigild's appraiser, a keyring it cannot read: exit 2" "$?" 2
check "journal: the appraiser's line has <3> and no program name" \
	grep -q "^<3>keyring $T/no-such-keyring: " a.err
check "journal: every appraiser line has a priority" sh -c "! grep -qv '^<[0-7]>' a.err"
timeout 10 "$VIGILD" --appraiser 99 --keyring "$T/no-such-keyring" >/dev/null 2>ap.err
check "no JOURNAL_STREAM: the appraiser's plain form" grep -q "^vigild appraiser: keyring $T/no-such-keyring: " ap.err

# ---- vigil-verifier: a warning and an info line ----
VP=$(vg_port)
: >v.err
JOURNAL_STREAM=$(stat -c %d:%i v.err) "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP \
	--db "sqlite:$T/v.db" 2>>v.err &
VPID=$!
PIDS="$PIDS $VPID"
for i in $(seq 100); do curl -s "http://127.0.0.1:$VP/v1/agents" >/dev/null 2>&1 && break; sleep 0.1; done
curl -s -o /dev/null -H "Authorization: Bearer not-a-token" "http://127.0.0.1:$VP/v1/agents"
kill -HUP $VPID
for i in $(seq 50); do grep -q SIGHUP v.err && break; sleep 0.1; done
check "verifier: a refused token is <4>" grep -qx "<4>refused a malformed token" v.err
check "verifier: SIGHUP's token count is <6>" grep -qx "<6>SIGHUP: [0-9]* token(s) from $T/verifier-tokens" v.err
check "verifier: no line with the program name" sh -c "! grep -q '^<[0-7]>vigil-verifier:' v.err"
