#!/usr/bin/env bash
# t0048: vigil scan with the archive as its baseline, beside AIDE, in a
# bookworm root (mmdebstrap, tests/lib-debroot.sh) with vigil's apt hook
# (apt/apt-trust, checking each repository with its own Signed-By key):
# `scan.baseline = trust /` in vigil.conf makes every file a current
# package of the trust database ships judged against what the archive
# says (content, type, link target, mode, owner, group), so only what no
# package owns is in the scan's own database. The same steps for both
# tools: record, `apt-get upgrade` of two packages from a local
# repository (the hook records the new versions), check: vigil reports 0
# changes (no --update), AIDE every upgraded file; one upgraded binary
# altered: both report it, vigil against the archive with both digests
# and the package. The report says which baseline judged each entry: a
# local file added and an edited conffile are the scan database's (and
# --update accepts them), a setuid bit and a removed packaged file the
# archive's. Side by side in the TAP comments. Cost: the root's
# extraction, aide on /usr and /etc of the root twice or thrice; no
# network. Skipped without aide or the root.
. "$SRCDIR/tests/lib.sh"
vg_init
. "$SRCDIR/tests/lib-debroot.sh"
export VIGIL_CONFIG=/dev/null DEBIAN_FRONTEND=noninteractive
keep() { cp "$T/.out" "$T/last"; }

if ! command -v aide >/dev/null; then
	echo "1..0 # SKIP needs aide (scripts/deps.sh)"
	trap - EXIT
	exit 0
fi
if ! vg_debroot_tar; then
	echo "1..0 # SKIP no Debian root: mmdebstrap could not build one (network?)"
	exit 0
fi
mount -o remount,size=1500m "$T"
R=$T/root
check "the bookworm root extracted" vg_debroot "$R"
check "vigil runnable inside the root" vg_debroot_vigil "$R"
check "/proc and /dev in the root" vg_debroot_mounts "$R"
in_root() { chroot "$R" env PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin VIGIL_CONFIG=/etc/vigil/vigil.conf "$@"; }
mkdir -p "$R/etc/vigil" "$R/var/lib/vigil" "$R/etc/apt/keyrings" "$R/usr/libexec/vigil"
head -c 32 /dev/urandom >"$R/etc/vigil/key.hmac"
cat >"$R/etc/vigil/vigil.conf" <<'EOF'
key.hmac = /etc/vigil/key.hmac
trust.db = /var/lib/vigil/trust.db
# every packaged file: the archive's; the rest: the scan's own database
scan.baseline = trust /
EOF

# ---- the trust database of the root's own packages, then the hook ----
check "trust build of the root's lists and .debs" "$VIGIL" trust build -o "$R/var/lib/vigil/trust.db" \
	-H "$R/etc/vigil/key.hmac" --lists "$R/var/lib/apt/lists" --debs "$R/var/cache/apt/archives" --all-debs
install -m 755 "$SRCDIR/apt/apt-trust" "$R/usr/libexec/vigil/apt-trust"
sed 's|@LIBEXECDIR@|/usr/libexec|g' "$SRCDIR/apt/50vigil.in" >"$R/etc/apt/apt.conf.d/50vigil"
# no keyring= line: each repository apt is configured with, with its own Signed-By
echo "hmac-key=/etc/vigil/key.hmac" >"$R/etc/vigil/apt-trust.conf"

# ---- a local repository: vg-hello and vg-world 1.0, later 2.0 ----
check "a throwaway OpenPGP key" vg_repo_key vgtest
cp "$T/vgtest.gpg" "$R/etc/apt/keyrings/vgtest.gpg"
V=$R/srv/vg-repo
vg_world_deb() {	# vg-hello under another name
	local v=$2 b
	b=$(mktemp -d "$T/.w-XXXXXX")
	vg_hello_deb "$b/in" "$v" && dpkg-deb -R "$b/in/vg-hello_${v}_all.deb" "$b/x"
	sed -i 's/^Package: vg-hello/Package: vg-world/' "$b/x/DEBIAN/control"
	mv "$b/x/usr/bin/vg-hello" "$b/x/usr/bin/vg-world" && mv "$b/x/etc/vg-hello.conf" "$b/x/etc/vg-world.conf"
	echo /etc/vg-world.conf >"$b/x/DEBIAN/conffiles"
	sed -i 's|/usr/bin/vg-hello|/usr/bin/vg-world|; s|vg-hello.log|vg-world.log|' "$b/x/DEBIAN/postinst" "$b/x/DEBIAN/preinst"
	mkdir -p "$1" && dpkg-deb --root-owner-group -Zgzip -b "$b/x" "$1/vg-world_${v}_all.deb" >/dev/null
	rm -rf "$b"
}
vg_hello_deb "$V/pool" 1.0 && vg_world_deb "$V/pool" 1.0
check "the repository indexed and signed" vg_repo_index "$V" vgtest
mkdir -p "$R/etc/apt/sources.list.d.off"
mv "$R/etc/apt/sources.list" "$R/etc/apt/sources.list.d.off/" 2>/dev/null
echo "deb [signed-by=/etc/apt/keyrings/vgtest.gpg] file:/srv/vg-repo vgtest main" \
	>"$R/etc/apt/sources.list.d/vgtest.list"
check "apt-get update" in_root apt-get update -q
check "apt-get install vg-hello=1.0 vg-world=1.0 (the hook records them)" \
	in_root apt-get install -y -q vg-hello=1.0 vg-world=1.0
keep
check "... the hook verified both, with the repository's own key" \
	grep -q "^vigil: /var/lib/vigil/trust.db: 2 packages, [0-9]* files recorded; 0 not verified" "$T/last"

# ---- record: vigil scan (the archive's baseline) and AIDE, the same trees ----
check "vigil scan --init /usr /etc (inside the root)" in_root vigil scan --init -o /var/lib/vigil/scan.db /usr /etc
keep
nleft=$(sed -n 's/^\([0-9]*\) packaged files left to the archive.*/\1/p' "$T/last")
check "... the packaged files left to the archive ($nleft), not recorded" test "${nleft:-0}" -gt 3000
cat >aide.conf <<EOF
database_in=file:$T/aide.db
database_out=file:$T/aide.db.new
report_url=stdout
$R/usr p+i+n+u+g+s+m+c+sha256+xattrs+ftype+l
$R/etc p+i+n+u+g+s+m+c+sha256+xattrs+ftype+l
EOF
check "aide --init on the same trees" aide --init -c aide.conf
mv aide.db.new aide.db
check "vigil scan --check before anything: exit 0" in_root vigil scan --check /var/lib/vigil/scan.db
# AIDE's changed entries, files only (its directories' times move with them)
aide_changed() { aide --check -c aide.conf 2>&1 | sed -n "s|^f[^:]*: $R||p" | sort -u; }
vigil_changed() { sed -n 's/^\(changed\|removed\|added\): \([^ ]*\).*/\1 \2/p' "$1"; }

# ---- apt-get upgrade of the two packages ----
vg_hello_deb "$V/pool" 2.0 && vg_world_deb "$V/pool" 2.0
vg_repo_index "$V" vgtest
check "apt-get update (2.0 listed)" in_root apt-get update -q
check "apt-get upgrade: vg-hello and vg-world 1.0 -> 2.0, the hook records them" in_root apt-get upgrade -y -q
keep
check "... both upgraded" test "$(in_root dpkg-query -W -f '${Version} ' vg-hello vg-world)" = "2.0 2.0 "
check "... recorded by the hook" grep -q "^vigil: /var/lib/vigil/trust.db: 2 packages, [0-9]* files recorded; 0 not verified" "$T/last"
in_root vigil scan --check /var/lib/vigil/scan.db >scan-upgrade.txt 2>&1
rc=$?
check_eq "vigil scan --check after the upgrade, no --update: exit 0" "$rc" 0
check "... 0 added, 0 removed, 0 changed" grep -q " entries checked: 0 added, 0 removed, 0 changed; [0-9]* of them judged by the archive (/var/lib/vigil/trust.db)$" scan-upgrade.txt
aide_changed >aide-upgrade.txt
check "AIDE after the upgrade: the upgraded program and conffile of each package changed" \
	sh -c "grep -qx '/usr/bin/vg-hello' aide-upgrade.txt && grep -qx '/usr/bin/vg-world' aide-upgrade.txt && grep -qx '/etc/vg-hello.conf' aide-upgrade.txt"

# ---- one upgraded program altered afterwards ----
printf '\necho owned\n' >>"$R/usr/bin/vg-hello"
check_rc 1 "vigil scan --check after /usr/bin/vg-hello is altered: exit 1" in_root vigil scan --check /var/lib/vigil/scan.db
keep
cp "$T/last" scan-altered.txt
check "... reported, judged by the archive, with the package" \
	grep -qx "changed: /usr/bin/vg-hello (content, size) \[archive: vg-hello 2.0 all\]" scan-altered.txt
dpkg-deb --fsys-tarfile "$V/pool/vg-hello_2.0_all.deb" | tar -xO ./usr/bin/vg-hello >vg-hello.2.0
check "... the archive's digest old, the disk's new" \
	grep -qx "  content: sha256:$(sha256sum <vg-hello.2.0 | cut -d' ' -f1) -> sha256:$(sha256sum <"$R/usr/bin/vg-hello" | cut -d' ' -f1)" scan-altered.txt
check_eq "... nothing else" "$(vigil_changed scan-altered.txt)" "changed /usr/bin/vg-hello"
aide_changed >aide-altered.txt
check "AIDE: reports it too" grep -qx "/usr/bin/vg-hello" aide-altered.txt
# side by side: what each reports at each step (AIDE: its changed files; vigil: every change)
printf '# %-28s | %-62s | %s\n' "step" "AIDE 0.18 --check" "vigil scan --check (scan.baseline = trust /)"
printf '# %-28s | %-62s | %s\n' "apt-get upgrade of 2 packages" \
	"$(wc -l <aide-upgrade.txt) changed: $(paste -sd' ' aide-upgrade.txt)" \
	"$(sed -n 's/^\([0-9]* entries checked: [^;]*\);.*/\1/p' scan-upgrade.txt)"
printf '# %-28s | %-62s | %s\n' "then vg-hello altered" \
	"$(wc -l <aide-altered.txt) changed: $(paste -sd' ' aide-altered.txt)" \
	"$(grep '^changed: ' scan-altered.txt | paste -sd' ')"
cp vg-hello.2.0 "$R/usr/bin/vg-hello"

# ---- which baseline judged what ----
chmod 4755 "$R/usr/bin/vg-world"
mv "$R/usr/bin/rgrep" "$T/rgrep.saved"
echo local >"$R/usr/local/bin/mine" && chmod 755 "$R/usr/local/bin/mine"
echo "greeting=local" >"$R/etc/vg-hello.conf"
check_rc 1 "a setuid bit, a packaged file removed, a local file, an edited conffile: exit 1" \
	in_root vigil scan --check /var/lib/vigil/scan.db --json
keep
sed -n '/^{/p' "$T/last" >mix.json
check "... its JSON validates (scan-check)" /usr/bin/python3 "$SRCDIR/tests/helpers/json_validate.py" --lines "$SRCDIR/docs/schemas/scan-check.schema.json" mix.json
check_eq "... each with the baseline that judged it (the conffile's changes since --init: the upgrade's and the hook's label too)" \
	"$(/usr/bin/python3 -c 'import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if "file" in d:
        m = d.get("diff", {}).get("mode")
        print(" ".join(x for x in (d["change"], d["file"], d["baseline"], d.get("package"), ",".join(d.get("what", [])),
                                   m and m["old"] + ">" + m["new"]) if x))' mix.json | sort | tr '\n' ';')" \
	"added /usr/local/bin/mine scan;changed /etc/vg-hello.conf scan content,size,mtime,ctime,inode,xattrs;changed /usr/bin/vg-world archive vg-world 2.0 all mode 0755>4755;removed /usr/bin/rgrep archive grep $(in_root dpkg-query -W -f '${Version}' grep) amd64;"
chmod 755 "$R/usr/bin/vg-world"
mv "$T/rgrep.saved" "$R/usr/bin/rgrep"
check_rc 1 "--update: the scan database accepts the local file and the conffile" \
	in_root vigil scan --update /var/lib/vigil/scan.db -q
check "vigil scan --check: clean again (exit 0)" in_root vigil scan --check /var/lib/vigil/scan.db

# ---- vigil-scan.service's ExecStartPre: the trust database follows what the hook did not see ----
vg_world_deb "$V/pool" 2.1
vg_repo_index "$V" vgtest
check "apt-get update (vg-world 2.1 listed)" in_root apt-get update -q
check "vg-world 2.1's .deb in apt's cache" cp "$V/pool/vg-world_2.1_all.deb" "$R/var/cache/apt/archives/"
check "dpkg -i of it: installed around apt and its hook" in_root dpkg -i /var/cache/apt/archives/vg-world_2.1_all.deb
check_rc 1 "vigil scan --check: vg-world's files are not 2.0's" in_root vigil scan --check /var/lib/vigil/scan.db
keep
check "... /usr/bin/vg-world, against the archive's 2.0" \
	grep -qx "changed: /usr/bin/vg-world (content) \[archive: vg-world 2.0 all\]" "$T/last"
check "apt-trust refresh (vigil-scan.service's ExecStartPre): exit 0" \
	in_root /usr/libexec/vigil/apt-trust refresh
keep
check_eq "... vg-world 2.1 recorded from apt's cache, current; 2.0 superseded" \
	"$(/usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
print(" ".join(v + ":" + str(s) for v, s in c.execute("SELECT version, state FROM packages WHERE name = ? ORDER BY version", ("vg-world",))))' "$R/var/lib/vigil/trust.db")" \
	"1.0:1 2.0:1 2.1:0"
check "vigil scan --check: clean (exit 0)" in_root vigil scan --check /var/lib/vigil/scan.db
