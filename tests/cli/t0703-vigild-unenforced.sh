#!/usr/bin/env bash
# vigild and the rules it cannot enforce (issue 19, item 2). A rule that
# names what a fanotify enforcer cannot observe (mmap(PROT_EXEC), the open
# flags MAY_WRITE / MAY_APPEND, kernel hooks) is refused at start (exit 2,
# FILE:LINE:COL and the reason, never 'ready') and at reload (the old
# policy stays), unless --accept-unenforced, and then `vigil status` lists
# it. What vigild can observe is enforced: a program run through the
# dynamic loader (`ld.so PROG`) is an exec of PROG. Each attack runs as an
# unprivileged user (nobody) on a marked loop-mounted ext4 and on a marked
# tmpfs; LD_PRELOAD and mmap(PROT_EXEC) are shown for what they are (the
# rule that would cover them, func=MMAP_CHECK, is refused), with the
# FILE_CHECK rule that does stop them; fsname= and fsuuid= are enforced.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
trap '_rc=$?; vd_stop; (exit $_rc); vg_cleanup' EXIT
chmod 755 "$T"
head -c 32 /dev/urandom >hk
vg_ext4 "$T/ext4" 16
mkdir "$T/tmpfs" && mount -t tmpfs -o size=16m vigil-t0703 "$T/tmpfs"
chmod 755 "$T/ext4" "$T/tmpfs"
LD=$(readlink -f /lib64/ld-linux-x86-64.so.2)
LIB=$(ldd /usr/bin/true | awk '/libc.so/ {print $3}')
nb() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
audit_event() { # PATH: "action event reason" of the last audit record for PATH
	python3 -c '
import json, sys
last = ""
for line in open(sys.argv[2]):
    r = json.loads(line)
    if r["path"] == sys.argv[1]:
        last = "%s %s %s" % (r["action"], r["event"], r["reason"])
print(last)' "$1" "$T/audit"
}
for F in "$T/ext4" "$T/tmpfs"; do
	for b in labeled unlabeled unlabeled2 unlabeled3; do cp /usr/bin/true "$F/$b"; done
	cp "$LIB" "$F/evil.so"
	printf 'unlabeled data\n' >"$F/data"
	"$VIGIL" label -q --hmac-key hk "$F/labeled"
	chmod 755 "$F"/*
done

# ---- refused: each rule vigild cannot enforce, at start ----
refused() { # NAME RULE COL WHY: vigild refuses a policy holding RULE on line 2
	local name=$1 rule=$2 col=$3 why=$4 rc
	printf 'appraise func=BPRM_CHECK\n%s\n' "$rule" >"$name.pol"
	timeout 30 "$VIGILD" --policy "$name.pol" --watch "$T/ext4" --hmac-key hk --no-tpm \
		--control "$T/ctl.refused" --foreground 2>err >/dev/null; rc=$?
	check_eq "$name: vigild refuses the policy at start (exit 2)" "$rc" 2
	check "$name: ... naming file, line, column and why" \
		grep -qF "vigild: policy refused: $name.pol:2:$col: $why" err
	check "$name: ... and says how to keep it" grep -qF -- "--accept-unenforced keeps it" err
	check "$name: ... never ready" bash -c '! grep -q ready err'
	check_rc 2 "$name: vigil policy check refuses it too" "$VIGIL" policy check "$name.pol"
	check "$name: vigil policy check --accept-unenforced keeps it" \
		"$VIGIL" policy check --accept-unenforced "$name.pol"
}
refused mmap "appraise func=MMAP_CHECK" 10 "func=MMAP_CHECK: vigild cannot see mmap(PROT_EXEC)"
refused ld_preload "deny func=MMAP_CHECK mask=MAY_EXEC appraisal!=pass" 6 \
	"func=MMAP_CHECK: vigild cannot see mmap(PROT_EXEC) (fanotify has no mmap event); libraries the loader maps, LD_PRELOAD and dlopen() arrive as plain opens (FILE_CHECK)"
refused may_write "deny func=FILE_CHECK mask=^MAY_WRITE appraisal=fail" 22 \
	"mask=^MAY_WRITE: a permission event does not carry the open flags"
refused may_write_exact "appraise func=FILE_CHECK mask=MAY_WRITE" 26 \
	"mask=MAY_WRITE: a permission event does not carry the open flags"
refused may_append "measure func=FILE_CHECK mask=MAY_APPEND" 25 \
	"mask=MAY_APPEND: a permission event does not carry the open flags"
refused module "appraise func=MODULE_CHECK appraise_type=imasig" 10 \
	"func=MODULE_CHECK: a hook inside the kernel that fanotify does not report"
refused exec_no_func "measure mask=MAY_EXEC" 9 \
	"mask=MAY_EXEC without func=: a kernel matches mmap(PROT_EXEC) with it too"
refused lsm "dont_appraise obj_type=var_log_t" 15 "obj_type=: vigild does not read LSM contexts"

# the kernel's built-in tcb: vigil shows it as the kernel has it; vigild refuses it
"$VIGIL" policy show --builtin tcb >tcb.pol
check_eq "builtin tcb: shown as the kernel's (its MMAP_CHECK rule included)" \
	"$(grep -c '^measure func=MMAP_CHECK mask=MAY_EXEC$' tcb.pol)" 1
check_rc 2 "builtin tcb: vigild refuses it" timeout 30 "$VIGILD" --policy tcb.pol \
	--watch "$T/ext4" --no-tpm --control "$T/ctl.refused" --foreground
check_rc 2 "builtin tcb: vigil policy check refuses it" "$VIGIL" policy check --builtin tcb
"$VIGIL" policy check --builtin tcb 2>err
check_eq "builtin tcb: ... MMAP_CHECK, MODULE_CHECK, FIRMWARE_CHECK, POLICY_CHECK" \
	"$(cut -d: -f3,5 err | tr '\n' ' ')" "14: func=MMAP_CHECK 18: func=MODULE_CHECK 19: func=FIRMWARE_CHECK 20: func=POLICY_CHECK "
check "builtin tcb: the vigild variant in docs/policy.md is accepted" \
	"$VIGIL" policy check "$VECTORS/policy/vigild-tcb.policy"
check "builtin tcb: ... and vigild runs it" vd_start --policy "$VECTORS/policy/vigild-tcb.policy" \
	--watch "$T/ext4" --no-tpm --log "$T/log.tcb"
vd_stop
check "the IBAC example of docs/policy.md: vigild runs it (every rule enforced)" \
	vd_start --policy "$VECTORS/policy/ibac-vigild.policy" --watch "$T/ext4" --hmac-key hk --no-tpm \
	--log "$T/log.ibac" --keyring "$VECTORS/evmctl/keys/ecp256.cert.pem"
check_eq "... with nothing left unenforced" \
	"$("$VIGIL" status --control "$T/ctl" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["unenforced_rules"]["total"])')" 0
vd_stop

# ---- enforced: a program run through the dynamic loader ----
printf 'appraise func=BPRM_CHECK\n' >bprm.pol
# opens are measured: an allowed open goes through the whole decision, so a
# kernel ignore mark may be set for it, which the loader's open must not meet
printf 'appraise func=BPRM_CHECK\nmeasure func=FILE_CHECK mask=MAY_READ\n' >loader.pol
for F in "$T/ext4" "$T/tmpfs"; do
	fs=${F##*/}
	check "$fs: vigild starts (appraise func=BPRM_CHECK, measure func=FILE_CHECK)" vd_start \
		--policy loader.pol --watch "$F" --hmac-key hk --no-tpm --log "$T/log.$fs"
	check "$fs: nobody runs a labeled program" nb "$F/labeled"
	check_rc 126 "$fs: nobody cannot exec an unlabeled program" nb "$F/unlabeled"
	check_rc 127 "$fs: loader: nobody cannot run it as 'ld.so PROG' either" nb "$LD" "$F/unlabeled"
	check_eq "$fs: loader: ... audited as the loader's open, denied as an exec" \
		"$(audit_event "$F/unlabeled")" "deny open missing-hash"
	check "$fs: loader: a labeled program runs through the loader" nb "$LD" "$F/labeled"
	check_eq "$fs: loader: a plain read of the unlabeled program is no exec: allowed" \
		"$(nb cat "$F/unlabeled2" | cmp - "$F/unlabeled2" && echo same)" same
	nb cat "$F/unlabeled2" >/dev/null
	check_rc 127 "$fs: loader: ... and does not leave a kernel ignore mark for the loader" \
		nb "$LD" "$F/unlabeled2"
	# LD_PRELOAD: the library is a plain open by the (labeled) program, not an exec
	out=$(nb env LD_PRELOAD="$F/evil.so" "$F/labeled" 2>&1); rc=$?
	check_eq "$fs: LD_PRELOAD of an unlabeled library under BPRM_CHECK: loaded (what MMAP_CHECK would cover; refused above)" \
		"$rc:$out" "0:"
	# mmap(PROT_EXEC): no event; only the open is seen
	check_eq "$fs: mmap(PROT_EXEC) of unlabeled data under BPRM_CHECK: mapped (no mmap event)" \
		"$(nb /usr/bin/python3 -c 'import mmap,os,sys; f=os.open(sys.argv[1], os.O_RDONLY); m=mmap.mmap(f, 0, prot=mmap.PROT_READ|mmap.PROT_EXEC); print(len(m))' "$F/data")" 15
	check "$fs: vigild stops" vd_stop

	# the rule that does stop LD_PRELOAD and mmap(PROT_EXEC): appraise every open
	printf 'appraise func=BPRM_CHECK\nappraise func=FILE_CHECK mask=MAY_READ\n' >open.pol
	check "$fs: vigild starts (BPRM_CHECK + FILE_CHECK)" vd_start --policy open.pol --watch "$F" \
		--hmac-key hk --no-tpm
	out=$(nb env LD_PRELOAD="$F/evil.so" "$F/labeled" 2>&1)
	check "$fs: LD_PRELOAD: the unlabeled library is not loaded (FILE_CHECK)" \
		grep -q "evil.so' from LD_PRELOAD cannot be preloaded" <<<"$out"
	check_eq "$fs: LD_PRELOAD: ... audited" "$(audit_event "$F/evil.so")" "deny open missing-hash"
	check_rc 1 "$fs: mmap(PROT_EXEC): the open of unlabeled data is refused (FILE_CHECK)" \
		nb /usr/bin/python3 -c 'import mmap,os,sys; f=os.open(sys.argv[1], os.O_RDONLY)' "$F/data"
	check_rc 127 "$fs: loader: still denied with both rules" nb "$LD" "$F/unlabeled3"
	check "$fs: vigild stops" vd_stop

	# The open and the exec decide differently (the exec wants a signature):
	# the loader's open needs what the exec needs. (Where both rules decide
	# the same, vigild does not ask who opens: loader.c.)
	printf 'appraise func=BPRM_CHECK appraise_type=imasig\nappraise func=FILE_CHECK mask=MAY_READ\n' >sig.pol
	check "$fs: vigild starts (BPRM_CHECK appraise_type=imasig + FILE_CHECK)" vd_start --policy sig.pol \
		--watch "$F" --hmac-key hk --no-tpm --keyring "$VECTORS/evmctl/keys/ecp256.cert.pem"
	check_rc 127 "$fs: imasig: a hash-labeled program does not run through the loader" nb "$LD" "$F/labeled"
	check_eq "$fs: imasig: ... a plain read of it is allowed (a hash is enough for an open)" \
		"$(nb cat "$F/labeled" | cmp - "$F/labeled" && echo same)" same
	check_rc 127 "$fs: imasig: ... and that open's verdict does not let the loader's open through" \
		nb "$LD" "$F/labeled"
	check_rc 126 "$fs: imasig: ... nor its exec" nb "$F/labeled"
	check "$fs: vigild stops" vd_stop
done

# ---- enforced: fsname= and fsuuid= (vigild looks them up per filesystem) ----
uuid=$(blkid -s UUID -o value "$(findmnt -n -o SOURCE "$T/ext4")")
printf 'dont_appraise fsname=tmpfs\nappraise func=BPRM_CHECK\n' >fsname.pol
check "fsname=: vigild takes it" vd_start --policy fsname.pol --watch "$T/ext4" --watch "$T/tmpfs" \
	--hmac-key hk --no-tpm
check "fsname=: an unlabeled program on the tmpfs runs (dont_appraise fsname=tmpfs)" nb "$T/tmpfs/unlabeled"
check_rc 126 "fsname=: ... on the ext4 it does not" nb "$T/ext4/unlabeled"
vd_stop
printf 'appraise func=BPRM_CHECK fsuuid=%s\n' "$uuid" >fsuuid.pol
check "fsuuid=: vigild takes it" vd_start --policy fsuuid.pol --watch "$T/ext4" --watch "$T/tmpfs" \
	--hmac-key hk --no-tpm
check_rc 126 "fsuuid=: an unlabeled program on the ext4 of that UUID is denied" nb "$T/ext4/unlabeled"
check_rc 127 "fsuuid=: ... through the loader too" nb "$LD" "$T/ext4/unlabeled"
check "fsuuid=: ... on the tmpfs (another filesystem) it runs" nb "$T/tmpfs/unlabeled"
vd_stop

# ---- reload: a policy vigild cannot enforce is refused, the old one stays ----
F=$T/ext4
cp bprm.pol live.pol
check "reload: vigild starts" vd_start --policy live.pol --watch "$F" --hmac-key hk --no-tpm
printf 'appraise func=BPRM_CHECK\nappraise func=MMAP_CHECK\n' >live.pol
kill -HUP "$VD_PID"; sleep 0.5
check "reload: refused with file:line:col and why" grep -qF \
	"policy reload refused, the old policy stays: live.pol:2:10: func=MMAP_CHECK: vigild cannot see mmap(PROT_EXEC)" \
	"$T/vigild.err"
check_rc 126 "reload: the old policy still denies the unlabeled program" nb "$F/unlabeled"
check_rc 127 "reload: ... and its run through the loader" nb "$LD" "$F/unlabeled"
check_eq "reload: status: no unenforced rules" \
	"$("$VIGIL" status --control "$T/ctl" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["unenforced_rules"]["total"])')" 0
check "reload: vigild stops" vd_stop

# ---- accepted: --accept-unenforced keeps them, status lists them ----
cat >acc.pol <<'P'
appraise func=BPRM_CHECK
appraise func=MMAP_CHECK
deny func=FILE_CHECK mask=^MAY_WRITE
measure func=FILE_CHECK mask=MAY_APPEND
measure func=MODULE_CHECK
P
check "accept: vigild starts with --accept-unenforced" vd_start --policy acc.pol --watch "$F" \
	--hmac-key hk --no-tpm --accept-unenforced
check_eq "accept: each kept rule is logged as not enforced" \
	"$(grep -c "warning: .*; accepted, not enforced" "$T/vigild.err")" 4
js=$("$VIGIL" status --control "$T/ctl" --json)
check_eq "accept: vigil status --json lists them (line, rule)" "$(python3 -c '
import json, sys
u = json.loads(sys.argv[1])["unenforced_rules"]
print(u["total"], [(r["line"], r["rule"]) for r in u["rules"]], all(r["why"] for r in u["rules"]))' "$js")" \
	"4 [(2, 'appraise func=MMAP_CHECK'), (3, 'deny func=FILE_CHECK mask=^MAY_WRITE'), (4, 'measure func=FILE_CHECK mask=MAY_APPEND'), (5, 'measure func=MODULE_CHECK')] True"
check "accept: vigil status says so in words" bash -c \
	"'$VIGIL' status --control '$T/ctl' | grep -qx 'unenforced rules (accepted with --accept-unenforced): 4'"
check "accept: ... with each rule" bash -c \
	"'$VIGIL' status --control '$T/ctl' | grep -qx '  line 3: deny func=FILE_CHECK mask=^MAY_WRITE'"
# what "not enforced" means: the write the rule names goes through
check "accept: MAY_WRITE: an open for writing is not told apart (the deny rule never matches)" \
	bash -c "echo x >>'$F/data'"
check "accept: the enforced rule still holds: exec" test "$(nb "$F/unlabeled" 2>/dev/null; echo $?)" = 126
check_rc 127 "accept: ... and through the loader" nb "$LD" "$F/unlabeled"
check "accept: vigild stops" vd_stop

check_rc 2 "vigild --loader with a missing file" "$VIGILD" --loader /nonexistent --policy bprm.pol --watch "$F"
