#!/usr/bin/env bash
# t0510: vigil-verifier's privilege separation (verifier/privsep.h). The
# store process is a separate pid that alone holds the database; the
# network process, once sandboxed, cannot open the SQLite file nor connect
# to PostgreSQL's unix socket (the test-only build vigil-verifier-test
# probes both after its sandbox: VG_TEST_PROBE_DB, VG_TEST_PROBE_SOCK),
# holds no password (argv and environment scrubbed), and still registers
# and attests an agent through the store process, on SQLite and on
# PostgreSQL (a throwaway cluster on a unix socket, tests/lib-pg.sh).
# With --api-cert/--api-key, the TLS key is in a key process of its own
# and HTTPS works through it.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-tpm.sh"
. "$SRCDIR/tests/lib-pg.sh"
vg_init
att_auth
vg_tpm_start

AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_TEST_BIN:?}
AP=$(vg_port); VP=$(vg_port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
AGENT_PID= VPID=
trap '_rc=$?; vg_pg_cleanup; for p in $AGENT_PID $VPID; do kill $p 2>/dev/null; done;
      for p in $AGENT_PID $VPID; do wait $p 2>/dev/null; done;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1;
      (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1

if ! VG_PG_LISTEN= vg_pg_start "$T/pg" 2>pg.err; then
	echo "not ok 1 - a throwaway PostgreSQL cluster starts (scripts/deps.sh installs postgresql)"
	sed 's/^/#   /' pg.err
	exit 1
fi
SOCK=$(vg_pg_socket)
check "control: PostgreSQL's unix socket answers others" vg_pg_psql -c "SELECT 1"

mkdir -p tree st
echo "file a" >tree/a
"$VIGIL" measure --log "$T/log" --tpm "$T/tree/a" >/dev/null 2>&1
"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 2>>agent.err &
AGENT_PID=$!
for i in $(seq 600); do curl -s "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && break; sleep 0.1; done
"$VIGIL" attest policy create --log "$T/log" -o good.json >/dev/null

start_verifier() {	# DB LOG [ENV...]: sets VPID
	local db=$1 log=$2
	shift 2
	env "$@" VG_TEST_PROBE_SOCK="$SOCK" "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "$db" \
		--interval 200 --ek-ca "$TPMDIR/ek-ca.pem" 2>"$log" &
	VPID=$!
	for i in $(seq 100); do curl -s "127.0.0.1:$VP/v1/agents" >/dev/null 2>&1 && break; sleep 0.1; done
}
stop_verifier() {
	kill $VPID; wait $VPID 2>/dev/null
	VPID=
}
# the store (key) process: the child of the network process named vigil-store (vigil-key)
child_pid() {
	local p
	for p in $(cat /proc/$VPID/task/*/children 2>/dev/null); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = "$1" ] && { echo $p; return 0; }
	done
	return 1
}
store_pid() { child_pid vigil-store; }
fd_to() { ls -l /proc/$1/fd 2>/dev/null | grep -qF -- "$2"; }
status_is() { grep -q "^$2:[[:space:]]*$3\$" /proc/$1/status; }
attest() {	# WHAT: policy, registration, a trusted round
	check "$1: policy stored through the store process" "$VIGIL" attest policy set good good.json
	check "$1: registration" "$VIGIL" attest add host1 --agent http://127.0.0.1:$AP --policy good
	check "$1: trusted after a round" att_wait host1 trusted
	check "$1: rounds go on" test "$(att_field rounds)" -ge 1
	check "$1: the history is read back" "$VIGIL" attest status host1 --history
}

# ---- SQLite ----
start_verifier "sqlite:$T/verifier.db" verifier.err VG_TEST_PROBE_DB="$T/verifier.db"
check "SQLite: the verifier runs" kill -0 $VPID
check "SQLite: the database file exists" test -s "$T/verifier.db"
check "SQLite: the network process cannot open the database file" \
	grep -qF "probe: open $T/verifier.db: Permission denied" verifier.err
check "SQLite: ... nor make a unix socket to reach PostgreSQL's" \
	grep -qF "probe: socket $SOCK: Permission denied" verifier.err
SPID=$(store_pid)
check "the store process is a child of the network process" test -n "$SPID"
check "... with a pid of its own" test "${SPID:-$VPID}" != "$VPID"
check_eq "... its parent is the network process" \
	"$(awk '/^PPid:/ {print $2}' /proc/${SPID:-0}/status 2>/dev/null)" "$VPID"
check "the store process holds the database file open" fd_to "${SPID:-0}" "$T/verifier.db"
check "the network process does not" bash -c "! ls -l /proc/$VPID/fd | grep -qF '$T/verifier.db'"
check "the network process has no_new_privs" status_is $VPID NoNewPrivs 1
check "the network process is under a seccomp filter" status_is $VPID Seccomp 2
check "the store process is not" status_is "${SPID:-0}" Seccomp 0
attest SQLite
stop_verifier
sleep 0.5
check "the store process ends with the network process" bash -c "! kill -0 ${SPID:-0} 2>/dev/null"

# ---- PostgreSQL on its unix socket, a password in the URL and in PGPASSWORD ----
DB="postgresql://postgres:url-secret-7@/postgres?host=$VG_PG_DIR&port=$VG_PG_PORT"
start_verifier "$DB" verifier-pg.err PGPASSWORD=env-secret-8
check "PostgreSQL: the verifier runs" kill -0 $VPID
check "PostgreSQL: the network process cannot make a unix socket to reach the server" \
	grep -qF "probe: socket $SOCK: Permission denied" verifier-pg.err
SPID=$(store_pid)
check "PostgreSQL: a store process" test -n "$SPID"
check "PostgreSQL: the store process is connected (a unix socket open)" \
	bash -c "ls -l /proc/${SPID:-0}/fd | grep -q socket"
check "the URL's password is not in the network process's argv" \
	bash -c "! tr '\0' ' ' </proc/$VPID/cmdline | grep -q url-secret-7"
check "... nor PGPASSWORD in its environment" \
	bash -c "! tr '\0' '\n' </proc/$VPID/environ | grep -q env-secret-8"
check "the store process keeps them" \
	bash -c "tr '\0' ' ' </proc/${SPID:-0}/cmdline | grep -q url-secret-7"
check "the start message names the store without the password" \
	grep -qF "store postgresql://postgres:***@/postgres" verifier-pg.err
attest PostgreSQL
check_eq "PostgreSQL: the row is in the database" \
	"$(vg_pg_psql -c "SELECT state FROM agents WHERE id = 'host1'")" 1
stop_verifier

# ---- the API's TLS key in a key process ----
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
	-subj /CN=t0510-ca -days 2 >/dev/null 2>&1
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout api.key -out api.csr \
	-subj /CN=127.0.0.1 >/dev/null 2>&1
printf 'subjectAltName=IP:127.0.0.1\n' >api.ext
openssl x509 -req -in api.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out api.pem -days 2 \
	-extfile api.ext >/dev/null 2>&1
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/v3.db" --api-cert api.pem \
	--api-key api.key 2>verifier-tls.err &
VPID=$!
for i in $(seq 100); do curl -s --cacert ca.pem "https://127.0.0.1:$VP/" >/dev/null 2>&1 && break; sleep 0.1; done
KPID=$(child_pid vigil-key)
check "TLS: a key process" test -n "$KPID"
check "... with a pid of its own" test "${KPID:-$VPID}" != "$VPID"
check_eq "TLS: the API answers over HTTPS, the handshake signed by the key process" \
	"$(curl -s --cacert ca.pem -H "$ATT_HDR" -o /dev/null -w '%{http_code}' "https://127.0.0.1:$VP/v1/agents")" 200
check_eq "TLS: ... over TLS 1.2 too" \
	"$(curl -s --tlsv1.2 --tls-max 1.2 --cacert ca.pem -H "$ATT_HDR" -o /dev/null -w '%{http_code}' \
	"https://127.0.0.1:$VP/v1/agents")" 200
stop_verifier
