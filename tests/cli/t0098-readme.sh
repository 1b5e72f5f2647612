#!/usr/bin/env bash
# t0098: every command block of README.md runs, verbatim, as a reader
# following it would run it (issue 15, item 6). The blocks are extracted
# by tests/helpers/readme-blocks.py; `make demo` (t0089 runs it), `make test`
# and blocks marked `<!-- slow: ... -->` are exempt. They run in order, in one working
# directory, with what a real host has and this one lacks:
# - vigil, vigild, vigil-agent, vigil-verifier of this build on PATH;
# - a TPM: swtpm as $VIGIL_TCTI (the host's /dev/tpmrm0 in the README),
#   its EK CA as ./ek-ca.pem (the TPM vendor's CA);
# - the measurement list vigild keeps, /run/vigil/binary_runtime_measurements,
#   made by `vigil measure` on that TPM;
# - /srv, a scratch ext4 with a program on it, and the user vigil;
# - /etc and /var as overlays and /run as a tmpfs in this test's mount
#   namespace, so the blocks write their real paths and the host's stay
#   untouched.
# Daemons a block starts stay up for the blocks after it and are stopped
# (by process group) at the end. After the attestation recipe, host1 must
# become trusted.
# Daemons started with --background leave the block's session: the whole
# test runs as the init of its own PID namespace, so that every process a
# block left behind dies with it, whatever happens.
if [ -z "${VG_IN_PIDNS:-}" ] && [ "$(id -u)" -eq 0 ]; then
	export VG_IN_PIDNS=1
	exec unshare -p -f --kill-child bash "$0" "$@"
fi
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
. "$SRCDIR/tests/lib-attest.sh"
vg_init
mount -t proc readme-proc /proc	# this PID namespace's (LeakSanitizer reads /proc/PID)
vg_tpm_start

# the daemons the blocks started die with this PID namespace when the
# script ends; swtpm is shut down in order first
stop_blocks() {
	bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1
}
trap '_rc=$?; stop_blocks; (exit $_rc); vg_cleanup' EXIT

# the host as the README assumes it
mkdir -p "$T/bin" "$T/ov" "$T/home"
ln -s "$VIGIL" "$T/bin/vigil"
ln -s "$VIGILD" "$T/bin/vigild"
ln -s "$VIGIL_AGENT_BIN" "$T/bin/vigil-agent"
ln -s "$VIGIL_VERIFIER_BIN" "$T/bin/vigil-verifier"
for d in etc var; do
	mkdir -p "$T/ov/$d.up" "$T/ov/$d.work"
	mount -t overlay "readme-$d" -o "lowerdir=/$d,upperdir=$T/ov/$d.up,workdir=$T/ov/$d.work" "/$d"
done
mount -t tmpfs -o mode=755 readme-run /run
mkdir -p /run/vigil
cp "$TPMDIR/ek-ca.pem" "$T/home/ek-ca.pem"
# /srv: a filesystem of the host's with a program on it (the first run labels it)
vg_ext4 /srv
mkdir /srv/app
cp /usr/bin/true /srv/app/hello
# vigild's appraisers run as the user vigil (the package creates it)
getent passwd vigil >/dev/null || useradd --system --no-create-home --shell /usr/sbin/nologin vigil
check "the measurement list a vigild keeps" \
	"$VIGIL" measure --tpm --log /run/vigil/binary_runtime_measurements /usr/bin/true /usr/bin/env
unset VIGIL_CONFIG	# the blocks see the (overlaid) /etc/vigil/vigil.conf

check "README's blocks are found" /usr/bin/python3 "$SRCDIR/tests/helpers/readme-blocks.py" \
	"$SRCDIR/README.md" "$T/blocks"
while read -r what line reason; do
	[ "$what" = skip ] && _report 0 "README.md:$line # SKIP $reason"
done < <(/usr/bin/python3 "$SRCDIR/tests/helpers/readme-blocks.py" "$SRCDIR/README.md" "$T/blocks" 2>/dev/null)
cd "$T/home" || exit 1
for blk in "$T"/blocks/*.sh; do
	line=$(basename "$blk" .sh)
	line=$((10#$line))
	PATH="$T/bin:$PATH" timeout -k 5 300 bash -e -o pipefail "$blk" >"$T/out.$line" 2>&1
	rc=$?
	[ $rc -eq 0 ] || sed "s/^/# README.md:$line: /" "$T/out.$line"
	check_eq "README.md:$line: the block runs (exit 0)" "$rc" 0
	if grep -q "^vigild --background" "$blk"; then
		check "README.md:$line: the labeled program ran" grep -qx "labeled: runs" "$T/out.$line"
		check "README.md:$line: the tampered one was refused at exec" \
			grep -qx "refused (exit 126)" "$T/out.$line"
	fi
	if grep -q "vigil attest add" "$blk"; then
		check "README.md:$line: host1 is trusted after the recipe" att_wait host1 trusted
		check "README.md:$line: the policy names the tree's files by their paths on the host" \
			python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); k=json.dumps(d); sys.exit(0 if "\"/usr/sbin/" in k and "\"/vigild\"" not in k else 1)' \
			"$T/home/ref.json"
	fi
done
# --background, as the recipe says: a daemon that cannot serve returns its
# status (2) instead of "ready", at once
cd "$T/home" || exit 1
s=$(date +%s)
check_rc 2 "--background: a verifier whose port is taken exits 2" \
	"$VIGIL_VERIFIER_BIN" --background --listen 127.0.0.1:8881 --db "sqlite:$T/other.db" \
	--auth-tokens /etc/vigil/verifier-tokens
cp "$T/.out" bg.out
check "--background: and says why" grep -q "127.0.0.1:8881" bg.out
check "--background: within seconds" test $(($(date +%s) - s)) -lt 10
check_rc 2 "--background: an agent whose port is taken exits 2" \
	"$VIGIL_AGENT_BIN" --background --listen 127.0.0.1:9002 --state "$T/st2" \
	--auth-tokens /etc/vigil/agent-tokens
