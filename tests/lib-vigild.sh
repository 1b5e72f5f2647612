# shellcheck shell=bash
# tests/lib-vigild.sh - running vigild safely in a test (after vg_init):
# only inside the test's private mount namespace, marking only the test's
# own mounts, under a timeout, stopped by its PID.
#
#   vd_start ARGS...   start vigild (timeout $VD_TIMEOUT_S, default 300 s) with --control $T/ctl
#                      (or $VD_CTL)
#                      --audit $T/audit --foreground; wait for 'vigild: ready'
#                      $VD_PID is vigild's own PID (signal it, not the
#                      timeout process: timeout ignores a signal after forwarding it once)
#   vd_stop            SIGTERM by PID, wait; returns vigild's exit status
#   vd_audit_reason PATH ACTION  the reason of the last audit record for PATH/ACTION
#   $VIGILD_TEST       the test-only build with the appraiser misbehaviour hooks
VIGILD=${VIGILD:-$(dirname "$VIGIL")/../daemon/vigild}
VIGILD_TEST=${VIGILD_TEST:-$(dirname "$VIGIL")/../daemon/vigild-test}

# vigild's defaults live under /run/vigil (control socket, its lock, the
# measurement list): in the test's private namespace /run is a throwaway
# tmpfs, so a default never reaches the host's /run
if [ -n "${VG_IN_NS:-}" ] && [ -z "${VD_RUN_TMPFS:-}" ]; then
	mount -t tmpfs -o size=64m,mode=0755 vigil-run /run && export VD_RUN_TMPFS=1
fi

# appraisers run as the unprivileged user 'vigil' (--appraiser-user): the
# package creates it, the tests where it is absent
getent passwd vigil >/dev/null ||
	useradd --system --no-create-home --shell /usr/sbin/nologin vigil 2>/dev/null ||
	getent passwd vigil >/dev/null

# The ways around vigild that the test machine leaves open and a test cannot
# close without touching the host (docs/security.md, gaps): memfd, user
# namespaces and users' FUSE mounts, and the filesystems mounted now that are not watched (the
# host's /, /dev/shm, the test's own tmpfs and the scratch mounts it keeps
# logs on). vd_start accepts them by name unless VD_GAPS=strict; the tests
# of the gaps themselves set it.
vd_host_gaps() {
	local p
	VD_GAP_ARGS=()
	[ "${VD_GAPS:-}" = strict ] && return 0
	VD_GAP_ARGS=(--accept-gap memfd --accept-gap userns --accept-gap fuse)
	while read -r _ _ _ _ p _; do
		p=$(printf '%b' "$p")
		VD_GAP_ARGS+=(--accept-gap "mount:$p")
	done </proc/self/mountinfo
}

vd_start() {
	# emptied here, not by the redirection below: that runs in the background
	# child, and the loop could meet the last instance's 'ready' line first
	: >"$T/audit"
	: >"$T/vigild.err"
	vd_host_gaps
	timeout -s KILL "${VD_TIMEOUT_S:-300}" ${VD_WRAP[@]+"${VD_WRAP[@]}"} "$VIGILD" --control "${VD_CTL:-$T/ctl}" --audit "$T/audit" --foreground \
		"${VD_GAP_ARGS[@]}" "$@" 2>"$T/vigild.err" &
	VD_TIMEOUT=$!
	for _ in $(seq 200); do
		if grep -q '^vigild: ready' "$T/vigild.err" 2>/dev/null; then
			VD_PID=$(ps -o pid= --ppid "$VD_TIMEOUT" | head -1 | tr -d ' ')
			return 0
		fi
		kill -0 $VD_TIMEOUT 2>/dev/null || break
		sleep 0.05
	done
	VD_TIMEOUT=
	echo "# vigild did not start:"; sed 's/^/#   /' "$T/vigild.err"
	return 1
}

vd_stop() {
	local rc
	[ -n "${VD_TIMEOUT:-}" ] || return 0
	kill -TERM "${VD_PID:-$VD_TIMEOUT}" 2>/dev/null
	wait "$VD_TIMEOUT"; rc=$?
	VD_PID= VD_TIMEOUT=
	return $rc
}

vd_audit_reason() {
	python3 -c '
import json, sys
path, action = sys.argv[1], sys.argv[2]
last = ""
for line in open(sys.argv[3]):
    r = json.loads(line)
    if r["path"].endswith(path) and r["action"] == action:
        last = r["reason"]
print(last)' "$1" "$2" "$T/audit"
}
