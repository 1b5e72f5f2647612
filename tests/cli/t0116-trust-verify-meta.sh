#!/usr/bin/env bash
# t0116: vigil trust verify judges a file's permission bits, owner and
# group as dpkg gives them, and --unpackaged knows dpkg's standard
# mechanisms, in a bookworm root (mmdebstrap, tests/lib-debroot.sh)
# whose own lists and .debs make the database. A setuid bit, an owner
# change and a mode change are each reported with the package's value and
# the disk's (text and --json); a statoverride made by dpkg-statoverride
# in the root is what is expected then, and a change from it is reported;
# the alternatives' links (update-alternatives, the root's own and one
# added) and a file diverted by dpkg-divert are not unpackaged, a link
# re-pointed outside its alternative's choices is, with the reason. A
# database of format 2 (an older vigil's) is still read: content judged,
# owners said not recorded. Cost: the root's extraction (a few seconds);
# skipped without it.
. "$SRCDIR/tests/lib.sh"
vg_init
. "$SRCDIR/tests/lib-debroot.sh"
export VIGIL_CONFIG=/dev/null
keep() { cp "$T/.out" "$T/last"; }
jpy() { /usr/bin/python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }

if ! vg_debroot_tar; then
	echo "1..0 # SKIP no Debian root: mmdebstrap could not build one (network?)"
	exit 0
fi
mount -o remount,size=1g "$T"
R=$T/root
check "the bookworm root extracted" vg_debroot "$R"
head -c 32 /dev/urandom >key
check "trust build of the root's lists and .debs" "$VIGIL" trust build -o t.db -H key \
	--lists "$R/var/lib/apt/lists" --debs "$R/var/cache/apt/archives" --all-debs
check "verify --unpackaged of the root as installed: exit 0" "$VIGIL" trust verify t.db -H key --root "$R" --unpackaged
keep
check "... nothing modified, nothing unpackaged" grep -q " ok, 0 modified, 0 missing, .* 0 unpackaged, " "$T/last"
nalt=$(ls "$R/var/lib/dpkg/alternatives" | wc -l)
check "... the root's alternatives' links counted apart (awk, pager, which: $nalt alternatives)" \
	grep -Eq ", [1-9][0-9]* alternatives, 0 diverted files$" "$T/last"

# ---- metadata ----
chmod 4755 "$R/usr/bin/dash"			# a setuid bit: the classic backdoor
chown 65534:65534 "$R/usr/bin/ls"		# an owner and a group
chmod 0700 "$R/usr/bin/cat"			# a mode
check_rc 1 "a setuid bit, an owner and a mode changed: exit 1" "$VIGIL" trust verify t.db -H key --root "$R"
keep
cp "$T/last" meta.txt
check "... the setuid bit, old and new" grep -qx "modified: /bin/dash (dash [^ ]* amd64) mode 0755 -> 4755" meta.txt
check "... the owner and group, old and new, with their names in the root" \
	grep -qx "modified: /bin/ls (coreutils [^ ]* amd64) owner 0 (root) -> 65534 (nobody); group 0 (root) -> 65534 (nogroup)" meta.txt
check "... the mode" grep -qx "modified: /bin/cat (coreutils [^ ]* amd64) mode 0755 -> 0700" meta.txt
check_eq "... those three, nothing else" "$(grep -c '^modified: ' meta.txt) $(grep -c '^missing: ' meta.txt)" "3 0"
check_rc 1 "--json" "$VIGIL" trust verify t.db -H key --root "$R" --json
cp "$T/.out" meta.json
check "... validates (trust-verify)" /usr/bin/python3 "$SRCDIR/tests/helpers/json_validate.py" "$SRCDIR/docs/schemas/trust-verify.schema.json" meta.json
check_eq "... each difference with its old and new value" \
	"$(jpy meta.json '"; ".join(m["file"] + " " + ",".join(m["changed"]) + " " + " ".join(k + "=" + str(m[k]["old"]) + ">" + str(m[k]["new"]) for k in ("mode", "owner", "group") if k in m) for m in d["modified"])')" \
	"/bin/cat mode mode=0755>0700; /bin/dash mode mode=0755>4755; /bin/ls owner,group owner={'id': 0, 'name': 'root'}>{'id': 65534, 'name': 'nobody'} group={'id': 0, 'name': 'root'}>{'id': 65534, 'name': 'nogroup'}"
chmod 0755 "$R/usr/bin/dash" "$R/usr/bin/cat"
chown 0:0 "$R/usr/bin/ls"

# ---- dpkg-statoverride: what dpkg gives the file then ----
check "/proc and /dev in the root" vg_debroot_mounts "$R"
check "dpkg-statoverride --update --add nobody nogroup 4750 /bin/dash (in the root)" \
	chroot "$R" dpkg-statoverride --update --add nobody nogroup 4750 /bin/dash
check "verify: the statoverride is what is expected (exit 0)" "$VIGIL" trust verify t.db -H key --root "$R"
chmod 0755 "$R/usr/bin/dash"
check_rc 1 "the file changed from its statoverride: exit 1" "$VIGIL" trust verify t.db -H key --root "$R"
keep
check "... said against the statoverride" \
	grep -qx "modified: /bin/dash (dash [^ ]* amd64) mode 4750 (statoverride) -> 0755" "$T/last"
chroot "$R" dpkg-statoverride --remove /bin/dash >/dev/null 2>&1
chown 0:0 "$R/usr/bin/dash"
echo "nobody nogroup 4755" >"$R/var/lib/dpkg/statoverride"
check_rc 2 "a malformed statoverride file: exit 2, naming it" "$VIGIL" trust verify t.db -H key --root "$R"
keep
check "... and the line" grep -q "/var/lib/dpkg/statoverride: line 1 is not \"USER GROUP MODE PATH\"" "$T/last"
: >"$R/var/lib/dpkg/statoverride"
check "verify: back to exit 0" "$VIGIL" trust verify t.db -H key --root "$R"

# ---- --unpackaged: alternatives and diversions ----
check "update-alternatives --install of a new alternative (in the root)" \
	chroot "$R" update-alternatives --quiet --install /usr/bin/vg-shell vg-shell /bin/dash 10
check "dpkg-divert --rename of /bin/sed (in the root)" \
	chroot "$R" dpkg-divert --quiet --local --rename --divert /bin/sed.distrib --add /bin/sed
printf '#!/bin/sh\nexec /bin/sed.distrib "$@"\n' >"$R/usr/bin/sed" && chmod 755 "$R/usr/bin/sed"
check "verify --unpackaged: exit 0" "$VIGIL" trust verify t.db -H key --root "$R" --unpackaged
keep
cp "$T/last" mech.txt
check "... the new alternative's link not unpackaged" sh -c "! grep -q vg-shell mech.txt"
check "... nor the diverted sed (checked where it went)" sh -c "! grep -q '^unpackaged:' mech.txt"
check "... sed listed as diverted, unchanged there" \
	grep -q "^diverted: /bin/sed (sed [^ ]* amd64) to /bin/sed.distrib by : ok; " mech.txt
check "... counted: one more alternative, one diverted file" \
	grep -Eq ", $((nalt + 1)) alternatives, 1 diverted files$" mech.txt
ln -sfn /tmp/evil "$R/etc/alternatives/awk"
check_rc 1 "an alternative re-pointed outside its choices: exit 1" "$VIGIL" trust verify t.db -H key --root "$R" --unpackaged
keep
check "... its link reported, with the reason" \
	grep -qx "unpackaged: /usr/bin/awk (alternative awk: /etc/alternatives/awk points to /tmp/evil, none of its registered choices)" "$T/last"
ln -sfn /usr/bin/mawk "$R/etc/alternatives/awk"
rm "$R/usr/bin/which" && cp "$R/usr/bin/dash" "$R/usr/bin/which"
check_rc 1 "an alternative's link replaced by a file: exit 1" "$VIGIL" trust verify t.db -H key --root "$R" --unpackaged
keep
check "... reported" grep -qx "unpackaged: /usr/bin/which (the link of alternative which, but not a symbolic link)" "$T/last"
rm "$R/usr/bin/which" && ln -s /etc/alternatives/which "$R/usr/bin/which"

# ---- format 2, an older vigil's database: read, owners not compared ----
/usr/bin/python3 - t.db key v2.db <<'PY'
# the format 2 database of the same rows (docs/trust.md), its MAC computed here
import hashlib, hmac, sqlite3, struct, sys, shutil
src, keyfile, dst = sys.argv[1:]
shutil.copy(src, dst)
c = sqlite3.connect(dst)
c.executescript("""
ALTER TABLE files RENAME TO f3;
CREATE TABLE files(path BLOB, algo INTEGER, digest BLOB, package INTEGER, conffile INTEGER, size INTEGER, mode INTEGER, target BLOB, PRIMARY KEY(path, algo, digest, package)) WITHOUT ROWID;
INSERT INTO files SELECT path, algo, digest, package, conffile, size, mode, target FROM f3;
DROP TABLE f3; DROP TABLE sources; DROP TABLE IF EXISTS boot;
""")
c.execute("UPDATE meta SET value = x'02' WHERE key = 'format'")
c.commit()
c.execute("VACUUM")
mk = hmac.new(open(keyfile, "rb").read(), b"vigil trust database v1", hashlib.sha256).digest()
m = hmac.new(mk, b"vigil-trust", hashlib.sha256)
def val(v):
    if v is None: return b"\x05"
    if isinstance(v, int): return b"\x01" + struct.pack(">q", v)
    if isinstance(v, str): v = v.encode(); return b"\x03" + struct.pack(">I", len(v)) + v
    return b"\x04" + struct.pack(">I", len(v)) + bytes(v)
for q in ["SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name",
          "SELECT key, value FROM meta WHERE key <> 'mac' ORDER BY key",
          "SELECT * FROM releases ORDER BY id", "SELECT * FROM packages ORDER BY id",
          "SELECT * FROM files ORDER BY path, algo, digest, package"]:
    n = 0
    for r in c.execute(q):
        for v in r: m.update(val(v))
        n += 1
    m.update(b"\xff" + struct.pack(">Q", n))
c.execute("UPDATE meta SET value = ? WHERE key = 'mac'", (m.digest(),))
c.commit()
PY
chown 65534 "$R/usr/bin/ls"
printf 'x' >>"$R/usr/bin/cat"
check_rc 1 "a format 2 database: verify reads it (exit 1: a content changed)" "$VIGIL" trust verify v2.db -H key --root "$R"
keep
check "... says it has no owners to compare" grep -q "v2.db: format 2: the owners of files are not recorded, and not compared" "$T/last"
check "... the content change reported" grep -q "^modified: /bin/cat (coreutils [^ ]* amd64) package sha256:" "$T/last"
check "... the owner change not" sh -c "! grep -q '/bin/ls' '$T/last'"
check_rc 1 "the same with the format 4 database (this build's): the owner too" "$VIGIL" trust verify t.db -H key --root "$R"
keep
check "... /bin/ls's owner" grep -q "^modified: /bin/ls (coreutils [^ ]* amd64) owner 0 (root) -> 65534 (nobody)$" "$T/last"
