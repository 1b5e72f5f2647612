#!/usr/bin/env bash
# t0117: vigil trust build reads every repository apt is configured with,
# each with its own key, in a bookworm root (mmdebstrap,
# tests/lib-debroot.sh) where vigil runs as the apt hook does (chroot):
# a local mirror of the root's own .debs (a deb822 source whose Signed-By
# is an ASCII-armored key) and a second repository with another key (a
# one-line source, signed-by= a binary keyring); apt-get indextargets
# names their lists, each source's Signed-By its keys. --download fetches
# every installed version the lists have in ONE apt-get call, into a
# directory apt's _apt user owns (no "Download is performed unsandboxed as
# root"), and names what no list has: an installed version the archive
# superseded, with the remedy, counted in the summary and the JSON. A
# source signed by a key its Signed-By does not name is refused with
# gpgv's reason. An older, validly signed InRelease put back in apt's
# lists (a replay) is refused, its Date older than the one the database
# recorded for the source, unless --allow-older. A repository tree
# (dists/CODENAME/InRelease beside main/binary-amd64/Packages) is read
# with --lists. Cost: the root's extraction, two apt-get update of
# file: repositories; no network.
. "$SRCDIR/tests/lib.sh"
vg_init
. "$SRCDIR/tests/lib-debroot.sh"
export VIGIL_CONFIG=/dev/null DEBIAN_FRONTEND=noninteractive
keep() { cp "$T/.out" "$T/last"; }
jpy() { /usr/bin/python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }

if ! vg_debroot_tar; then
	echo "1..0 # SKIP no Debian root: mmdebstrap could not build one (network?)"
	exit 0
fi
mount -o remount,size=1500m "$T"
R=$T/root
check "the bookworm root extracted" vg_debroot "$R"
check "vigil runnable inside the root" vg_debroot_vigil "$R"
check "/proc and /dev in the root" vg_debroot_mounts "$R"
mkdir -p "$R/etc/vigil" "$R/var/lib/vigil" "$R/etc/apt/keyrings"
head -c 32 /dev/urandom >"$R/etc/vigil/key.hmac"
in_root() { chroot "$R" env PATH=/usr/local/bin:/usr/bin:/bin "$@"; }
# apt-get as the root runs it, each call logged (vigil runs apt-get by PATH)
cat >"$R/usr/local/bin/apt-get" <<'EOF'
#!/bin/sh
echo "$*" >>/var/log/apt-get.calls
exec /usr/bin/apt-get "$@"
EOF
chmod 755 "$R/usr/local/bin/apt-get"

# ---- two repositories, two keys ----
for k in mirror vgtest other; do
	check "a throwaway OpenPGP key: $k" vg_repo_key $k
done
GNUPGHOME=$T/gnupg-mirror gpg --batch --quiet --armor --export >"$R/etc/apt/keyrings/mirror.asc"
cp "$T/vgtest.gpg" "$R/etc/apt/keyrings/vgtest.gpg"
# the mirror: the root's own .debs, in a tree of its own
M=$R/srv/mirror
mkdir -p "$M/pool"
cp "$R"/var/cache/apt/archives/*.deb "$M/pool/"
ndebs=$(ls "$M"/pool/*.deb | wc -l)
check "the mirror indexed and signed (key mirror)" vg_repo_index "$M" mirror
# the second repository: vg-hello 1.0 (to be installed) and 2.0 (later)
V=$R/srv/vg-repo
vg_hello_deb "$T/hello" 1.0
vg_hello_deb "$T/hello" 2.0
mkdir -p "$V/pool" && cp "$T/hello/vg-hello_1.0_all.deb" "$V/pool/"
check "the second repository indexed and signed (key vgtest)" vg_repo_index "$V" vgtest
# the archive off (no network): the two repositories only
mkdir -p "$R/etc/apt/sources.list.d.off"
mv "$R/etc/apt/sources.list" "$R/etc/apt/sources.list.d.off/" 2>/dev/null
cat >"$R/etc/apt/sources.list.d/mirror.sources" <<'EOF'
# the root's own packages
Types: deb
URIs: file:/srv/mirror
Suites: vgtest
Components: main
Signed-By: /etc/apt/keyrings/mirror.asc
EOF
echo "deb [signed-by=/etc/apt/keyrings/vgtest.gpg] file:/srv/vg-repo vgtest main" \
	>"$R/etc/apt/sources.list.d/vgtest.list"
check "apt-get update (the two repositories)" in_root apt-get update -q
check "apt-get install vg-hello=1.0" in_root apt-get install -y -q vg-hello=1.0
# 2.0 in the second repository: the installed 1.0 is superseded there
mv "$V/pool/vg-hello_1.0_all.deb" "$T/"
cp "$T/hello/vg-hello_2.0_all.deb" "$V/pool/"
vg_repo_index "$V" vgtest
check "apt-get update (vg-hello 2.0 listed, 1.0 no longer)" in_root apt-get update -q
: >"$R/var/log/apt-get.calls"

# ---- build: apt's repositories, --download ----
check "trust build --download in the root (no --lists, no --keyring: apt's repositories)" \
	in_root vigil trust build -o /var/lib/vigil/trust.db -H /etc/vigil/key.hmac --download --json
keep
cp "$T/last" dl.out
sed -n '/^{/,$p' dl.out >dl.json
check "... its JSON validates (trust-build)" /usr/bin/python3 "$SRCDIR/tests/helpers/json_validate.py" "$SRCDIR/docs/schemas/trust-build.schema.json" dl.json
check_eq "... both InReleases verified, each with its sources entry" \
	"$(jpy dl.json '" ".join(sorted(r["source"].split("/")[-1] + ":" + str(r["verified"]) for r in d["releases"]))')" \
	"mirror.sources:1:True vgtest.list:1:True"
check_eq "... every package of the mirror recorded" "$(jpy dl.json 'd["recorded"]')" "$ndebs"
check_eq "... one apt-get download call" "$(grep -c '^download ' "$R/var/log/apt-get.calls")" 1
check_eq "... asking for each version a list has ($ndebs), not vg-hello 1.0" \
	"$(grep '^download ' "$R/var/log/apt-get.calls" | wc -w) $(grep -c 'vg-hello' "$R/var/log/apt-get.calls")" \
	"$((ndebs + 2)) 0"
check_eq "... JSON: downloaded" "$(jpy dl.json 'd["downloaded"]')" "$ndebs"
check "... no 'unsandboxed' warning from apt" sh -c "! grep -qi 'unsandboxed' dl.out"
check "... vg-hello 1.0 named: superseded, the remedy" \
	grep -q "vg-hello 1.0 all: superseded: the archive lists 2.0; upgrade it (apt-get install --only-upgrade vg-hello), then build again; nothing recorded" dl.out
check_eq "... counted, in the JSON with the newer version" \
	"$(jpy dl.json 'str(d["installed_superseded"]) + " " + " ".join(f["package"] + ":" + f["reason"] + ":" + f["newer"] for f in d["failed"])')" \
	"1 vg-hello:superseded:2.0"
check "the same, text: the summary counts it" \
	in_root vigil trust build -o /tmp/t.db -H /etc/vigil/key.hmac --download
keep
check "... (1 installed versions superseded in the archive: upgrade them)" \
	grep -q "files recorded; 1 not verified (1 installed versions superseded in the archive: upgrade them), 0 without a .deb" "$T/last"
check "... its download directory removed" test -z "$(ls -A "$R/tmp" | grep vigil-trust-debs)"
check "trust verify of the root against it: exit 0 (vg-hello not in the database)" \
	in_root vigil trust verify /var/lib/vigil/trust.db -H /etc/vigil/key.hmac

# ---- a source whose Signed-By names another key ----
O=$R/srv/other
mkdir -p "$O/pool" && vg_hello_deb "$O/pool" 9.0
vg_repo_index "$O" other
echo "deb [signed-by=/etc/apt/keyrings/vgtest.gpg] file:/srv/other vgtest main" \
	>"$R/etc/apt/sources.list.d/other.list"
# (apt itself refuses it: its lists are put where apt keeps them, as a mirror would)
for f in InRelease main/binary-amd64/Packages; do
	l=$R/var/lib/apt/lists/_srv_other_dists_vgtest_$(echo "$f" | tr / _)
	rm -f "$l" && cp "$O/dists/vgtest/$f" "$l"
done
check "a third source, signed by a key its Signed-By does not name: build still writes" \
	in_root vigil trust build -o /tmp/t3.db -H /etc/vigil/key.hmac
keep
check "... that InRelease refused with gpgv's reason" \
	grep -q "_srv_other_dists_vgtest_InRelease: signature not verified by gpgv: Can't check signature: No public key (EDDSA key" "$T/last"
rm "$R/etc/apt/sources.list.d/other.list" "$R"/var/lib/apt/lists/_srv_other_*
# the same repository with its own key as a Signed-By key block (deb822, continuation lines)
{
	printf 'Types: deb\nURIs: file:/srv/other\nSuites: vgtest\nComponents: main\nSigned-By:\n'
	GNUPGHOME=$T/gnupg-other gpg --batch --quiet --armor --export | sed 's/^$/./; s/^/ /'
} >"$R/etc/apt/sources.list.d/inline.sources"
check "apt-get update (a source whose Signed-By is a key block)" in_root apt-get update -q
check "trust build: that source's InRelease verified with its key block" \
	in_root vigil trust build -o /tmp/t5.db -H /etc/vigil/key.hmac --json
keep
check_eq "... named by its sources entry" \
	"$(sed -n '/^{/,$p' "$T/last" | /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); print([r["verified"] for r in d["releases"] if r.get("source", "").endswith("inline.sources:1")])')" \
	"[True]"
rm "$R/etc/apt/sources.list.d/inline.sources"
check "apt-get update (back to the two repositories)" in_root apt-get update -q

# ---- a replayed older InRelease ----
L=$R/var/lib/apt/lists
# (apt's lists of a file: repository may be links into it, absolute in the root: never followed here)
cp "$V/dists/vgtest/InRelease" old.InRelease
sleep 1.1
vg_hello_deb "$V/pool" 2.1
vg_repo_index "$V" vgtest
check "apt-get update (a newer InRelease of the second repository)" in_root apt-get update -q
check "trust build: records its Date" in_root vigil trust build -o /var/lib/vigil/trust.db -H /etc/vigil/key.hmac
rm -f "$L/_srv_vg-repo_dists_vgtest_InRelease" && cp old.InRelease "$L/_srv_vg-repo_dists_vgtest_InRelease"
check "the older InRelease replayed into apt's lists: build writes (the mirror still verifies)" \
	in_root vigil trust build -o /var/lib/vigil/trust.db -H /etc/vigil/key.hmac
keep
check "... the replay refused, its Date and the recorded one named" \
	grep -Eq "_srv_vg-repo_dists_vgtest_InRelease: Date .* is older than .*, the Date of the newest InRelease the database recorded for vigil-test vgtest \(a replayed older InRelease\?\); its lists are not used \(--allow-older accepts it\)" "$T/last"
check "... counted" grep -q "; 1 InReleases older than recorded, refused$" "$T/last"
check "--allow-older: accepted, and said" \
	in_root vigil trust build -o /var/lib/vigil/trust.db -H /etc/vigil/key.hmac --allow-older
keep
check "... said" grep -q "_srv_vg-repo_dists_vgtest_InRelease: Date .* is older than .*; accepted (--allow-older)" "$T/last"
check "... nothing refused" sh -c "! grep -q 'InReleases older than recorded' '$T/last'"

# ---- a repository tree: --lists REPO, and --lists REPO/dists/CODENAME ----
check "trust build --lists of a repository tree (dists/vgtest/InRelease, main/binary-amd64/Packages)" \
	"$VIGIL" trust build -o tree.db -H "$R/etc/vigil/key.hmac" --lists "$M" --keyring "$T/mirror.gpg" \
	--debs "$M/pool" --all-debs --json
keep
check_eq "... its InRelease verified, its Packages list used, every .deb recorded" \
	"$(sed -n '/^{/,$p' "$T/last" | /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); print(len(d["releases"]), d["releases"][0]["verified"], [l["listed_as"] for l in d["lists"]], d["recorded"])')" \
	"1 True ['main/binary-amd64/Packages'] $ndebs"
xz -k "$M/dists/vgtest/main/binary-amd64/Packages" && rm "$M/dists/vgtest/main/binary-amd64/Packages"
check "... --lists its dists/vgtest, the list compressed (Packages.xz beside InRelease)" \
	"$VIGIL" trust build -o tree2.db -H "$R/etc/vigil/key.hmac" --lists "$M/dists/vgtest" \
	--keyring "$T/mirror.gpg" --debs "$M/pool" --all-debs
keep
check "... every .deb recorded" grep -q "tree2.db: $ndebs packages, [0-9]* files recorded; 0 not verified" "$T/last"
