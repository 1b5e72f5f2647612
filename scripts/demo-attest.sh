# shellcheck shell=bash
# scripts/demo-attest.sh - the demo's remote-attestation part: vigild
# measures what runs on the demo tree into the TPM (swtpm), vigil-agent
# serves quotes and the measurement list, vigil-verifier (SQLite) attests
# it every 300 ms, and `vigil attest status` turns from trusted to failed
# when a file outside the reference policy runs.
#
# Sourced by scripts/demo.sh after the vigild part (uses its step/run/
# expect, $D, $SRC, $VIGIL, $VIGILD, $BUILD, the labeled tree in $D/root
# and the swtpm of demo-key.sh in $D/tpm), or run on its own:
#   bash scripts/demo-attest.sh BUILD     (root; private namespace, ext4 image)
if [ -z "${D:-}" ]; then
	set -u
	BUILD=${1:-build}
	SRC=$(cd "$(dirname "$0")/.." && pwd)
	case $BUILD in /*) ;; *) BUILD=$SRC/$BUILD ;; esac
	VIGIL=$BUILD/cli/vigil
	VIGILD=$BUILD/daemon/vigild
	export VIGIL_CONFIG=/dev/null
	[ "$(id -u)" -eq 0 ] || { echo "demo-attest: run as root" >&2; exit 2; }
	if [ -z "${VG_DEMO_NS:-}" ]; then
		export VG_DEMO_NS=1
		exec unshare -m --propagation private bash "$0" "$@"
	fi
	D=$(mktemp -d /tmp/vigil-demo.XXXXXX)
	mount -t tmpfs -o size=256m vigil-demo "$D"
	trap 'for p in ${ATT_PIDS:-}; do kill $p 2>/dev/null; done; wait 2>/dev/null
	      bash "$SRC/scripts/swtpm.sh" stop "$D/tpm" >/dev/null 2>&1; cd /
	      umount -l "$D/root" 2>/dev/null; umount -l "$D" 2>/dev/null; rmdir "$D" 2>/dev/null' EXIT
	cd "$D" || exit 2
	failed=0
	step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
	run() { printf '$ %s\n' "$*"; "$@"; }
	expect() {
		local want=$1 what=$2 rc
		shift 3
		printf '$ %s\n' "$*"
		"$@"
		rc=$?
		if [ "$rc" -eq "$want" ]; then
			printf '   -> %s (exit %d, as expected)\n' "$what" "$rc"
		else
			printf '   -> UNEXPECTED: exit %d, wanted %d (%s)\n' "$rc" "$want" "$what"
			failed=$((failed + 1))
		fi
	}
	dd if=/dev/zero of=root.img bs=1M count=32 status=none
	mkfs.ext4 -q -F -b 4096 -I 256 -O ^has_journal root.img
	mkdir root && mount -o loop root.img root
	mkdir -p root/usr/bin
	for t in ls cat true; do cp "/usr/bin/$t" root/usr/bin/; done
	VIGIL_TCTI=$(bash "$SRC/scripts/swtpm.sh" start "$D/tpm") || { echo "demo: swtpm did not start"; exit 1; }
	export VIGIL_TCTI TPM2TOOLS_TCTI=$VIGIL_TCTI TSS2_LOG=all+none
	ATT_STANDALONE=1
fi
# sourced after demo-key.sh, which stops its swtpm: start it again (same state, EK certificate)
if ! bash "$SRC/scripts/swtpm.sh" status "$D/tpm" >/dev/null 2>&1; then
	VIGIL_TCTI=$(bash "$SRC/scripts/swtpm.sh" start "$D/tpm") || { echo "demo: swtpm did not start"; exit 1; }
	export VIGIL_TCTI TPM2TOOLS_TCTI=$VIGIL_TCTI TSS2_LOG=all+none
fi

att_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ATT_AP=$(att_port)
ATT_VP=$(att_port)
export VIGIL_VERIFIER=http://127.0.0.1:$ATT_VP

step "remote attestation: vigild measures every exec on the tree into the TPM"
cat >attest.policy <<EOF
measure func=BPRM_CHECK
EOF
timeout -s KILL 120 "$VIGILD" --policy attest.policy --watch root --log "$D/attest.log" \
	--tcti "$VIGIL_TCTI" --control "$D/vigild-attest.sock" --mode permissive --foreground \
	2>vigild-attest.err &
ATT_VD=$!
vigild_ready vigild-attest.err 1
ATT_PIDS="${ATT_PIDS:-} $ATT_VD"
expect 0 "a binary of the tree runs (and is measured)" -- root/usr/bin/ls root/usr
run "$VIGIL" log show "$D/attest.log"

step "the known-good reference: every file of the tree, and this boot's boot_aggregate"
expect 0 "policy created" -- "$VIGIL" attest policy create --tree root --root "$D/root" \
	--log "$D/attest.log" -o "$D/reference.json"

step "credentials: an admin token for the operator, a token the verifier shows the agent"
# only hashes are listed (verifier-tokens, agent-tokens); the tokens are 0600 files
expect 0 "the first admin token" -- "$BUILD/verifier/vigil-verifier" --create-token admin \
	"$D/admin.tok" --auth-tokens "$D/verifier-tokens"
expect 0 "the verifier's token for the agent (its hash goes to the agent's list)" -- \
	"$BUILD/verifier/vigil-verifier" --create-token verifier "$D/agent.tok" --auth-tokens "$D/agent-tokens"
export VIGIL_TOKEN_FILE=$D/admin.tok

step "vigil-agent (owns the TPM: EK + AK) and vigil-verifier (SQLite) on loopback"
mkdir -p "$D/agent"
"$BUILD/agent/vigil-agent" --listen 127.0.0.1:$ATT_AP --state "$D/agent" --log "$D/attest.log" \
	--auth-tokens "$D/agent-tokens" --id demo-host 2>agent.err &
ATT_PIDS="$ATT_PIDS $!"
"$BUILD/verifier/vigil-verifier" --listen 127.0.0.1:$ATT_VP --db "sqlite:$D/verifier.db" \
	--auth-tokens "$D/verifier-tokens" --agent-token-file "$D/agent.tok" \
	--interval 300 --ek-ca "$D/tpm/ek-ca.pem" \
	--on-fail "echo \"ALERT \$VIGIL_AGENT: \$VIGIL_FAILURE \$VIGIL_PATH\" >>$D/alerts" 2>verifier.err &
ATT_PIDS="$ATT_PIDS $!"
for _ in $(seq 50); do
	curl -s "127.0.0.1:$ATT_AP/v1/identity" >/dev/null 2>&1 && curl -s "$VIGIL_VERIFIER/v1/agents" >/dev/null 2>&1 && break
	sleep 0.1
done
expect 2 "without a credential the verifier refuses (401), whatever is asked" -- \
	env -u VIGIL_TOKEN_FILE "$VIGIL" attest status
expect 0 "the policy uploaded" -- "$VIGIL" attest policy set reference "$D/reference.json"
expect 0 "registered: EK certificate chains to the swtpm CA, the AK proven by ActivateCredential" -- \
	"$VIGIL" attest add demo-host --agent http://127.0.0.1:$ATT_AP --policy reference
att_wait() {	# STATE
	local i
	for i in $(seq 100); do
		"$VIGIL" attest status --json demo-host 2>/dev/null | grep -q "\"state\":\"$1\"" && return 0
		sleep 0.1
	done
	return 1
}
att_wait trusted
expect 0 "trusted: quote, nonce, PCR 10 replay and policy all good" -- "$VIGIL" attest status demo-host
expect 0 "another allowed binary runs" -- root/usr/bin/cat /dev/null
sleep 1
expect 0 "still trusted" -- "$VIGIL" attest status demo-host

step "a file outside the policy runs"
run cp /usr/bin/echo root/usr/bin/intruder
expect 0 "it runs (vigild is permissive here) and is measured" -- root/usr/bin/intruder hello
att_wait failed
expect 1 "failed, naming the file and its digest" -- "$VIGIL" attest status demo-host
run "$VIGIL" attest status demo-host --history
run cat "$D/alerts"
for p in $ATT_PIDS; do kill "$p" 2>/dev/null; done
wait $ATT_PIDS 2>/dev/null
ATT_PIDS=

if [ -n "${ATT_STANDALONE:-}" ]; then
	echo
	[ "$failed" -eq 0 ] && echo "demo-attest: every step gave the expected answer" && exit 0
	echo "demo-attest: $failed step(s) gave an unexpected answer"
	exit 1
fi
