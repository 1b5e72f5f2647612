#!/usr/bin/env bash
# t0115: policy.package_newer (issue 16 item 4). Two versions of a real
# Debian package (apt-get download, both versions in this machine's
# signed lists) go into trust databases; a reference policy made from the
# older one judges a measurement list with the newer version's file. With
# the checker's own database (`vigil attest policy check --trusted`,
# `vigil-verifier --trust-db`) the entry fails as policy.package_newer,
# naming the package and both versions; an older version's file keeps
# policy.digest (named, "not newer"); a digest the database does not know
# keeps the plain policy.digest; a file of a package the policy does not
# hold is policy.not_in_policy, named. A policy holding both versions
# passes both. Nothing the database knows makes an entry pass. A tampered
# database is refused by the CLI and by the verifier before it serves.
. "$SRCDIR/tests/lib.sh"
vg_init
export VIGIL_CONFIG=/dev/null
S=$SRCDIR/docs/schemas
LISTS=/var/lib/apt/lists
if ! ls $LISTS/*_InRelease >/dev/null 2>&1; then
	apt-get update -qq >/dev/null 2>&1
fi
head -c 64 /dev/urandom >key
keep() { cp "$T/.out" "$T/last"; }
pj() { /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
valid() { /usr/bin/python3 "$SRCDIR/tests/helpers/json_validate.py" "$S/$1.schema.json" "$2"; }
# mklog OUT NAME=FILE...: an ascii ima-ng list of each FILE's sha256 under
# NAME (template digests computed here), converted by vigil log convert
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

# a small package with two versions in the lists, and one file of it
PKG= FILE= OLD= NEW=
for cand in curl:/usr/bin/curl sudo:/usr/bin/sudo libexpat1:/usr/lib/x86_64-linux-gnu/libexpat.so.1.8.10; do
	vs=$(apt-cache madison "${cand%%:*}" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}' | sort -u)
	[ "$(echo "$vs" | grep -c .)" -ge 2 ] || continue
	set -- $vs
	a=$1 b=$2
	if dpkg --compare-versions "$a" gt "$b"; then OLD=$b NEW=$a; else OLD=$a NEW=$b; fi
	PKG=${cand%%:*} FILE=${cand#*:}
	break
done
if [ -z "$PKG" ]; then
	echo "# SKIP no candidate package has two versions in this machine's lists"
	check "a package with two versions in the lists (curl, sudo, libexpat1)" false
	exit 0
fi
echo "# $PKG: $OLD (older) and $NEW (newer)"
mkdir old new && chmod 755 old new
(cd old && apt-get download -q "$PKG=$OLD" >/dev/null 2>&1)
(cd new && apt-get download -q "$PKG=$NEW" >/dev/null 2>&1)
check_eq "apt-get download fetched both versions" "$(ls old/*.deb new/*.deb 2>/dev/null | wc -l)" 2
mkdir xo xn
dpkg-deb -x old/*.deb xo
dpkg-deb -x new/*.deb xn
check "the two versions' $FILE differ" sh -c "! cmp -s xo$FILE xn$FILE"

check "a database of the older version" "$VIGIL" trust build -o old.db --hmac-key key --debs old --all-debs
check "a database of the newer version" "$VIGIL" trust build -o new.db --hmac-key key --debs new --all-debs
# the checker's own: both, the older superseded by the upgrade (within the grace)
cp old.db both.db
check "the checker's database: the upgrade recorded (older superseded)" \
	"$VIGIL" trust build -o both.db --hmac-key key --debs new --all-debs
check "policy from the older version" "$VIGIL" attest policy create --trusted old.db --hmac-key key -o pol-old.json
check "policy from the newer version" "$VIGIL" attest policy create --trusted new.db --hmac-key key -o pol-new.json
check "policy holding both versions" "$VIGIL" attest policy create --trusted old.db --trusted new.db \
	--hmac-key key -o pol-two.json
check "mklog: the newer version's file" mklog log-new "$FILE=xn$FILE"
check "mklog: the older version's file" mklog log-old "$FILE=xo$FILE"
cp xn$FILE mod && printf 'x' >>mod
check "mklog: a modified file" mklog log-mod "$FILE=mod"

pc() { "$VIGIL" attest policy check "$@"; }
# ---- without the database: as before ----
check_rc 1 "older policy, newer file, no database: not trusted" pc --policy pol-old.json log-new
keep
check "... policy.digest" grep -q "policy.digest" "$T/last"
check "... the package is not named (nobody knows it)" sh -c "! grep -q '$NEW' '$T/last'"

# ---- with the checker's database ----
check_rc 1 "older policy, newer file, --trusted: not trusted" pc --policy pol-old.json --trusted both.db \
	--hmac-key key --json log-new
cp "$T/.out" j
check_eq "... policy.package_newer" "$(pj j 'j["failure"]')" "policy.package_newer"
check "... naming the package and both versions" sh -c "grep -q '$PKG $NEW' j && grep -q 'the policy allows ($OLD)' j"
check "... the JSON validates against its schema" valid attest-policy-check j
check_rc 1 "newer policy, older file (a downgrade), --trusted: not trusted" pc --policy pol-new.json \
	--trusted both.db --hmac-key key --json log-old
cp "$T/.out" j
check_eq "... stays policy.digest" "$(pj j 'j["failure"]')" "policy.digest"
check "... naming the older version, not newer than the policy's" \
	sh -c "grep -q '$PKG $OLD, not newer than the policy' j"
check_rc 1 "a modified file, --trusted: not trusted" pc --policy pol-old.json --trusted both.db \
	--hmac-key key --json log-mod
cp "$T/.out" j
check_eq "... plain policy.digest" "$(pj j 'j["failure"]')" "policy.digest"
check "... no package named" sh -c "! grep -q 'the file of' j"
check "both versions in the policy: the newer file passes" pc --policy pol-two.json --trusted both.db \
	--hmac-key key log-new
check "... and the older one" pc --policy pol-two.json --trusted both.db --hmac-key key log-old
# a package the policy does not hold at all
echo '{"vigil_refpolicy": 1, "digests": {"/nonexistent": ["sha256:'"$(printf '0%.0s' $(seq 64))"'"]}}' >other.json
check_rc 1 "a file of a package the policy does not hold: not trusted" pc --policy other.json \
	--trusted both.db --hmac-key key --json log-new
cp "$T/.out" j
check_eq "... policy.not_in_policy" "$(pj j 'j["failure"]')" "policy.not_in_policy"
check "... naming the package" sh -c "grep -q 'the file of $PKG $NEW, a package the policy does not hold' j"
# a database that knows only the newer version: the policy's digest is unknown to it
check_rc 1 "a database without the policy's version: not trusted" pc --policy pol-old.json \
	--trusted new.db --hmac-key key --json log-new
cp "$T/.out" j
check_eq "... policy.digest (newer cannot be proven)" "$(pj j 'j["failure"]')" "policy.digest"
check "... naming the file's package" sh -c "grep -q 'knows none of the policy' j"

# ---- bad databases and options ----
cp both.db bad.db
/usr/bin/python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE packages SET version = ? WHERE version = ?", ("99:" + sys.argv[3], sys.argv[2])); c.commit()' \
	bad.db "$OLD" "$OLD"
check_rc 2 "an altered database (a version raised): refused (exit 2)" pc --policy pol-old.json \
	--trusted bad.db --hmac-key key log-new
keep
check "... naming it" grep -q "bad.db" "$T/last"
head -c 64 /dev/urandom >key2
check_rc 2 "the database under another key: refused" pc --policy pol-old.json --trusted both.db \
	--hmac-key key2 log-new
check_rc 2 "--hmac-key without --trusted: usage error" pc --policy pol-old.json --hmac-key key log-new

# ---- the verifier ----
VERIFIER=${VIGIL_VERIFIER_BIN:?}
. "$SRCDIR/tests/lib-attest.sh"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
VP=$(vg_port)
check_rc 2 "vigil-verifier --trust-db without --trust-key: refused" timeout 20 "$VERIFIER" \
	--insecure-no-auth --listen 127.0.0.1:$VP --db "sqlite:$T/v0.db" --trust-db both.db
check_rc 2 "vigil-verifier with an altered --trust-db: refuses to start" timeout 20 "$VERIFIER" \
	--insecure-no-auth --listen 127.0.0.1:$VP --db "sqlite:$T/v0.db" --trust-db bad.db --trust-key key
keep
check "... naming it" grep -q "bad.db" "$T/last"
check "... before it listened" sh -c "! grep -q 'listening on' '$T/last'"

if ! command -v swtpm >/dev/null || ! command -v tpm2_pcrread >/dev/null; then
	echo "# SKIP the verifier round: needs swtpm and tpm2-tools"
	exit 0
fi
. "$SRCDIR/tests/lib-tpm.sh"
att_auth
vg_tpm_start
AGENT=${VIGIL_AGENT_BIN:?}
AP=$(vg_port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
PIDS=
trap '_rc=$?; for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
measure() { "$VIGIL" measure --log "$T/log" --tpm >/dev/null 2>&1 "$@"; }
measure
check "the host's list holds its boot_aggregate" test -s "$T/log"
# the policy: the older version from the archive, this boot's boot_aggregate
check "policy: the older version and the boot_aggregate" "$VIGIL" attest policy create --log "$T/log" \
	--trusted old.db --hmac-key key -o round.json
"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 \
	--boot-log "$T/no-boot-log" 2>agent.err &
PIDS="$PIDS $!"
mkdir -p st
"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/verifier.db" --interval 200 \
	--ek-ca "$TPMDIR/ek-ca.pem" --trust-db both.db --trust-key key 2>verifier.err &
PIDS="$PIDS $!"
for i in $(seq 600); do
	curl -s "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && curl -s -H "$ATT_RHDR" "127.0.0.1:$VP/v1/agents" >/dev/null 2>&1 && break
	sleep 0.1
done
check "the verifier read its trust database" grep -q "trust database both.db: [1-9][0-9]* file digests" verifier.err
"$VIGIL" attest policy set archive round.json >/dev/null
check "registered" sh -c "'$VIGIL' attest add --agent http://127.0.0.1:$AP --policy archive >/dev/null 2>&1"
check "trusted (nothing measured but the boot_aggregate)" att_wait host1 trusted
# the host upgrades: the newer version's file is where the package puts it
# (a bind mount in this test's own mount namespace) and is measured
mount --bind "xn$FILE" "$FILE"
measure "$FILE"
umount "$FILE"
check "the newer version measured: failed, policy.package_newer" att_wait host1 failed policy.package_newer
check "... the message names the package and both versions" \
	sh -c "'$VIGIL' attest status --json host1 | grep -q '$PKG $NEW, newer than the version the policy allows ($OLD)'"
check "the verifier survived" kill -0 $(echo $PIDS | awk '{print $2}')
