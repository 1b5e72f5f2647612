#!/usr/bin/env bash
# path= and subj_exe= rules are matched against the name a file has in
# vigild's mount namespace. The kernel names a file, and a task's program,
# as the opener's mount namespace sees it, and any unprivileged user can
# make a namespace of his own (unshare -Urm) and bind-mount any file he can
# read onto any path there. Before, the kernel's name was taken as it was:
#  - a protected file bind-mounted onto /mnt/x was named /mnt/x, and
#    'deny path=SECRET/**' did not match its open;
#  - cat bind-mounted onto /usr/bin/sha256sum was named that, and
#    'allow ... subj_exe=/usr/bin/sha256sum' let it read what only
#    sha256sum may;
#  - a program unlinked while it ran was named 'NAME (deleted)', which
#    '/DIR/*' matches.
# Now a kernel's name counts where it leads to the same file in vigild's
# namespace; else the file is found through vigild's own mount of its
# filesystem (its handle) and judged by its name there (as a service's
# PrivateTmp= file is); a filesystem that gives no handles (overlayfs
# without nfs_export) leaves the name unknown: the fail action. (An overlay
# is watched alone: watched with the filesystem of its layers, vigild hung;
# that is refused now.) An unlinked
# file or program, or a program on a filesystem vigild has no mount of,
# has no name and matches no pattern.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
head -c 32 /dev/urandom >hk
trap '_rc=$?; vd_stop; umount "$T/ov" 2>/dev/null; (exit $_rc); vg_cleanup' EXIT
F=$T/tm
mkdir -p "$F"; mount -t tmpfs -o size=16m vigil-tm "$F"
mkdir "$F/secret" "$F/pub" "$F/tools" "$F/ovl" "$F/ovu" "$F/ovw" "$T/ov"
echo secret >"$F/secret/f"; echo public >"$F/pub/f"; echo secret >"$F/ovl/secret"; echo public >"$F/ovl/pub"
cp /usr/bin/cat "$F/mycat"; cp /bin/dash "$F/tools/sh"
chmod 755 "$F" "$F/secret" "$F/pub" "$F/tools" "$F/mycat" "$F/ovl"
chmod 644 "$F/secret/f" "$F/pub/f" "$F/ovl/secret" "$F/ovl/pub"
# an overlayfs without nfs_export: it gives no file handles
mount -t overlay vigil-ov -o "lowerdir=$F/ovl,upperdir=$F/ovu,workdir=$F/ovw" "$T/ov"
# IBAC: only sha256sum and root's tools read the secret files
cat >pol <<EOF
allow func=FILE_CHECK path=$F/secret/** subj_exe=/usr/bin/sha256sum
allow func=FILE_CHECK path=$F/secret/** subj_exe=$F/tools/*
deny func=FILE_CHECK path=$F/secret/**
deny func=FILE_CHECK path=$T/ov/secret
EOF
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# SRC DST CMD...: CMD in a user and mount namespace of nobody's own, after
# 'mount --bind SRC DST' (DST made on a tmpfs at /mnt when it does not exist)
inns() {
	nobody unshare -Urm sh -c 'mount -t tmpfs t /mnt && { [ -e "$2" ] || touch "$2"; } && mount --bind "$1" "$2" && shift 2 && exec "$@"' \
		sh "$@"
}
last() { python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(*[r.get(k) for k in sys.argv[2:]])' "$T/audit" "$@"; }

check "vigild, only sha256sum and root's tools read $F/secret" \
	vd_start --policy pol --watch "$F" --hmac-key hk
check_rc 1 "cat of a secret file: denied" nobody cat "$F/secret/f"
check_eq "... by the deny rule" "$(last action reason)" "deny access-rule"
check "sha256sum of it: allowed" nobody sha256sum "$F/secret/f"
check "cat of a public file: allowed" nobody cat "$F/pub/f"

check_rc 1 "a secret file bind-mounted onto /mnt/x in a user's own namespace: denied (judged by its name here)" \
	inns "$F/secret/f" /mnt/x cat /mnt/x
check_eq "... by the deny rule, the kernel's name audited" "$(last action reason path)" "deny access-rule /mnt/x"
check "a public file bind-mounted there (as PrivateTmp= does): allowed" inns "$F/pub/f" /mnt/x cat /mnt/x
check_rc 1 "cat of the watched filesystem run as /usr/bin/sha256sum there reads a secret file: denied (its name here is $F/mycat)" \
	inns "$F/mycat" /usr/bin/sha256sum /usr/bin/sha256sum "$F/secret/f"
check_eq "... by the deny rule, the kernel's name audited" "$(last action reason exe)" "deny access-rule /usr/bin/sha256sum"
# cat from a tmpfs of the user's own (never marked, no mount of it in vigild's namespace)
check_rc 1 "cat from a tmpfs of the user's own run as /usr/bin/sha256sum: denied (a program with no name here)" \
	nobody unshare -Urm sh -c 'mount -t tmpfs t /mnt && cp /usr/bin/cat /mnt/c && mount --bind /mnt/c /usr/bin/sha256sum && exec /usr/bin/sha256sum "$1"' sh "$F/secret/f"
check_eq "... by the deny rule" "$(last action reason exe)" "deny access-rule /usr/bin/sha256sum"
check "the real sha256sum in a namespace of one's own: allowed" nobody unshare -Urm sha256sum "$F/secret/f"
check "root's tool run by another name there reads a secret file: allowed (its name here is $F/tools/sh)" \
	inns "$F/tools/sh" /mnt/sh /mnt/sh -c "exec 3<'$F/secret/f'"

check "root's tool reads a secret file" "$F/tools/sh" -c "exec 3<'$F/secret/f'"
cp /bin/dash "$F/tools/old"
check_rc 2 "a tool unlinked while it runs has no name: it matches no pattern, the deny rule decides" \
	"$F/tools/old" -c "rm '$F/tools/old'; exec 3<'$F/secret/f'"
check_eq "... (the kernel's name audited)" "$(last reason exe)" "access-rule $F/tools/old (deleted)"
check "a secret file through a bind mount in vigild's namespace: allowed (another name, as a hard link is: path rules narrow, they are not the gate)" \
	sh -c "mkdir -p '$T/bm' && mount --bind '$F/secret' '$T/bm' && cat '$T/bm/f' >/dev/null; rc=\$?; umount '$T/bm'; exit \$rc"

vd_stop

# An overlay's events, read, open its layers' files: read by the loop with
# the filesystem of its layers watched too, vigild waited for itself there
# and every watched open hung (vigild stuck for good, the opener until
# killed); that was refused at start. Now the overlay has a group and
# reader of its own (side.c), whose opens of the layers the loop answers.
check "an overlayfs watched with the filesystem of its layers: started" \
	vd_start --policy pol --watch "$F" --watch "$T/ov" --hmac-key hk
check "... it has a reader of its own" sh -c "'$VIGIL' status --control '$T/ctl' --json | python3 -c 'import json,sys; w={x[\"path\"]: x[\"reader\"] for x in json.load(sys.stdin)[\"watched\"]}; sys.exit(0 if w[\"$T/ov\"] == \"own\" and w[\"$F\"] == \"main\" else 1)'"
check "... a public file through the overlay: allowed, and nothing hangs" nobody timeout 10 cat "$T/ov/pub"
check_rc 1 "... the secret one through the overlay: denied" nobody timeout 10 cat "$T/ov/secret"
check "... the public file in the layer itself: allowed" nobody timeout 10 cat "$F/ovl/pub"
vd_stop
check "an overlayfs watched alone" vd_start --policy pol --watch "$T/ov" --hmac-key hk
check "... a public file: allowed" nobody timeout 10 cat "$T/ov/pub"
check_rc 1 "... the secret one: denied" nobody timeout 10 cat "$T/ov/secret"
check_rc 1 "... the secret one bind-mounted onto /mnt/x in a user's own namespace: denied (no file handles: its name here cannot be told)" \
	inns "$T/ov/secret" /mnt/x timeout 10 cat /mnt/x
check_eq "... the fail action, unknown-path" "$(last action reason)" "deny-on-failure unknown-path"
check "... counted" sh -c "'$VIGIL' status --control '$T/ctl' --json | grep -q '\"unknown-path\":1'"
vd_stop
