#!/usr/bin/env bash
# Writes through a shared mapping, as an unprivileged attacker makes them:
# open O_RDWR, mmap(MAP_SHARED), change bytes, munmap, close, and at once
# exec or open the file, many times with no pause. Such writes change no
# time stamp (the page is already dirty) and raise no FS_MODIFY, so a
# verdict keyed on the file's version, or a kernel ignore mark, would stay.
# vigild keeps a verdict only under a read lease, which the kernel breaks
# before any open for writing proceeds (the writer waits until vigild has
# dropped the verdict and the ignore mark): the changed content is denied
# at its very next use and measured, and the restored content runs again.
# A writer that keeps its mapping open makes every other open a fresh
# appraisal. On tmpfs and on a loop-mounted ext4, under an enforcing vigild.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
head -c 32 /dev/urandom >hk
N=${VD_MMAP_ITER:-200}
U=65534	# nobody: the attacker needs no privilege
trap '_rc=$?; vd_stop; (exit $_rc); vg_cleanup' EXIT
mkdir -p "$T/tm"; mount -t tmpfs -o size=32m vigil-tm "$T/tm"
vg_ext4 "$T/fs" 64
cat >pol <<P
appraise func=BPRM_CHECK
measure func=BPRM_CHECK
appraise func=FILE_CHECK fowner=0
P
# the offset of the digit that the script exits with
OFF=$(printf '#!/bin/sh\nexit ' | wc -c)

for fs in tm fs; do
	F=$T/$fs/d
	mkdir -p "$F"; chmod 755 "$F"
	printf '#!/bin/sh\nexit 7\n' >"$F/prog"; chmod 755 "$F/prog"; chown $U:$U "$F/prog"
	printf '#!/bin/sh\nexit 9\n' >"evil-$fs"	# what the attacker makes of it, for its digest
	for k in $(seq 40); do yes "data $k" | head -c 4096 >"$F/data$k"; chmod 666 "$F/data$k"; done
	yes held | head -c 4096 >"$F/held"; chmod 666 "$F/held"
	"$VIGIL" label -q --hmac-key hk "$F/prog" "$F"/data* "$F/held"
done
check "vigild enforces" vd_start --policy pol --watch "$T/tm" --watch "$T/fs" --hmac-key hk \
	--log "$T/ml" --no-tpm

for fs in tm fs; do
	F=$T/$fs/d
	name=$([ $fs = tm ] && echo tmpfs || echo ext4)
	check_eq "$name: the labeled program runs" "$(setpriv --reuid=$U --regid=$U --clear-groups \
		sh -c "'$F/prog'; echo \$?")" 7
	out=$(setpriv --reuid=$U --regid=$U --clear-groups "$VG_MMAPFLIP" exec "$F/prog" "$OFF" 7 9 "$N")
	rc=$?
	echo "# $name exec x$N: $out"
	check_eq "$name: $N x (map-write, exec): every changed program denied, every restored one ran" \
		"$rc $out" "0 evil_denied=$N evil_ran=0 good_ran=$N good_denied=0 other=0"
	out=$(setpriv --reuid=$U --regid=$U --clear-groups "$VG_MMAPFLIP" open 0 Z "$F"/data*)
	rc=$?
	echo "# $name open: $out"
	check_eq "$name: 40 files (open, map-write, open): every changed file denied at its next open" \
		"$rc $out" "0 first_ok=40 evil_denied=40 evil_read=0 other=0"
	out=$(setpriv --reuid=$U --regid=$U --clear-groups "$VG_MMAPFLIP" hold "$F/held" 0 h Z 50)
	rc=$?
	echo "# $name hold: $out"
	check_eq "$name: a writer that keeps its mapping: every other open sees the content now there" \
		"$rc $out" "0 evil_denied=50 evil_read=0 good_read=50 good_denied=0 other=0"
	# the changed program was measured at its exec, though its version never changed
	want=$(sha256sum <"evil-$fs" | cut -d' ' -f1)
	check "$name: the changed content is in the measurement list" \
		sh -c "'$VIGIL' log show '$T/ml' | grep -q 'sha256:$want $F/prog'"
done
js=$("$VIGIL" status --control "$T/ctl" --json)
check "the lease mechanism did the work: breaks seen, ignore marks used, writers seen" python3 -c '
import json,sys; c=json.loads(sys.argv[1])["counters"]
assert c["lease_breaks"]>0 and c["ignore_marks"]>0 and c["lease_writers"]>0, c' "$js"
check "the list replays to the software bank" "$VIGIL" log replay --pcrs "$T/ml.pcrs" "$T/ml"
check "vigild stops cleanly" vd_stop

# A cached verdict carries what it was asked: a hash label that passed an
# open does not pass an exec that wants a signature (appraise_type=imasig).
S=$T/tm/sig; mkdir -p "$S"
cp /usr/bin/true "$S/a"; cp /usr/bin/true "$S/b"
"$VIGIL" label -q --hmac-key hk "$S/a" "$S/b"
printf 'appraise func=FILE_CHECK mask=MAY_READ\nappraise func=BPRM_CHECK appraise_type=imasig\n' >pol2
check "vigild (open: any label; exec: a signature)" vd_start --policy pol2 --watch "$T/tm" --hmac-key hk \
	--allow-empty-keyring
check_rc 126 "a hash-labeled program exec'd first is denied" "$S/b"
check "the same kind of file read first passes (a hash label is enough for an open)" sh -c "cat '$S/a' >/dev/null"
check_rc 126 "... and its exec is still denied: the cached pass was made without a signature" "$S/a"
check_eq "... for the kernel's reason" "$(vd_audit_reason /sig/a deny)" IMA-signature-required
check "... while reads of it still pass" sh -c "cat '$S/a' >/dev/null"
check "vigild stops" vd_stop

for fs in tm fs; do
	check_rc 1 "$fs: offline appraisal agrees: the changed files fail" \
		"$VIGIL" appraise -q --hmac-key hk "$T/$fs/d/data1"
done
