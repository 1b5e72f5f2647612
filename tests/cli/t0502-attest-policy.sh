#!/usr/bin/env bash
# t0502: `vigil attest policy create|check|import` offline: a policy from a
# tree accepts the list measuring that tree and names the file that
# changed; a policy from a list; Keylime runtime policies, DSSE envelopes
# and flat allowlists import; bad input is refused with the line or key.
. "$SRCDIR/tests/lib.sh"
vg_init
A=$VECTORS/attest
mkdir -p root/usr/bin root/etc
for f in ls cat "with space"; do echo "binary $f" >"root/usr/bin/$f"; done
echo conf >root/etc/conf
ln -s ls root/usr/bin/link
check "policy from a tree" "$VIGIL" attest policy create --tree root -o tree.json
check "paths as seen from the tree's root" grep -q '"/usr/bin/ls"' tree.json
check "spaces become _ as in the kernel's event names" grep -q '"/usr/bin/with_space"' tree.json
check_rc 1 "symlinks are not hashed" grep -q '"/usr/bin/link"' tree.json
check "policy create --root PREFIX" "$VIGIL" attest policy create --tree root --root /mnt -o t2.json
check "paths under the prefix" grep -q '"/mnt/usr/bin/ls"' t2.json
"$VIGIL" measure --log list --pcrs list.pcrs root/usr/bin/ls root/etc/conf >/dev/null
check "policy from a list" "$VIGIL" attest policy create --log list -o fromlog.json
check "the list passes its own policy" "$VIGIL" attest policy check --policy fromlog.json list
echo changed >>root/usr/bin/ls
"$VIGIL" measure --log list --pcrs list.pcrs root/usr/bin/ls >/dev/null
"$VIGIL" attest policy check --policy fromlog.json list >out
check_eq "a changed file fails (exit 1)" "$?" 1
check "the verdict names entry, file and digest" \
	grep -Eq "^FAIL policy.digest entry=3 path=\S*root/usr/bin/ls digest=sha256:[0-9a-f]{64}" out
check "excludes skip a path" "$VIGIL" attest policy create --log list --exclude '.*/usr/bin/ls$' -o ex.json
# vigil's own state and credentials are excluded by default: they change,
# and root reads them (the operator's token at every `vigil attest`, the
# list itself); here vigild's state, measured in a mount namespace of the
# test's whose /run is a tmpfs of its own
own() { unshare -m bash -c "mount -t tmpfs own /run && mkdir /run/vigil && echo '$1' >/run/vigil/state &&
	'$VIGIL' measure --log '$T/own' --pcrs '$T/own.pcrs' /run/vigil/state /usr/bin/true" >/dev/null; }
own one
check "policy create: vigil's own state and credentials excluded by default" \
	"$VIGIL" attest policy create --log own -o own.json
check_eq "... the excludes it writes" "$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["excludes"]))' own.json)" \
	"/var/lib/vigil/ /run/vigil/ /run/vigil-swtpm/ /var/log/vigil/ /etc/vigil/[^/]*-tokens?\$"
"$VIGIL" attest policy create --log own --no-default-excludes -o own-all.json
check_eq "... none with --no-default-excludes" \
	"$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("excludes", [])))' own-all.json)" 0
own two
check "the state changed, read by root again: the default policy passes the list" \
	"$VIGIL" attest policy check --policy own.json own
"$VIGIL" attest policy check --policy own-all.json own >out
check_eq "... without the default excludes it fails (exit 1)" "$?" 1
check "... naming the file" grep -q "^FAIL policy.digest .*path=/run/vigil/state" out
"$VIGIL" attest policy create --log list -o all.json
check "the regenerated policy holds both digests of the file" \
	"$VIGIL" attest policy check --policy all.json list
# Keylime formats
check "Keylime runtime policy imports" "$VIGIL" attest policy import "$A/runtime-policy-test.json" -o k.json
check "DSSE envelope imports to the same policy" "$VIGIL" attest policy import "$A/runtime-policy-test-signed.json" -o ks.json
check "same content" cmp k.json ks.json
check "Keylime test log passes Keylime's test policy" "$VIGIL" attest policy check \
	--policy "$A/keylime__test_ima_verification__RUNTIME_POLICY_TEST.json" \
	"$A/keylime__test_ima_verification__MEASUREMENTS.ima"
"$VIGIL" attest policy check --policy "$A/keylime__test_ima_verification__RUNTIME_POLICY_WRONG.json" \
	"$A/keylime__test_ima_verification__MEASUREMENTS.ima" >out
check_eq "and fails the wrong one (exit 1)" "$?" 1
check "typed boot_aggregate failure" grep -q "^FAIL policy.boot_aggregate entry=0" out
check "ima-sig signatures verify with the policy's keys" "$VIGIL" attest policy check \
	--policy "$A/keylime__test_ima_verification__RUNTIME_POLICY_WITH_VERIFICATION_KEYS.json" \
	"$A/keylime__test_ima_verification__SIGNATURES.ima"
printf 'e4cb9f5709c88376b5fc3743cd88e76b9aae8f3d992d845678de5215edb31216 boot_aggregate\n' >flat
check "flat allowlist imports" "$VIGIL" attest policy import flat -o flat.json
check "the allowlist's digest is there" grep -q e4cb9f57 flat.json
printf 'zz /x\n' >badflat
"$VIGIL" attest policy import badflat >/dev/null 2>err
check_eq "bad allowlist: exit 2" "$?" 2
check "names the line" grep -q "allowlist line 1" err
echo '{"digests": {"/x": ["nothex"]}}' >bad.json
check_rc 2 "bad digest: exit 2" "$VIGIL" attest policy import bad.json
check_rc 2 "create needs --log or --tree" "$VIGIL" attest policy create
check "tree and log together: union" "$VIGIL" attest policy create --tree root --log list -o both.json
check "both: the tree's files" grep -q '"/usr/bin/cat"' both.json
check "both: the log's boot_aggregate" sh -c "grep -A1 '"boot_aggregate"' both.json | grep -q sha256:"
check "help" "$VIGIL" attest --help
check_rc 2 "unknown subcommand" "$VIGIL" attest frobnicate
