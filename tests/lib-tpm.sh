# shellcheck shell=bash
# tests/lib-tpm.sh - a private swtpm for one test script, on top of lib.sh.
#
#   vg_tpm_start            start swtpm in $T/tpm (after vg_init); exports
#                           VIGIL_TCTI and TPM2TOOLS_TCTI; stopped by PID
#                           when the script exits
#   vg_tpm_reset            orderly reboot: PCRs back to their boot values
#
# A script that needs swtpm and cannot have it prints a TAP skip.
TPMDIR=

vg_tpm_start() {
	if ! command -v swtpm >/dev/null || ! command -v tpm2_pcrread >/dev/null; then
		echo "1..0 # SKIP needs swtpm and tpm2-tools (scripts/deps.sh)"
		trap - EXIT
		exit 0
	fi
	TPMDIR=$T/tpm
	trap '_rc=$?; bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1; (exit $_rc); vg_cleanup' EXIT
	VIGIL_TCTI=$(bash "$SRCDIR/scripts/swtpm.sh" start "$TPMDIR" --watch $$) || {
		echo "not ok 1 - swtpm starts"
		exit 1
	}
	export VIGIL_TCTI TPM2TOOLS_TCTI=$VIGIL_TCTI TSS2_LOG=all+none
}

vg_tpm_reset() {
	bash "$SRCDIR/scripts/swtpm.sh" reset "$TPMDIR"
}

# vg_tpm_boot_extend LOG: "boot" the TCG event log LOG into the swtpm:
# extend every record for PCRs 0-9 and 14 (shim's MOK lists; EV_NO_ACTION
# aside) in every bank the log has, so that a quote of those PCRs matches
# the log's replay. Uses $VIGIL; leaves the list of extends in ./extends.
vg_tpm_boot_extend() {
	"$VIGIL" log boot show --json "$1" | python3 -c '
import json, sys
for e in json.load(sys.stdin)["events"]:
    if e["type"] != "EV_NO_ACTION" and (e["pcr"] <= 9 or e["pcr"] == 14):
        print("%d:%s" % (e["pcr"], ",".join("%s=%s" % kv for kv in sorted(e["digests"].items()))))
' >extends || return 1
	while read -r x; do tpm2_pcrextend "$x" || return 1; done <extends
}
