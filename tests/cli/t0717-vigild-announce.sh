#!/usr/bin/env bash
# t0717: the next boot announced while vigild holds the measurement list
# (issue 45). vigild holds its list (flock) while it runs, so `vigil trust
# boot announce` and the package's hook (apt/boot-announce) send each
# entry over vigild's control socket, and vigild's writer thread appends,
# syncs and extends it (here its software bank: --no-tpm) before it
# answers. The entries are byte for byte those of a list written
# directly (which t0529's verifier accepts as announced), the list
# replays to the bank, a list vigild does not hold is still written by
# the command itself; only root may announce (the socket opened to all),
# a malformed request is refused and writes nothing, and a client that
# sends half a request holds the loop no longer than 200 ms.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
PY=/usr/bin/python3
SLOW=
trap '_rc=$?; [ -n "$SLOW" ] && kill $SLOW 2>/dev/null; vd_stop; (exit $_rc); vg_cleanup' EXIT
head -c 32 /dev/urandom >hk
vg_ext4 "$T/fs" 32
F=$T/fs
cp /usr/bin/true "$F/good"
"$VIGIL" label -q --hmac-key hk "$F/good"
head -c 100000 /dev/urandom >"$T/initrd.img-6.1.0-99"
L1='/boot/vmlinuz-6.1.0-99 root=UUID=0f2c "quiet splash" ro'
L2='/boot/vmlinuz-6.1.0-98 root=UUID=0f2c ro'
# the default control socket, in this test's own /run (lib-vigild.sh): the hook names none
mkdir -p /run/vigil
export VD_CTL=/run/vigil/vigild.sock
ML=$T/ml
entries() { "$VIGIL" log show "$1" | grep -c .; }
ann_lines() { "$VIGIL" log show "$1" | awk '$5 ~ /^next-boot-/'; }

printf 'measure func=BPRM_CHECK\nappraise func=BPRM_CHECK\n' >pol
check "vigild starts, measuring into its list (software bank)" \
	vd_start --policy pol --watch "$F" --hmac-key hk --no-tpm --log "$ML"
check "a labeled program runs and is measured" timeout 5 "$F/good"
n0=$(entries "$ML")
check_rc 2 "the list is vigild's: writing it directly is refused (busy)" \
	"$VIGIL" trust boot announce --log "$ML" --initrd "$T/initrd.img-6.1.0-99" --control "$T/none"
"$VIGIL" trust boot announce --dry-run --initrd "$T/initrd.img-6.1.0-99" --cmdline "$L1" >want.out
check "announce with vigild holding the list: vigild appends" \
	sh -c '"$0" trust boot announce --log "$1" --initrd "$2" --cmdline "$3" >got.out 2>got.err' \
	"$VIGIL" "$ML" "$T/initrd.img-6.1.0-99" "$L1"
check_eq "... the same output as ever" "$(cat got.out)" "$(cat want.out)"
check_eq "... and nothing on stderr" "$(cat got.err)" ""
check_eq "... two entries more in the list" "$(entries "$ML")" "$((n0 + 2))"
check_eq "... the initrd's, named and hashed as announce names it" \
	"$(ann_lines "$ML" | awk '$3 == "ima-ng" {print $4, $5}')" \
	"sha256:$(sha256sum <"$T/initrd.img-6.1.0-99" | cut -d' ' -f1) next-boot-initrd:$T/initrd.img-6.1.0-99"
check_eq "... the command line's, as its buffer" \
	"$(ann_lines "$ML" | awk '$3 == "ima-buf" {print $6}' | $PY -c 'import sys; print(bytes.fromhex(sys.stdin.read().strip()).decode())')" \
	"$L1"
check "... the list replays exactly to vigild's bank" "$VIGIL" log replay --pcrs "$ML.pcrs" "$ML"
check "... vigild says so in its log" grep -q "announced the next boot's command line $L1" "$T/vigild.err"
check_eq "... vigild's status counts them" \
	"$("$VIGIL" status --control "$VD_CTL" --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["measurements"])')" \
	"$((n0 + 2))"
# the same announcement written directly into a list of its own: the same entries, byte for byte
check "the same announced into a list of no vigild's: written directly, as before" \
	"$VIGIL" trust boot announce --log "$T/direct" --initrd "$T/initrd.img-6.1.0-99" --cmdline "$L1"
check_eq "... with the very entries vigild wrote (template digests and all)" \
	"$(ann_lines "$T/direct")" "$(ann_lines "$ML")"
check_eq "... and vigild's list untouched by it" "$(entries "$ML")" "$((n0 + 2))"

# the package's hook, as update-initramfs runs it (it asks for the TPM: vigild's is used)
cat >grub.cfg <<CFG
menuentry 'Debian' {
	linux	/boot/vmlinuz-6.1.0-99 root=UUID=0f2c ro quiet
	initrd	/boot/initrd.img-6.1.0-99
}
CFG
check "the initramfs hook announces through vigild, and says nothing" \
	sh -c 'env VIGIL="$0" VIGIL_ANNOUNCE_LOG="$1" VIGIL_ANNOUNCE_GRUBCFG=grub.cfg \
		sh "$2/apt/boot-announce" initramfs 6.1.0-99 "$3" 2>hook.err && ! [ -s hook.err ]' \
	"$VIGIL" "$ML" "$SRCDIR" "$T/initrd.img-6.1.0-99"
check_eq "... its initrd and command line in the list" "$(entries "$ML")" "$((n0 + 4))"
check "... which still replays to the bank" "$VIGIL" log replay --pcrs "$ML.pcrs" "$ML"

# ---- refusals: nothing written ----
n1=$(entries "$ML")
chmod 0666 "$VD_CTL"	# as if an administrator opened the socket: vigild still asks who
check_rc 2 "an unprivileged user is refused, whatever the socket's mode" \
	sh -c 'setpriv --reuid 65534 --regid 65534 --clear-groups "$0" trust boot announce \
		--log "$1" --cmdline "$2" 2>nobody.err' "$VIGIL" "$ML" "$L2"
check "... told why" grep -q "vigild refused the announcement: only root may announce" nobody.err
check "... and vigild logs who" grep -q "announcement from uid 65534 .* refused: only root may announce" "$T/vigild.err"
chmod 0600 "$VD_CTL"
ask() {	# LINE: one raw request, vigild's answer
	$PY - "$VD_CTL" "$1" <<'PYEOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().read().strip())
PYEOF
}
hx() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
LOGX=$(hx "$(realpath "$ML")")
D64=$(sha256sum <"$T/initrd.img-6.1.0-99" | cut -d' ' -f1)
refused() {	# WHAT LINE
	check_eq "a malformed announcement is refused: $1" "$(ask "$2")" \
		'{"error":"announcement not well formed","announce":"refused"}'
}
refused "a relative initrd path" "announce initrd $LOGX 10 sha256:$D64 $(hx initrd.img)"
refused "a digest one digit short" "announce initrd $LOGX 10 sha256:${D64:1} $(hx /boot/initrd.img)"
refused "a digest of another algorithm" "announce initrd $LOGX 10 sha1:${D64:0:40} $(hx /boot/initrd.img)"
refused "uppercase hex" "announce initrd $LOGX 10 sha256:${D64^^} $(hx /boot/initrd.img)"
refused "an odd count of hex digits" "announce cmdline $LOGX 10 $(hx x)0"
refused "a NUL in the line" "announce cmdline $LOGX 10 2f6200"
refused "PCR 24" "announce cmdline $LOGX 24 $(hx /boot/vmlinuz)"
refused "PCR 010" "announce cmdline $LOGX 010 $(hx /boot/vmlinuz)"
refused "a command line of 1025 bytes" "announce cmdline $LOGX 10 $(head -c 1025 /dev/zero | tr '\0' a | od -An -tx1 | tr -d ' \n')"
refused "a path of PATH_MAX bytes" "announce initrd $LOGX 10 sha256:$D64 $(hx "/$(head -c 4095 /dev/zero | tr '\0' a)")"
refused "a field too many" "announce cmdline $LOGX 10 $(hx /boot/vmlinuz) 00"
refused "a template of its own" "announce ima-sig $LOGX 10 $(hx /boot/vmlinuz)"
refused "an empty line" "announce cmdline $LOGX 10 "
check_eq "another list is not vigild's: the client writes it itself" \
	"$(ask "announce cmdline $(hx /tmp/other) 10 $(hx /boot/vmlinuz)")" \
	'{"error":"not vigild'"'"'s measurement list","announce":"not-this-list"}'
check_eq "... nothing of these in the list" "$(entries "$ML")" "$n1"
check "... which still replays to the bank" "$VIGIL" log replay --pcrs "$ML.pcrs" "$ML"

# half a request, then nothing: the loop reads it no longer than 200 ms
$PY - "$VD_CTL" <<'PYEOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"announce cmdline 2f")
time.sleep(30)
PYEOF
SLOW=$!
sleep 0.2
t0=$(date +%s%N)
check "a client sending half a request does not stop vigild: status answers" \
	timeout 5 "$VIGIL" status --control "$VD_CTL" --json
ms=$((($(date +%s%N) - t0) / 1000000))
check "... at once ($ms ms)" test "$ms" -lt 1500
check "... and a program runs" timeout 5 "$F/good"
kill $SLOW 2>/dev/null; wait $SLOW 2>/dev/null; SLOW=
check "vigild stops cleanly" vd_stop
check "... and the list it leaves replays to its bank" "$VIGIL" log replay --pcrs "$ML.pcrs" "$ML"
