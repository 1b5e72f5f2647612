#!/usr/bin/env bash
# t0529: zero-touch measured boot (issue 45). The verifier knows the next
# boot's chain from the signed archive: no policy edit after an upgrade.
#
# The real boot chain of Debian 12 (tests/lib-bootdebs.sh: shim-signed,
# grub-efi-amd64-signed and linux-image-amd64's kernel from bookworm, the
# kernel of bookworm-security, with both suites' signed lists, fetched
# once per build directory) is booted into swtpm as firmware, shim and
# GRUB measure it (tests/helpers/mb_build.py: each event's digest from the
# real images, Secure Boot on, the db certificate the Microsoft UEFI CA of
# shim's own signature, shim's vendor certificate Debian's CA), PCRs 0-9
# and 14 extended and quoted, judged by vigil-verifier with --trust-db and
# a policy of `vigil attest policy create --trusted DB --boot`. Every
# image's Authenticode digest is compared first: vigil's (C), pesign's,
# and mb_build.py's (pefile and its own hash).
#
#   boot 1   shim, GRUB, the bookworm kernel: trusted (the enrolment boot:
#            its initrd and command line are the policy's)
#   upgrade  trust build of the bookworm-security kernel over the database
#            (apt's hook does it): the bookworm kernel superseded, the
#            verifier reloads the file; the host announces the new initrd
#            and command line (vigil trust boot announce --grub-cfg, as the
#            initramfs hook does) in its attested list
#   boot 2   the bookworm-security kernel, its initrd, its command line:
#            trusted, the policy untouched
#   boot 3   back to the bookworm kernel within the grace: trusted
#   then, each failing boot.event naming the event and why: a kernel not
#   from the archive (bookworm-security's with one byte of its code changed,
#   signed by a local key as a locally built kernel enrolled with a MOK
#   would be), a GRUB not from the archive (Debian's own GRUB changed and
#   re-signed the same way: no other distribution's signed GRUB is on
#   Debian's mirrors), an initrd no attested list announced, and the
#   bookworm kernel again once the grace has passed (a downgrade).
# Cost: ~145 MB from deb.debian.org on the first run of a build directory;
# skipped without it.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-attest.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
. "$SRCDIR/tests/lib-bootdebs.sh"
if ! vg_bootdebs; then
	echo "1..0 # SKIP the Debian archive cannot be reached (tests/lib-bootdebs.sh)"
	exit 0
fi
for t in pesign sbsign sbattach; do
	command -v $t >/dev/null || { echo "1..0 # SKIP needs $t (scripts/deps.sh)"; exit 0; }
done
/usr/bin/python3 -c 'import pefile' 2>/dev/null || { echo "1..0 # SKIP needs python3-pefile"; exit 0; }
att_auth
vg_tpm_start

AGENT=${VIGIL_AGENT_BIN:?}
VERIFIER=${VIGIL_VERIFIER_BIN:?}
MB="/usr/bin/python3 $SRCDIR/tests/helpers/mb_build.py"
C=$VG_BOOTDEBS
AP=$(vg_port); VP=$(vg_port)
export VIGIL_VERIFIER=http://127.0.0.1:$VP
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
VPID=
trap '_rc=$?; for p in ${VPID:-} ${AGENT_PID:-}; do kill $p 2>/dev/null; done; wait 2>/dev/null;
      bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
GRACE=25
t_start=$(date +%s)

# ---- the images of the archive, and two that are not ----
mkdir -p img
for d in "$SHIM_DEB" "$GRUB_DEB" "$KOLD_DEB" "$KNEW_DEB"; do
	dpkg-deb --fsys-tarfile "$d" | tar -C img -x --wildcards './usr/lib/shim/shim*' \
		'./usr/lib/grub/*-efi-signed/*' './boot/vmlinuz-*' 2>/dev/null
done
SHIM=img/usr/lib/shim/shimx64.efi.signed
GRUB=img/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed
KOLD_IMG=img/boot/vmlinuz-$KOLD
KNEW_IMG=img/boot/vmlinuz-$KNEW
check "the archive's shim, GRUB and both kernels extracted" test -s $SHIM -a -s $GRUB -a -s $KOLD_IMG -a -s $KNEW_IMG
openssl req -x509 -newkey rsa:2048 -nodes -keyout local.key -out local.pem -days 30 \
	-subj "/CN=vigil test local key" 2>/dev/null
openssl x509 -in local.pem -outform DER -out local.der
# one byte of the first section's code changed, the signature removed, signed by the local key
resign() {	# IN OUT
	sbattach --remove "$1" 2>/dev/null; cp "$1" "$2.unsigned"
	/usr/bin/python3 - "$2.unsigned" <<'PY'
import sys, pefile
p = sys.argv[1]
pe = pefile.PE(p, fast_load=True)
s = next(s for s in pe.sections if s.Name.rstrip(b"\0") == b".text")
off = s.PointerToRawData + s.SizeOfRawData // 2
pe.close()
b = bytearray(open(p, "rb").read())
b[off] ^= 0x01
open(p, "wb").write(bytes(b))
PY
	sbsign --key local.key --cert local.pem --output "$2" "$2.unsigned" >/dev/null 2>&1
}
cp $KNEW_IMG knew.signed && cp $GRUB grub.signed
check "a local kernel: bookworm-security's with a byte changed, signed by a local key" \
	sh -c "$(declare -f resign); resign knew.signed local-vmlinuz && test -s local-vmlinuz"
check "a GRUB not the archive's: Debian's with a byte changed, signed by the local key" \
	sh -c "$(declare -f resign); resign grub.signed local-grub && test -s local-grub"

# ---- every image's Authenticode digest: vigil, pesign, pefile + own hash ----
IMGS="$SHIM $(ls img/usr/lib/grub/x86_64-efi-signed/*.efi.signed | tr '\n' ' ')$KOLD_IMG $KNEW_IMG local-vmlinuz local-grub"
t0=$(date +%s%N)
"$VIGIL" trust boot hash $IMGS | sed 's/^sha256://' >vigil.ah
t1=$(date +%s%N)
for f in $IMGS; do echo "$(pesign -h -i "$f" | sed -n 's/^hash: //p')  $f"; done >pesign.ah
t2=$(date +%s%N)
$MB authenticode $IMGS >pefile.ah
check_eq "$(wc -l <vigil.ah) images: vigil's Authenticode digests are pesign's" "$(cat vigil.ah)" "$(cat pesign.ah)"
check_eq "... and mb_build.py's (pefile, its own hash)" "$(cat vigil.ah)" "$(cat pefile.ah)"
echo "# Authenticode of $(wc -l <vigil.ah) images ($(cat $IMGS | wc -c) bytes): vigil $(((t1 - t0) / 1000000)) ms (one process, ASan build), pesign $(((t2 - t1) / 1000000)) ms (one process each)"
ah() { grep -F "  $1" vigil.ah | cut -d' ' -f1; }

# ---- the trust database: bookworm's chain (as installed) ----
head -c 64 /dev/urandom >key
mkdir -p tdb
d1=$C/debs-old d2=$C/debs-new
DB=$T/tdb/trust.db
check "trust build: shim-signed, grub-efi-amd64-signed, the bookworm kernel" \
	"$VIGIL" trust build -o "$DB" -H key --lists "$C/lists" --debs $d1 --all-debs --grace $GRACE
"$VIGIL" trust boot show "$DB" -H key --json >boot1.json
check "... trust boot show --json: its schema" /usr/bin/python3 "$SRCDIR/tests/helpers/json_validate.py" \
	"$SRCDIR/docs/schemas/trust-boot-show.schema.json" --lines boot1.json
jq_boot() { /usr/bin/python3 -c "
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
print($2)" "$1"; }
check_eq "... records their boot images: shim, 4 GRUB images, the kernel, all current" \
	"$(jq_boot boot1.json '" ".join(sorted("%s/%s" % (x["role"], x["state"]) for x in r))')" \
	"GRUB/current GRUB/current GRUB/current GRUB/current kernel/current shim/current"
check_eq "... each by the Authenticode digest pesign gives" \
	"$(jq_boot boot1.json '" ".join(sorted(x["authenticode"] for x in r))')" \
	"$(for f in $SHIM img/usr/lib/grub/x86_64-efi-signed/*.efi.signed $KOLD_IMG; do ah "$f"; done | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "... and the kernel's file digest (GRUB's PCR 9)" \
	"$(jq_boot boot1.json '[x["sha256"] for x in r if x["role"] == "kernel"][0]')" \
	"$(sha256sum <$KOLD_IMG | cut -d' ' -f1)"

# ---- boots: the log built, the TPM reset and extended, a new list, the agent ----
/usr/bin/python3 "$SRCDIR/tests/helpers/mb_build.py" certs $SHIM .
check "the Microsoft UEFI CA (shim's signature) and Debian's CA (shim's vendor_cert)" \
	sh -c "openssl x509 -inform DER -in db.der -noout -subject | grep -q 'UEFI CA 2011' &&
	       openssl x509 -inform DER -in vendor.der -noout -subject | grep -q 'Debian Secure Boot CA'"
for n in pk kek; do
	openssl req -x509 -newkey rsa:2048 -nodes -keyout $n.key -out $n.pem -days 30 \
		-subj "/CN=vigil test $n" 2>/dev/null && openssl x509 -in $n.pem -outform DER -out $n.der
done
mkdir -p boot tree
echo "file a" >tree/a
printf 'initramfs of %s\n' "$KOLD" >boot/initrd.img-$KOLD
printf 'initramfs of %s\n' "$KNEW" >boot/initrd.img-$KNEW
UUID=0e3b1c1e-2f0a-4f4e-9a9e-0b5c9d1f2a3b
line() { echo "/boot/vmlinuz-$1 root=UUID=$UUID ro quiet"; }
mklog() {	# OUT KERNEL-IMG ABI INITRD [MB OPTIONS]
	local out=$1 k=$2 abi=$3 ird=$4
	shift 4
	$MB log "$out" --shim $SHIM --grub "${GRUB_IMG:-$GRUB}" --kernel "$k" \
		--kernel-path "/boot/vmlinuz-$abi" --initrd "$ird" --initrd-path "/boot/initrd.img-$abi" \
		--cmdline "$(line "$abi")" --db-cert db.der --vendor-cert vendor.der --pk pk.der --kek kek.der "$@"
}
measure() { "$VIGIL" measure --log "$T/log" --tpm >/dev/null 2>&1 "$@"; }
start_agent() {
	"$AGENT" $ATT_AAUTH --listen 127.0.0.1:$AP --state "$T/st" --log "$T/log" --id host1 \
		--boot-log "$1" 2>>agent.err &
	AGENT_PID=$!
	for i in $(seq 600); do curl -s "127.0.0.1:$AP/v1/identity" >/dev/null 2>&1 && break; sleep 0.1; done
}
boot() {	# LOG
	if [ -n "${AGENT_PID:-}" ]; then kill $AGENT_PID; wait $AGENT_PID 2>/dev/null; fi
	rm -f "$T/log"
	bash "$SRCDIR/scripts/swtpm.sh" reset "$TPMDIR" || return 1
	vg_tpm_boot_extend "$1" || return 1
	measure "$T/tree/a" || return 1
	start_agent "$1"
}
wait_for() { att_wait host1 "$@"; }
hist() { "$VIGIL" attest status host1 --history; }
mkdir -p st

check "boot 1 built: shim, GRUB, the bookworm kernel" mklog L1.bin $KOLD_IMG $KOLD boot/initrd.img-$KOLD
check_eq "... its PCR 4 applications are the images' Authenticode digests" \
	"$("$VIGIL" log boot show --json L1.bin | /usr/bin/python3 -c '
import json, sys
print(" ".join(e["digests"]["sha256"] for e in json.load(sys.stdin)["events"]
               if e["type"] == "EV_EFI_BOOT_SERVICES_APPLICATION"))')" \
	"$(ah $SHIM) $(ah $GRUB) $(ah $KOLD_IMG)"
check "booted" boot L1.bin

"$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$VP --db "sqlite:$T/verifier.db" --interval 200 \
	--ek-ca "$TPMDIR/ek-ca.pem" --trust-db "$DB" --trust-key key 2>>verifier.err &
VPID=$!
for i in $(seq 600); do curl -s "127.0.0.1:$VP/v1/agents" >/dev/null 2>&1 && break; sleep 0.1; done
check "the verifier loaded the database's boot images" grep -q "trust database .*: [0-9]* file digests, 6 boot images" verifier.err

check "policy create --trusted DB --boot --boot-log (the enrolment boot)" "$VIGIL" attest policy create \
	--trusted "$DB" --hmac-key key --boot --boot-log L1.bin --no-boot-pins --log "$T/log" \
	--exclude '^boot_aggregate$' -o boot.json
check_eq "... a measured_boot section: the firmware's keys from the log, the chain from the archive" \
	"$(/usr/bin/python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["measured_boot"]
print(m["secure_boot"], m["from_archive"], m["announced"], "shim" in m, "kernel" in m, len(m["initrd"]))' boot.json)" \
	"True ['shim', 'grub', 'kernel', 'vmlinuz'] ['initrd', 'kernel_cmdline'] False False 1"
check_rc 2 "--boot without --trusted is a usage error" "$VIGIL" attest policy create --boot \
	--boot-log L1.bin -o /dev/null
check "policy uploaded" "$VIGIL" attest policy set boot boot.json
pol1=$("$VIGIL" attest policy get boot | sha256sum)
check "registration" "$VIGIL" attest add host1 --agent http://127.0.0.1:$AP --policy boot
check "boot 1 (the bookworm kernel): trusted" wait_for trusted

# ---- apt upgrade: the trust database follows, the host announces ----
t_upgrade=$(date +%s)
check "trust build of the bookworm-security kernel over the database (apt's hook)" \
	"$VIGIL" trust build -o "$DB" -H key --lists "$C/lists" --debs $d2 --all-debs --grace $GRACE
"$VIGIL" trust boot show "$DB" -H key --json >boot2.json
check_eq "... the bookworm kernel superseded by it" \
	"$(jq_boot boot2.json '" ".join(sorted("%s/%s" % (x["package"], x["state"]) for x in r if x["role"] == "kernel"))')" \
	"linux-image-$KOLD/superseded linux-image-$KNEW/current"
check "the verifier reloaded the changed file" sh -c "for i in \$(seq 50); do grep -q 'reloaded: .* 7 boot images' verifier.err && exit 0; sleep 0.1; done; exit 1"
cat >boot/grub.cfg <<EOF
menuentry 'Debian GNU/Linux' --class debian --class gnu-linux {
	insmod part_gpt
	linux	/boot/vmlinuz-$KNEW root=UUID=$UUID ro  quiet
	initrd	/boot/initrd.img-$KNEW
}
menuentry 'Debian GNU/Linux, with Linux $KOLD' --class debian {
	linux	/boot/vmlinuz-$KOLD root=UUID=$UUID ro  quiet
	initrd	/boot/initrd.img-$KOLD
}
EOF
r0=$(att_field rounds)
rounds_past() { local i; for i in $(seq 100); do [ "$(att_field rounds)" -gt "$1" ] && return 0; sleep 0.1; done; return 1; }
# update-initramfs runs the hook (/etc/initramfs/post-update.d/vigil) with the version and the initrd
check "the initramfs hook announces the new initrd and grub.cfg's command lines" \
	env VIGIL="$VIGIL" VIGIL_ANNOUNCE_LOG="$T/log" VIGIL_ANNOUNCE_GRUBCFG=boot/grub.cfg \
	sh "$SRCDIR/apt/boot-announce" initramfs $KNEW boot/initrd.img-$KNEW
check_eq "... and said nothing (on a problem it says why, and still exits 0)" "$(cat "$T/.out")" ""
check_eq "... the list's announcements, as GRUB will measure the lines" \
	"$("$VIGIL" log show "$T/log" | awk '$3 == "ima-buf" && $5 == "next-boot-cmdline" {print $6}' |
	   /usr/bin/python3 -c 'import sys; [print(bytes.fromhex(l.strip()).decode()) for l in sys.stdin]')" \
	"$(line $KNEW)
$(line $KOLD)"
check_eq "... and the initrd's digest" \
	"$("$VIGIL" log show "$T/log" | awk '$5 ~ /^next-boot-initrd:/ {print $4}')" \
	"sha256:$(sha256sum <boot/initrd.img-$KNEW | cut -d' ' -f1)"
check "... attested by the next rounds" rounds_past $((r0 + 2))
check "... still trusted" wait_for trusted

# ---- boot 2: the new kernel, no policy edit ----
check "boot 2 built: the bookworm-security kernel, its initrd" mklog L2.bin $KNEW_IMG $KNEW boot/initrd.img-$KNEW
check "rebooted" boot L2.bin
check "boot 2 (the bookworm-security kernel): trusted, the policy untouched" wait_for trusted
check_eq "... the policy the verifier has is still the enrolment's" \
	"$("$VIGIL" attest policy get boot | sha256sum)" "$pol1"
check "boot 3 built: back to the bookworm kernel (GRUB's other entry)" mklog L3.bin $KOLD_IMG $KOLD boot/initrd.img-$KOLD
check "rebooted" boot L3.bin
check "boot 3 (the superseded kernel, within the grace): trusted" wait_for trusted

# ---- boots the verifier must refuse, each naming its event ----
failing() {	# NAME LOG PATTERN
	check "$1: rebooted" boot "$2"
	"$VIGIL" attest reactivate host1 >/dev/null 2>&1
	check "$1: failed boot.event" wait_for failed boot.event
	hist >"hist.$1"
	check "$1: ... naming the event: $3" grep -Eq "boot.event .*$3" "hist.$1"
	check "$1: ... and not boot.pcr_mismatch (the quote is the log's)" sh -c "! grep -q 'boot.pcr_mismatch' hist.$1"
}
H='sha256:[0-9a-f]{64}'
check "a boot with the local kernel built" mklog Lk.bin local-vmlinuz $KNEW boot/initrd.img-$KNEW --kernel-key local.der
failing local-kernel Lk.bin \
	"event [0-9]+ EV_EFI_BOOT_SERVICES_APPLICATION PCR 4: kernel $H is no kernel of the archive \(no package of the trust database ships it\)"
check "local-kernel: ... GRUB's read of it too (PCR 9)" grep -Eq \
	"boot.event .*EV_IPL PCR 9: kernel file $H is no kernel file of the archive" hist.local-kernel
check "local-kernel: ... and the key that verified it (PCR 7)" grep -Eq \
	"boot.event .*EV_EFI_VARIABLE_AUTHORITY PCR 7: an image was verified by MokListRT certificate" hist.local-kernel
GRUB_IMG=local-grub
mklog Lg.bin $KNEW_IMG $KNEW boot/initrd.img-$KNEW --grub-key local.der
unset GRUB_IMG
check "a boot with the GRUB not from the archive built" test -s Lg.bin
failing foreign-grub Lg.bin \
	"event [0-9]+ EV_EFI_BOOT_SERVICES_APPLICATION PCR 4: GRUB $H is no GRUB of the archive"
printf 'initramfs of %s, changed on the disk\n' "$KNEW" >boot/initrd-other
check "a boot with an initrd nobody announced built" mklog Li.bin $KNEW_IMG $KNEW boot/initrd-other
failing initrd-unannounced Li.bin \
	"event [0-9]+ EV_IPL PCR 9: initrd $H was not announced by an earlier boot's attested measurement list"
check "boot 2 again: trusted after reactivation" boot L2.bin
"$VIGIL" attest reactivate host1 >/dev/null 2>&1
check "... trusted" wait_for trusted

# ---- the grace passes: the bookworm kernel is a downgrade ----
while [ $(($(date +%s) - t_upgrade)) -le $GRACE ]; do sleep 1; done
check "trust build after the grace" "$VIGIL" trust build -o "$DB" -H key --lists "$C/lists" --debs $d2 \
	--all-debs --grace $GRACE
"$VIGIL" trust boot show "$DB" -H key --json >boot3.json
check_eq "... the bookworm kernel expired (kept, to be named)" \
	"$(jq_boot boot3.json '[x["state"] for x in r if x["package"] == "linux-image-'$KOLD'"][0]')" expired
check "the verifier reloaded it" sh -c "for i in \$(seq 50); do [ \$(grep -c 'reloaded: ' verifier.err) -ge 2 ] && exit 0; sleep 0.1; done; exit 1"
failing downgrade L3.bin \
	"event [0-9]+ EV_EFI_BOOT_SERVICES_APPLICATION PCR 4: kernel $H is linux-image-$KOLD $KOLD_VER's, superseded by $KNEW_VER since [0-9T:Z-]+ and past the trust database's grace: a downgrade"
check "the verifier survived" kill -0 $VPID

# ---- a --trust-db the network process may not read again: said at start ----
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out tdb/ear.pem 2>/dev/null
noreload() {	# ERR OPTIONS...
	local err=$1 p pid i
	shift
	p=$(vg_port)
	timeout 60 "$VERIFIER" $ATT_VAUTH --listen 127.0.0.1:$p --ek-ca "$TPMDIR/ek-ca.pem" \
		--trust-db "$DB" --trust-key key "$@" 2>"$err" &
	pid=$!
	for i in $(seq 300); do grep -q 'listening on' "$err" && break; sleep 0.1; done
	kill $pid 2>/dev/null; wait $pid 2>/dev/null
	grep -q 'listening on' "$err"
}
check "a verifier whose SQLite store is in the trust database's directory starts" \
	noreload nr1.err --db "sqlite:$T/tdb/v2.db"
check "... and says the database is not reloaded" \
	grep -q "in a directory that holds the store's database, .*not reloaded" nr1.err
check "a verifier whose EAR key is in the trust database's directory starts" \
	noreload nr2.err --db "sqlite:$T/v3.db" --ear-key "$T/tdb/ear.pem"
check "... and says the database is not reloaded (the network process never reads the key)" \
	grep -q "in a directory that holds --ear-key, .*not reloaded" nr2.err
check "the daemons logged nothing from the sanitizers" sh -c "! grep -q 'Sanitizer' '$T'/verifier.err '$T'/agent.err '$T'/nr1.err '$T'/nr2.err"
echo "# t0529 ran $(($(date +%s) - t_start)) s"
