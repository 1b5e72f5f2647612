#!/usr/bin/env bash
# vigil policy check: valid policies exit 0, invalid ones 2 with
# FILE:LINE:COL: message for every bad rule; warnings for hooks vigil
# cannot observe; --kernel refuses vigil's extensions.
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

for f in kernel-doc-examples.policy keylime/ima-policy-default keylime/ima-policy-keylime \
	 keylime/ima-policy-keylime-etc keylime/demo-ima-policy keylime/rust-keylime-ima-policy; do
	check "check: $f is valid" "$VIGIL" policy check "$f"
	check "check --kernel: $f is kernel grammar" "$VIGIL" policy check --kernel "$f"
done
check_eq "check: prints the rule count" "$("$VIGIL" policy check kernel-doc-examples.policy 2>/dev/null)" \
	"kernel-doc-examples.policy: ok, 42 rules"
check_eq "check: 1049-line SELinux policy of rust-keylime" \
	"$("$VIGIL" policy check keylime/rust-keylime-ima-policy 2>/dev/null)" \
	"keylime/rust-keylime-ima-policy: ok, $(grep -c '^[a-z]' keylime/rust-keylime-ima-policy) rules"

"$VIGIL" policy check kernel-doc-examples.policy 2>err >/dev/null
check_eq "check: warns once per rule vigil cannot enforce" "$(grep -c 'warning: func=' err)" 8
check "check: the warning names file, line, column and the hook" \
	grep -qx "kernel-doc-examples.policy:41:9: warning: func=MODULE_CHECK: vigil cannot observe this hook (only BPRM_CHECK, FILE_CHECK, MMAP_CHECK); the rule is kept but vigil cannot enforce it" err
"$VIGIL" policy check keylime/ima-policy-keylime 2>err >/dev/null
check_eq "check: no warning for observable hooks only ... but MODULE_CHECK" "$(grep -c warning err)" 1

check "check: the IBAC example is valid" "$VIGIL" policy check ibac-example.policy
check_eq "check: says it uses extensions" "$("$VIGIL" policy check ibac-example.policy 2>/dev/null)" \
	"ibac-example.policy: ok, 11 rules; uses vigil extensions (a kernel would refuse it)"
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
	check "check --builtin $b" "$VIGIL" policy check --builtin "$b"
done
check_rc 2 "check --builtin nonsense" "$VIGIL" policy check --builtin nonsense
"$VIGIL" policy check --builtin nonsense 2>err
check "check --builtin: the error lists the names" grep -q "no built-in policy 'nonsense' (tcb, ima_tcb, appraise_tcb, secure_boot, critical_data)" err
