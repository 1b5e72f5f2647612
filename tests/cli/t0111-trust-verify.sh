#!/usr/bin/env bash
# t0111: vigil trust verify. A root tree is made by extracting real .debs
# (apt-get download, dpkg-deb -x) and given a dpkg database (status,
# md5sums, lists) so that debsums can judge the same tree; a file is
# modified, one deleted, one replaced by a symbolic link, a conffile edited,
# an unpackaged file added: each lands in its category, and the verdict
# equals debsums'. A directory symbolic link that points out of the tree
# is not followed out of it. On the live system, an unmodified package
# verifies as `dpkg --verify` says. An altered database, a database under
# another key, is refused before anything is compared.
. "$SRCDIR/tests/lib.sh"
vg_init
export VIGIL_CONFIG=/dev/null
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
# jq-like: python expression over the JSON document in FILE
jpy() { /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

# the packages extracted into DIR with their maintainer scripts where dpkg keeps them
xroot() {
	local d s p
	mkdir -p "$1/var/lib/dpkg/info"
	for d in debs/*.deb; do
		p=$(dpkg-deb -f "$d" Package)
		dpkg-deb -x "$d" "$1"
		rm -rf ctl && dpkg-deb -e "$d" ctl
		for s in preinst postinst prerm postrm config; do
			[ -f ctl/$s ] && cp ctl/$s "$1/var/lib/dpkg/info/$p.$s"
		done
	done
	return 0
}

mkdir debs && chmod 755 debs
(cd debs && apt-get download -q hostname less adduser >/dev/null 2>&1)
check_eq "apt-get download fetched three .debs" "$(ls debs/*.deb 2>/dev/null | wc -l)" 3
check "build the database" "$VIGIL" trust build -o t.db --hmac-key key --debs debs --all-debs

# the tree, with the dpkg database debsums reads (status with Conffiles, md5sums, lists)
xroot root
: >root/var/lib/dpkg/status
for d in debs/*.deb; do
	p=$(dpkg-deb -f "$d" Package)
	dpkg-deb --fsys-tarfile "$d" | tar -t | sed 's|^\./|/|; s|/$||' | grep . >root/var/lib/dpkg/info/$p.list
	dpkg-deb --ctrl-tarfile "$d" | tar -xO ./md5sums >root/var/lib/dpkg/info/$p.md5sums
	{
		dpkg-deb -f "$d"
		echo "Status: install ok installed"
		if dpkg-deb --ctrl-tarfile "$d" | tar -xO ./conffiles >conf 2>/dev/null && [ -s conf ]; then
			echo "Conffiles:"
			while read -r c; do echo " $c $(md5sum <"root$c" | cut -d' ' -f1)"; done <conf
		fi
		echo
	} >>root/var/lib/dpkg/status
done
# tmp.ci's scripts (conffile 3) exist only during an unpack: not checked
nfiles=$(sql t.db "SELECT count(*) FROM (SELECT DISTINCT path, package FROM files WHERE conffile < 3)")

check "the tree as extracted: verify exits 0" "$VIGIL" trust verify t.db --hmac-key key --root root
keep
check_eq "... every recorded file ok" "$(sed -n 's/^\([0-9]*\) ok, 0 modified, 0 missing, 0 conffiles changed, 0 diverted, 0 excluded by dpkg$/\1/p' "$T/last")" "$nfiles"
check "... debsums agrees: nothing changed" test -z "$(debsums --root=root -s -a 2>&1)"

# the changes
conf=$(dpkg-deb --ctrl-tarfile debs/adduser_*.deb | tar -xO ./conffiles | grep '^/' | head -1)
echo "# local change" >>"root$conf"
printf 'x' >>root/bin/hostname
rm root/usr/bin/less
rm root/usr/bin/lessecho && ln -s /bin/sh root/usr/bin/lessecho
echo "#!/bin/sh" >root/usr/bin/dropped-in && chmod 755 root/usr/bin/dropped-in
# a file dpkg lists for a package the database does not record: not "unpackaged"
echo "/usr/bin/other-tool" >root/var/lib/dpkg/info/other.list && echo x >root/usr/bin/other-tool
# byte code compiled at install from a packaged module, and one whose source no package ships
mkdir -p root/usr/lib/python3/dist-packages/m/__pycache__
echo "/usr/lib/python3/dist-packages/m/mod.py" >>root/var/lib/dpkg/info/other.list
echo pass >root/usr/lib/python3/dist-packages/m/mod.py
echo x >root/usr/lib/python3/dist-packages/m/__pycache__/mod.cpython-311.pyc
echo x >root/usr/lib/python3/dist-packages/m/__pycache__/stray.cpython-311.pyc
check_rc 1 "after the changes: verify exits 1" "$VIGIL" trust verify t.db --hmac-key key --root root --unpackaged
keep
check "... modified: /bin/hostname, with both digests" grep -q "^modified: /bin/hostname (hostname .*) package sha256:.* disk sha256:$(sha256sum root/bin/hostname | cut -d' ' -f1)$" "$T/last"
check "... modified: /usr/bin/lessecho (a symbolic link now)" grep -q "^modified: /usr/bin/lessecho (less " "$T/last"
check "... missing: /usr/bin/less" grep -q "^missing: /usr/bin/less (less " "$T/last"
check "... the conffile listed apart, with the package's and the disk's digest" \
	grep -q "^conffile: $conf (adduser .*) changed; package sha256:.* disk sha256:$(sha256sum "root$conf" | cut -d' ' -f1)$" "$T/last"
check "... unpackaged: /usr/bin/dropped-in" grep -q "^unpackaged: /usr/bin/dropped-in$" "$T/last"
check "... unpackaged: byte code of no packaged source" grep -q "^unpackaged: /usr/lib/python3/dist-packages/m/__pycache__/stray.cpython-311.pyc$" "$T/last"
check "... not: byte code of a packaged module" test -z "$(grep "mod.cpython-311.pyc" "$T/last")"
check "... the summary counts each (other-tool: dpkg's, not unpackaged)" grep -q " ok, 2 modified, 1 missing, 1 conffiles changed, 0 diverted, 0 excluded by dpkg, 2 unpackaged, 2 of packages not in the database, 1 generated at install, 0 alternatives, 0 diverted files$" "$T/last"
check_rc 1 "--json: exit 1" "$VIGIL" trust verify t.db --hmac-key key --root root --unpackaged --json
cp "$T/.out" v.json
check "... validates (trust-verify)" /usr/bin/python3 "$SRCDIR/tests/helpers/json_validate.py" "$SRCDIR/docs/schemas/trust-verify.schema.json" v.json
check_eq "... modified, missing, conffiles, unpackaged" \
	"$(jpy v.json '" ".join([",".join(sorted(m["file"] for m in d["modified"])), ",".join(m["file"] for m in d["missing"]), ",".join(c["file"] + ":" + c["state"] for c in d["conffiles"]), ",".join(sorted(d["unpackaged"]))])')" \
	"/bin/hostname,/usr/bin/lessecho /usr/bin/less $conf:changed /usr/bin/dropped-in,/usr/lib/python3/dist-packages/m/__pycache__/stray.cpython-311.pyc"
check_eq "... the conffile's package digest is the one recorded" \
	"$(jpy v.json 'd["conffiles"][0]["package_digest"]')" \
	"sha256:$(sql t.db "SELECT digest FROM files WHERE path = CAST('$conf' AS BLOB) AND algo = 4")"

# debsums on the same tree: the same files, in the same categories
debsums --root=root -s -a >ds.txt 2>&1
# (a file replaced by a link is "modified" for vigil, which does not follow it;
# debsums follows it, out of the tree: "missing" or "changed" by where it points)
check_eq "debsums: its changed and missing files are vigil's modified and missing ones" \
	"$(sed -n 's#^debsums: \(changed\|missing\) file root\([^ ]*\) (from .*#\2#p' ds.txt | grep -v "^$conf$" | sort | tr '\n' ' ')" \
	"$(jpy v.json '" ".join(sorted([m["file"] for m in d["modified"]] + [m["file"] for m in d["missing"]]))') "
check_eq "debsums: the content change is the one vigil names modified with a digest" \
	"$(sed -n 's|^debsums: changed file root\([^ ]*\) (from .*|\1|p' ds.txt | grep -v "^$conf$")" "/bin/hostname"
check_eq "debsums: the changed conffile is vigil's" \
	"$(debsums --root=root -s -e 2>&1 | sed -n 's|^debsums: changed file root\([^ ]*\) (from .*|\1|p')" "$conf"

# only the conffile changed: listed, exit 0
rm -rf root2 && xroot root2
echo "# local change" >>"root2$conf"
check "only a conffile changed: exit 0" "$VIGIL" trust verify t.db --hmac-key key --root root2
keep
check "... and it is listed" grep -q "^conffile: $conf " "$T/last"
rm "root2$conf"
check "a conffile removed: still listed apart (missing), exit 0" "$VIGIL" trust verify t.db --hmac-key key --root root2
keep
check "... as missing" grep -q "^conffile: $conf (adduser .*) missing;" "$T/last"

# links resolve inside --root: a directory link out of the tree is not followed out
rm -rf root3 && xroot root3
rm -rf root3/usr/share/doc/hostname
ln -s "$T/root2/usr/share/doc/hostname" root3/usr/share/doc/hostname
check_rc 1 "a directory replaced by a link out of the tree (to identical files): not ok" \
	"$VIGIL" trust verify t.db --hmac-key key --root root3
keep
check "... its files are missing, not ok" grep -q "^missing: /usr/share/doc/hostname/copyright " "$T/last"

# dpkg's path-exclude: files left out on purpose are not missing
rm -rf root4 && xroot root4
mkdir -p root4/etc/dpkg/dpkg.cfg.d
printf 'path-exclude /usr/share/doc/*\npath-include /usr/share/doc/*/copyright\n' >root4/etc/dpkg/dpkg.cfg.d/excludes
find root4/usr/share/doc -type f ! -name copyright -delete
find root4/usr/share/doc -type l -delete
check "path-excluded files removed: exit 0" "$VIGIL" trust verify t.db --hmac-key key --root root4
keep
check "... counted as excluded" grep -Eq " 0 missing, .* [1-9][0-9]* excluded by dpkg$" "$T/last"
rm root4/usr/share/doc/less/copyright
check_rc 1 "... but a path-include'd file removed is missing" "$VIGIL" trust verify t.db --hmac-key key --root root4

# a diversion by another package: the package's file is checked where it went
rm -rf root5 && xroot root5
mkdir -p root5/var/lib/dpkg
mv root5/bin/hostname root5/bin/hostname.distrib && echo "other" >root5/bin/hostname
printf '/bin/hostname\n/bin/hostname.distrib\nsome-other-package\n' >root5/var/lib/dpkg/diversions
check "a diverted file: exit 0" "$VIGIL" trust verify t.db --hmac-key key --root root5
keep
check "... listed apart, checked at the diversion" grep -q "^diverted: /bin/hostname (hostname .*) to /bin/hostname.distrib by some-other-package ok;" "$T/last"

# maintainer scripts: dpkg runs them, so they are checked like any packaged file
scr=$(cd root2/var/lib/dpkg/info && ls *.postinst | head -1)
check "a maintainer script is recorded: /var/lib/dpkg/info/$scr" test -n "$scr" -a \
	"$(sql t.db "SELECT count(*) FROM files WHERE path = CAST('/var/lib/dpkg/info/$scr' AS BLOB) AND conffile = 2")" -ge 1
echo 'touch /tmp/owned' >>"root5/var/lib/dpkg/info/$scr"
check_rc 1 "an altered postinst: verify exits 1" "$VIGIL" trust verify t.db --hmac-key key --root root5
keep
check "... modified: /var/lib/dpkg/info/$scr, with both digests" \
	grep -q "^modified: /var/lib/dpkg/info/$scr (.*) package sha256:.* disk sha256:$(sha256sum "root5/var/lib/dpkg/info/$scr" | cut -d' ' -f1)$" "$T/last"
check "... the new versions' scripts run from tmp.ci are recorded" test \
	"$(sql t.db "SELECT count(*) FROM files WHERE CAST(path AS TEXT) LIKE '/var/lib/dpkg/tmp.ci/%' AND conffile = 3")" -ge 1
check_eq "... and never reported missing (they exist only during an unpack)" "$(grep -c tmp.ci "$T/last")" 0

# ---- the database is authenticated first ----
check_rc 2 "another key: refused" "$VIGIL" trust verify t.db --hmac-key key2 --root root2
keep
check "... MAC mismatch named" grep -q "t.db: MAC mismatch" "$T/last"
cp t.db flip.db
off=$(grep -abo '/bin/hostname' flip.db | head -1 | cut -d: -f1)
flip_byte flip.db $((off + 5))
check_rc 2 "one byte of a recorded path flipped: refused" "$VIGIL" trust verify flip.db --hmac-key key --root root2
cp t.db upd.db
/usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE files SET digest = zeroblob(32) WHERE path = CAST(? AS BLOB) AND algo = 4", ("/bin/hostname",)); c.commit()' upd.db
check_rc 2 "a digest rewritten through SQLite: refused" "$VIGIL" trust verify upd.db --hmac-key key --root root2
keep
check "... MAC mismatch named" grep -q "upd.db: MAC mismatch" "$T/last"
/usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("CREATE INDEX extra ON files(package)"); c.commit()' idx.db
check_rc 2 "an index added: refused (not the schema)" "$VIGIL" trust verify idx.db --hmac-key key --root root2
echo "not a database" >junk.db
check_rc 2 "not a database: refused" "$VIGIL" trust verify junk.db --hmac-key key --root root2
check_rc 2 "no key: refused" "$VIGIL" trust verify t.db --root root2
check_rc 2 "a root that does not exist" "$VIGIL" trust verify t.db --hmac-key key --root nowhere

# ---- the live system: an unmodified installed package, as dpkg --verify says ----
if "$VIGIL" trust build -o live.db --hmac-key key --download --json hostname >live.json 2>&1 &&
	grep -q '"recorded":1' live.json; then
	"$VIGIL" trust verify live.db --hmac-key key >live.txt 2>&1
	vrc=$?
	dv=$(dpkg --verify hostname 2>&1)
	check_eq "live hostname: vigil's verdict (exit) matches dpkg --verify's ($([ -z "$dv" ] && echo clean || echo changed))" \
		"$vrc" "$([ -z "$dv" ] && echo 0 || echo 1)"
	check_eq "... every file of hostname compared" \
		"$(sed -n 's/^\([0-9]*\) ok, .*/\1/p' live.txt)" \
		"$(sql live.db "SELECT count(*) FROM (SELECT DISTINCT path FROM files WHERE conffile < 3)")"
else
	check "live hostname: its installed version is listed by a verified index" grep -q '"reason":"unlisted"' live.json
fi
