#!/usr/bin/env bash
# t0113: vigil attest policy create --trusted DB: a reference policy of the
# digests the Debian archive signed (every regular file of the current
# packages of an authenticated trust database). It accepts a measurement
# list of the packaged files (one written by an independent ima-ng
# encoder and converted by `vigil log convert`, one by `vigil measure`),
# rejects a modified file's digest and an unpackaged file; two databases,
# or a superseded version with --trusted-superseded, allow both versions
# of a package at once. A tampered database, another key: refused, no
# policy written.
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
jpy() { /usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
# mklog OUT NAME=FILE...: an ascii ima-ng list (PCR 10, sha1 template
# digests computed here, not by vigil) of each FILE's sha256 under NAME,
# converted to the binary list by vigil log convert
mklog() {
	local out=$1
	shift
	/usr/bin/python3 -c 'import hashlib, struct, sys
for a in sys.argv[1:]:
    name, f = a.split("=", 1)
    d = hashlib.sha256(open(f, "rb").read()).digest()
    dng = b"sha256:\0" + d
    nng = name.encode() + b"\0"
    data = struct.pack("<I", len(dng)) + dng + struct.pack("<I", len(nng)) + nng
    print("10 %s ima-ng sha256:%s %s" % (hashlib.sha1(data).hexdigest(), d.hex(), name))' "$@" >"$out.ascii" &&
		"$VIGIL" log convert --to binary -o "$out" "$out.ascii"
}

mkdir debs && chmod 755 debs
(cd debs && apt-get download -q hostname less adduser >/dev/null 2>&1)
check_eq "apt-get download fetched three .debs" "$(ls debs/*.deb 2>/dev/null | wc -l)" 3
check "build the database" "$VIGIL" trust build -o t.db --hmac-key key --debs debs --all-debs
mkdir root
for d in debs/*.deb; do dpkg-deb -x "$d" root; done
files=$(cd root && find . -type f | sed 's|^\.||' | LC_ALL=C sort)
nfiles=$(echo "$files" | wc -l)

check "policy create --trusted" "$VIGIL" attest policy create --trusted t.db --hmac-key key -o p.json
# and the maintainer scripts: where dpkg keeps them, and tmp.ci/ where an unpack runs them
nscripts=$(/usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("SELECT count(*) FROM (SELECT DISTINCT path, digest FROM files WHERE algo = 4 AND conffile >= 2)").fetchone()[0])' t.db)
check "... the packages have maintainer scripts" test "$nscripts" -gt 0
check_eq "... every packaged regular file and maintainer script, one digest each" \
	"$(jpy p.json 'sum(len(v) for v in d["digests"].values())')" "$((nfiles + nscripts))"
check_eq "... /bin/hostname: the extracted file's sha256" "$(jpy p.json 'd["digests"]["/bin/hostname"]')" \
	"['sha256:$(sha256sum root/bin/hostname | cut -d' ' -f1)']"
check_rc 1 "... no symbolic link (/bin/dnsdomainname)" grep -q '"/bin/dnsdomainname"' p.json

# an independent list of every packaged file, by absolute name
args=()
for f in $files; do args+=("$f=root$f"); done
check "a list of the packaged files (ascii ima-ng -> vigil log convert)" mklog list "${args[@]}"
check "... its template digests replay (vigil log replay)" "$VIGIL" log replay list
check "the policy accepts it" "$VIGIL" attest policy check --policy p.json list
keep
check "... every entry" grep -qx "OK $nfiles entries" "$T/last"

cp root/bin/hostname mod && printf 'x' >>mod
mklog bad /usr/bin/less=root/usr/bin/less /bin/hostname=mod
check_rc 1 "a modified /bin/hostname: rejected" "$VIGIL" attest policy check --policy p.json bad
keep
check "... policy.digest, the file and its digest" \
	grep -q "^FAIL policy.digest entry=1 path=/bin/hostname digest=sha256:$(sha256sum mod | cut -d' ' -f1):" "$T/last"
echo '#!/bin/sh' >extra
mklog unpk /usr/bin/dropped-in=extra
check_rc 1 "an unpackaged file: rejected (not in the policy)" "$VIGIL" attest policy check --policy p.json unpk
keep
check "... policy.not_in_policy" grep -q "^FAIL policy.not_in_policy entry=0 path=/usr/bin/dropped-in" "$T/last"

# vigil measure's own list: the boot_aggregate from --log, paths under --root
"$VIGIL" measure --log m.log >/dev/null 2>&1
check "policy create --trusted --log (boot_aggregate) --root PREFIX" "$VIGIL" attest policy create \
	--trusted t.db --hmac-key key --log m.log --root "$T/root" -o pm.json
check "vigil measure the packaged executables" "$VIGIL" measure --log m.log "$T/root/bin/hostname" \
	"$T/root/usr/bin/less" "$T/root/usr/sbin/adduser"
check "... the policy accepts the list" "$VIGIL" attest policy check --policy pm.json m.log
cp root/bin/hostname hostname.orig && cp mod root/bin/hostname
"$VIGIL" measure --log m.log "$T/root/bin/hostname" >/dev/null 2>&1
check_rc 1 "... after the file was modified and measured again: rejected" \
	"$VIGIL" attest policy check --policy pm.json m.log
keep
check "... policy.digest on it" grep -q "^FAIL policy.digest entry=4 path=$T/root/bin/hostname" "$T/last"
cp hostname.orig root/bin/hostname

# merged /usr
mklog usr /usr/bin/hostname=root/bin/hostname
check_rc 1 "/usr/bin/hostname for the packaged /bin/hostname: not in the policy" \
	"$VIGIL" attest policy check --policy p.json usr
check "--merged-usr" "$VIGIL" attest policy create --trusted t.db --hmac-key key --merged-usr -o pu.json
check "... accepts /usr/bin/hostname" "$VIGIL" attest policy check --policy pu.json usr
check "... and /bin/hostname" "$VIGIL" attest policy check --policy pu.json list
check_rc 1 "... not a modified one" "$VIGIL" attest policy check --policy pu.json bad

# refusals: nothing written
cp t.db flip.db
off=$(grep -abo '/usr/bin/less' flip.db | head -1 | cut -d: -f1)
flip_byte flip.db $((off + 6))
check_rc 2 "a database with one byte flipped: refused" "$VIGIL" attest policy create --trusted flip.db \
	--hmac-key key -o x1.json
check_rc 1 "... no policy written" test -e x1.json
check_rc 2 "another key: refused" "$VIGIL" attest policy create --trusted t.db --hmac-key key2 -o x2.json
check_rc 1 "... no policy written" test -e x2.json
check_rc 2 "two databases, the second altered: refused" "$VIGIL" attest policy create --trusted t.db \
	--trusted flip.db --hmac-key key -o x3.json
check_rc 1 "... no policy written" test -e x3.json
check_rc 2 "no key: refused" "$VIGIL" attest policy create --trusted t.db -o x4.json
check_rc 2 "--algo sha512 that the database does not record: refused" "$VIGIL" attest policy create \
	--trusted t.db --hmac-key key --algo sha512 -o x5.json
check_rc 2 "--hmac-key without --trusted: usage error" "$VIGIL" attest policy create --tree root \
	--hmac-key key -o x6.json

# ---- two versions of a package at once ----
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
check "$pkg $old: its own database" "$VIGIL" trust build -o v1.db --hmac-key key --debs up1 --all-debs --allow-expired
check "$pkg $new: its own database" "$VIGIL" trust build -o v2.db --hmac-key key --debs up2 --all-debs --allow-expired
mkdir o n && dpkg-deb -x up1/*.deb o && dpkg-deb -x up2/*.deb n
# a file both versions ship with different content
f=$(cd o && find . -type f | sed 's|^\.||' | LC_ALL=C sort | while read -r x; do
	[ -f "../n$x" ] && ! cmp -s "./$x" "../n$x" && { echo "$x"; break; }; done)
check "... $f differs between them" test -n "$f"
mklog lold "$f=o$f"
mklog lnew "$f=n$f"
check "policy from both databases" "$VIGIL" attest policy create --trusted v1.db --trusted v2.db \
	--hmac-key key -o both.json
check_eq "... $f lists both digests" "$(jpy both.json "len(d['digests']['$f'])")" 2
check "... accepts the old version" "$VIGIL" attest policy check --policy both.json lold
check "... accepts the new version" "$VIGIL" attest policy check --policy both.json lnew
check_rc 1 "... not a modified file" "$VIGIL" attest policy check --policy both.json bad
"$VIGIL" attest policy create --trusted v2.db --hmac-key key -o new.json
check_rc 1 "the new database alone: the old version rejected" "$VIGIL" attest policy check --policy new.json lold
check "... the new accepted" "$VIGIL" attest policy check --policy new.json lnew
# one database after the upgrade: the old version superseded, within the grace
check "the upgrade recorded in one database" sh -c "'$VIGIL' trust build -o up.db --hmac-key key --debs up1 --all-debs --allow-expired && '$VIGIL' trust build -o up.db --hmac-key key --debs up2 --all-debs --allow-expired"
"$VIGIL" attest policy create --trusted up.db --hmac-key key -o cur.json
check_rc 1 "current versions only (default): the old version rejected" \
	"$VIGIL" attest policy check --policy cur.json lold
check "--trusted-superseded" "$VIGIL" attest policy create --trusted up.db --hmac-key key \
	--trusted-superseded -o sup.json
check "... accepts the old version" "$VIGIL" attest policy check --policy sup.json lold
check "... and the new" "$VIGIL" attest policy check --policy sup.json lnew
