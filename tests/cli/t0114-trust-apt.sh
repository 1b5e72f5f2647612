#!/usr/bin/env bash
# t0114: the archive trust follows apt. A bookworm root (mmdebstrap,
# tests/lib-debroot.sh) on ext4 is trusted first (vigil trust build of its
# lists and .debs, vigil label --trusted); then, inside the chroot, with
# vigil's apt hook installed (apt/apt-trust, /etc/apt/apt.conf.d/50vigil),
# `apt-get install vg-hello=1.0` and the upgrade to 2.0 from a local
# repository signed by a throwaway key: the real Pre-Install-Pkgs hook
# records each incoming .deb before dpkg unpacks it (2.0 current, 1.0
# superseded, the digests those of dpkg-deb -x), its maintainer scripts
# under /var/lib/dpkg/info and tmp.ci, and Post-Invoke labels the new files
# so that vigil appraise accepts them; the postinst ran the new program.
# All of it under an enforcing vigild on the root's filesystem (appraise
# func=BPRM_CHECK trust=archive, the hook's database, reloaded by the hook
# through vigild's control socket): apt, dpkg, the maintainer scripts and
# the new program run with no denial, the new files allowed by the archive
# between dpkg's unpack and Post-Invoke's labels (the audit says so, with
# the package); the upgraded program altered on disk afterwards is denied.
# Refused: a .deb altered after indexing (apt itself, and vigil trust
# build --deb naming it), a repository signed by a key vigil was not given
# (the hook names the package unverified and apt proceeds, but vigild denies
# its preinst: its files are in no verified package, and dpkg stops). Last, vigil trust
# verify against debsums on the same root: a modified binary, a conffile
# and a maintainer script (dpkg keeps no MD5 for it).
# Cost: ~70 s more on the first run of a build directory (mmdebstrap from
# deb.debian.org into $BUILD_ROOT/fixtures/debroot.tar); skipped without it.
. "$SRCDIR/tests/lib.sh"
vg_init
. "$SRCDIR/tests/lib-debroot.sh"
export VIGIL_CONFIG=/dev/null DEBIAN_FRONTEND=noninteractive
sql() { /usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for r in c.execute(sys.argv[2]): print("|".join("" if v is None else (v.hex() if isinstance(v, bytes) else str(v)) for v in r))' "$@"; }
keep() { cp "$T/.out" "$T/last"; }

if ! vg_debroot_tar; then
	echo "1..0 # SKIP no Debian root: mmdebstrap could not build one (network?)"
	exit 0
fi
# the root and its ext4 image need more than vg_init's 256 MB
mount -o remount,size=2g "$T"
vg_ext4 fs 1400
R=$T/fs/root
check "the bookworm root extracted onto ext4" vg_debroot "$R"
DB=$R/var/lib/vigil/trust.db
KEY=$R/etc/vigil/key.hmac
mkdir -p "$R/var/lib/vigil" "$R/etc/vigil"
head -c 64 /dev/urandom >"$KEY"

# ---- trusted first: the root's own packages ----
check "trust build of the root's lists and .debs" "$VIGIL" trust build -o "$DB" -H "$KEY" \
	--lists "$R/var/lib/apt/lists" --debs "$R/var/cache/apt/archives" --all-debs
keep
check "... every .deb recorded, none unverified" \
	grep -q ": $(ls "$R"/var/cache/apt/archives/*.deb | wc -l) packages, [0-9]* files recorded; 0 not verified" "$T/last"
check "... dash's maintainer scripts, under the name dpkg gives them" test \
	"$(sql "$DB" "SELECT count(*) FROM files WHERE path = CAST('/var/lib/dpkg/info/dash.postinst' AS BLOB) AND conffile = 2")" -eq 1
check "... libc6's (Multi-Arch: same) as libc6:amd64.postinst" test \
	"$(sql "$DB" "SELECT count(*) FROM files WHERE path = CAST('/var/lib/dpkg/info/libc6:amd64.postinst' AS BLOB) AND conffile = 2")" -eq 1
check_eq "... the ones dpkg's info holds for the root's packages, byte for byte" \
	"$(for f in "$R"/var/lib/dpkg/info/{dash.postinst,libc6:amd64.postinst}; do sha256sum <"$f" | cut -d' ' -f1; done | tr '\n' ' ')" \
	"$(for p in dash.postinst libc6:amd64.postinst; do sql "$DB" "SELECT digest FROM files WHERE path = CAST('/var/lib/dpkg/info/$p' AS BLOB) AND algo = 4"; done | tr '\n' ' ')"
check "trust verify of the root as installed: exit 0" "$VIGIL" trust verify "$DB" -H "$KEY" --root "$R"
check_rc 1 "label --trusted of the whole root (files of no package are refused)" \
	"$VIGIL" label -r -q --trusted "$DB" --hmac-key "$KEY" --trusted-root "$R" "$R"
check "... /usr/bin/dash labeled, and appraised" "$VIGIL" appraise --hmac-key "$KEY" "$R/usr/bin/dash"
check "... dash's postinst labeled, and appraised" "$VIGIL" appraise --hmac-key "$KEY" "$R/var/lib/dpkg/info/dash.postinst"

# ---- the local repository: vg-hello 1.0 and 2.0, signed by a throwaway key ----
check "a throwaway OpenPGP key" vg_repo_key vgtest
REPO=$R/srv/vg-repo
vg_hello_deb "$REPO/pool" 1.0
vg_hello_deb "$REPO/pool" 2.0
check "the repository indexed and its InRelease signed" vg_repo_index "$REPO" vgtest
mkdir -p "$R/etc/apt/keyrings" "$R/etc/apt/sources.list.d.off"
cp "$T/vgtest.gpg" "$R/etc/apt/keyrings/vgtest.gpg"
# the archive's sources off: no network inside
mv "$R/etc/apt/sources.list" "$R/etc/apt/sources.list.d.off/" 2>/dev/null
mv "$R"/etc/apt/sources.list.d/* "$R/etc/apt/sources.list.d.off/" 2>/dev/null
echo "deb [signed-by=/etc/apt/keyrings/vgtest.gpg] file:/srv/vg-repo vgtest main" \
	>"$R/etc/apt/sources.list.d/vgtest.list"

# ---- vigil and its hook in the chroot (apt runs hooks inside DPkg::Chroot) ----
check "vigil runnable inside the root" vg_debroot_vigil "$R"
mkdir -p "$R/usr/libexec/vigil"
install -m 755 "$SRCDIR/apt/apt-trust" "$R/usr/libexec/vigil/apt-trust"
sed 's|@LIBEXECDIR@|/usr/libexec|g' "$SRCDIR/apt/50vigil.in" >"$R/etc/apt/apt.conf.d/50vigil"
cat >"$R/etc/vigil/apt-trust.conf" <<EOF
# t0114
hmac-key=/etc/vigil/key.hmac
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
keyring=/etc/apt/keyrings/vgtest.gpg
EOF
check "/proc and /dev in the root" vg_debroot_mounts "$R"
check "vigil --version inside the chroot" chroot "$R" vigil --version
in_root() { chroot "$R" "$@"; }

# ---- an enforcing vigild on the root's filesystem, from here to the end ----
# appraise func=BPRM_CHECK trust=archive: every program the chroot runs (apt,
# dpkg, the maintainer scripts, the hook, what they run) must carry a good
# label or be a file of a verified package at its path; vigild reads the
# database the hook writes (--trust-db, --trust-root: ROOT/usr/bin/x is
# /usr/bin/x) and the hook makes it reload through its control socket,
# which the chroot reaches as /run/vigild.ctl
. "$SRCDIR/tests/lib-vigild.sh"
trap '_rc=$?; vd_stop; (exit $_rc); vg_cleanup' EXIT
check "the test's own programs in the root (no package ships them) labeled" \
	"$VIGIL" label -r -q --hmac-key "$KEY" "$R/usr/local/lib/vigil-test" "$R/usr/bin/vigil" \
	"$R/usr/libexec/vigil"
echo "control=/run/vigild.ctl" >>"$R/etc/vigil/apt-trust.conf"
printf 'appraise func=BPRM_CHECK trust=archive\n' >vd.pol
export VD_CTL=$R/run/vigild.ctl
# (not --loader for the test's copied ld.so: every open of a loader's process is
# judged as an exec, the key file vigil reads included)
check "vigild enforcing (trust=archive, the root's database)" vd_start --policy vd.pol --watch "$R" \
	--hmac-key "$KEY" --no-tpm --trust-db "$DB" --trust-root "$R"
vdstat() { "$VIGIL" status --control "$VD_CTL" --json | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
check_eq "... mode enforce, the database's files loaded" "$(vdstat 'd["mode"], d["counters"]["trust_files"] > 1000')" \
	"enforce True"
check_rc 126 "... it enforces: an unlabeled program of no package in the root is denied" \
	sh -c "printf '#!/bin/sh\necho x\n' >'$R/usr/local/bin/stray' && chmod 755 '$R/usr/local/bin/stray' && chroot '$R' /usr/local/bin/stray"
check_eq "... audit: missing-hash" "$(vd_audit_reason "$R/usr/local/bin/stray" deny)" missing-hash
rm -f "$R/usr/local/bin/stray"
# the denials from here on: none while apt runs (the two above are the test's own)
ndeny() { grep -c '"action":"deny"' "$T/audit"; }
vigild_around_apt() { "$@"; }

check "apt-get update (the local repository only)" in_root apt-get update -q
cp "$DB" before.db

# ---- install 1.0 ----
check "apt-get install vg-hello=1.0" vigild_around_apt in_root apt-get install -y -q vg-hello=1.0
keep
cp "$T/last" install.log
check "... the Pre-Install-Pkgs hook ran (its output in apt's)" \
	grep -q "^vigil: /var/lib/vigil/trust.db: 1 packages, [0-9]* files recorded; 0 not verified" install.log
check_eq "... vg-hello 1.0 current in the database" \
	"$(sql "$DB" "SELECT version, state FROM packages WHERE name = 'vg-hello'")" "1.0|0"
check_eq "... the postinst ran the new program" "$(tail -1 "$R/var/log/vg-hello.log")" "vg-hello 1.0"
check "... /usr/bin/vg-hello labeled (Post-Invoke) and appraised" \
	"$VIGIL" appraise --hmac-key "$KEY" "$R/usr/bin/vg-hello"
check_eq "... the pending list cleared" "$(cat "$R/var/lib/vigil/apt-trust.pending")" ""

# ---- the upgrade to 2.0 ----
check "apt-get install vg-hello (the upgrade to 2.0)" vigild_around_apt in_root apt-get install -y -q vg-hello
keep
cp "$T/last" upgrade.log
check_eq "... the database: 2.0 current, 1.0 superseded" \
	"$(sql "$DB" "SELECT version, state FROM packages WHERE name = 'vg-hello' ORDER BY version" | tr '\n' ' ')" \
	"1.0|1 2.0|0 "
rm -rf x1 x2 && dpkg-deb -x "$REPO/pool/vg-hello_1.0_all.deb" x1 && dpkg-deb -x "$REPO/pool/vg-hello_2.0_all.deb" x2
for v in 1.0 2.0; do
	x=x${v%%.*}
	check_eq "... vg-hello $v: /usr/bin/vg-hello and the conffile have dpkg-deb -x's sha256" \
		"$(sql "$DB" "SELECT CAST(f.path AS TEXT), f.conffile, f.digest FROM files f JOIN packages p ON p.id = f.package
			WHERE p.name = 'vg-hello' AND p.version = '$v' AND f.conffile < 2 AND f.algo = 4 ORDER BY f.path" | tr '\n' ' ')" \
		"/etc/vg-hello.conf|1|$(sha256sum <"$x/etc/vg-hello.conf" | cut -d' ' -f1) /usr/bin/vg-hello|0|$(sha256sum <"$x/usr/bin/vg-hello" | cut -d' ' -f1) "
done
dpkg-deb -e "$REPO/pool/vg-hello_2.0_all.deb" c2
check_eq "... 2.0's maintainer scripts: info/ (checked) and tmp.ci/ (run by the unpack) with control.tar's sha256" \
	"$(sql "$DB" "SELECT CAST(f.path AS TEXT), f.conffile, f.digest FROM files f JOIN packages p ON p.id = f.package
		WHERE p.name = 'vg-hello' AND p.version = '2.0' AND f.conffile >= 2 AND f.algo = 4 ORDER BY f.path" | tr '\n' ' ')" \
	"/var/lib/dpkg/info/vg-hello.postinst|2|$(sha256sum <c2/postinst | cut -d' ' -f1) /var/lib/dpkg/info/vg-hello.preinst|2|$(sha256sum <c2/preinst | cut -d' ' -f1) /var/lib/dpkg/tmp.ci/preinst|3|$(sha256sum <c2/preinst | cut -d' ' -f1) "
check_eq "... the postinst ran the new program" "$(tail -1 "$R/var/log/vg-hello.log")" "vg-hello 2.0"
check_eq "... the preinst ran (from tmp.ci) as an upgrade" \
	"$(grep preinst "$R/var/log/vg-hello.log" | tail -1)" "vg-hello preinst 2.0 upgrade"
for f in /usr/bin/vg-hello /etc/vg-hello.conf /var/lib/dpkg/info/vg-hello.postinst /var/lib/dpkg/info/vg-hello.preinst; do
	check "... $f labeled and appraised" "$VIGIL" appraise --hmac-key "$KEY" "$R$f"
done
check_rc 1 "... 1.0's program is superseded: label --trusted refuses it" \
	"$VIGIL" label --trusted "$DB" --hmac-key "$KEY" --trusted-root x1 x1/usr/bin/vg-hello
keep
check "... as superseded-version" grep -q superseded-version "$T/last"
check "trust verify of the root after the upgrade: exit 0" "$VIGIL" trust verify "$DB" -H "$KEY" --root "$R"
check_eq "no denial while apt installed and upgraded (only the test's own stray program)" "$(ndeny)" 1
check "the window: the postinst ran the new, not yet labeled /usr/bin/vg-hello, allowed by the archive" \
	/usr/bin/python3 -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
a = [x for x in r if x["action"] == "allow" and x["path"].endswith("/usr/bin/vg-hello") and x.get("reason") == "trusted-archive"]
assert len(a) >= 2 and all(x.get("package") == "vg-hello" for x in a), a' "$T/audit"
check "... as were its maintainer scripts, from info/ and tmp.ci/" /usr/bin/python3 -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
p = {x["path"].split("/fs/root", 1)[1] for x in r if x["action"] == "allow" and x.get("reason") == "trusted-archive"}
assert "/var/lib/dpkg/info/vg-hello.postinst" in p and "/var/lib/dpkg/tmp.ci/preinst" in p, p' "$T/audit"
check "vigild counted them" test "$(vdstat 'd["counters"]["trusted_archive"]')" -ge 4
check "... and reloaded by the hook (start, then pre and post of each apt run)" \
	test "$(grep -c "trust database .*files" "$T/vigild.err")" -ge 5
# a binary of the package altered on disk afterwards: denied
cp "$R/usr/bin/vg-hello" vg-hello.good
printf '\necho owned\n' >>"$R/usr/bin/vg-hello"
check_rc 126 "the upgraded /usr/bin/vg-hello altered on disk: its execution is denied" chroot "$R" /usr/bin/vg-hello
check_eq "... the audit record says why: its content no longer has its label's hash" \
	"$(vd_audit_reason "$R/usr/bin/vg-hello" deny)" invalid-hash
cp vg-hello.good "$R/usr/bin/vg-hello"

# ---- a .deb altered after indexing: apt refuses it, and so does trust build ----
vg_hello_deb "$REPO/pool" 3.0
vg_repo_index "$REPO" vgtest
flip_last_byte "$REPO/pool/vg-hello_3.0_all.deb"
check "apt-get update" in_root apt-get update -q
check_rc 100 "apt-get install vg-hello=3.0 (its .deb altered): apt refuses" in_root apt-get install -y -q vg-hello=3.0
keep
check "... for the hash mismatch" grep -Eqi "hash sum mismatch|unexpected size|Hashes of expected file" "$T/last"
# (inside the root: apt's lists of a file: repository are links to its files)
check "trust build --deb of that .deb: written, nothing recorded for it" in_root vigil trust build \
	-o /tmp/t3.db -H /etc/vigil/key.hmac --keyring /etc/apt/keyrings/vgtest.gpg \
	--deb /srv/vg-repo/pool/vg-hello_3.0_all.deb
keep
check "... naming it, the chain broken" grep -q "vg-hello 3.0 all: /srv/vg-repo/pool/vg-hello_3.0_all.deb: sha256 .* differs from the signed index; nothing recorded" "$T/last"
check "... 1 not verified" grep -q ": 0 packages, 0 files recorded; 1 not verified" "$T/last"
check_eq "the database still has 2.0 current" \
	"$(sql "$DB" "SELECT version FROM packages WHERE name = 'vg-hello' AND state = 0")" "2.0"
rm "$REPO/pool/vg-hello_3.0_all.deb"
vg_repo_index "$REPO" vgtest

# ---- a repository signed by a key vigil was not given ----
check "another throwaway key" vg_repo_key other
O=$R/srv/other-repo
mkdir -p "$O/pool"
vg_hello_deb "$T/obuild" 1.0
b=$(mktemp -d "$T/.bye-XXXXXX") && dpkg-deb -R "$T/obuild/vg-hello_1.0_all.deb" "$b"
sed -i 's/^Package: vg-hello/Package: vg-bye/' "$b/DEBIAN/control"
mv "$b/usr/bin/vg-hello" "$b/usr/bin/vg-bye" && mv "$b/etc/vg-hello.conf" "$b/etc/vg-bye.conf"
echo /etc/vg-bye.conf >"$b/DEBIAN/conffiles"
sed -i 's|/usr/bin/vg-hello|/usr/bin/vg-bye|; s|vg-hello.log|vg-bye.log|' "$b/DEBIAN/postinst" "$b/DEBIAN/preinst"
dpkg-deb --root-owner-group -b "$b" "$O/pool/vg-bye_1.0_all.deb" >/dev/null
check "its repository indexed and signed" vg_repo_index "$O" other
cp "$T/other.gpg" "$R/etc/apt/keyrings/other.gpg"
echo "deb [signed-by=/etc/apt/keyrings/other.gpg] file:/srv/other-repo vgtest main" \
	>"$R/etc/apt/sources.list.d/other.list"
check "apt-get update (apt has the key)" in_root apt-get update -q
n0=$(ndeny)
check_rc 100 "apt-get install vg-bye: the hook lets apt proceed, vigild denies its scripts, dpkg fails" \
	vigild_around_apt in_root apt-get install -y -q vg-bye
keep
check "... the hook: the other repository's InRelease does not verify (chain broken)" \
	grep -q "other-repo.*InRelease: signature not verified by gpgv" "$T/last"
check "... the hook names vg-bye, not verified" grep -q "^vigil trust: vg-bye 1.0 all: .*nothing recorded" "$T/last"
check "... and warns that its files stay untrusted" grep -q "^vigil: apt-trust: WARNING: 1 package(s) NOT verified" "$T/last"
check_eq "... vg-bye is not in the database" "$(sql "$DB" "SELECT count(*) FROM packages WHERE name = 'vg-bye'")" 0
check "... dpkg could not run its preinst (denied: in no verified package)" \
	grep -q "vg-bye.*pre-installation script subprocess.*\|new vg-bye package pre-installation script" "$T/last"
check_eq "... vigild's audit: the preinst denied, missing-hash" \
	"$(vd_audit_reason "$R/var/lib/dpkg/tmp.ci/preinst" deny)" missing-hash
check "... so /usr/bin/vg-bye was never installed" test ! -e "$R/usr/bin/vg-bye"
check_eq "... the only new denial" "$(( $(ndeny) - n0 ))" 1

# ---- vigil trust verify beside debsums on the same root ----
printf 'x' >>"$R/usr/bin/vg-hello"
echo "greeting=local" >"$R/etc/vg-hello.conf"
echo "touch /tmp/owned" >>"$R/var/lib/dpkg/info/vg-hello.postinst"
check_rc 1 "trust verify: exit 1" "$VIGIL" trust verify "$DB" -H "$KEY" --root "$R"
keep
cp "$T/last" verify.txt
check "... modified: /usr/bin/vg-hello" grep -q "^modified: /usr/bin/vg-hello (vg-hello 2.0 all)" verify.txt
check "... modified: its postinst (dpkg has no MD5 for it)" \
	grep -q "^modified: /var/lib/dpkg/info/vg-hello.postinst (vg-hello 2.0 all)" verify.txt
check "... the conffile listed apart, changed" grep -q "^conffile: /etc/vg-hello.conf (vg-hello 2.0 all) changed;" verify.txt
check_eq "... exactly those: two modified, one conffile, nothing missing" \
	"$(grep -c '^modified: ' verify.txt) $(grep -c '^conffile: ' verify.txt) $(grep -c '^missing: ' verify.txt)" "2 1 0"
debsums -c --root="$R" vg-hello >ds.txt 2>&1
debsums -ce --root="$R" vg-hello >dsc.txt 2>&1
check_eq "debsums -c: only the binary" "$(sed 's|^.*/fs/root||' ds.txt | tr '\n' ' ')" "/usr/bin/vg-hello "
check_eq "debsums -ce: the conffile" "$(sed 's|^.*/fs/root||' dsc.txt | tr '\n' ' ')" "/etc/vg-hello.conf "
check_eq "the difference: the maintainer script, which only vigil checks" \
	"$(grep -c postinst ds.txt dsc.txt | cut -d: -f2 | tr '\n' ' ')" "0 0 "
