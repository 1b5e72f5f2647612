#!/usr/bin/env bash
# vigild in a pid namespace of its own (a container's, say) is told of
# openers outside it as pid 0: their credentials and program cannot be
# read. A rule about the subject must not then judge them as root: under
# 'dont_appraise uid=0' an unprivileged user's open of an unlabeled file
# was allowed unappraised (acc.uid stayed 0). Such an open now gets the
# fail action, audited as unknown-subject; under a policy without subject
# conditions an outsider is judged as anyone; vigild in the host's pid
# namespace judges the same rule by the real uid. Under exec rules an
# open may be the loader's (ld.so PROGRAM), which only /proc/PID/exe
# tells: an outsider's open there gets the fail action too, so that
# 'ld.so ./unlabeled' from outside does not run what exec would refuse.
# A proc of another pid namespace (the host's, under a container's pid
# namespace) numbers processes differently: vigild refuses to start on it
# rather than read some other process's uid for an opener's; on its own
# proc it starts, saying that outsiders cannot be identified.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
head -c 32 /dev/urandom >hk
trap '_rc=$?; vd_stop; (exit $_rc); vg_cleanup' EXIT
F=$T/tm
mkdir -p "$F"; mount -t tmpfs -o size=16m vigil-tm "$F"
echo secret >"$F/unlabeled"; echo data >"$F/labeled"; chmod 644 "$F"/*
cp /usr/bin/true "$F/prog"; cp /usr/bin/true "$F/unlabeled-prog"
"$VIGIL" label -q --hmac-key hk "$F/labeled" "$F/prog"
printf 'dont_appraise uid=0\nappraise func=FILE_CHECK\n' >pol.uid
echo 'appraise func=FILE_CHECK' >pol.any
echo 'appraise func=BPRM_CHECK' >pol.exec
LDSO=$(readlink -f /lib64/ld-linux-x86-64.so.2)
HOST_VIGILD=$VIGILD
# the marks are on the filesystem: the new mount namespace --mount-proc makes does not hide it
printf '#!/bin/sh\nexec unshare -p -f --kill-child --mount-proc "%s" "$@"\n' "$HOST_VIGILD" >vd-ns
chmod +x vd-ns
# vd_stop stops the namespace's init, vigild itself (unshare's child), not unshare
vd_start_ns() { vd_start "$@" && VD_PID=$(ps -o pid= --ppid "$VD_PID" | head -1 | tr -d ' '); }
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# AUDIT FIELD...: those fields of the last audit record
last() { python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(*[r.get(k) for k in sys.argv[2:]])' "$T/audit" "$@"; }

check "vigild in the host's pid namespace, 'dont_appraise uid=0'" \
	vd_start --policy pol.uid --watch "$F" --hmac-key hk
check "root's open of an unlabeled file: allowed (the rule exempts uid 0)" cat "$F/unlabeled"
check_rc 1 "an unprivileged user's: denied" nobody cat "$F/unlabeled"
check_eq "... missing-hash, uid 65534" "$(last reason uid)" "missing-hash 65534"
vd_stop

VIGILD=$T/vd-ns
check_rc 2 "vigild in a pid namespace of its own with the host's /proc: refused" \
	timeout -s KILL 60 unshare -p -f --kill-child "$HOST_VIGILD" --control "$T/ctl" \
	--foreground --policy pol.uid --watch "$F" --hmac-key hk
cp "$T/.out" "$T/hostproc.out"
check "... naming /proc and the two pids" \
	grep -q '/proc is of another pid namespace (/proc/self is [0-9]*, vigild is pid 1)' "$T/hostproc.out"
check "... before it is ready" sh -c "! grep -q ready '$T/hostproc.out'"
check "... nothing left behind (the control socket)" test ! -e "$T/ctl"
check "vigild in a pid namespace of its own, the same policy" \
	vd_start_ns --policy pol.uid --watch "$F" --hmac-key hk
check "... says outsiders cannot be identified" \
	grep -q 'pid namespace of its own: the kernel reports openers outside it as pid 0' "$T/vigild.err"
check_rc 1 "an unprivileged insider's open of an unlabeled file (its pid looked up in vigild's /proc): denied" \
	nsenter -t "$VD_PID" -p -- setpriv --reuid=65534 --regid=65534 --clear-groups cat "$F/unlabeled"
check_eq "... missing-hash, uid 65534" "$(last reason uid)" "missing-hash 65534"
check "root's insider open of it: allowed (the rule exempts uid 0)" nsenter -t "$VD_PID" -p -- cat "$F/unlabeled"
check_rc 1 "an unprivileged user's open of an unlabeled file: denied, not exempted as root" \
	nobody cat "$F/unlabeled"
check_eq "... the fail action, unknown-subject, pid 0, uid -1" \
	"$(last action reason pid uid)" "deny-on-failure unknown-subject 0 -1"
check_rc 1 "root's open of a labeled file outside: denied too (whose it is cannot be told)" \
	cat "$F/labeled"
check_eq "... unknown-subject" "$(last reason)" "unknown-subject"
check "... counted" sh -c "'$VIGIL' status --control '$T/ctl' --json | grep -q '\"unknown-subject\":2'"
check "vigild stops" vd_stop

check "vigild in a pid namespace of its own, a policy without subject conditions" \
	vd_start_ns --policy pol.any --watch "$F" --hmac-key hk
check "an outsider's open of a labeled file: allowed" nobody cat "$F/labeled"
check_rc 1 "an outsider's open of an unlabeled file: denied" nobody cat "$F/unlabeled"
check_eq "... missing-hash" "$(last reason)" "missing-hash"
check "vigild stops" vd_stop

VIGILD=$HOST_VIGILD
check "vigild in the host's pid namespace, 'appraise func=BPRM_CHECK'" \
	vd_start --policy pol.exec --watch "$F" --hmac-key hk
check_rc 127 "an unlabeled program run through ld.so: denied (the loader's open is its exec)" \
	nobody "$LDSO" "$F/unlabeled-prog"
check "a labeled one runs through ld.so" nobody "$LDSO" "$F/prog"
vd_stop
VIGILD=$T/vd-ns
check "vigild in a pid namespace of its own, the same policy" \
	vd_start_ns --policy pol.exec --watch "$F" --hmac-key hk
check "an outsider runs a labeled program" nobody "$F/prog"
check_rc 126 "an outsider's unlabeled program: denied" nobody "$F/unlabeled-prog"
check_rc 127 "an outsider's ld.so of the unlabeled program: denied, not taken for a plain open" \
	nobody "$LDSO" "$F/unlabeled-prog"
check_eq "... unknown-subject" "$(last reason)" "unknown-subject"
check "vigild stops" vd_stop
