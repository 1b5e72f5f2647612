#!/usr/bin/env bash
# t0504: vigil-verifier on PostgreSQL (a throwaway cluster, tests/lib-pg.sh)
# against swtpm + vigil-agent on loopback. Bad URLs, a refused connection,
# a wrong password and a missing database fail at start with exit 2 and a
# message naming the URL, password scrubbed. Then: the schema is created,
# registration, trusted rounds (the row is in PostgreSQL), a failure
# recorded in the history, a verifier restart keeps the state (agent still
# known, no entry verified twice, the offset goes on), two verifiers share
# the database (each round of the agent is one verifier's: the state stays consistent, a
# failure is seen by both and recorded), the server drops the connection
# (transparent reconnect), and the database stops mid-run (the store error
# is reported, the API answers 500, nothing is marked trusted, a file run
# meanwhile is detected and recorded when the database is back).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-tpm.sh"
. "$SRCDIR/tests/lib-pg.sh"
vg_init
att_auth
vg_tpm_start

AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
port() { vg_port; }
AP=$(port); VP=$(port); VP2=$(port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
AGENT_PID= VA= VB=
# the server (and its watchdog) first: a bare `wait` would wait for the watchdog
trap '_rc=$?; vg_pg_cleanup; for p in $AGENT_PID $VA $VB; do kill $p 2>/dev/null; done;
      for p in $AGENT_PID $VA $VB; do wait $p 2>/dev/null; done;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1;
      (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1

if ! vg_pg_start "$T/pg" 2>pg.err; then
	echo "not ok 1 - a throwaway PostgreSQL cluster starts (scripts/deps.sh installs postgresql)"
	sed 's/^/#   /' pg.err
	exit 1
fi
PW='Fleet-pw_9x2'
vg_pg_psql -c "CREATE ROLE vigil LOGIN PASSWORD '$PW'" -c "CREATE DATABASE fleet OWNER vigil"
DB="postgresql://vigil:$PW@127.0.0.1:$VG_PG_PORT/fleet"
SAFE="postgresql://vigil:***@127.0.0.1:$VG_PG_PORT/fleet"
sql() { vg_pg_psql -d fleet -c "$1"; }

# ---- URLs that cannot work: exit 2, the URL named, no password ----
bad() {	# WHAT URL GREP
	"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "$2" >out 2>err
	check_eq "$1: exit 2" "$?" 2
	check "$1: the message says why" grep -q -- "$3" err
}
bad "wrong password" "postgresql://vigil:not-$PW@127.0.0.1:$VG_PG_PORT/fleet" \
	"postgresql://vigil:\*\*\*@127.0.0.1:$VG_PG_PORT/fleet: connect: .*password authentication failed"
check "wrong password: not printed" bash -c "! grep -q 'not-$PW' err"
bad "refused connection" "postgresql://vigil:$PW@127.0.0.1:1/fleet" \
	"postgresql://vigil:\*\*\*@127.0.0.1:1/fleet: connect: .*refused"
check "refused connection: no password printed" bash -c "! grep -q '$PW' err"
bad "missing database" "postgresql://vigil:$PW@127.0.0.1:$VG_PG_PORT/nodb" 'database "nodb" does not exist'
bad "not a URL" "postgresql:fleet" "postgresql:fleet: not a postgresql:// URL"
bad "password in the query string" "postgres://vigil@127.0.0.1:1/fleet?password=$PW" \
	"password=\*\*\*"
check "query-string password: not printed" bash -c "! grep -q '$PW' err"

# ---- one verifier ----
mkdir -p tree st
for f in a b c; do echo "file $f" >tree/$f; done
measure() { "$VIGIL" measure --log "$T/log" --tpm >/dev/null 2>&1 "$@"; }
measure "$T/tree/a" "$T/tree/b" "$T/tree/c"
start_agent() {
	"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 2>>agent.err &
	AGENT_PID=$!
	for i in $(seq 600); do curl -s "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && break; sleep 0.1; done
}
start_verifier() {	# PORT URL LOGFILE: sets LASTPID
	"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$1 --db "$2" --interval 200 --ek-ca "$TPMDIR/ek-ca.pem" 2>>"$3" &
	LASTPID=$!
	for i in $(seq 100); do curl -s "127.0.0.1:$1/v1/agents" >/dev/null 2>&1 && break; sleep 0.1; done
}
start_agent
start_verifier $VP "$DB" verifier.err
VA=$LASTPID
check "the verifier runs on PostgreSQL" kill -0 $VA
check "its start message names the store without the password" \
	grep -qF "store $SAFE" verifier.err
check_eq "the schema was created" "$(sql "SELECT string_agg(tablename, ' ' ORDER BY tablename) FROM pg_tables WHERE tableowner = 'vigil'")" \
	"agents policies push_regs push_state verdicts verifiers"

field() { att_field "$1" host1 "${2:-}"; }	# NAME [VERIFIER_URL]
wait_for() { att_wait host1 "$@"; }	# STATE [FAILURE [VERIFIER_URL]]: up to 15 s
entries() { "$VIGIL" log show "$T/log" | wc -l; }

check "policy from the known-good log" "$VIGIL" attest policy create --log "$T/log" -o good.json
check "policy stored" "$VIGIL" attest policy set good good.json
check "registration with credential activation" \
	"$VIGIL" attest add host1 --agent http://127.0.0.1:$AP --policy good
check "trusted after the first round" wait_for trusted
r0=$(field rounds)
for i in 1 2 3; do measure "$T/tree/a"; sleep 0.3; done
sleep 0.6
check "still trusted after new allowed entries" wait_for trusted
check "rounds go on" test "$(field rounds)" -ge $((r0 + 5))
check_eq "every entry verified" "$(field log_entries)" "$(entries)"
check_eq "the row is in PostgreSQL" "$(sql "SELECT state, log_entries, ek_pub IS NOT NULL FROM agents WHERE id = 'host1'")" \
	"1|$(entries)|t"
check_eq "the policy document is in PostgreSQL" "$(sql "SELECT length(doc) FROM policies WHERE name = 'good'")" \
	"$(stat -c %s good.json)"

# a failure, recorded
echo "not allowed" >tree/evil
measure "$T/tree/evil"
check "file outside the policy: failed" wait_for failed policy.not_in_policy
"$VIGIL" attest status host1 --history >hist
check "history names the file" grep -q "policy.not_in_policy entry=$(($(entries) - 1)) path=$T/tree/evil" hist
check_eq "the verdict row names the file" \
	"$(sql "SELECT convert_from(path, 'UTF8') FROM verdicts WHERE agent = 'host1' AND fail = 'policy.not_in_policy'")" \
	"$T/tree/evil"
"$VIGIL" attest policy create --log "$T/log" -o good2.json >/dev/null
"$VIGIL" attest policy set good2 good2.json >/dev/null
check "policy assigned" "$VIGIL" attest policy assign host1 good2
check "trusted under the new policy" wait_for trusted
check_eq "whole list verified again" "$(field log_entries)" "$(entries)"

# ---- verifier restart: the state is in PostgreSQL ----
off0=$(field log_offset)
n0=$(field log_entries)
kill $VA; wait $VA 2>/dev/null
start_verifier $VP "$DB" verifier.err
VA=$LASTPID
check_eq "after a restart the agent is still known" "$(field state)" trusted
r0=$(field rounds)
sleep 1
check "rounds go on after the restart" test "$(field rounds)" -gt "$r0"
check_eq "no entry verified twice" "$(field log_entries)" "$n0"
check_eq "the verified offset is kept" "$(field log_offset)" "$off0"
measure "$T/tree/b"
sleep 0.8
check "the new entry is verified incrementally" test "$(field log_entries)" = $((n0 + 1))
check "the offset continues" test "$(field log_offset)" -gt "$off0"

# ---- two verifiers, one database ----
# The second one has no password in its URL: libpq reads PGPASSFILE.
printf '127.0.0.1:%s:fleet:vigil:%s\n' "$VG_PG_PORT" "$PW" >pgpass
chmod 600 pgpass
PGPASSFILE=$T/pgpass start_verifier $VP2 "postgresql://vigil@127.0.0.1:$VG_PG_PORT/fleet" verifier2.err
VB=$LASTPID
B=http://127.0.0.1:$VP2
check "a second verifier, password from PGPASSFILE" kill -0 $VB
check_eq "it sees the agent registered through the first" "$(field state "$B")" trusted
r0=$(field rounds)
for i in 1 2 3 4; do measure "$T/tree/c"; sleep 0.3; done
sleep 1
check "both running: trusted on the first" wait_for trusted
check "both running: trusted on the second" wait_for trusted "" "$B"
check "both running: rounds go on" test "$(field rounds)" -gt $((r0 + 4))
check_eq "both running: every entry verified, once" "$(field log_entries)" "$(entries)"
check_eq "both verifiers answer the same state" "$(field log_entries "$B") $(field log_offset "$B")" \
	"$(field log_entries) $(field log_offset)"
echo "not allowed either" >tree/evil2
measure "$T/tree/evil2"
check "both running: the failure is seen by the first" wait_for failed policy.not_in_policy
check "both running: and by the second" wait_for failed policy.not_in_policy "$B"
nf=$(sql "SELECT count(*) FROM verdicts WHERE agent = 'host1' AND fail = 'policy.not_in_policy' AND convert_from(path, 'UTF8') = '$T/tree/evil2'")
check "both running: the failure is recorded (once per verifier at most)" test "$nf" -ge 1 -a "$nf" -le 2
check_eq "both running: one agent row" "$(sql "SELECT count(*) FROM agents")" 1
"$VIGIL" attest policy create --log "$T/log" -o good3.json >/dev/null
VIGIL_VERIFIER=$B "$VIGIL" attest policy set good3 good3.json >/dev/null
check "a policy set through the second, assigned through the first" \
	"$VIGIL" attest policy assign host1 good3
check "trusted again on both" wait_for trusted "" "$B"
kill $VB; wait $VB 2>/dev/null
VB=

# ---- the server drops the connection: reconnect, no error ----
lines=$(wc -l <verifier.err)
sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'vigil'" >/dev/null
r0=$(field rounds)
sleep 1
check "after the server dropped the connection: rounds go on" test "$(field rounds)" -gt "$r0"
check "and no store error was reported" bash -c "! tail -n +$((lines + 1)) verifier.err | grep -q 'store error'"

# ---- the store loses a release it answered (a crash with synchronous_commit
# off, a failover to an asynchronous standby): a trigger keeps the lease of
# the next release, as such a store would have it. The lease, and only it, is
# given back at the next listing; the agent is not left until the lease ends
# (35 s) ----
vg_pg_psql -d fleet >/dev/null <<'SQL'
CREATE TABLE lose_release (n int);
INSERT INTO lose_release VALUES (1);
CREATE FUNCTION lose_release() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
BEGIN
	IF OLD.lease_owner <> '' AND NEW.lease_owner = '' AND (SELECT n FROM lose_release) > 0 THEN
		UPDATE lose_release SET n = n - 1;
		NEW.lease_owner := OLD.lease_owner;
		NEW.lease_until := OLD.lease_until;
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER lose_release BEFORE UPDATE ON agents FOR EACH ROW EXECUTE FUNCTION lose_release();
SQL
released_lost() {
	local i
	for i in $(seq 50); do
		[ "$(sql 'SELECT n FROM lose_release')" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}
check "a release is lost" released_lost
r0=$(field rounds)
sleep 3
check "the lost release: rounds go on within 3 s, not when the lease ends" test "$(field rounds)" -gt $((r0 + 2))
check "the lost release: the verifier says so" grep -q "lease under our id that no round of ours holds" verifier.err
vg_pg_psql -d fleet -c "DROP TRIGGER lose_release ON agents" -c "DROP FUNCTION lose_release" \
	-c "DROP TABLE lose_release" >/dev/null

# ---- a lease under the verifier's id that none of its rounds holds (a claim
# the database took and never answered: a statement that timed out here and
# committed there). Written between two rounds, as such a claim leaves it:
# given back once a second old, not when it ends (35 s) ----
me=$(sql "SELECT id FROM verifiers WHERE pid = $VA")
check "the verifier's id is in the store" test -n "$me"
orphan() {
	local i
	for i in $(seq 50); do
		[ "$(sql "UPDATE agents SET lease_owner = '$me', lease_until =
			(extract(epoch FROM clock_timestamp()) * 1000)::int8 + 35000
			WHERE id = 'host1' AND lease_owner = '' RETURNING id")" = host1 ] && return 0
		sleep 0.05
	done
	return 1
}
lines=$(grep -c "no round of ours holds" verifier.err)
check "a lease no round holds, written between rounds" orphan
r0=$(field rounds)
sleep 4
check "the unknown lease: rounds go on within 4 s, not when it ends" test "$(field rounds)" -gt $((r0 + 2))
check "the unknown lease: the verifier says so" test "$(grep -c "no round of ours holds" verifier.err)" -gt "$lines"

# ---- the database stops mid-run ----
n0=$(field log_entries)
r0=$(sql "SELECT rounds FROM agents WHERE id = 'host1'")
vg_pg_stop
sleep 1
check "database down: the verifier reports the store error" \
	grep -q "store error: store: .*\(connection\|connect\)" verifier.err
check_rc 2 "database down: status is an operational error" "$VIGIL" attest status host1
"$VIGIL" attest status host1 >out 2>&1
check "database down: the status error names the store" grep -q "verifier answered 500: store" out
echo "run while the database is down" >tree/evil3
measure "$T/tree/evil3"
sleep 1
check "database down: the verifier survives" kill -0 $VA
check "database restarts" vg_pg_restart
check "database back: the verifier says so" bash -c "for i in \$(seq 50); do grep -q 'store: answering again' verifier.err && exit 0; sleep 0.1; done; exit 1"
t0=$(date +%s)
check "database back: the file run meanwhile is detected" wait_for failed policy.not_in_policy
# the cluster runs with synchronous_commit off: the stop may lose the last
# release the verifier was answered, and the agent must not wait out its lease
check "database back: detected within 10 s, not when a lease the store lost ends (35 s)" \
	test $(($(date +%s) - t0)) -le 10
check_eq "database back: and recorded" \
	"$(sql "SELECT count(*) FROM verdicts WHERE agent = 'host1' AND convert_from(path, 'UTF8') = '$T/tree/evil3'")" 1
check "database back: no round counted while it was down (at most the one in flight)" \
	test "$(sql "SELECT rounds FROM agents WHERE id = 'host1'")" -le $((r0 + 1))
"$VIGIL" attest policy create --log "$T/log" -o good4.json >/dev/null
"$VIGIL" attest policy set good4 good4.json >/dev/null
"$VIGIL" attest policy assign host1 good4 >/dev/null
check "database back: trusted again" wait_for trusted
check_eq "database back: every entry verified" "$(field log_entries)" "$(entries)"

check "remove" "$VIGIL" attest remove host1
check_eq "removed with its history" "$(sql "SELECT (SELECT count(*) FROM agents) + (SELECT count(*) FROM verdicts)")" 0
check "the verifier survived" kill -0 $VA
check "no log line carries the password" bash -c "! grep -q '$PW' verifier.err verifier2.err"
