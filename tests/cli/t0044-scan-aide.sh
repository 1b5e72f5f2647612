#!/usr/bin/env bash
# t0044: vigil scan beside AIDE (Debian 12's 0.18) on the same tree with a
# fixed table of change kinds (content, size, mode, owner, group,
# mtime-only, xattr, added, removed, symlink target, hard link count):
# both list the same entries as added, removed and changed. What each
# reports for every kind is printed as TAP comments (the table of the
# issue 20 note). AIDE is the peer; its config records what vigil does
# (permissions, inode, link count, uid, gid, size, mtime, ctime, sha256,
# xattrs, file type, link name).
. "$SRCDIR/tests/lib.sh"
vg_init
if ! command -v aide >/dev/null; then
	echo "1..0 # SKIP needs aide (scripts/deps.sh)"
	trap - EXIT
	exit 0
fi
HK=$VECTORS/evmctl/keys/evm-key-plain.bin
export VIGIL_CONFIG=/dev/null
vg_ext4 "$T/fs" 16
D=$T/fs/t
mkdir "$D"
for f in content size mode owner group mtime xattr removed symlink hard same; do
	echo "$f data" >"$D/$f"
done
ln -s content "$D/link"
cat >aide.conf <<EOF
database_in=file:$T/aide.db
database_out=file:$T/aide.db.new
report_url=stdout
$D p+i+n+u+g+s+m+c+sha256+xattrs+ftype+l
EOF
check "aide --init" aide --init -c aide.conf
mv aide.db.new aide.db
check "vigil scan --init" "$VIGIL" scan --init -q -o vigil.db --hmac-key "$HK" "$D"

# one change of each kind
printf 'X' | dd of="$D/content" bs=1 conv=notrunc status=none	# same size
echo more >>"$D/size"
chmod 600 "$D/mode"
chown 5 "$D/owner"
chgrp 5 "$D/group"
touch -d @1000 "$D/mtime"				# only the times
setfattr -n user.a -v 1 "$D/xattr"
rm "$D/removed"
echo new >"$D/added"
ln -sf size "$D/link"					# symlink target
ln "$D/hard" "$D/hard2"				# link count (and an added name)

aide --check -c aide.conf >aide.out 2>&1
check_rc 1 "vigil scan --check: changes (exit 1)" "$VIGIL" scan --check vigil.db --hmac-key "$HK"
"$VIGIL" scan --check vigil.db --hmac-key "$HK" >vigil.out

# AIDE's sections "Added entries:", "Removed entries:", "Changed entries:" -> KIND PATH
/usr/bin/python3 - aide.out >aide.list <<'PY'
import re, sys
kind = None
for l in open(sys.argv[1]):
    m = re.match(r"^(Added|Removed|Changed) entries:$", l.strip())
    if m:
        kind = m.group(1).lower()
        continue
    if l.startswith("Detailed information") or l.startswith("The attributes"):
        kind = None
    m = re.match(r"^\S.*: (/.*)$", l.rstrip("\n"))
    if kind and m:
        print(kind, m.group(1))
PY
sed -n 's/^\(added\|removed\): \(.*\)$/\1 \2/p; s/^changed: \(.*\) (.*)$/changed \1/p' vigil.out |
	sort >vigil.list
# the directory itself: AIDE compares its mtime and ctime (1 s granularity:
# it shows as changed when the changes fall in a later second than --init);
# vigil does not, by design (docs/scan.md: entries coming and going are
# reported as added and removed). Only that line is set aside.
grep -vx "changed $D" aide.list | sort >aide.sorted; mv aide.sorted aide.list
check "AIDE's report lists changes" test -s aide.list
check_eq "the same entries added, removed and changed as AIDE" "$(cat vigil.list)" "$(cat aide.list)"
check "the unchanged file is in neither" sh -c "! grep -q '/same\$' aide.list vigil.list"

# the table: what each reports, per kind
echo "# kind     | AIDE (flags, detail fields)            | vigil (fields)"
for f in content size mode owner group mtime xattr link hard; do
	a=$(grep -E "^.{18}: $D/$f\$" aide.out | cut -c1-18)
	af=$(awk -v p="$D/$f" '$0 ~ "^(File|Link): " p "$" {on=1; next} on && /^$/ {on=0} on && /^ [A-Za-z]/ {sub(/ *:.*/, ""); sub(/^ /, ""); printf "%s ", $0}' aide.out)
	v=$(sed -n "s|^changed: $D/$f (\(.*\))\$|\1|p" vigil.out)
	printf '# %-9s| %-18s %-20s| %s\n' "$f" "$a" "$af" "$v"
done
