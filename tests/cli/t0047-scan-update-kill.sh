#!/usr/bin/env bash
# vigil scan --update killed at every step of its commit (strace delivers
# SIGKILL on entry to the syscall: before keeping DB.old, before renaming
# it, before syncing and renaming the new database, after the rename) and
# at random moments of its walk: DB is always a whole, authenticated
# database, either the one before (byte for byte) or the new one (which
# checks clean); DB.old, when present, is one too; the next --update
# succeeds and leaves no temporary file behind.
. "$SRCDIR/tests/lib.sh"
vg_init
if ! command -v strace >/dev/null; then
	echo "1..0 # SKIP needs strace (scripts/deps.sh)"
	exit 0
fi
HK=$VECTORS/evmctl/keys/evm-key-plain.bin
export VIGIL_CONFIG=/dev/null
# LeakSanitizer cannot run under ptrace; the kill leaks by design
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
R=$T/r
mkdir -p $R
for d in 1 2 3 4; do
	mkdir $R/d$d
	for i in $(seq 1 150); do head -c $((i * 97)) /dev/urandom >$R/d$d/f$i; done
done
"$VIGIL" scan --init -q -o base.db --hmac-key "$HK" $R
cp -a $R before

# usable DB: one of the two databases a kill may leave
usable() {	# LABEL
	local rc want
	"$VIGIL" scan --check db -q --hmac-key "$HK" >/dev/null 2>&1; rc=$?
	if cmp -s db base.db; then
		check_eq "$1: DB is the database before the update" "$rc" 1
		want=1
	else
		check_eq "$1: DB is the new database, and checks clean" "$rc" 0
		want=0
	fi
	if [ -e db.old ]; then
		check "$1: DB.old is the previous database, byte for byte" cmp db.old base.db
	fi
	check_rc $want "$1: the next --update runs" "$VIGIL" scan --update db -q --hmac-key "$HK"
	check "$1: and its database checks clean" "$VIGIL" scan --check db -q --hmac-key "$HK"
	check_eq "$1: no temporary file left" "$(ls -a | grep -c vigil-tmp)" 0
}

reset() {	# the tree as recorded in base.db, then one file changed
	rm -rf $R db db.old .db.vigil-tmp.* db.old.vigil-tmp
	cp -a before $R
	cp base.db db
	echo changed >>$R/d2/f7
}

# the commit's syscalls, in order: link(DB, DB.old.vigil-tmp),
# rename(-> DB.old), fsync(new), rename(new -> DB), fsync(directory)
for point in link:1 rename:1 fsync:1 rename:2 fsync:2; do
	reset
	strace -f -qq -o "$T/strace.log" -e trace="${point%:*}" \
		-e inject="${point%:*}:signal=KILL:when=${point#*:}" \
		"$VIGIL" scan --update db -q --hmac-key "$HK" >/dev/null 2>&1
	rc=$?
	check_eq "killed on entry to ${point%:*} #${point#*:}: by SIGKILL" "$rc" 137
	case $point in
	link:1 | rename:1 | fsync:1 | rename:2)
		check "killed before the new database's rename: DB as it was" cmp db base.db ;;
	fsync:2)
		check "killed after the rename: DB is the new database" \
			"$VIGIL" scan --check db -q --hmac-key "$HK" ;;
	esac
	usable "killed at ${point%:*} #${point#*:}"
done

# and at random moments of the walk and the write
for delay in 0.05 0.15 0.3 0.6; do
	reset
	timeout -s KILL "$delay" "$VIGIL" scan --update db -q --hmac-key "$HK" >/dev/null 2>&1
	usable "killed after ${delay} s"
done
