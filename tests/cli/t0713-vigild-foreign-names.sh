#!/usr/bin/env bash
# The names path= and subj_exe= are matched against come from the kernel,
# which names a file as the opener's mount namespace sees it. Any
# unprivileged user can make a mount namespace of his own (unshare -Urm)
# and bind-mount any file he can read onto any path there:
#  - a protected file bind-mounted onto /mnt/x was named /mnt/x, and
#    'deny path=SECRET/**' did not match its open;
#  - a program of his own bind-mounted onto /usr/bin/sha256sum was named
#    /usr/bin/sha256sum, and 'allow ... subj_exe=/usr/bin/sha256sum' let
#    it read what only that program may.
# A name counts only where it leads to the same file in vigild's mount
# namespace; a file that is known there by another name gets the fail
# action (reason unknown-path, unknown-subject). A program whose file is
# unlinked (an upgraded daemon's) has no name and matches no pattern.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
head -c 32 /dev/urandom >hk
trap '_rc=$?; vd_stop; (exit $_rc); vg_cleanup' EXIT
F=$T/tm
mkdir -p "$F"; mount -t tmpfs -o size=16m vigil-tm "$F"
mkdir "$F/secret" "$F/pub"
echo secret >"$F/secret/f"; echo public >"$F/pub/f"
cp /usr/bin/cat "$F/mycat"
mkdir "$F/tools"; cp /bin/dash "$F/tools/sh"
chmod 755 "$F" "$F/secret" "$F/pub" "$F/mycat" "$F/tools"; chmod 644 "$F/secret/f" "$F/pub/f"
# IBAC: only sha256sum and root's tools read the secret files
cat >pol <<EOF
allow func=FILE_CHECK path=$F/secret/** subj_exe=/usr/bin/sha256sum
allow func=FILE_CHECK path=$F/secret/** subj_exe=$F/tools/*
deny func=FILE_CHECK path=$F/secret/**
EOF
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# CMD... in a user and mount namespace of nobody's own, after 'mount --bind SRC DST'
# over a tmpfs at /mnt (so that DST exists)
inns() {
	local src=$1 dst=$2; shift 2
	nobody unshare -Urm sh -c 'mount -t tmpfs t /mnt && { [ -e "$2" ] || touch "$2"; } && mount --bind "$1" "$2" && shift 2 && exec "$@"' \
		sh "$src" "$dst" "$@"
}
last() { python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(*[r.get(k) for k in sys.argv[2:]])' "$T/audit" "$@"; }

check "vigild, only sha256sum reads $F/secret" vd_start --policy pol --watch "$F" --hmac-key hk
check_rc 1 "cat of a secret file: denied" nobody cat "$F/secret/f"
check_eq "... by the deny rule" "$(last action reason)" "deny access-rule"
check "sha256sum of it: allowed" nobody sha256sum "$F/secret/f"
check "cat of a public file: allowed" nobody cat "$F/pub/f"
check_rc 1 "a secret file bind-mounted onto /mnt/x in a user's own namespace: denied (the kernel names it /mnt/x)" \
	inns "$F/secret/f" /mnt/x cat /mnt/x
check_eq "... the fail action, unknown-path" "$(last action reason)" "deny-on-failure unknown-path"
check_rc 126 "a program of the watched filesystem run as /usr/bin/sha256sum there: denied at exec (its path is not ours)" \
	inns "$F/mycat" /usr/bin/sha256sum /usr/bin/sha256sum "$F/secret/f"
check_eq "... the fail action, unknown-path" "$(last action reason event)" "deny-on-failure unknown-path exec"
# cat from a tmpfs of the user's own (never marked: no exec event), bind-mounted onto sha256sum
check_rc 1 "cat run as /usr/bin/sha256sum from an unwatched tmpfs reads a secret file: denied" \
	nobody unshare -Urm sh -c 'mount -t tmpfs t /mnt && cp /usr/bin/cat /mnt/c && mount --bind /mnt/c /usr/bin/sha256sum && exec /usr/bin/sha256sum "$1"' sh "$F/secret/f"
check_eq "... the fail action, unknown-subject, the kernel's name audited" \
	"$(last action reason exe)" "deny-on-failure unknown-subject /usr/bin/sha256sum"
check "the real sha256sum in a namespace of one's own: allowed (the same file at that name)" \
	nobody unshare -Urm sha256sum "$F/secret/f"
check "root's tool reads a secret file" "$F/tools/sh" -c "exec 3<'$F/secret/f'"
cp /bin/dash "$F/tools/old"
check_rc 2 "a tool unlinked while it runs has no name: it matches no pattern, the deny rule decides" \
	"$F/tools/old" -c "rm '$F/tools/old'; exec 3<'$F/secret/f'"
check_eq "... (its audit record has the kernel's name)" "$(last reason exe)" "access-rule $F/tools/old (deleted)"
check "a secret file through a bind mount in vigild's namespace: allowed (another name, as a hard link is: path rules narrow, they are not the gate)" \
	sh -c "mkdir -p '$T/bm' && mount --bind '$F/secret' '$T/bm' && cat '$T/bm/f' >/dev/null; rc=\$?; umount '$T/bm'; exit \$rc"
vd_stop
