#!/usr/bin/env bash
# vigil policy explain: which rule decides each action class for one
# access, and why; exit 1 when the access would be denied.
. "$SRCDIR/tests/lib.sh"
vg_init
P=$VECTORS/policy
X="$VIGIL policy explain"

check_rc 2 "explain without --func" $X --uid 0 --builtin tcb
check_rc 2 "explain: unknown hook" $X --func FOO --builtin tcb
check_rc 2 "explain: bad mask" $X --func FILE_CHECK --mask MAY_FLY --builtin tcb
check_rc 2 "explain: bad uid" $X --func FILE_CHECK --uid -1 --builtin tcb
check_rc 2 "explain: bad appraisal" $X --func FILE_CHECK --appraisal good --builtin tcb
check_rc 2 "explain: bad --attr" $X --func FILE_CHECK --attr user.x=1 --builtin tcb
check_rc 2 "explain: invalid policy" $X --func FILE_CHECK "$P/bad/bad-crlf.policy"

$X --func BPRM_CHECK --mask MAY_EXEC --uid 1000 --fsmagic ext4 --builtin tcb >out
check "explain tcb exec: exit 0" test $? -eq 0
check_eq "explain tcb exec: the whole answer" "$(cat out)" \
"access: func=BPRM_CHECK mask=MAY_EXEC uid=1000 euid=1000 gid=0 egid=0 fowner=0 fgroup=0 fsmagic=0xef53 fsname=ext4 appraisal=unknown subj_appraisal=unknown
measure   yes   line 15: measure func=BPRM_CHECK mask=MAY_EXEC
appraise  no    no rule matched
audit     no    no rule matched
hash      no    no rule matched
access    allow no access rule matched (default allow)
options:  pcr=10 template=(default)"

out=$($X --func FILE_CHECK --mask MAY_READ --uid 0 --fsmagic tmpfs --builtin 'tcb|appraise_tcb')
check "explain: tmpfs read by root is not measured (dont_measure FILE_CHECK tmpfs)" \
	grep -qx "measure   no    line 4: dont_measure func=FILE_CHECK fsmagic=0x1021994" <<<"$out"
check "explain: ... and not appraised" grep -qx "appraise  no    line 24: dont_appraise fsmagic=0x1021994" <<<"$out"
out=$($X --func FILE_CHECK --mask 'MAY_READ|MAY_WRITE' --uid 1000 --euid 0 --fowner 0 --fsmagic xfs --builtin 'tcb|appraise_tcb')
check "explain: ^MAY_READ euid=0 measures a read-write open by euid 0" \
	grep -qx "measure   yes   line 16: measure func=FILE_CHECK mask=^MAY_READ euid=0" <<<"$out"
check "explain: appraise fowner=0" grep -qx "appraise  yes   line 35: appraise fowner=0" <<<"$out"
out=$($X -v --func FILE_CHECK --mask MAY_WRITE --uid 1000 --fowner 1000 --fsmagic xfs --builtin tcb)
check "explain -v: says which condition failed" \
	grep -qx "                line 16: skipped, mask does not hold" <<<"$out"
check "explain -v: for every earlier rule of the class" \
	grep -qx "                line 1: skipped, fsmagic does not hold" <<<"$out"

# vigil access rules
E="$P/ibac-example.policy"
$X --func BPRM_CHECK --path /usr/sbin/sshd --appraisal pass --attr security.vigil.revision=7 "$E" >out
check "explain: sshd revision 7 is allowed (exit 0)" test $? -eq 0
check "explain: ... by the allow rule" grep -qx "access    allow line 10: allow func=BPRM_CHECK path=/usr/sbin/sshd appraisal=pass attr=security.vigil.revision>=7" out
check "explain: ... and appraisal needs a signature" grep -qx "options:  pcr=10 template=(default) appraise_type=imasig" out
check_rc 1 "explain: sshd revision 6 (rollback) is denied, exit 1" \
	$X --func BPRM_CHECK --path /usr/sbin/sshd --appraisal pass --attr security.vigil.revision=6 "$E"
$X --func BPRM_CHECK --path /usr/sbin/sshd --appraisal pass --attr security.vigil.revision=6 "$E" >out
check "explain: ... by the deny rule" grep -qx "access    deny  line 11: deny func=BPRM_CHECK path=/usr/sbin/sshd" out
check_rc 1 "explain: executing an unappraised file is denied" $X --func BPRM_CHECK --path /usr/bin/ls "$E"
check "explain: an appraised one is not" $X --func BPRM_CHECK --path /usr/bin/ls --appraisal pass "$E"
check_rc 1 "explain: root writing a file that failed appraisal is denied" \
	$X --func FILE_CHECK --mask MAY_WRITE --uid 0 --path /etc/shadow --appraisal fail --subj-appraisal pass "$E"
check "explain: a user writing it is not" \
	$X --func FILE_CHECK --mask MAY_WRITE --uid 1000 --path /etc/shadow --appraisal fail --subj-appraisal pass "$E"
out=$($X --func FILE_CHECK --path /etc/hosts --exe /tmp/x "$E")
check "explain: an unappraised program reading /etc is audited" \
	grep -qx "access    audit line 19: audit_access func=FILE_CHECK path=/etc/ subj_appraisal!=pass" <<<"$out"
out=$($X --func MMAP_CHECK --path /usr/lib/libx.so --attr security.vigil.integrity=medium "$E"; echo "rc=$?")
check "explain: integrity medium below high is denied for exec mmap" grep -qx "rc=1" <<<"$out"
# the dynamic loader's open (ld.so PROG) is also the exec of PROG, as vigild matches it
printf 'appraise func=BPRM_CHECK\nmeasure func=FILE_CHECK mask=MAY_READ\n' >loader.policy
check "explain: a plain open is not appraised by a BPRM_CHECK rule" \
	grep -qx "appraise  no    no rule matched" <<<"$($X --func FILE_CHECK --path /mnt/prog loader.policy)"
out=$($X --func FILE_CHECK --loader --path /mnt/prog loader.policy)
check "explain --loader: the loader's open is appraised as an exec" \
	grep -qx "appraise  yes   line 1: appraise func=BPRM_CHECK" <<<"$out"
check "explain --loader: ... and still measured as an open" \
	grep -qx "measure   yes   line 2: measure func=FILE_CHECK mask=MAY_READ" <<<"$out"
check_rc 2 "explain --loader: only with --func FILE_CHECK" $X --func BPRM_CHECK --loader loader.policy
printf 'measure func=KEY_CHECK keyrings=.ima|.evm pcr=11\n' >keys.policy
check "explain: KEY_CHECK with a keyring of the rule" \
	grep -qx "measure   yes   line 1: measure func=KEY_CHECK keyrings=.ima|.evm pcr=11" \
	<<<"$($X --func KEY_CHECK --data .evm keys.policy)"
check "explain: KEY_CHECK with another keyring" \
	grep -qx "measure   no    no rule matched" <<<"$($X --func KEY_CHECK --data .platform keys.policy)"
check "explain: the kernel doc's first KEY_CHECK rule takes every keyring" \
	grep -qx "measure   yes   line 64: measure func=KEY_CHECK" \
	<<<"$($X --func KEY_CHECK --data .platform "$P/kernel-doc-examples.policy")"
check "explain: pcr= of the measure rule, appraise_type= of the appraise rule" \
	grep -qx "options:  pcr=4 template=(default) appraise_type=imasig|modsig" \
	<<<"$($X --func KEXEC_KERNEL_CHECK --fowner 5 "$P/kernel-doc-examples.policy")"

# --file: the facts of a real file (owner, group, filesystem, path)
printf x >f1
chown 1234:55 f1
printf 'measure func=FILE_CHECK fowner=1234 fgroup=55 fsmagic=0x1021994 path=%s/f1\nmeasure func=FILE_CHECK\n' "$T" >own.policy
check "explain --file: owner, group, tmpfs magic and real path match" \
	grep -qx "measure   yes   line 1: measure func=FILE_CHECK fsmagic=0x1021994 fowner=1234 fgroup=55 path=$T/f1" \
	<<<"$(cd / && $X --func FILE_CHECK --file "$T/./f1" "$T/own.policy")"
chown 0:0 f1
check "explain --file: another owner does not" \
	grep -qx "measure   yes   line 2: measure func=FILE_CHECK" <<<"$($X --func FILE_CHECK --file f1 own.policy)"
vg_ext4 "$T/e4"
uuid=$(blkid -s UUID -o value "$(findmnt -n -o SOURCE "$T/e4")")
printf x >"$T/e4/g"
printf 'dont_measure fsuuid=%s\nmeasure fsmagic=0xef53\n' "$uuid" >uuid.policy
check "explain --file: the filesystem UUID of an ext4 mount" \
	grep -qx "measure   no    line 1: dont_measure fsuuid=$uuid" <<<"$($X --func FILE_CHECK --file "$T/e4/g" uuid.policy)"
check_rc 2 "explain --file: a missing file" $X --func FILE_CHECK --file nope own.policy
