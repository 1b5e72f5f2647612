# shellcheck shell=bash
# tests/lib-pg.sh - a throwaway PostgreSQL cluster for one test script
# (PostgreSQL 15 or later, Debian package postgresql). Needs root:
# the server refuses to run as root, so it runs as user postgres.
#
#   vg_pg_start DIR   initdb in DIR/data (DIR becomes owned by postgres),
#                     start the server listening on a unix socket in DIR
#                     and on 127.0.0.1:$VG_PG_PORT (a free port; none with
#                     VG_PG_LISTEN= set empty: socket only); wait up to
#                     $VG_PG_TIMEOUT seconds (30) for it to answer. Exports
#                     VG_PG_DIR, VG_PG_PORT, VG_PG_URL (superuser postgres
#                     over the socket, database postgres). Local connections
#                     are trusted, TCP ones need a SCRAM password. Default
#                     collation ICU en-US (not bytewise: what a real fleet
#                     database has). Return: 0, 1 (message on stderr).
#   vg_pg_stop        stop it now (pg_ctl stop -m immediate, then SIGKILL)
#   vg_pg_restart     start it again on the same data and port
#   vg_pg_psql ARGS   psql as postgres on the socket (-X -q -t -A)
#   vg_pg_cleanup     stop it if running (call from the EXIT trap, before any
#                     bare `wait`: the watchdog below is a child of the script)
#
# A watchdog kills the server when the calling script is gone or after
# $VG_PG_LIFETIME seconds (900), so a killed test leaves nothing behind.
# the newest server installed (Debian: /usr/lib/postgresql/15/bin); 15+ for ICU collations
VG_PG_BIN=${VG_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
VG_PG_BIN=${VG_PG_BIN:-/usr/lib/postgresql/15/bin}
VG_PG_DIR=
VG_PG_PORT=
VG_PG_URL=
_vg_pg_watch=

_vg_pg_pid() {
	[ -f "$VG_PG_DIR/data/postmaster.pid" ] && head -1 "$VG_PG_DIR/data/postmaster.pid"
}

_vg_pg_run() {
	local i pid deadline
	runuser -u postgres -- "$VG_PG_BIN/postgres" -D "$VG_PG_DIR/data" -k "$VG_PG_DIR" \
		-p "$VG_PG_PORT" -c listen_addresses="${VG_PG_LISTEN-127.0.0.1}" -c fsync=off \
		-c synchronous_commit=off -c full_page_writes=off -c max_connections=40 \
		-c shared_buffers=16MB -c log_min_messages=warning \
		</dev/null >>"$VG_PG_DIR/server.log" 2>&1 &
	deadline=$((SECONDS + ${VG_PG_TIMEOUT:-30}))
	while [ $SECONDS -lt $deadline ]; do
		if "$VG_PG_BIN/pg_isready" -q -h "$VG_PG_DIR" -p "$VG_PG_PORT" -U postgres; then
			pid=$(_vg_pg_pid)
			break
		fi
		sleep 0.1
	done
	if [ -z "${pid:-}" ]; then
		echo "lib-pg: the server did not answer within ${VG_PG_TIMEOUT:-30} s:" >&2
		tail -5 "$VG_PG_DIR/server.log" >&2
		return 1
	fi
	# the watchdog: neither its stdout nor stderr may keep the TAP pipe open
	(
		owner=$$ limit=$((SECONDS + ${VG_PG_LIFETIME:-900}))
		while kill -0 "$owner" 2>/dev/null && kill -0 "$pid" 2>/dev/null &&
			[ $SECONDS -lt $limit ]; do
			sleep 1
		done
		kill -9 "$pid" 2>/dev/null
	) </dev/null >/dev/null 2>&1 &
	_vg_pg_watch=$!
	return 0
}

vg_pg_start() {
	local dir=$1
	if [ ! -x "$VG_PG_BIN/initdb" ] || [ ! -x "$VG_PG_BIN/postgres" ]; then
		echo "lib-pg: no PostgreSQL server in $VG_PG_BIN (scripts/deps.sh installs postgresql)" >&2
		return 1
	fi
	if ! id postgres >/dev/null 2>&1; then
		echo "lib-pg: no user postgres (scripts/deps.sh installs postgresql)" >&2
		return 1
	fi
	mkdir -p "$dir"
	VG_PG_DIR=$(cd "$dir" && pwd)
	chown postgres: "$VG_PG_DIR"
	chmod 700 "$VG_PG_DIR"
	if ! runuser -u postgres -- test -x "$VG_PG_DIR"; then
		echo "lib-pg: user postgres cannot reach $VG_PG_DIR (a parent directory is private)" >&2
		return 1
	fi
	VG_PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	if ! (cd / && runuser -u postgres -- "$VG_PG_BIN/initdb" -D "$VG_PG_DIR/data" -U postgres \
		-A trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 \
		--locale-provider=icu --icu-locale=en-US) >"$VG_PG_DIR/initdb.log" 2>&1; then
		echo "lib-pg: initdb failed:" >&2
		tail -5 "$VG_PG_DIR/initdb.log" >&2
		return 1
	fi
	if ! _vg_pg_run; then
		# the free port was taken meanwhile by another test: once more on another
		grep -q "could not bind" "$VG_PG_DIR/server.log" || return 1
		VG_PG_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
		_vg_pg_run || return 1
	fi
	VG_PG_URL="postgresql:///postgres?host=$VG_PG_DIR&port=$VG_PG_PORT&user=postgres"
	export VG_PG_DIR VG_PG_PORT VG_PG_URL
}

vg_pg_stop() {
	local pid i
	pid=$(_vg_pg_pid) || return 0
	(cd / && runuser -u postgres -- "$VG_PG_BIN/pg_ctl" stop -m immediate -D "$VG_PG_DIR/data" \
		-t 10) >/dev/null 2>&1 || kill -9 "$pid" 2>/dev/null
	for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null
	[ -n "$_vg_pg_watch" ] && kill "$_vg_pg_watch" 2>/dev/null
	_vg_pg_watch=
	return 0
}

vg_pg_restart() {
	vg_pg_stop
	_vg_pg_run
}

vg_pg_psql() {
	"$VG_PG_BIN/psql" -X -q -t -A -v ON_ERROR_STOP=1 -h "$VG_PG_DIR" -p "$VG_PG_PORT" -U postgres "$@"
}

vg_pg_cleanup() {
	[ -n "$VG_PG_DIR" ] && vg_pg_stop
	return 0
}

# vg_pg_socket: the path of the running cluster's unix socket
vg_pg_socket() {
	echo "$VG_PG_DIR/.s.PGSQL.$VG_PG_PORT"
}
