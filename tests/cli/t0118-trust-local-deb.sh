#!/usr/bin/env bash
# t0118: vigil trust build --local-deb FILE: a .deb no signed list vouches
# for (vigil's own, installed from files) is recorded only because the
# administrator names it, under origin "local"; the archive is not asked
# for a package named so (no "not from a verified repository" for it); with
# no verified list at all the named packages alone are recorded; a .deb
# whose control file says another package, version or architecture than
# dpkg-deb read from it, or a file that is no .deb, contributes nothing and
# writes nothing (exit 2, named); later builds keep what was named.
. "$SRCDIR/tests/lib.sh"
vg_init
export VIGIL_CONFIG=/dev/null
head -c 64 /dev/urandom >key
sql() { /usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for r in c.execute(sys.argv[2]): print("|".join("" if v is None else (v.hex() if isinstance(v, bytes) else str(v)) for v in r))' "$@"; }

# a package of the site's own: one program, one conffile, a postinst
mkpkg() { # NAME VERSION DIR
	mkdir -p "$3/DEBIAN" "$3/usr/bin" "$3/etc"
	printf 'Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: t\n' \
		"$1" "$2" >"$3/DEBIAN/control"
	printf '#!/bin/sh\necho %s %s\n' "$1" "$2" >"$3/usr/bin/$1"
	chmod 755 "$3/usr/bin/$1"
	echo "conf=1" >"$3/etc/$1.conf"
	echo "/etc/$1.conf" >"$3/DEBIAN/conffiles"
	printf '#!/bin/sh\nexit 0\n' >"$3/DEBIAN/postinst"
	chmod 755 "$3/DEBIAN/postinst"
	dpkg-deb --root-owner-group -Zxz -b "$3" "$1_$2_all.deb" >/dev/null
}
mkpkg sitetool 1.0 p1
mkdir empty
# --lists EMPTY: no verified list at all
check "--local-deb with no verified list: the named package alone is recorded" \
	"$VIGIL" trust build -o t.db --hmac-key key --lists empty --local-deb sitetool_1.0_all.deb
cp "$T/.out" out1
check "... said so" grep -q "trusted by name: sitetool 1.0 all (sitetool_1.0_all.deb, " out1
check_eq "... under a release of origin local" \
	"$(sql t.db "SELECT p.name, p.version, p.arch, r.origin FROM packages p JOIN releases r ON p.release = r.id")" \
	"sitetool|1.0|all|local"
check_eq "... its files with dpkg-deb's digests" \
	"$(sql t.db "SELECT lower(hex(digest)) FROM files WHERE CAST(path AS TEXT) = '/usr/bin/sitetool' AND algo = 4")" \
	"$(sha256sum p1/usr/bin/sitetool | cut -d' ' -f1)"
check_eq "... its conffile flagged, its postinst recorded" \
	"$(sql t.db "SELECT conffile FROM files WHERE CAST(path AS TEXT) = '/etc/sitetool.conf'") $(sql t.db "SELECT count(*) FROM files WHERE CAST(path AS TEXT) = '/var/lib/dpkg/info/sitetool.postinst'")" \
	"1 1"
check_eq "the database is root's alone (0600, as AIDE keeps its own)" "$(stat -c %a t.db)" 600
mkdir -p root/var/lib/dpkg/info
dpkg-deb -x sitetool_1.0_all.deb root
cp p1/DEBIAN/postinst root/var/lib/dpkg/info/sitetool.postinst
check "trust verify: the package as installed from the file is unmodified" \
	"$VIGIL" trust verify t.db --hmac-key key --root "$T/root"
echo "echo tampered" >>root/usr/bin/sitetool
"$VIGIL" trust verify t.db --hmac-key key --root "$T/root" >vout 2>&1
check_eq "... a byte changed in its program: modified (exit 1)" "$?" 1
check "... named" grep -q "^modified: /usr/bin/sitetool (sitetool 1.0 all)" vout

# a .deb whose control file is not what its name and dpkg-deb say: the bytes
# read are checked, not the file name
mkpkg sitetool 2.0 p2
cp t.db t.before
cp sitetool_2.0_all.deb liar_9.9_all.deb
check "a .deb named otherwise is recorded as what its control file says" \
	"$VIGIL" trust build -o t2.db --hmac-key key --lists empty --local-deb liar_9.9_all.deb
check_eq "... sitetool 2.0" "$(sql t2.db "SELECT name, version FROM packages")" "sitetool|2.0"
printf 'not a deb\n' >junk.deb
"$VIGIL" trust build -o t.db --hmac-key key --lists empty --local-deb junk.deb >out 2>err
check_eq "a file that is no .deb: exit 2" "$?" 2
check "... named" grep -q "junk.deb" err
check "... the database untouched" cmp t.db t.before
"$VIGIL" trust build -o t.db --hmac-key key --lists empty --local-deb absent.deb >out 2>err
check_eq "a missing file: exit 2" "$?" 2
check "... named with the reason" grep -q "absent.deb: No such file" err
check "... the database untouched" cmp t.db t.before
check_rc 2 "--local-deb with an empty name: exit 2" \
	"$VIGIL" trust build -o t3.db --hmac-key key --lists empty --local-deb ''
check "... nothing written" test ! -e t3.db

# later builds keep it (carried over), a new version named replaces it
mkpkg othertool 1.0 p3
check "a later build naming another local .deb" \
	"$VIGIL" trust build -o t.db --hmac-key key --lists empty --local-deb othertool_1.0_all.deb
check_eq "... keeps the one named before" "$(sql t.db "SELECT name, version FROM packages ORDER BY name")" \
	"othertool|1.0
sitetool|1.0"
# a site's own kernel package: its files recorded, no boot image (issue 45:
# a measured_boot section's from_archive takes only what the archive signed)
mkdir -p pk/DEBIAN pk/boot
printf 'Package: linux-image-9.9-site\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDescription: t\n' \
	>pk/DEBIAN/control
cp "$VECTORS/authenticode/small-signed.efi" pk/boot/vmlinuz-9.9-site
dpkg-deb --root-owner-group -Zxz -b pk site-kernel.deb >/dev/null
check "a local kernel package" "$VIGIL" trust build -o t4.db --hmac-key key --lists empty \
	--local-deb site-kernel.deb
check_eq "... its kernel recorded as a file" \
	"$(sql t4.db "SELECT lower(hex(digest)) FROM files WHERE CAST(path AS TEXT) = '/boot/vmlinuz-9.9-site' AND algo = 4")" \
	"$(sha256sum pk/boot/vmlinuz-9.9-site | cut -d' ' -f1)"
check_eq "... not as a boot image of the archive" "$("$VIGIL" trust boot show t4.db --hmac-key key --json)" ""

check "help names --local-deb" bash -c "'$VIGIL' trust build --help | grep -q -- '--local-deb FILE'"
check_eq "... once" "$("$VIGIL" trust build --help | grep -c -- '--local-deb FILE   ')" 1
