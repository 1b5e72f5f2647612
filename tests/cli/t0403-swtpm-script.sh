#!/usr/bin/env bash
# scripts/swtpm.sh: provisioned state with EK certificates that verify
# against the instance's own CA, sha1+sha256 banks, UNIX and TCP modes,
# parallel instances that do not clash, status/stop by PID, state kept
# across a restart (a sealed key still unseals), reset = reboot.
. "$SRCDIR/tests/lib.sh"
vg_init
if ! command -v swtpm >/dev/null || ! command -v tpm2_pcrread >/dev/null; then
	echo "1..0 # SKIP needs swtpm and tpm2-tools"; trap - EXIT; exit 0
fi
S="bash $SRCDIR/scripts/swtpm.sh"
trap '_rc=$?; for d in "$T"/i*; do $S stop "$d" >/dev/null 2>&1; done; (exit $_rc); vg_cleanup' EXIT
export TSS2_LOG=all+none

tcti=$($S start "$T/i1" --watch $$)
check_eq "start prints the UNIX-socket TCTI" "$tcti" "swtpm:path=$T/i1/sock"
check_eq "status prints it too" "$($S status "$T/i1")" "$tcti"
pid=$(cat "$T/i1/pid")
check "the pid file names a live swtpm" grep -q swtpm "/proc/$pid/comm"
openssl x509 -inform der -in "$T/i1/certs/ek-rsa2048.crt" -out "$T/ek.pem"
check "the EK certificate verifies against the instance's CA" \
	openssl verify -CAfile "$T/i1/ek-ca.pem" "$T/ek.pem"
check "the EK certificate is in NV too" env TPM2TOOLS_TCTI="$tcti" tpm2_nvread 0x01c00002 -o "$T/ek-nv.der"
check "sha1 and sha256 banks are allocated" \
	bash -c "TPM2TOOLS_TCTI='$tcti' tpm2_getcap pcrs | grep -A1 -E 'sha1|sha256' | grep -c '0, 1, 2' | grep -qx 2"
check_rc 2 "a second start on a running dir is refused" $S start "$T/i1"

# parallel instances, one of them TCP
$S start "$T/i2" --watch $$ >"$T/t2" & $S start "$T/i3" --tcp --watch $$ >"$T/t3" & wait
t2=$(cat "$T/t2") t3=$(cat "$T/t3")
check "a TCP instance on a loopback port" grep -qE '^swtpm:host=127\.0\.0\.1,port=[0-9]+$' "$T/t3"
TPM2TOOLS_TCTI=$tcti tpm2_pcrextend 16:sha256=$(printf one | sha256sum | cut -c1-64)
TPM2TOOLS_TCTI=$t2 tpm2_pcrextend 16:sha256=$(printf two | sha256sum | cut -c1-64)
p1=$(TPM2TOOLS_TCTI=$tcti tpm2_pcrread sha256:16) p2=$(TPM2TOOLS_TCTI=$t2 tpm2_pcrread sha256:16)
p3=$(TPM2TOOLS_TCTI=$t3 tpm2_pcrread sha256:16)
check "three instances, three PCR states" test "$p1" != "$p2" -a "$p2" != "$p3" -a "$p1" != "$p3"
check_eq "vigil talks to the TCP instance" \
	"$(VIGIL_TCTI=$t3 "$VIGIL" key create --tpm --pcrs 16 -o "$T/k3.key" | sed 's|.*: ||')" \
	"TPM key, sealed to sha256 PCRs 16"

# restart keeps the state: the sealed key still unseals (same SRK seed)
pid3=$(cat "$T/i3/pid")
check "stop by PID" $S stop "$T/i3"
check_rc 1 "status after stop" $S status "$T/i3"
check_rc 1 "the process is gone (or a zombie)" grep -qv '^[^)]*) [ZX]' "/proc/$pid3/stat"
t3=$($S start "$T/i3" --tcp --watch $$)
check "restarted on a new port, same state: the key unseals" env VIGIL_TCTI="$t3" "$VIGIL" key unseal "$T/k3.key"
check_eq "stop shut the TPM down in order: its clock is safe after the restart" \
	"$(TPM2TOOLS_TCTI=$t3 tpm2_readclock | sed -n 's/^ *safe: //p')" yes
TPM2TOOLS_TCTI=$t3 tpm2_pcrextend 16:sha256=$(printf x | sha256sum | cut -c1-64)
check_rc 2 "after an extend it does not" env VIGIL_TCTI="$t3" "$VIGIL" key unseal "$T/k3.key"
check "reset (reboot) over TCP" $S reset "$T/i3"
check "after the reboot PCR 16 is back: it unseals" env VIGIL_TCTI="$t3" "$VIGIL" key unseal "$T/k3.key"
check "reset over UNIX sockets" $S reset "$T/i1"
check_eq "PCR 16 is zero after the reboot" "$(TPM2TOOLS_TCTI=$tcti tpm2_pcrread sha256:16 | sed -n 's/.*16 *: 0x//p')" \
	0000000000000000000000000000000000000000000000000000000000000000
# a power cut (no TPM2_Shutdown) is what a verifier must see as unsafe
kill -9 "$(cat "$T/i2/pid")"
$S stop "$T/i2" 2>/dev/null
t2=$($S start "$T/i2" --watch $$)
check_eq "after a kill without TPM2_Shutdown the clock is not safe" \
	"$(TPM2TOOLS_TCTI=$t2 tpm2_readclock | sed -n 's/^ *safe: //p')" no
for i in 1 2 3; do $S stop "$T/i$i"; done
check_eq "all stopped" "$(pgrep -f "tpmstate dir=$T/" | wc -l)" 0
check_rc 2 "unknown command" $S frob "$T/i1"

# --watch: the instance ends with the process it watches (a crashed test)
sleep 60 & sp=$!
$S start "$T/i4" --watch $sp >/dev/null
p4=$(cat "$T/i4/pid")
check "the watched instance runs" $S status "$T/i4"
kill $sp; wait $sp 2>/dev/null
for _ in $(seq 40); do grep -qv '^[^)]*) [ZX]' "/proc/$p4/stat" 2>/dev/null || break; sleep 0.1; done
check_rc 1 "it is gone once the watched process ends" grep -qv '^[^)]*) [ZX]' "/proc/$p4/stat"
rm -f "$T/i4/pid"
