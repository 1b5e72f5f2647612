#!/usr/bin/env bash
# vigil scan bound to a TPM NV counter (docs/scan.md, "Rollback"): after
# --update the older copy is refused as rolled-back, saying how to
# recover, and the current one is accepted; a database one ahead of the
# TPM (vigil killed between renaming the database into place and
# advancing the counter: strace's fault injection) is accepted and the
# counter advanced; a database more than one ahead (another TPM's), or
# bound to an index the TPM does not have, is refused; with no TPM
# reachable a bound database is refused unless --ignore-tpm-counter.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
vg_tpm_start
HK=$VECTORS/evmctl/keys/evm-key-plain.bin
IDX=0x01564753
mkdir d
echo one >d/a; echo two >d/b

tpm_value() {	# the counter @1 (default $IDX) of the TPM of $TPM2TOOLS_TCTI, decimal
	tpm2_nvread -C "${1:-$IDX}" "${1:-$IDX}" -s 8 | od -An -tx1 | tr -d ' \n' |
		(read -r h; echo $((16#$h)))
}
db_value() {	# the counter recorded in database @1, decimal
	echo $((16#$(sqlite3 "$1" "SELECT substr(hex(value), 9) FROM meta WHERE key = 'tpm_counter'")))
}

"$VIGIL" scan --init -q --tpm-counter -o db --hmac-key "$HK" d 2>err; rc=$?
check_eq "--init --tpm-counter: exit 0" "$rc" 0
check "... the counter defined (default index)" grep -q "defined TPM NV counter $IDX" err
check_eq "... the database records the TPM's value, advanced after the rename" \
	"$(db_value db)" "$(tpm_value)"
check_eq "... and names the index" \
	"$(sqlite3 db "SELECT substr(hex(value), 1, 8) FROM meta WHERE key = 'tpm_counter'")" 01564753
check "... the index is a counter, no secret to read or increment it" sh -c \
	"tpm2_nvreadpublic $IDX | grep -q 'friendly: authwrite|nt=0x1|ownerread|authread|no_da|written\$'"
check "a bound database checks clean" "$VIGIL" scan --check db -q --hmac-key "$HK"

cp db db.v1
echo changed >d/a
check_rc 1 "--update (changes: exit 1)" "$VIGIL" scan --update db -q --hmac-key "$HK"
v=$(tpm_value)
check_eq "... the counter advanced by one" "$v" "$(( $(db_value db.v1) + 1 ))"
check_eq "... the new database records it" "$(db_value db)" "$v"
check_rc 2 "the older copy: refused (exit 2)" "$VIGIL" scan --check db.v1 -q --hmac-key "$HK"
cp "$T/.out" err
check "... as rolled-back, the values named" \
	grep -q "db.v1: rolled-back: its counter is $((v - 1)), TPM NV counter $IDX is $v" err
check "... saying how to recover" grep -q "Put the current database back if you have it; otherwise check the system by other means .*, then record a new database: vigil scan --init --tpm-counter=$IDX -o db.v1 d\$" err
check_rc 2 "... --update of it too" "$VIGIL" scan --update db.v1 -q --hmac-key "$HK"
check "the current database: accepted" "$VIGIL" scan --check db -q --hmac-key "$HK"
check_rc 1 "--compare reads both without the TPM (the older is the point)" \
	"$VIGIL" scan --compare db.v1 db -q --hmac-key "$HK"

# one ahead: killed after the rename, before the increment (the second
# fsync of --update is the directory's, after renaming the new database
# into place: outfile.c)
if command -v strace >/dev/null; then
	echo three >d/c
	strace -f -qq -o "$T/strace.log" -e trace=fsync -e inject=fsync:signal=KILL:when=2 \
		"$VIGIL" scan --update db -q --hmac-key "$HK" >/dev/null 2>&1
	check_eq "killed between the rename and the increment: the new database in place" \
		"$(sqlite3 db "SELECT count(*) FROM files WHERE path = CAST('d/c' AS BLOB)")" 1
	check_eq "... one ahead of the TPM" "$(db_value db)" "$(( $(tpm_value) + 1 ))"
	"$VIGIL" scan --check db -q --hmac-key "$HK" 2>err; rc=$?
	check_eq "... accepted (exit 0)" "$rc" 0
	check "... saying the counter is advanced now" \
		grep -q "db: its counter ($(db_value db)) was one ahead of TPM NV counter $IDX .*; advanced now" err
	check_eq "... and it is" "$(tpm_value)" "$(db_value db)"
	"$VIGIL" scan --check db -q --hmac-key "$HK" 2>err
	check_eq "... the next check: nothing to say" "$(cat err)" ""
else
	echo "ok - # SKIP the one-ahead state needs strace"
fi

# the TPM ahead of the database by two: rolled back
tpm2_nvincrement -C "$IDX" "$IDX"; tpm2_nvincrement -C "$IDX" "$IDX"
check_rc 2 "the TPM two ahead: refused" "$VIGIL" scan --check db -q --hmac-key "$HK"
cp "$T/.out" err
check "... as rolled-back" grep -q "rolled-back" err
check "--init of a new database recovers" "$VIGIL" scan --init -q --tpm-counter -o db --hmac-key "$HK" d
check "... which checks clean" "$VIGIL" scan --check db -q --hmac-key "$HK"

# another TPM: its counter far ahead; an index this TPM does not have
TCTI2=$(bash "$SRCDIR/scripts/swtpm.sh" start "$T/tpm2" --watch $$)
VIGIL_TCTI=$TCTI2 "$VIGIL" scan --init -q --tpm-counter -o far.db --hmac-key "$HK" d 2>/dev/null
for _ in $(seq 20); do TPM2TOOLS_TCTI=$TCTI2 tpm2_nvincrement -C "$IDX" "$IDX"; done
VIGIL_TCTI=$TCTI2 "$VIGIL" scan --init -q --tpm-counter -o far.db --hmac-key "$HK" d
VIGIL_TCTI=$TCTI2 "$VIGIL" scan --init -q --tpm-counter=0x01000123 -o other.db --hmac-key "$HK" d 2>/dev/null
bash "$SRCDIR/scripts/swtpm.sh" stop "$T/tpm2" >/dev/null 2>&1
check_eq "another TPM's database: its counter ahead of ours by more than one" \
	"$(( $(db_value far.db) > $(tpm_value) + 1 ))" 1
check_rc 2 "... refused" "$VIGIL" scan --check far.db -q --hmac-key "$HK"
cp "$T/.out" err
check "... saying so" grep -q "far.db: refused: its counter is $(db_value far.db), more than one ahead of TPM NV counter $IDX" err
check_rc 2 "a database bound to an index this TPM lacks: refused" \
	"$VIGIL" scan --check other.db -q --hmac-key "$HK"
cp "$T/.out" err
check "... saying so, and how to recover" grep -q "other.db: refused: the TPM has no NV index 0x01000123: the TPM was cleared, or this is not the TPM .*vigil scan --init --tpm-counter=0x01000123 -o other.db d" err

# the counter undefined and an ordinary index defined in its place,
# written with the database's value: an index that is not a counter is refused
"$VIGIL" scan --init -q --tpm-counter=0x01000200 -o sub.db --hmac-key "$HK" d 2>/dev/null
check "a second database on its own counter" "$VIGIL" scan --check sub.db -q --hmac-key "$HK"
tpm2_nvundefine -C o 0x01000200
tpm2_nvdefine -C o -s 8 -a "authread|authwrite|ownerread" 0x01000200 >/dev/null
printf "%016x" "$(db_value sub.db)" | xxd -r -p | tpm2_nvwrite -C 0x01000200 -i - 0x01000200
check_eq "... replaced by an ordinary index holding the database's value" "$(tpm_value 0x01000200)" \
	"$(db_value sub.db)"
check_rc 2 "... refused" "$VIGIL" scan --check sub.db -q --hmac-key "$HK"
cp "$T/.out" err
check "... as not a counter" grep -q "sub.db: refused: TPM NV index 0x01000200 is not a counter" err

# no TPM
check_rc 2 "no TPM reachable: a bound database refused" \
	env VIGIL_TCTI="swtpm:path=$T/no-such-socket" "$VIGIL" scan --check db -q --hmac-key "$HK"
cp "$T/.out" err
check "... saying how to go on without" grep -q "db: bound to TPM NV counter $IDX, and the TPM cannot be reached: refused (--ignore-tpm-counter" err
env VIGIL_TCTI="swtpm:path=$T/no-such-socket" "$VIGIL" scan --check db -q --ignore-tpm-counter \
	--hmac-key "$HK" 2>err; rc=$?
check_eq "... --ignore-tpm-counter: checked (exit 0)" "$rc" 0
check "... saying what is not detected" grep -q "not checked (--ignore-tpm-counter): a rolled-back copy would not be detected" err
check_rc 2 "--ignore-tpm-counter goes with --check alone" \
	"$VIGIL" scan --update db -q --ignore-tpm-counter --hmac-key "$HK"

# an unbound database: --check --tpm-counter requires a binding, --update --tpm-counter binds
"$VIGIL" scan --init -q -o plain.db --hmac-key "$HK" d
check "an unbound database checks without a TPM" \
	env VIGIL_TCTI="swtpm:path=$T/no-such-socket" "$VIGIL" scan --check plain.db -q --hmac-key "$HK"
check_rc 2 "--check --tpm-counter: an unbound database refused" \
	"$VIGIL" scan --check plain.db -q --tpm-counter --hmac-key "$HK"
cp "$T/.out" err
check "... saying how to bind it" grep -q "plain.db: not bound to a TPM counter .*vigil scan --update plain.db --tpm-counter" err
check "--update --tpm-counter binds it" "$VIGIL" scan --update plain.db -q --tpm-counter --hmac-key "$HK"
check_eq "... to the TPM's value" "$(db_value plain.db)" "$(tpm_value)"
check_rc 2 "... and db, bound to the same counter, is now rolled back (one counter per database)" \
	"$VIGIL" scan --check db -q --hmac-key "$HK"
check_rc 2 "--tpm-counter=NVINDEX outside the NV range: usage" \
	"$VIGIL" scan --init -q --tpm-counter=0x81000001 -o x.db --hmac-key "$HK" d
check_rc 2 "--tpm-counter with --compare: usage" \
	"$VIGIL" scan --compare db db --tpm-counter --hmac-key "$HK"
