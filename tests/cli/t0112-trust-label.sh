#!/usr/bin/env bash
# t0112: vigil label --trusted DB. A tree extracted from real .debs
# (apt-get download, dpkg-deb -x) on ext4 is labeled only where a file's
# content digest is the one the authenticated trust database records for
# its path under --trusted-root (merged /usr: /usr/bin/x is the recorded
# /bin/x where ROOT/bin links to usr/bin): the packaged, unmodified files get labels
# that vigil appraise and evmctl accept; a modified file (reported with
# both digests), an unpackaged file and a file outside the root are left
# unlabeled, and a label already on a refused file is left as it was. A
# superseded version is refused unless --trusted-superseded. A tampered
# database, or one under another key, is refused with nothing labeled.
. "$SRCDIR/tests/lib.sh"
vg_init
export VIGIL_CONFIG=/dev/null
K=$VECTORS/evmctl/keys
LISTS=/var/lib/apt/lists
if ! ls $LISTS/*_InRelease >/dev/null 2>&1; then
	apt-get update -qq >/dev/null 2>&1
fi
head -c 64 /dev/urandom >key
head -c 64 /dev/urandom >key2
keep() { cp "$T/.out" "$T/last"; }
sql() { /usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for r in c.execute(sys.argv[2]): print("|".join("" if v is None else (v.hex() if isinstance(v, bytes) else str(v)) for v in r))' "$@"; }
jpy() { /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
# how many regular files under DIR carry security.ima
nlabeled() { find "$1" -type f -exec getfattr --absolute-names -n security.ima {} + 2>/dev/null | grep -c '^security.ima='; }

mkdir debs && chmod 755 debs
(cd debs && apt-get download -q hostname less adduser >/dev/null 2>&1)
check_eq "apt-get download fetched three .debs" "$(ls debs/*.deb 2>/dev/null | wc -l)" 3
check "build the database" "$VIGIL" trust build -o t.db --hmac-key key --debs debs --all-debs

vg_ext4 fs 64
R=fs/root
mkdir $R
for d in debs/*.deb; do dpkg-deb -x "$d" $R; done
nfiles=$(find $R -type f | wc -l)
check "the tree has the packages' regular files" test "$nfiles" -gt 20
check_eq "... every one recorded in the database (sha256)" \
	"$(sql t.db "SELECT count(DISTINCT path) FROM files WHERE algo = 4 AND conffile < 2")" "$nfiles"

# ---- a tampered database, another key: refused, nothing labeled ----
cp t.db bad.db
/usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE files SET digest = zeroblob(32) WHERE path = CAST(? AS BLOB) AND algo = 4", ("/usr/bin/less",)); c.commit()' bad.db
check_rc 2 "an altered database: refused (exit 2)" "$VIGIL" label -r -q --trusted bad.db --hmac-key key \
	--trusted-root $R $R
keep
check "... said so" grep -q "bad.db" "$T/last"
cp t.db flip.db
off=$(grep -abo '/usr/bin/less' flip.db | head -1 | cut -d: -f1)
flip_byte flip.db $((off + 6))
check_rc 2 "a database with one byte of a recorded path flipped: refused (exit 2)" "$VIGIL" label -r -q --trusted flip.db \
	--hmac-key key --trusted-root $R $R
check_rc 2 "the database under another key: refused (exit 2)" "$VIGIL" label -r -q --trusted t.db \
	--hmac-key key2 --trusted-root $R $R
check_rc 2 "--trusted-key naming another key: refused, even with the right --hmac-key" \
	"$VIGIL" label -r -q --trusted t.db --hmac-key key --trusted-key key2 --trusted-root $R $R
check_eq "... no file was labeled by any of them" "$(nlabeled $R)" 0
check_rc 2 "--trusted-root without --trusted: usage error" "$VIGIL" label -q --hmac-key key \
	--trusted-root $R $R/usr/bin/less
check_rc 2 "a database without the label's algorithm: refused" "$VIGIL" label -q --trusted t.db \
	--hmac-key key --algo sha1 --trusted-root $R $R/usr/bin/less
check_eq "... nothing labeled" "$(nlabeled $R)" 0

# ---- the changes: refused files, one with a label already ----
"$VIGIL" label -q --hmac-key key $R/bin/hostname
old_ima=$(xhex $R/bin/hostname security.ima)
old_evm=$(xhex $R/bin/hostname security.evm)
printf 'x' >>$R/bin/hostname
echo "#!/bin/sh" >$R/usr/bin/dropped-in && chmod 755 $R/usr/bin/dropped-in
"$VIGIL" label -q --hmac-key key $R/usr/bin/dropped-in
drop_ima=$(xhex $R/usr/bin/dropped-in security.ima)
echo unpackaged >$R/usr/bin/no-label
echo outside >fs/outside
disk=$(sha256sum $R/bin/hostname | cut -d' ' -f1)
dbdg=$(sql t.db "SELECT hex(digest) FROM files WHERE path = CAST('/bin/hostname' AS BLOB) AND algo = 4" | tr A-F a-f)

check_rc 1 "label -r --trusted: exit 1, some files refused" "$VIGIL" label -r --trusted t.db --hmac-key key \
	--trusted-root $R $R
keep
check_eq "... every packaged unmodified file labeled" \
	"$(sed -n 's/^labeled \([0-9]*\) of \([0-9]*\) files.*; \([0-9]*\) failed.*/\1 \2 \3/p' "$T/last")" \
	"$((nfiles - 1)) $((nfiles + 2)) 3"
check "... the modified file reported with both digests" \
	grep -q "^vigil label: $R/bin/hostname: not labeled: digest-differs (/bin/hostname): disk sha256:$disk, database sha256:$dbdg\$" "$T/last"
check "... the unpackaged files reported: not-in-database" \
	grep -q "^vigil label: $R/usr/bin/dropped-in: not labeled: not-in-database (/usr/bin/dropped-in): disk sha256:$(sha256sum $R/usr/bin/dropped-in | cut -d' ' -f1)\$" "$T/last"
check "... the counts by reason" grep -qx "  not-in-database: 2" "$T/last"
check "... one digest-differs" grep -qx "  digest-differs: 1" "$T/last"
check_eq "... the old label on the modified file untouched (security.ima)" "$(xhex $R/bin/hostname security.ima)" "$old_ima"
check_eq "... and security.evm" "$(xhex $R/bin/hostname security.evm)" "$old_evm"
check_eq "... the label on the unpackaged file untouched" "$(xhex $R/usr/bin/dropped-in security.ima)" "$drop_ima"
check_rc 1 "... the unlabeled unpackaged file still has no label" getfattr -n security.ima $R/usr/bin/no-label
check_eq "... labels: the packaged files and the two labeled before" "$(nlabeled $R)" "$((nfiles + 1))"
check_eq "... /usr/bin/less: security.ima is its sha256" "$(xhex $R/usr/bin/less security.ima)" \
	"0404$(sha256sum $R/usr/bin/less | cut -d' ' -f1)"
check_rc 1 "vigil appraise -r on the tree" "$VIGIL" appraise -r --hmac-key key $R
keep
check_eq "... passes the packaged files and dropped-in, fails the two others" \
	"$(sed -n 's/^checked \([0-9]*\) files.*: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2 \3/p' "$T/last")" \
	"$((nfiles + 2)) $nfiles 2"
check "... the modified one: invalid-hash" grep -q "^$R/bin/hostname: fail (invalid-hash)" "$T/last"
check "... the unlabeled one: missing-hash" grep -q "^$R/usr/bin/no-label: fail (missing-hash)" "$T/last"
check_rc 1 "... and still fails the modified one" "$VIGIL" appraise -q --hmac-key key $R/bin/hostname

check_rc 1 "a file outside --trusted-root: refused" "$VIGIL" label --trusted t.db --hmac-key key \
	--trusted-root $R fs/outside
keep
check "... outside-root" grep -q "not labeled: outside-root" "$T/last"
check_rc 1 "... not labeled" getfattr -n security.ima fs/outside

check_rc 1 "--json: the refusals by reason" "$VIGIL" label -r --json --trusted t.db --hmac-key key \
	--trusted-root $R $R
"$VIGIL" label -r --json --trusted t.db --hmac-key key --trusted-root $R $R >j.json 2>/dev/null
check_eq "... failed_by_reason" "$(jpy j.json 'sorted(d["failed_by_reason"].items())')" \
	"[('digest-differs', 1), ('not-in-database', 2)]"

# ---- signatures (--key, --evm-key --portable) on single files; evmctl agrees ----
cp -a $R/usr/bin/lessecho $R/usr/bin/lesskey fs/ 2>/dev/null
check "single file, signed: --key --evm-key --portable --trusted-key" "$VIGIL" label \
	--key "$K/ecp256.key.pem" --evm-key "$K/rsa2048.key.pem" --portable --trusted t.db \
	--trusted-key key --trusted-root $R $R/usr/bin/lessecho
check_eq "... security.ima is a signature (03)" "$(xhex $R/usr/bin/lessecho security.ima | cut -c1-2)" 03
check "... evmctl ima_verify accepts it" evmctl ima_verify --key "$K/ecp256.cert.der" $R/usr/bin/lessecho
check "... vigil appraise with the keyring" "$VIGIL" appraise -q --keyring "$K/ecp256.cert.pem" \
	--keyring "$K/rsa2048.cert.pem" --require-sig $R/usr/bin/lessecho
sig_before=$(xhex $R/bin/hostname security.ima)
check_rc 1 "signed, the modified file: refused" "$VIGIL" label --key "$K/ecp256.key.pem" --no-evm \
	--trusted t.db --trusted-key key --trusted-root $R $R/bin/hostname
check_eq "... its label unchanged" "$(xhex $R/bin/hostname security.ima)" "$sig_before"
check_rc 2 "no key for the database: usage error" "$VIGIL" label --no-evm --trusted t.db \
	--trusted-root $R $R/usr/bin/lesskey

# ---- merged /usr: /bin/hostname is recorded, the file is found as /usr/bin/hostname ----
mkdir -p fs/merged fs/split
dpkg-deb -x debs/hostname_*.deb fs/merged
mkdir -p fs/merged/usr/bin && mv fs/merged/bin/* fs/merged/usr/bin/ && rmdir fs/merged/bin
ln -s usr/bin fs/merged/bin
check "merged /usr: /usr/bin/hostname is the recorded /bin/hostname (ROOT/bin -> usr/bin)" \
	"$VIGIL" label --trusted t.db --hmac-key key --trusted-root fs/merged fs/merged/usr/bin/hostname
check "... labeled" getfattr -n security.ima fs/merged/usr/bin/hostname
dpkg-deb -x debs/hostname_*.deb fs/split
mkdir -p fs/split/usr/bin && cp fs/split/bin/hostname fs/split/usr/bin/hostname
check_rc 1 "without the link, a copy at /usr/bin/hostname: not-in-database" \
	"$VIGIL" label --trusted t.db --hmac-key key --trusted-root fs/split fs/split/usr/bin/hostname
keep
check "... said so" grep -q "not labeled: not-in-database (/usr/bin/hostname)" "$T/last"
check_rc 1 "... not labeled" getfattr -n security.ima fs/split/usr/bin/hostname

# ---- a superseded version: refused unless --trusted-superseded ----
read -r pkg old new < <(for l in $LISTS/*_Packages.lz4; do lz4 -dc "$l"; done | /usr/bin/python3 -c '
import sys, collections, subprocess, functools
v = collections.defaultdict(dict); p = ver = None
for l in sys.stdin:
    if l.startswith("Package: "): p = l.split()[1]
    elif l.startswith("Version: "): ver = l.split()[1]
    elif l.startswith("Architecture: ") and l.split()[1] not in ("amd64", "all"): p = None
    elif l.startswith("Size: ") and p: v[p][ver] = int(l.split()[1])
# not a transitional package (a symbolic link alone): at least 20 kB
best = min((max(s.values()), p) for p, s in v.items() if len(s) >= 2 and min(s.values()) >= 20000)
vs = sorted(v[best[1]], key=functools.cmp_to_key(lambda a, b: -1 if subprocess.call(["dpkg", "--compare-versions", a, "lt", b]) == 0 else 1))
print(best[1], vs[0], vs[-1])')
mkdir up1 up2 && chmod 755 up1 up2
(cd up1 && apt-get download -q "$pkg=$old" >/dev/null 2>&1)
(cd up2 && apt-get download -q "$pkg=$new" >/dev/null 2>&1)
check "$pkg $old, then $new: a database with an upgrade" sh -c "'$VIGIL' trust build -o up.db --hmac-key key --debs up1 --all-debs --allow-expired && '$VIGIL' trust build -o up.db --hmac-key key --debs up2 --all-debs --allow-expired"
mkdir fs/old && dpkg-deb -x up1/*.deb fs/old
# a file of the old version whose digest the new version changed
f=$(/usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = """SELECT o.path FROM files o JOIN packages po ON po.id = o.package AND po.state = 1
       JOIN files n ON n.path = o.path AND n.algo = o.algo JOIN packages pn ON pn.id = n.package AND pn.state = 0
       WHERE o.algo = 4 AND o.conffile < 2 AND o.digest <> n.digest ORDER BY o.path LIMIT 1"""
for r in c.execute(q): print(r[0].decode())' up.db)
check "... a file $f differs between the versions" test -n "$f" -a -f "fs/old$f"
check_rc 1 "the old version's file: refused, superseded-version" "$VIGIL" label --trusted up.db \
	--hmac-key key --trusted-root fs/old "fs/old$f"
keep
check "... said superseded-version" grep -q "not labeled: superseded-version ($f)" "$T/last"
check_rc 1 "... not labeled" getfattr -n security.ima "fs/old$f"
check "with --trusted-superseded: labeled" "$VIGIL" label --trusted up.db --hmac-key key \
	--trusted-superseded --trusted-root fs/old "fs/old$f"
check "... vigil appraise accepts it" "$VIGIL" appraise -q --hmac-key key "fs/old$f"
