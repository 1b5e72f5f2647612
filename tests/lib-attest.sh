# tests/lib-attest.sh - what the attestation tests (t050x) share; source
# after tests/lib.sh.
#   vg_port                       a free TCP port on 127.0.0.1
#   att_field NAME [ID [URL]]     field NAME of `vigil attest status --json ID`
#                                 (default host1; URL: another verifier than
#                                 $VIGIL_VERIFIER)
#   att_wait ID STATE [FAILURE [URL]]  until the agent is in STATE (with
#                                 last_failure FAILURE), up to $ATT_WAIT
#                                 tenths of a second (default 150); else
#                                 prints where it is and returns 1
#   att_auth                      credentials in $T (docs/api-auth.md): admin.tok and
#                                 read.tok listed in verifier-tokens, verifier.tok listed
#                                 (role verifier) in agent-tokens; exports
#                                 VIGIL_TOKEN_FILE=$T/admin.tok and sets
#                                 ATT_VAUTH (verifier options), ATT_AAUTH (agent options),
#                                 ATT_AHDR (header for curl to an agent), ATT_HDR (admin
#                                 header for curl to the verifier), ATT_RHDR (read header)
#   att_mkca NAME                 a throwaway P-256 CA in NAME.pem, NAME.key (CN=NAME)
#   att_mkcert NAME CA [SAN]      NAME.pem, NAME.key signed by CA (att_mkca), CN=NAME,
#                                 subjectAltName SAN (default DNS:NAME)

vg_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

att_field() {
	if [ -n "${3:-}" ]; then
		VIGIL_VERIFIER=$3 "$VIGIL" attest status --json "${2:-host1}"
	else
		"$VIGIL" attest status --json "${2:-host1}"
	fi 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"
}

att_wait() {
	local id=$1 state=$2 failure=${3:-} url=${4:-} i s
	for i in $(seq "${ATT_WAIT:-150}"); do
		s=$(att_field state "$id" "$url")
		if [ "$s" = "$state" ] &&
			{ [ -z "$failure" ] || [ "$(att_field last_failure "$id" "$url")" = "$failure" ]; }; then
			return 0
		fi
		sleep 0.1
	done
	echo "$id: state $s, last failure $(att_field last_failure "$id" "$url"):" \
		"$(att_field last_message "$id" "$url")"
	return 1
}

att_mkca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" \
		-out "$1.pem" -days 2 -subj "/CN=$1" >/dev/null 2>&1
}

att_mkcert() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" \
		-out "$1.csr" -subj "/CN=$1" >/dev/null 2>&1
	printf 'subjectAltName=%s\n' "${3:-DNS:$1}" >"$1.ext"
	openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -out "$1.pem" \
		-days 2 -extfile "$1.ext" >/dev/null 2>&1
}

att_auth() {
	local v=${VIGIL_VERIFIER_BIN:?}
	[ -f "$T/admin.tok" ] && return 0
	"$v" --create-token admin "$T/admin.tok" --auth-tokens "$T/verifier-tokens" >/dev/null 2>&1 &&
	"$v" --create-token read "$T/read.tok" --auth-tokens "$T/verifier-tokens" >/dev/null 2>&1 &&
	"$v" --create-token verifier "$T/verifier.tok" --auth-tokens "$T/agent-tokens" >/dev/null 2>&1 ||
		{ echo "att_auth: cannot create tokens"; return 1; }
	export VIGIL_TOKEN_FILE=$T/admin.tok
	ATT_VAUTH="--auth-tokens $T/verifier-tokens --agent-token-file $T/verifier.tok"
	ATT_AAUTH="--auth-tokens $T/agent-tokens"
	ATT_AHDR="Authorization: Bearer $(cat "$T/verifier.tok")"
	ATT_HDR="Authorization: Bearer $(cat "$T/admin.tok")"
	ATT_RHDR="Authorization: Bearer $(cat "$T/read.tok")"
}
