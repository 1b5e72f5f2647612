#!/usr/bin/env bash
# t0535: every process of vigil-verifier and vigil-agent as /proc shows it
# (common/proc.h's tables: verifier/privsep.c, agent/agent_privsep.c):
# uid, effective and permitted capabilities, NoNewPrivs, Seccomp, and the
# Landlock state, which /proc does not show: the test builds
# (vigil-verifier-test, vigil-agent-tamper) try to write a file in a
# directory open to every uid once confined (VG_TEST_PROBE_WRITE,
# common/sandbox.h's sandbox_test_probe), which only Landlock refuses to
# root. The table is printed as TAP comments, then checked: the two
# network processes (which parse what peers send) are under seccomp
# (mode 2) with no_new_privs and Landlock, the agent's as --user nobody
# with no capability; the processes that hold the TPM, the database, the
# TLS key and the operator's hook are not sandboxed (each parses only its
# fixed, size-checked messages). vigild's monitor and appraisers are
# t0707's.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
att_auth
vg_tpm_start

AGENT=${VIGIL_AGENT_TAMPER_BIN:?}
VERIFIER=${VIGIL_VERIFIER_TEST_BIN:?}
AP=$(vg_port); VP=$(vg_port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
APID= VPID=
trap '_rc=$?; for p in $APID $VPID; do kill $p 2>/dev/null; done;
      for p in $APID $VPID; do wait $p 2>/dev/null; done;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1;
      (exit $_rc); vg_cleanup' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1

# what nobody may read, and where everybody may write
chmod 755 "$T"
mkdir -p open st
chmod 1777 open
echo "file a" >a
"$VIGIL" measure --log "$T/log" --tpm "$T/a" >/dev/null 2>&1
chmod 644 log

VG_TEST_PROBE_WRITE=$T/open "$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" \
	--log "$T/log" --id host1 --user nobody 2>agent.err &
APID=$!
for i in $(seq 600); do curl -s "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && break; sleep 0.1; done
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout api.key -out api.pem \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -days 2 >/dev/null 2>&1
VG_TEST_PROBE_WRITE=$T/open "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/v.db" \
	--api-cert api.pem --api-key api.key --on-fail true --interval 300 \
	--ek-ca "$TPMDIR/ek-ca.pem" 2>verifier.err &
VPID=$!
for i in $(seq 100); do curl -s --cacert api.pem "https://127.0.0.1:$VP/" >/dev/null 2>&1 && break; sleep 0.1; done
"$VIGIL" attest policy create --log "$T/log" -o good.json >/dev/null
export VIGIL_VERIFIER=https://127.0.0.1:$VP VIGIL_VERIFIER_CACERT=$T/api.pem
check "the verifier attests the agent through its processes" bash -c \
	"'$VIGIL' attest policy set good good.json && '$VIGIL' attest add host1 --agent http://127.0.0.1:$AP --policy good"
check "... and it is trusted" att_wait host1 trusted

children() { cat /proc/$1/task/*/children 2>/dev/null | tr " " "\n" | grep .; }
child_named() {	# PARENT COMM
	local p
	for p in $(children "$1"); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = "$2" ] && { echo "$p"; return 0; }
	done
	return 1
}
st() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status" 2>/dev/null; }
# the probe's line in LOG for a process: Landlock, or none
landlock() {	# PROG LOG
	if grep -qF "$1: probe: write $T/open: Permission denied" "$2"; then echo on
	elif grep -qF "$1: probe: write $T/open: written" "$2"; then echo off
	else echo none; fi
}

ANET=$(children "$APID" | head -1)
KPID=$(child_named "$VPID" vigil-key)
SPID=$(child_named "$VPID" vigil-store)
HPID=$(child_named "$VPID" vigil-hook)
check "the agent's network process is the TPM process's child" test -n "$ANET"
check "the verifier's key, store and hook processes are its children" \
	test -n "$KPID" -a -n "$SPID" -a -n "$HPID"

echo "# process                   pid     uid    CapEff           NoNewPrivs Seccomp Landlock"
row() {	# NAME PID LANDLOCK
	printf '# %-25s %-7s %-6s %-16s %-10s %-7s %s\n' "$1" "$2" "$(st "$2" Uid)" \
		"$(st "$2" CapEff)" "$(st "$2" NoNewPrivs)" "$(st "$2" Seccomp)" "$3"
}
row "vigil-verifier network" "$VPID" "$(landlock vigil-verifier verifier.err)"
row "vigil-verifier key" "$KPID" none
row "vigil-verifier store" "$SPID" none
row "vigil-verifier hook" "$HPID" none
row "vigil-agent TPM" "$APID" none
row "vigil-agent network" "$ANET" "$(landlock vigil-agent agent.err)"

# the network processes
check_eq "verifier network: no_new_privs" "$(st "$VPID" NoNewPrivs)" 1
check_eq "verifier network: seccomp filter" "$(st "$VPID" Seccomp)" 2
check_eq "verifier network: Landlock (root cannot write where anyone may)" \
	"$(landlock vigil-verifier verifier.err)" on
check_eq "agent network: uid nobody" "$(st "$ANET" Uid)" "$(id -u nobody)"
check_eq "agent network: no capability" "$(st "$ANET" CapEff)$(st "$ANET" CapPrm)" \
	00000000000000000000000000000000
check_eq "agent network: no_new_privs" "$(st "$ANET" NoNewPrivs)" 1
check_eq "agent network: seccomp filter" "$(st "$ANET" Seccomp)" 2
check_eq "agent network: Landlock" "$(landlock vigil-agent agent.err)" on
# the holders, not sandboxed: their state as it is
for p in "$KPID" "$SPID" "$HPID" "$APID"; do
	check_eq "holder $(cat /proc/$p/comm): no seccomp filter" "$(st "$p" Seccomp)" 0
done
check_eq "agent TPM process: its uid kept" "$(st "$APID" Uid)" 0
