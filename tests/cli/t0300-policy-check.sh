#!/usr/bin/env bash
# vigil policy check: valid policies exit 0, invalid ones 2 with
# FILE:LINE:COL: message for every bad rule; a rule vigild cannot enforce
# (mmap, kernel hooks, the open flags, LSM contexts, ...) is refused with
# its reason, or a warning with --accept-unenforced; --kernel judges for a
# kernel (vigild's limits not looked at) and refuses vigil's extensions.
. "$SRCDIR/tests/lib.sh"
vg_init
P=$VECTORS/policy
cp -r "$P" pol
cd pol || exit 1

check "policy --help" "$VIGIL" policy --help
check "help policy" "$VIGIL" help policy
check_rc 2 "policy without subcommand" "$VIGIL" policy
check_rc 2 "policy frob" "$VIGIL" policy frob
check_rc 2 "check without FILE" "$VIGIL" policy check
check_rc 2 "check with two FILEs" "$VIGIL" policy check a b
check_rc 2 "check FILE and --builtin" "$VIGIL" policy check --builtin tcb ibac-example.policy
check_rc 2 "check --bogus" "$VIGIL" policy check --bogus x

# each of these has rules for mmap or kernel hooks (and LSM labels): vigild cannot enforce them
for f in kernel-doc-examples.policy keylime/ima-policy-default keylime/ima-policy-keylime \
	 keylime/ima-policy-keylime-etc keylime/demo-ima-policy keylime/rust-keylime-ima-policy; do
	check_rc 2 "check: $f: vigild cannot enforce all of it" "$VIGIL" policy check "$f"
	check "check --accept-unenforced: $f is valid" "$VIGIL" policy check --accept-unenforced "$f"
	check "check --kernel: $f is kernel grammar" "$VIGIL" policy check --kernel "$f"
done
check_eq "check: prints the rule count" "$("$VIGIL" policy check --kernel kernel-doc-examples.policy 2>/dev/null)" \
	"kernel-doc-examples.policy: ok, 42 rules"
check_eq "check --accept-unenforced: ... and how many vigild does not enforce" \
	"$("$VIGIL" policy check --accept-unenforced kernel-doc-examples.policy 2>/dev/null)" \
	"kernel-doc-examples.policy: ok, 42 rules; 18 not enforced by vigild (accepted)"
check_eq "check: 1049-line SELinux policy of rust-keylime" \
	"$("$VIGIL" policy check --kernel keylime/rust-keylime-ima-policy 2>/dev/null)" \
	"keylime/rust-keylime-ima-policy: ok, $(grep -c '^[a-z]' keylime/rust-keylime-ima-policy) rules"

# the reasons, one per refused rule, at the condition vigild cannot observe
"$VIGIL" policy check kernel-doc-examples.policy 2>err >out
check_eq "check: nothing on stdout when vigild cannot enforce the policy" "$(cat out)" ""
check_eq "check: one line per rule vigild cannot enforce" "$(wc -l <err)" 18
check_eq "check: ... of every kind" "$(sed 's/^[^:]*:[0-9]*:[0-9]*: \([a-z_]*=*[A-Z_^]*\).*/\1/' err | LC_ALL=C sort | uniq -c | tr -s ' ' | tr '\n' ';')" \
	" 2 digest_type=; 1 func=FIRMWARE_CHECK; 1 func=KEXEC_INITRAMFS_CHECK; 2 func=KEXEC_KERNEL_CHECK; 2 func=KEY_CHECK; 1 func=MMAP_CHECK; 1 func=MODULE_CHECK; 1 func=SETXATTR_CHECK; 4 obj_type=; 1 subj_role=; 2 subj_user=;"
check "check: MMAP_CHECK: file, line, column, why and how to keep it" \
	grep -qx "kernel-doc-examples.policy:39:9: func=MMAP_CHECK: vigild cannot see mmap(PROT_EXEC) (fanotify has no mmap event); libraries the loader maps, LD_PRELOAD and dlopen() arrive as plain opens (FILE_CHECK); vigild cannot enforce this rule (--accept-unenforced keeps it as documentation)" err
check "check: a kernel hook" \
	grep -qx "kernel-doc-examples.policy:41:9: func=MODULE_CHECK: a hook inside the kernel that fanotify does not report, so vigild never sees it; vigild cannot enforce this rule (--accept-unenforced keeps it as documentation)" err
check "check: an LSM condition, at its column" \
	grep -qx "kernel-doc-examples.policy:46:14: obj_type=: vigild does not read LSM contexts (not implemented), so the condition never holds; vigild cannot enforce this rule (--accept-unenforced keeps it as documentation)" err
printf 'appraise func=BPRM_CHECK\ndeny func=FILE_CHECK mask=^MAY_WRITE appraisal=fail\nmeasure func=FILE_CHECK mask=MAY_APPEND\nappraise func=FILE_CHECK mask=MAY_WRITE\nmeasure mask=MAY_EXEC\n' >flags.policy
check_rc 2 "check: open-flag masks are refused" "$VIGIL" policy check flags.policy
"$VIGIL" policy check flags.policy 2>err
check_eq "check: ... ^MAY_WRITE, MAY_APPEND, MAY_WRITE, and MAY_EXEC without func= (mmap too)" "$(cat err)" \
"flags.policy:2:22: mask=^MAY_WRITE: a permission event does not carry the open flags (an open for writing arrives like one for reading), so vigild cannot tell; vigild cannot enforce this rule (--accept-unenforced keeps it as documentation)
flags.policy:3:25: mask=MAY_APPEND: a permission event does not carry the open flags (an open for writing arrives like one for reading), so vigild cannot tell; vigild cannot enforce this rule (--accept-unenforced keeps it as documentation)
flags.policy:4:26: mask=MAY_WRITE: a permission event does not carry the open flags (an open for writing arrives like one for reading), so vigild cannot tell; vigild cannot enforce this rule (--accept-unenforced keeps it as documentation)
flags.policy:5:9: mask=MAY_EXEC without func=: a kernel matches mmap(PROT_EXEC) with it too, which vigild cannot see (write func=BPRM_CHECK); vigild cannot enforce this rule (--accept-unenforced keeps it as documentation)"
"$VIGIL" policy check --accept-unenforced flags.policy 2>err >out
check "check --accept-unenforced: exit 0" "$VIGIL" policy check --accept-unenforced flags.policy
check_eq "check --accept-unenforced: a warning per rule" "$(grep -c '^flags.policy:[0-9]*:[0-9]*: warning: mask=.*; accepted, not enforced by vigild$' err)" 4
check_eq "check --accept-unenforced: the count on the summary" "$(cat out)" \
	"flags.policy: ok, 5 rules; uses vigil extensions (a kernel would refuse it); 4 not enforced by vigild (accepted)"
check_rc 2 "check: --kernel with --accept-unenforced is a usage error" \
	"$VIGIL" policy check --kernel --accept-unenforced flags.policy
printf 'measure func=FILE_CHECK mask=^MAY_WRITE\n' >kw.policy
check "check --kernel: the open flags are the kernel's business" "$VIGIL" policy check --kernel kw.policy
printf 'appraise func=BPRM_CHECK\nappraise func=FILE_CHECK mask=MAY_READ\nmeasure func=FILE_CHECK mask=^MAY_READ uid=0\nappraise fowner=0\n' >ok.policy
check_eq "check: what vigild observes passes, no warning" "$("$VIGIL" policy check ok.policy 2>&1)" "ok.policy: ok, 4 rules"

# the IBAC examples: the language's (ibac-example) and vigild's (docs/policy.md)
check_rc 2 "check: the language's IBAC example: vigild cannot enforce all of it" "$VIGIL" policy check ibac-example.policy
check_eq "check --accept-unenforced: says it uses extensions" "$("$VIGIL" policy check --accept-unenforced ibac-example.policy 2>/dev/null)" \
	"ibac-example.policy: ok, 11 rules; uses vigil extensions (a kernel would refuse it); 5 not enforced by vigild (accepted)"
check_eq "check: the documentation's IBAC example: every rule enforced by vigild" \
	"$("$VIGIL" policy check ibac-vigild.policy 2>&1)" \
	"ibac-vigild.policy: ok, 10 rules; uses vigil extensions (a kernel would refuse it)"
check "check: the documentation shows it as it is" python3 -c '
import re, sys
doc = open(sys.argv[1]).read()
ex = [l for l in open(sys.argv[2]).read().splitlines() if l and not l.startswith("#")]
blk = re.search(r"```\n(# kernel grammar: measure and appraise what runs.*?)```", doc, re.S).group(1)
got = [l for l in blk.splitlines() if l and not l.startswith("#")]
assert got == ex, (got, ex)' "$SRCDIR/docs/policy.md" ibac-vigild.policy
check_rc 2 "check --kernel: extensions are errors" "$VIGIL" policy check --kernel ibac-example.policy
"$VIGIL" policy check --kernel ibac-example.policy 2>err
check_eq "check --kernel: every access rule is named" "$(grep -c "is a vigil extension" err)" 6
check "check --kernel: first one with its position" \
	grep -qx "ibac-example.policy:10:1: 'allow' is a vigil extension, not in the kernel's grammar" err
check_rc 2 "check --kernel: path= on a measure rule" "$VIGIL" policy check --kernel bad/bad-extension-in-kernel-mode.policy
check "check: path= on a measure rule is fine for vigil" "$VIGIL" policy check bad/bad-extension-in-kernel-mode.policy

# the documentation's one example a kernel refuses
check_rc 2 "check: template=ima-sigv3 (kernel doc) is refused" "$VIGIL" policy check kernel-doc-ima-sigv3.policy
"$VIGIL" policy check kernel-doc-ima-sigv3.policy 2>err
check_eq "check: ... with the template list" "$(cat err)" \
	"kernel-doc-ima-sigv3.policy:4:44: template=ima-sigv3: not a defined template (ima, ima-ng, ima-sig, ima-ngv2, ima-sigv2, ima-buf, ima-modsig, evm-sig)"

# one bad rule rejects the file; every bad rule is listed
check_rc 2 "check: a file with bad rules exits 2" "$VIGIL" policy check bad/bad-several-errors.policy
"$VIGIL" policy check bad/bad-several-errors.policy 2>err >out
check_eq "check: nothing on stdout for an invalid file" "$(cat out)" ""
check_eq "check: all three errors, in order, with line and column" "$(cat err)" \
"bad/bad-several-errors.policy:3:25: func= given twice
bad/bad-several-errors.policy:4:12: pcr= is only valid with the action measure
bad/bad-several-errors.policy:5:14: fsmagic=0xnothex: not a hexadecimal number"

check_rc 2 "check: CRLF line ends are refused, as by the kernel" "$VIGIL" policy check bad/bad-crlf.policy
"$VIGIL" policy check bad/bad-crlf.policy 2>err
check_eq "check: ... and the message says why" "$(head -1 err)" \
	"bad/bad-crlf.policy:1:9: func=BPRM_CHECK?: unknown hook (a carriage return: the kernel splits lines at \\n only)"
check_rc 2 "check: a policy with no rules is refused" "$VIGIL" policy check bad/bad-empty.policy
"$VIGIL" policy check bad/bad-empty.policy 2>err
check_eq "check: ... saying so" "$(cat err)" \
	"vigil policy: bad/bad-empty.policy: no rules (the kernel refuses an empty policy)"
check_rc 2 "check: uid= with euid=" "$VIGIL" policy check bad/bad-uid-euid.policy
"$VIGIL" policy check bad/bad-uid-euid.policy 2>err
check_eq "check: ... names the kernel's reason" "$(cat err)" \
	"bad/bad-uid-euid.policy:1:31: euid: a rule has one of uid=, euid= (the kernel keeps one value for both)"
check_rc 2 "check: missing file" "$VIGIL" policy check no-such-policy
"$VIGIL" policy check no-such-policy 2>err
check_eq "check: ... names it" "$(cat err)" "vigil policy: no-such-policy: No such file or directory"
printf 'measure func=BPRM_CHECK\n' | "$VIGIL" policy check - >out 2>&1
check_eq "check: - reads stdin" "$(cat out)" "<stdin>: ok, 1 rule"

for b in tcb ima_tcb appraise_tcb secure_boot critical_data 'tcb|appraise_tcb|secure_boot'; do
	check "check --kernel --builtin $b" "$VIGIL" policy check --kernel --builtin "$b"
done
check "check --builtin appraise_tcb: vigild enforces all of it" "$VIGIL" policy check --builtin appraise_tcb
for b in tcb ima_tcb secure_boot critical_data; do
	check_rc 2 "check --builtin $b: vigild cannot enforce all of it" "$VIGIL" policy check --builtin "$b"
done
"$VIGIL" policy check --builtin tcb 2>err
check "check --builtin tcb: its MMAP_CHECK rule is named" \
	grep -q "^builtin:tcb:14:9: func=MMAP_CHECK: vigild cannot see mmap(PROT_EXEC)" err
check "check: vigild's variant of tcb (docs/policy.md) is enforced" "$VIGIL" policy check vigild-tcb.policy
check_rc 2 "check --builtin nonsense" "$VIGIL" policy check --builtin nonsense
"$VIGIL" policy check --builtin nonsense 2>err
check "check --builtin: the error lists the names" grep -q "no built-in policy 'nonsense' (tcb, ima_tcb, appraise_tcb, secure_boot, critical_data)" err

# trust=archive (vigild): an appraise option; not with a signature rule, not a kernel policy
printf 'appraise func=BPRM_CHECK trust=archive\n' | "$VIGIL" policy check - >out 2>&1
check_eq "check: trust=archive is vigild's" "$(cat out)" \
	"<stdin>: ok, 1 rule; uses vigil extensions (a kernel would refuse it)"
printf 'appraise func=BPRM_CHECK appraise_type=imasig trust=archive\n' | "$VIGIL" policy check - >out 2>&1
check_eq "check: trust=archive with appraise_type=imasig is refused, with line and column" "$(cat out)" \
	"<stdin>:1:47: trust=archive does not go with appraise_type=imasig: that rule requires a signature label, trust=archive allows files without one (write two rules)"
printf 'measure func=BPRM_CHECK trust=archive\n' | "$VIGIL" policy check - >out 2>&1
check_eq "check: trust=archive after measure is refused" "$(cat out)" \
	"<stdin>:1:25: trust=archive is only valid after the action appraise"
printf 'appraise func=BPRM_CHECK trust=archive\n' >trust.policy
check_eq "show: trust=archive printed back" "$("$VIGIL" policy show trust.policy)" "appraise func=BPRM_CHECK trust=archive"
