#!/usr/bin/env bash
# t0110: vigil trust build against the real Debian archive chain of this
# machine (apt's lists, gpgv, the archive keyring): a few small .debs are
# fetched with apt-get download; what is recorded equals what dpkg-deb and
# sha256sum say of the same .debs. Every broken link of the chain must
# stop the packages behind it: a tampered InRelease, a wrong keyring, an
# expired Valid-Until, a Packages list InRelease does not list, a .deb
# with one byte flipped. An existing file that is not a trust database
# under the same key is never written over. Superseded versions stay for
# --grace, then go.
. "$SRCDIR/tests/lib.sh"
vg_init
export VIGIL_CONFIG=/dev/null
LISTS=/var/lib/apt/lists
if ! ls $LISTS/*_InRelease >/dev/null 2>&1; then
	apt-get update -qq >/dev/null 2>&1
fi
head -c 64 /dev/urandom >key
# the output of the last check, kept (the next check overwrites $T/.out)
keep() { cp "$T/.out" "$T/last"; }
head -c 64 /dev/urandom >key2
# sql DB QUERY: one value per line (python's sqlite3, read-only)
sql() { /usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for r in c.execute(sys.argv[2]): print("|".join("" if v is None else (v.hex() if isinstance(v, bytes) else str(v)) for v in r))' "$@"; }

mkdir debs && chmod 755 debs
# bzip2: its data.tar has hard links (bunzip2, bzcat)
(cd debs && apt-get download -q hostname less adduser bzip2 >/dev/null 2>&1)
check_eq "apt-get download fetched four .debs" "$(ls debs/*.deb 2>/dev/null | wc -l)" 4
HOSTNAME_DEB=$(ls debs/hostname_*.deb)
ADDUSER_DEB=$(ls debs/adduser_*.deb)
BZIP2_DEB=$(ls debs/bzip2_*.deb)

# ---- the whole chain ----
check "build --all-debs over the real lists" \
	"$VIGIL" trust build -o t.db --hmac-key key --debs debs --all-debs --json
cp "$T/.out" build.json
check "its --json validates (trust-build)" \
	/usr/bin/python3 "$SRCDIR/tests/helpers/json_validate.py" "$SRCDIR/docs/schemas/trust-build.schema.json" build.json
check_eq "four packages recorded, none failed" \
	"$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["recorded"], d["unverified"], len(d["failed"]))' build.json)" "4 0 0"
check "every InRelease of the lists verified by gpgv" /usr/bin/python3 -c '
import json, sys; d = json.load(open(sys.argv[1])); assert d["releases"] and all(r["verified"] for r in d["releases"]), d["releases"]' build.json
check_eq "the packages, versions and origin recorded" \
	"$(sql t.db "SELECT p.name, p.version, r.origin FROM packages p JOIN releases r ON p.release = r.id ORDER BY p.name" | tr '\n' ' ')" \
	"$(for d in debs/*.deb; do printf '%s|%s|Debian ' "$(dpkg-deb -f "$d" Package)" "$(dpkg-deb -f "$d" Version)"; done)"

# the digests are those of the files in the .debs (dpkg-deb, tar, sha256sum)
for deb in "$HOSTNAME_DEB" "$ADDUSER_DEB" "$BZIP2_DEB"; do
	pkg=$(dpkg-deb -f "$deb" Package)
	rm -rf x && mkdir x && dpkg-deb --fsys-tarfile "$deb" | tar -x -C x
	(cd x && find . -type f -print0 | sort -z | xargs -0 sha256sum | sed 's|  \./|  /|') >want.sum
	sql t.db "SELECT hex(f.digest), CAST(f.path AS TEXT) FROM files f JOIN packages p ON f.package = p.id
		  WHERE p.name = '$pkg' AND f.algo = 4 AND f.conffile < 2 ORDER BY f.path" |
		/usr/bin/python3 -c 'import sys
for l in sys.stdin: d, p = l.rstrip("\n").split("|", 1); print(d.lower() + "  " + p)' | sort -k2 >got.sum
	sort -k2 want.sum >want.sorted
	check "$pkg: every regular file with dpkg-deb's content digest ($(wc -l <want.sum) files)" \
		cmp got.sum want.sorted
	check_eq "$pkg: symbolic links recorded with their targets" \
		"$(sql t.db "SELECT CAST(f.path AS TEXT), CAST(f.target AS TEXT) FROM files f JOIN packages p ON f.package = p.id WHERE p.name = '$pkg' AND f.algo = 255 ORDER BY f.path" | tr '\n' ' ')" \
		"$(cd x && find . -type l | sort | while read -r l; do printf '%s|%s ' "${l#.}" "$(readlink "$l")"; done)"
done
check "bzip2: its data.tar has hard links" test "$(dpkg-deb -c "$BZIP2_DEB" | grep -c ' link to ')" -ge 1
check_eq "... each recorded with its target's digest" \
	"$(dpkg-deb -c "$BZIP2_DEB" | sed -n 's|.* \./\([^ ]*\) link to \./\(.*\)|\1 \2|p' | while read -r l t; do
		a=$(sql t.db "SELECT hex(digest) FROM files WHERE path = CAST('/$l' AS BLOB) AND algo = 4")
		b=$(sql t.db "SELECT hex(digest) FROM files WHERE path = CAST('/$t' AS BLOB) AND algo = 4")
		[ -n "$a" ] && [ "$a" = "$b" ] && echo same || echo "differs: $l"; done | sort -u)" same
check_eq "adduser's conffiles flagged, nothing else" \
	"$(sql t.db "SELECT DISTINCT CAST(f.path AS TEXT) FROM files f JOIN packages p ON f.package = p.id WHERE f.conffile = 1 ORDER BY 1" | tr '\n' ' ')" \
	"$(dpkg-deb --ctrl-tarfile "$ADDUSER_DEB" | tar -xO ./conffiles | grep '^/' | sort | tr '\n' ' ')"

check "--algo sha256,sha512" "$VIGIL" trust build -o t2.db --hmac-key key --debs debs --all-debs --algo sha256,sha512 hostname
check_eq "... the sha512 of /bin/hostname as sha512sum says" \
	"$(sql t2.db "SELECT hex(digest) FROM files WHERE path = CAST('/bin/hostname' AS BLOB) AND algo = 6" | tr A-F a-f)" \
	"$(dpkg-deb --fsys-tarfile "$HOSTNAME_DEB" | tar -xO ./bin/hostname | sha512sum | cut -d' ' -f1)"
check_eq "... PACKAGE restricts --all-debs" "$(sql t2.db "SELECT name FROM packages")" hostname

# ---- broken chains ----
# a lists directory with one release: bookworm (main) and its Packages list
mkdir lists
main_rel=$(ls $LISTS/*_dists_bookworm_InRelease)
cp "$main_rel" lists/
cp $LISTS/*_dists_bookworm_main_binary-amd64_Packages* lists/
check "one release, its list: build" "$VIGIL" trust build -o one.db --hmac-key key --lists lists --debs debs --all-debs hostname
check_eq "... hostname recorded from bookworm" "$(sql one.db "SELECT r.codename FROM packages p JOIN releases r ON p.release = r.id WHERE p.name = 'hostname'")" bookworm

# InRelease with one byte of the signed text changed: gpgv refuses, nothing is recorded
mkdir bad-rel && cp lists/* bad-rel/
rel=$(ls bad-rel/*_InRelease)
off=$(grep -bo 'Origin: Debian' "$rel" | head -1 | cut -d: -f1)
flip_byte "$rel" $((off + 9))
check_rc 2 "a tampered InRelease: build fails (nothing verified)" \
	"$VIGIL" trust build -o bad.db --hmac-key key --lists bad-rel --debs debs --all-debs
keep
check "... gpgv's refusal named with the file" grep -q "_InRelease: signature not verified by gpgv" "$T/last"
check "... no database written" test ! -e bad.db

check_rc 2 "a keyring without the archive's keys: build fails" \
	"$VIGIL" trust build -o bad.db --hmac-key key --lists lists --debs debs --all-debs \
	--keyring /usr/share/keyrings/debian-archive-removed-keys.gpg
keep
check "... said as gpgv's refusal" grep -q "signature not verified by gpgv" "$T/last"
check "... no database written" test ! -e bad.db

check_rc 2 "a keyring that does not exist: build fails" \
	"$VIGIL" trust build -o bad.db --hmac-key key --lists lists --debs debs --all-debs --keyring "$T/none.gpg"
keep
check "... naming it" grep -q "keyring $T/none.gpg: No such file or directory" "$T/last"
check_rc 2 "--lists that does not exist: build fails" \
	"$VIGIL" trust build -o bad.db --hmac-key key --lists "$T/nolists" --debs debs --all-debs
check "... no database written" test ! -e bad.db

# a Packages list that is not the one InRelease lists (one stanza's Size changed)
mkdir bad-list && cp lists/*_InRelease bad-list/
list=$(ls lists/*_Packages*)
case $list in
*.lz4) lz4 -dc "$list" ;; *.gz) zcat "$list" ;; *.xz) xzcat "$list" ;; *) cat "$list" ;;
esac | sed '0,/^Size: /s/^Size: \([0-9]*\)/Size: 1\1/' | lz4 -q -z - bad-list/"$(basename "${list%.lz4}")".lz4
check_rc 2 "a Packages list InRelease does not list: build fails" \
	"$VIGIL" trust build -o bad.db --hmac-key key --lists bad-list --debs debs --all-debs
keep
check "... named: not listed by the InRelease" grep -q "_Packages.lz4: not listed by the InRelease" "$T/last"
check "... no database written" test ! -e bad.db

# a .deb with one byte flipped: that package is reported and contributes nothing
mkdir debs2 && cp debs/*.deb debs2/
flip_byte "debs2/$(basename "$HOSTNAME_DEB")" 2000
check_rc 0 "a flipped .deb: build still writes the others" \
	"$VIGIL" trust build -o flip.db --hmac-key key --debs debs2 --all-debs --json
cp "$T/.out" flip.json
check "... hostname reported as a broken chain" grep -q '"package":"hostname".*"reason":"chain"' flip.json
check_eq "... hostname not recorded, the two others are" \
	"$(sql flip.db "SELECT name FROM packages ORDER BY name" | tr '\n' ' ')" "adduser bzip2 less "
check_eq "... no file of hostname's" "$(sql flip.db "SELECT count(*) FROM files WHERE path = CAST('/bin/hostname' AS BLOB)")" 0

# expired Valid-Until (bookworm-security has one): judged at a time after it
sec=$(ls $LISTS/*bookworm-security_InRelease 2>/dev/null | head -1)
if [ -n "$sec" ]; then
	mkdir sec && cp "$sec" $LISTS/*bookworm-security_main_binary-amd64_Packages* sec/
	until=$(/usr/bin/python3 -c 'import sys, email.utils
for l in open(sys.argv[1]):
    if l.startswith("Valid-Until:"): print(int(email.utils.parsedate_to_datetime(l.split(":", 1)[1].strip()).timestamp()))' "$sec")
	check_rc 2 "an InRelease past its Valid-Until: refused" \
		"$VIGIL" trust build -o bad.db --hmac-key key --lists sec --debs debs --all-debs --valid-at $((until + 1))
keep
	check "... said: expired" grep -q "expired: Valid-Until" "$T/last"
	check "... --allow-expired takes it" \
		"$VIGIL" trust build -o sec.db --hmac-key key --lists sec --debs debs --all-debs --valid-at $((until + 1)) --allow-expired
	check "... and one second before, it is valid" \
		"$VIGIL" trust build -o sec2.db --hmac-key key --lists sec --debs debs --all-debs --valid-at $((until - 1))
else
	check "bookworm-security's InRelease is in the lists" false
fi

# ---- -o: never over something that is not a trust database under this key ----
echo "precious" >notdb
check_rc 2 "-o onto a file that is not a trust database: refused" \
	"$VIGIL" trust build -o notdb --hmac-key key --debs debs --all-debs
keep
check "... named as such" grep -q "notdb: not a vigil trust database" "$T/last"
check_eq "... the file is untouched" "$(cat notdb)" precious
: >empty
check_rc 2 "-o onto an empty file: refused" "$VIGIL" trust build -o empty --hmac-key key --debs debs --all-debs
check_eq "... still empty" "$(stat -c %s empty)" 0
check_rc 2 "-o /dev/null: refused (a database is a file)" "$VIGIL" trust build -o /dev/null --hmac-key key --debs debs --all-debs
check "... /dev/null is still a character device" test -c /dev/null
check_rc 2 "-o -: refused (a database is a file)" "$VIGIL" trust build -o - --hmac-key key --debs debs --all-debs
check "... and no file named -" test ! -e ./-
mkdir adir
check_rc 2 "-o onto a directory: refused" "$VIGIL" trust build -o adir --hmac-key key --debs debs --all-debs
cp t.db keep.db
check_rc 2 "-o onto a trust database under another key: refused" \
	"$VIGIL" trust build -o t.db --hmac-key key2 --debs debs --all-debs
check "... t.db untouched" cmp t.db keep.db
check "-o onto the same database, same key: rebuilt" "$VIGIL" trust build -o t.db --hmac-key key --debs debs --all-debs
check "... no temporary left" test -z "$(ls -A . | grep vigil-tmp)"

# ---- superseded versions: kept for --grace, then dropped ----
# the smallest package listed in two versions by one verified list
read -r pkg old new < <(for l in $LISTS/*_Packages.lz4; do lz4 -dc "$l"; done | /usr/bin/python3 -c '
import sys, collections
v = collections.defaultdict(dict); p = ver = None
for l in sys.stdin:
    if l.startswith("Package: "): p = l.split()[1]
    elif l.startswith("Version: "): ver = l.split()[1]
    elif l.startswith("Architecture: ") and l.split()[1] not in ("amd64", "all"): p = None
    elif l.startswith("Size: ") and p: v[p][ver] = int(l.split()[1])
best = min((max(s.values()), p) for p, s in v.items() if len(s) >= 2)
import subprocess
vs = sorted(v[best[1]], key=__import__("functools").cmp_to_key(lambda a, b: -1 if subprocess.call(["dpkg", "--compare-versions", a, "lt", b]) == 0 else 1))
print(best[1], vs[0], vs[-1])')
mkdir up1 up2 && chmod 755 up1 up2
(cd up1 && apt-get download -q "$pkg=$old" >/dev/null 2>&1)
(cd up2 && apt-get download -q "$pkg=$new" >/dev/null 2>&1)
check "$pkg $old: recorded" "$VIGIL" trust build -o up.db --hmac-key key --debs up1 --all-debs --allow-expired
check "$pkg $new over it (the upgrade)" "$VIGIL" trust build -o up.db --hmac-key key --debs up2 --all-debs --allow-expired --json
keep
check "... one superseded version kept" grep -q '"superseded_kept":1,"superseded_dropped":0' "$T/last"
check_eq "... $old superseded, $new current" \
	"$(sql up.db "SELECT version, state, superseded_at > 0 FROM packages ORDER BY state" | tr '\n' ' ')" "$new|0|0 $old|1|1 "
check "again, within the grace: still kept" "$VIGIL" trust build -o up.db --hmac-key key --debs up2 --all-debs --allow-expired --json
keep
check "... kept" grep -q '"superseded_kept":1,"superseded_dropped":0' "$T/last"
check "after the grace (--grace 0): dropped" "$VIGIL" trust build -o up.db --hmac-key key --debs up2 --all-debs --allow-expired --grace 0 --json
keep
check "... dropped" grep -q '"superseded_kept":0,"superseded_dropped":1' "$T/last"
check_eq "... only $new remains, with its files only" \
	"$(sql up.db "SELECT DISTINCT p.version FROM files f JOIN packages p ON f.package = p.id")" "$new"

# ---- installed packages, .debs from apt's cache or --download ----
# its download directory goes under TMPDIR: a directory of this test's own,
# so that the check below sees only what this build made
mkdir dl && chmod 755 dl
check "installed packages, --download (hostname)" \
	env TMPDIR="$T/dl" "$VIGIL" trust build -o inst.db --hmac-key key --download --json hostname
inst=$(dpkg-query -W -f '${Version}' hostname)
keep
if grep -q '"recorded":1' "$T/last"; then
	check_eq "... the installed version recorded" "$(sql inst.db "SELECT version FROM packages")" "$inst"
else
keep
	check "... or reported as not in the lists" grep -q '"reason":"unlisted"' "$T/last"
fi
check "... its download directory removed" test -z "$(ls -A dl)"
# (and TMPDIR is where it goes: under one that does not exist, nothing is fetched)
check_rc 2 "... under TMPDIR: one that does not exist is refused" \
	env TMPDIR="$T/absent" "$VIGIL" trust build -o inst2.db --hmac-key key --download hostname
keep
check "... naming the directory" grep -q "$T/absent/vigil-trust-debs" "$T/last"
check "... and nothing written" test ! -e inst2.db
check_rc 2 "a package that is not installed: usage error" \
	"$VIGIL" trust build -o inst.db --hmac-key key hello-not-a-package
check_rc 2 "build without -o" "$VIGIL" trust build --hmac-key key
check_rc 2 "build without a key" "$VIGIL" trust build -o x.db
check_rc 2 "--algo with a name that is no algorithm" "$VIGIL" trust build -o x.db --hmac-key key --algo sha256,nope
