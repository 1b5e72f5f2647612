#!/usr/bin/env bash
# vigil policy show: the canonical form, stable under its own round trip,
# for every test policy, Keylime's real ones and the built-in policies.
. "$SRCDIR/tests/lib.sh"
vg_init
P=$VECTORS/policy

for f in kernel-doc-examples.policy ibac-example.policy keylime/ima-policy-default keylime/ima-policy-keylime \
	 keylime/ima-policy-keylime-etc keylime/demo-ima-policy keylime/rust-keylime-ima-policy; do
	n=$(basename "$f" .policy)
	"$VIGIL" policy show "$P/$f" >"$n.out"
	check "show $f: exit 0" test $? -eq 0
	check "show $f: the canonical form" cmp "$n.out" "$P/canonical/$n.canonical"
	"$VIGIL" policy show "$n.out" >"$n.again"
	check "show $f: show(show(x)) == show(x)" cmp "$n.out" "$n.again"
	check_eq "show $f: one line per rule" "$(wc -l <"$n.out")" \
		"$(grep -cv '^[[:space:]]*\(#\|$\)' "$P/$f")"
done
for b in tcb ima_tcb appraise_tcb secure_boot critical_data; do
	"$VIGIL" policy show --builtin "$b" >"b-$b.out"
	check "show --builtin $b" cmp "b-$b.out" "$P/canonical/builtin-$b.canonical"
done
"$VIGIL" policy show --builtin 'appraise_tcb|tcb' >both.out
cat "$P/canonical/builtin-tcb.canonical" "$P/canonical/builtin-appraise_tcb.canonical" >both.want
check "show --builtin: sets in the kernel's order" cmp both.out both.want

# aliases and number forms print canonically
printf 'measure func=PATH_CHECK mask=^MAY_READ uid=+00 # x\n  dont_measure\tfsmagic=0X01021994\nmeasure func=FILE_MMAP template=d-ng|n-ng|sig\n' >alias.policy
check_eq "show: aliases, numbers and templates canonical" "$("$VIGIL" policy show alias.policy)" \
"measure func=FILE_CHECK mask=^MAY_READ uid=0
dont_measure fsmagic=0x1021994
measure func=MMAP_CHECK template=ima-sig"
printf 'appraise func=BPRM_CHECK digest_type=verity appraise_type=sigv3\n' >verity.policy
check_eq "show: digest_type= printed before appraise_type= (parses back)" \
	"$("$VIGIL" policy show verity.policy)" "appraise func=BPRM_CHECK digest_type=verity appraise_type=sigv3"
printf 'deny path=/opt/my\\x20app/* subj_exe=/a\\\\b\n' >esc.policy
check_eq "show: escapes in patterns survive" "$("$VIGIL" policy show esc.policy)" 'deny path=/opt/my\x20app/* subj_exe=/a\\b'
check_rc 2 "show: an invalid policy exits 2" "$VIGIL" policy show "$P/bad/bad-uid-euid.policy"
"$VIGIL" policy show "$P/bad/bad-uid-euid.policy" >out 2>err
check_eq "show: ... prints nothing" "$(cat out)" ""
check "show: ... and says where" grep -q "bad-uid-euid.policy:1:31: " err
check_rc 2 "show --kernel: refuses extensions" "$VIGIL" policy show --kernel "$P/ibac-example.policy"

# the real policies in the shared attestation data, wherever they are
if [ -d /work/shared/attest-data ]; then
	n=0
	while IFS= read -r f; do
		n=$((n + 1))
		"$VIGIL" policy show "$f" >real.out 2>real.err
		check "real policy $f: valid" test $? -eq 0
		"$VIGIL" policy show real.out >real.again
		check "real policy $f: show(show(x)) == show(x)" cmp real.out real.again
	done < <(grep -rlE '^(dont_)?(measure|appraise) ' /work/shared/attest-data --exclude='*.md' | sort)
	check "real policies: found Keylime's IMA policies" test "$n" -ge 5
fi
