#!/usr/bin/env bash
# scripts/swtpm.sh - the embedded TPM for tests and the demo: swtpm with a
# freshly provisioned state (EK certificates from a private CA, sha1 and
# sha256 PCR banks), one instance per directory.
#
#   swtpm.sh start DIR [--tcp] [--watch PID]
#                                provision DIR (unless it holds a state
#                                already), start swtpm, wait until it
#                                answers, TPM2_Startup; print the TCTI string.
#                                --watch: also stop it when process PID
#                                ends (a crashed test leaves no swtpm)
#   swtpm.sh stop DIR            shut the TPM down in order (TPM2_Shutdown:
#                                the next start's clock is "safe", so a
#                                verifier does not refuse its first quote
#                                as quote.unsafe), then stop the instance
#                                by its PID (DIR/pid)
#   swtpm.sh status DIR          exit 0 and print the TCTI if it runs, else 1
#   swtpm.sh tcti DIR            print the TCTI string of DIR's instance
#   swtpm.sh reset DIR           an orderly reboot: TPM2_Shutdown, power
#                                cycle (swtpm_ioctl -i), TPM2_Startup; the
#                                PCRs start over from their boot values
#
# UNIX sockets by default (DIR/sock, DIR/sock.ctrl: no ports to collide,
# TCTI swtpm:path=DIR/sock); --tcp picks a free even loopback port P (and
# P+1 for control; TCTI swtpm:host=127.0.0.1,port=P). DIR holds the state,
# the private CA (DIR/ca), the EK certificates (DIR/certs), swtpm's log
# and DIR/pid. DIR must be an absolute or relative path short enough for
# AF_UNIX (DIR/sock.ctrl under 108 bytes). Exit 0 ok, 1 not running
# (status), 2 error.
set -u

die() { echo "swtpm.sh: $*" >&2; exit 2; }

provision() {
	local d=$1
	mkdir -p "$d/ca" "$d/certs" || die "cannot create $d"
	cat >"$d/swtpm-localca.conf" <<EOF
statedir = $d/ca
signingkey = $d/ca/signkey.pem
issuercert = $d/ca/issuercert.pem
certserial = $d/ca/certserial
EOF
	cat >"$d/swtpm-localca.options" <<EOF
--platform-manufacturer vigil
--platform-version 2.1
--platform-model swtpm
EOF
	cat >"$d/swtpm_setup.conf" <<EOF
create_certs_tool = swtpm_localca
create_certs_tool_config = $d/swtpm-localca.conf
create_certs_tool_options = $d/swtpm-localca.options
active_pcr_banks = sha1,sha256
EOF
	swtpm_setup --tpm2 --tpmstate "$d" --config "$d/swtpm_setup.conf" \
		--create-ek-cert --create-platform-cert --pcr-banks sha1,sha256 \
		--write-ek-cert-files "$d/certs" --overwrite --logfile "$d/setup.log" \
		>/dev/null 2>&1 || { cat "$d/setup.log" >&2 2>/dev/null; die "swtpm_setup failed in $d"; }
	cat "$d/ca/issuercert.pem" "$d/ca/swtpm-localca-rootca-cert.pem" >"$d/ek-ca.pem" 2>/dev/null
}

port_free() {
	! ss -Htln "sport = :$1" 2>/dev/null | grep -q .
}

alive() {
	local pid=$1 st
	[ -r "/proc/$pid/stat" ] || return 1
	st=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

start() {
	local d=$1 tcp=$2 watch=$3 tcti port tries pid
	command -v swtpm >/dev/null || die "swtpm is not installed (scripts/deps.sh)"
	mkdir -p "$d" || die "cannot create $d"
	d=$(cd "$d" && pwd)	# swtpm --daemon does chdir("/"): absolute paths only
	if [ -f "$d/pid" ] && alive "$(cat "$d/pid")"; then
		die "$d: swtpm already running (pid $(cat "$d/pid"))"
	fi
	[ -f "$d/tpm2-00.permall" ] || provision "$d"
	rm -f "$d/sock" "$d/sock.ctrl" "$d/swtpm.pid" "$d/pid" "$d/tcti"
	for tries in 1 2 3 4 5 6 7 8; do
		if [ "$tcp" = 1 ]; then
			port=$(( (RANDOM % 10000 + 10000) * 2 ))
			port_free "$port" && port_free $((port + 1)) || continue
			tcti="swtpm:host=127.0.0.1,port=$port"
			set -- --server type=tcp,port=$port,bindaddr=127.0.0.1 \
				--ctrl type=tcp,port=$((port + 1)),bindaddr=127.0.0.1
		else
			[ ${#d} -lt 96 ] || die "$d: path too long for a UNIX socket"
			tcti="swtpm:path=$d/sock"
			set -- --server type=unixio,path="$d/sock" --ctrl type=unixio,path="$d/sock.ctrl"
		fi
		swtpm socket --tpm2 --tpmstate dir="$d" "$@" --flags not-need-init \
			--daemon --pid file="$d/swtpm.pid" --log file="$d/log",level=1 2>>"$d/log" || continue
		pid=$(cat "$d/swtpm.pid" 2>/dev/null) || continue	# read now: swtpm deletes it on exit
		echo "$pid" >"$d/pid"
		echo "$tcti" >"$d/tcti"
		for _ in $(seq 100); do
			if TPM2TOOLS_TCTI=$tcti tpm2_startup -c >/dev/null 2>&1; then
				[ -n "$watch" ] && watchdog "$watch" "$pid" "$d"
				echo "$tcti"
				return 0
			fi
			alive "$pid" || break
			sleep 0.05
		done
		kill "$pid" 2>/dev/null
		rm -f "$d/pid" "$d/tcti"
		[ "$tcp" = 1 ] || break
	done
	tail -5 "$d/log" >&2 2>/dev/null
	die "$d: swtpm did not start"
}

# kill swtpm @2 once process @1 is gone (or swtpm itself ended)
watchdog() {
	local parent=$1 pid=$2 d=$3
	(
		trap '' HUP
		exec </dev/null >/dev/null 2>&1
		while kill -0 "$parent" 2>/dev/null && alive "$pid"; do sleep 0.5; done
		if alive "$pid" && [ "$(cat "$d/pid" 2>/dev/null)" = "$pid" ]; then
			kill "$pid" 2>/dev/null
		fi
	) &
}

stop() {
	local d=$1 pid
	[ -f "$d/pid" ] || die "$d: no pid file (not started by swtpm.sh?)"
	pid=$(cat "$d/pid")
	[[ $pid =~ ^[0-9]+$ ]] || die "$d/pid: not a PID"
	# an orderly shutdown, as a machine's firmware does before power-off;
	# a TPM that does not answer is stopped all the same (and says so)
	if alive "$pid" && [ -f "$d/tcti" ] &&
	   ! TPM2TOOLS_TCTI=$(cat "$d/tcti") timeout 10 tpm2_shutdown -c >/dev/null 2>&1; then
		echo "swtpm.sh: $d: TPM2_Shutdown failed; stopping it without (its next start is not 'safe')" >&2
	fi
	kill "$pid" 2>/dev/null
	# the daemon is reparented and may linger as a zombie: wait for swtpm's
	# own pid file to vanish (it removes it on exit)
	for _ in $(seq 100); do
		{ [ -e "$d/swtpm.pid" ] && alive "$pid"; } || break
		sleep 0.05
	done
	if [ -e "$d/swtpm.pid" ] && alive "$pid"; then
		kill -9 "$pid" 2>/dev/null
		rm -f "$d/swtpm.pid"
	fi
	rm -f "$d/pid" "$d/tcti" "$d/sock" "$d/sock.ctrl"
}

status() {
	local d=$1
	if [ -f "$d/pid" ] && alive "$(cat "$d/pid")"; then
		cat "$d/tcti"
		return 0
	fi
	echo "$d: not running" >&2
	return 1
}

reset() {
	local d=$1 tcti ctrl
	status "$d" >/dev/null || die "$d: not running"
	tcti=$(cat "$d/tcti")
	if [ -S "$d/sock.ctrl" ]; then
		ctrl=(--unix "$d/sock.ctrl")
	else
		ctrl=(--tcp "127.0.0.1:$((${tcti##*port=} + 1))")
	fi
	TPM2TOOLS_TCTI=$tcti tpm2_shutdown -c >/dev/null 2>&1 || die "$d: TPM2_Shutdown failed"
	swtpm_ioctl "${ctrl[@]}" -i >/dev/null || die "$d: swtpm_ioctl -i failed"
	TPM2TOOLS_TCTI=$tcti tpm2_startup -c >/dev/null 2>&1 || die "$d: TPM2_Startup failed"
}

[ $# -ge 2 ] || die "usage: swtpm.sh start DIR [--tcp] | stop DIR | status DIR | tcti DIR | reset DIR"
cmd=$1 dir=$2
shift 2
case $cmd in
start)
	tcp=0 watch=
	while [ $# -gt 0 ]; do
		case $1 in
		--tcp) tcp=1 ;;
		--watch)
			[[ ${2:-} =~ ^[0-9]+$ ]] || die "start: --watch needs a PID"
			watch=$2
			shift ;;
		*) die "start: unknown option $1" ;;
		esac
		shift
	done
	start "$dir" "$tcp" "$watch" ;;
stop) stop "$dir" ;;
status) status "$dir" ;;
reset) reset "$dir" ;;
tcti) [ -f "$dir/tcti" ] || die "$dir: not running"; cat "$dir/tcti" ;;
*) die "unknown command $cmd" ;;
esac
