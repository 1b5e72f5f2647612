#!/usr/bin/env bash
# t0709: vigild's appraise ... trust=archive. On a test ext4 mount (marked
# alone, private namespace) holding a merged-/usr root extracted from real
# .debs (apt-get download hostname less; ROOT/bin links to usr/bin, so the
# kernel's ROOT/usr/bin/hostname is the database's /bin/hostname), with
# --trust-root ROOT: an unlabeled packaged binary runs; the same binary
# with one byte changed, an unpackaged unlabeled binary, a copy of a
# packaged binary at another path are denied (missing-hash); a file whose
# content is packaged but whose label is bad is denied by its label; a
# reload after the database gains a package allows its files without a
# restart; a copy bind-mounted onto a packaged path in another mount
# namespace is denied, the packaged file bind-mounted elsewhere there runs
# (judged by its name in vigild's namespace), also with openat2 answered
# ENOSYS (systemd's RestrictSUIDSGID=, as the shipped unit runs it); a
# tampered or missing database refuses the start (exit 2,
# naming it) and a tampered one the reload (the old table stays); a policy
# without trust=archive never opens the database; counters and audit.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
export VIGIL_CONFIG=/dev/null
trap '_rc=$?; vd_stop; (exit $_rc); vg_cleanup' EXIT
LISTS=/var/lib/apt/lists
if ! ls $LISTS/*_InRelease >/dev/null 2>&1; then
	apt-get update -qq >/dev/null 2>&1
fi
head -c 32 /dev/urandom >hk
jpy() { python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$@"; }
status() { "$VIGIL" status --control "$T/ctl" --json; }
runs() { # WHAT CMD...: exit 0
	check "$1" "${@:2}"
}
denied() { # WHAT PATH REASON: exec refused (126), the audit record says why
	local rc
	"$2" --version >/dev/null 2>&1; rc=$?
	check_eq "$1: exec denied (126)" "$rc" 126
	check_eq "$1: audit reason" "$(vd_audit_reason "$2" deny)" "$3"
}

mkdir debs1 debs2 && chmod 755 debs1 debs2
(cd debs2 && apt-get download -q hostname less >/dev/null 2>&1)
check_eq "apt-get download fetched two .debs" "$(ls debs2/*.deb 2>/dev/null | wc -l)" 2
cp debs2/hostname_*.deb debs1/
check "a database of hostname alone" "$VIGIL" trust build -o t1.db --hmac-key hk --debs debs1 --all-debs
check "a database of hostname and less" "$VIGIL" trust build -o t2.db --hmac-key hk --debs debs2 --all-debs
cp t1.db trust.db

vg_ext4 "$T/fs" 64
F=$T/fs
R=$F/root
mkdir -p "$F/x" "$R/usr/bin" "$R/usr/sbin"
ln -s usr/bin "$R/bin"
ln -s usr/sbin "$R/sbin"
for d in debs2/*.deb; do dpkg-deb -x "$d" "$F/x"; done
cp -a "$F/x/bin/hostname" "$R/usr/bin/hostname"
cp -a "$F/x/usr/bin/less" "$F/x/usr/bin/lessecho" "$R/usr/bin/"
cp -a "$R/usr/bin/hostname" "$F/hostname-copy"			# packaged content, another path
cp -a "$R/usr/bin/hostname" "$R/usr/bin/hostname2"		# ... under the root too
cp /usr/bin/true "$R/usr/bin/mytrue"				# unpackaged
check_eq "the tree carries no label" \
	"$(getfattr -R --absolute-names -n security.ima "$F" 2>/dev/null | grep -c '^security.ima=')" 0
cat >pol <<P
appraise func=BPRM_CHECK trust=archive
P
printf 'appraise func=BPRM_CHECK\n' >pol-plain
cp pol pol-archive
args=(--watch "$F" --hmac-key hk --no-tpm --trust-root "$R")

# ---- start-up: a policy without trust=archive never opens the database ----
check "no trust=archive, the database missing: vigild starts" \
	vd_start --policy pol-plain "${args[@]}" --trust-db "$T/absent.db"
check_eq "... status: no trust database" "$(jpy "$(status)" '"%s %s" % (d["trust_db"], d["counters"]["trust_files"])')" "None 0"
denied "no trust=archive: an unlabeled packaged binary" "$R/usr/bin/hostname" missing-hash
vd_stop

# ---- start-up refusals, before ready ----
refused() { # WHAT DBFILE PATTERN
	local rc
	timeout 60 "$VIGILD" --control "$T/ctl" --foreground --policy pol "${args[@]}" --trust-db "$2" \
		>"$T/start.err" 2>&1; rc=$?
	check_eq "$1: vigild refuses to start (exit 2)" "$rc" 2
	check "$1: ... the message names the database and the problem" grep -q "$3" "$T/start.err"
	check_rc 1 "$1: ... before ready" grep -q 'vigild: ready' "$T/start.err"
}
refused "a missing database" "$T/absent.db" "trust database $T/absent.db.*No such file"
cp t1.db flip.db
off=$(grep -abo '/bin/hostname' flip.db | head -1 | cut -d: -f1)
flip_byte flip.db $((off + 3))
refused "a database with one byte flipped" "$T/flip.db" "trust database.*flip.db"
head -c 32 /dev/urandom >hk2
cp t1.db other.db
timeout 60 "$VIGILD" --control "$T/ctl" --foreground --policy pol --watch "$F" --hmac-key hk2 --no-tpm \
	--trust-db other.db >"$T/start.err" 2>&1
check_eq "a database under another key: refused (exit 2)" "$?" 2
check "... naming it" grep -q "trust database.*other.db" "$T/start.err"
check "... with --trust-key naming the key it was built with: vigild starts" \
	vd_start --policy pol --watch "$F" --hmac-key hk2 --no-tpm --trust-db other.db --trust-key hk --trust-root "$R"
runs "... and hostname runs" "$R/usr/bin/hostname"
vd_stop
printf 'key.hmac = %s\ntrust.db = %s\n' "$T/hk" "$T/t1.db" >vd.conf
check "trust.db and key.hmac in vigil.conf: vigild starts" \
	vd_start --config "$T/vd.conf" --policy pol --watch "$F" --no-tpm --trust-root "$R"
check_eq "... status names that database" "$(jpy "$(status)" 'd["trust_db"]')" "$T/t1.db"
vd_stop
timeout 60 "$VIGILD" --control "$T/ctl" --foreground --policy pol --watch "$F" --no-tpm \
	--trust-db trust.db >"$T/start.err" 2>&1
check_eq "trust=archive without an HMAC key: refused (exit 2)" "$?" 2
check "... saying it needs the key" grep -q "trust database.*--hmac-key" "$T/start.err"

# ---- enforcing with the archive ----
check "vigild starts with trust=archive (database: hostname)" \
	vd_start --policy pol "${args[@]}" --trust-db "$T/trust.db"
js=$(status)
check_eq "status: the database and its files" "$(jpy "$js" 'd["trust_db"]')" "$T/trust.db"
check "... with files" test "$(jpy "$js" 'd["counters"]["trust_files"]')" -gt 0
runs "an unlabeled packaged binary runs (merged /usr: /usr/bin/hostname is /bin/hostname)" "$R/bin/hostname"
runs "... again (cached)" "$R/usr/bin/hostname"
check_eq "... the audit record: allowed by the archive, the package named" \
	"$(python3 -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; r=[x for x in r if x["action"]=="allow" and x["path"].endswith("/usr/bin/hostname")][-1]; print(r["reason"], r["package"], r["rule"])' "$T/audit")" \
	"trusted-archive hostname appraise func=BPRM_CHECK trust=archive"
check_eq "... one record for the two execs (the second a cache hit, counted)" \
	"$(grep -c '"action":"allow".*"reason":"trusted-archive"' "$T/audit") $(jpy "$(status)" 'd["counters"]["trusted_archive"]')" "1 2"
denied "an unpackaged unlabeled binary" "$R/usr/bin/mytrue" missing-hash
denied "a copy of the packaged binary outside the root" "$F/hostname-copy" missing-hash
denied "a copy of the packaged binary at another path under the root" "$R/usr/bin/hostname2" missing-hash
denied "less: not in this database" "$R/usr/bin/less" missing-hash
# a namespace of one's own: the copy bind-mounted onto the packaged path is named by that path
unshare -m bash -c "mount --bind '$F/hostname-copy' '$R/usr/bin/hostname' && '$R/usr/bin/hostname' --version" \
	>/dev/null 2>&1
check_eq "a copy bind-mounted onto the packaged path in another mount namespace: denied (126)" "$?" 126
check_eq "... audit: missing-hash" "$(vd_audit_reason "$R/usr/bin/hostname" deny)" missing-hash
runs "the packaged file itself still runs" "$R/usr/bin/hostname"
# ... and the packaged file bind-mounted at another path there is named by
# vigild by the path it has in vigild's namespace: its own
: >"$F/elsewhere"
ta=$(jpy "$(status)" 'd["counters"]["trusted_archive"]')
unshare -m bash -c "mount --bind '$R/usr/bin/hostname' '$F/elsewhere' && '$F/elsewhere' --version" \
	>/dev/null 2>&1
check_eq "the packaged binary bind-mounted at another path in another mount namespace: runs" "$?" 0
check_eq "... allowed by the archive (counted; the version's record was written at its first allow)" \
	"$(jpy "$(status)" 'd["counters"]["trusted_archive"]')" $((ta + 1))
# ... but not a copy there (its own path is outside the root)
unshare -m bash -c "mount --bind '$F/hostname-copy' '$F/elsewhere' && '$F/elsewhere' --version" \
	>/dev/null 2>&1
check_eq "a copy bind-mounted at another path in another mount namespace: denied (126)" "$?" 126
# the same under a policy with a path= rule, where the name is found once, at the event
printf 'dont_appraise func=BPRM_CHECK path=%s/nothing-here\nappraise func=BPRM_CHECK trust=archive\n' "$T" >pol
check "a policy with a path= rule: applied" "$VIGIL" status --control "$T/ctl" --reload
unshare -m bash -c "mount --bind '$R/usr/bin/hostname' '$F/elsewhere' && '$F/elsewhere' --version" \
	>/dev/null 2>&1
check_eq "... the packaged binary bind-mounted elsewhere in another mount namespace: runs" "$?" 0
unshare -m bash -c "mount --bind '$F/hostname-copy' '$R/usr/bin/hostname' && '$R/usr/bin/hostname' --version" \
	>/dev/null 2>&1
check_eq "... a copy bind-mounted onto the packaged path there: denied (126)" "$?" 126
runs "... the packaged file itself runs" "$R/usr/bin/hostname"
cp pol-archive pol
check "the policy without it: applied" "$VIGIL" status --control "$T/ctl" --reload

# ---- openat2 refused: systemd's RestrictSUIDSGID= (the shipped unit has it)
# answers it ENOSYS; the names are then walked one component at a time ----
vd_stop
VD_WRAP=("$VG_ENOSYS" openat2)
check "openat2 answered ENOSYS, as under the unit's RestrictSUIDSGID=: vigild starts" \
	vd_start --policy pol "${args[@]}" --trust-db "$T/trust.db"
runs "... an unlabeled packaged binary runs (its name walked without openat2)" "$R/usr/bin/hostname"
denied "... a copy at another path under the root is still denied" "$R/usr/bin/hostname2" missing-hash
unshare -m bash -c "mount --bind '$F/hostname-copy' '$R/usr/bin/hostname' && '$R/usr/bin/hostname' --version" \
	>/dev/null 2>&1
check_eq "... a copy bind-mounted onto the packaged path in another mount namespace: denied (126)" "$?" 126
check "... stops" vd_stop
VD_WRAP=()
check "vigild again, without the filter" vd_start --policy pol "${args[@]}" --trust-db "$T/trust.db"

# ---- reload: the database gains less ----
cp t2.db trust.db
check "status --reload with the new database: applied" "$VIGIL" status --control "$T/ctl" --reload
n2=$(jpy "$(status)" 'd["counters"]["trust_files"]')
check "... the table grew" test "$n2" -gt "$(jpy "$js" 'd["counters"]["trust_files"]')"
runs "less runs after the reload, no restart" "$R/usr/bin/less" --version
runs "hostname still runs" "$R/bin/hostname"
# a packaged file's content with a bad label: the label decides (EVM valid, security.ima wrong)
setfattr -n security.ima -v 0x0404"$(printf '%064d' 0)" "$R/usr/bin/lessecho"
"$VIGIL" evm --hmac-key hk "$R/usr/bin/lessecho"
denied "packaged content with a bad label" "$R/usr/bin/lessecho" invalid-hash

# ---- reload refused: a tampered database keeps the old table ----
cp t2.db flip2.db
off=$(grep -abo '/usr/bin/less' flip2.db | head -1 | cut -d: -f1)
flip_byte flip2.db $((off + 6))
cp flip2.db trust.db
check_rc 2 "status --reload with a tampered database: refused (exit 2)" \
	"$VIGIL" status --control "$T/ctl" --reload
cp "$T/.out" "$T/reload.out"
check "... the answer names the database" grep -q "trust database $T/trust.db" "$T/reload.out"
check "... vigild logs it, the old policy stays" grep -q "policy reload refused, the old policy stays: trust database" \
	"$T/vigild.err"
runs "less still runs (the old table kept)" "$R/usr/bin/less" --version
check_eq "status: still the old table's files" "$(jpy "$(status)" 'd["counters"]["trust_files"]')" "$n2"
rm trust.db
check_rc 2 "status --reload with the database gone: refused (exit 2)" \
	"$VIGIL" status --control "$T/ctl" --reload
runs "hostname still runs" "$R/bin/hostname"

# ---- the packaged binary changed by one byte ----
printf 'x' >>"$R/usr/bin/hostname"
denied "the packaged binary with one byte appended" "$R/usr/bin/hostname" missing-hash

js=$(status)
check "counters: trusted_archive counts the archive's allows" test "$(jpy "$js" 'd["counters"]["trusted_archive"]')" -ge 2
check "status (text): the trust database" bash -c "'$VIGIL' status --control '$T/ctl' | grep -q '^trust database: $T/trust.db ('"
check "--prometheus: vigild_trusted_archive_total" bash -c "'$VIGIL' status --control '$T/ctl' --prometheus | grep -q '^vigild_trusted_archive_total [1-9]'"
check "stops cleanly" vd_stop
