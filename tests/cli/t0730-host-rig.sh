#!/usr/bin/env bash
# t0730: vigil on a real host, from boot to purge, the way it ships (issue
# 40). A Debian 12 root with systemd, on an ext4 image of its own, booted
# with systemd-nspawn -b (tests/lib-host.sh): vigild runs from its unit,
# watching the container's whole / (the image's filesystem, never the
# machine's) and what is mounted under it. In it, as an administrator
# would: vigil's .debs installed with apt (nothing starts); README.Debian
# followed as written, block by block, up to an enforcing vigild over / with
# the trust database (the archive's packages, vigil's own named by the
# administrator); a reboot with vigild enabled: zero denials of the system's
# own programs, vigild ready before multi-user.target; a planted unlabeled
# program and a tampered packaged one denied, each in the journal with the
# audit record's fields; reload, restart, status; the watchdog restarting a
# stuck vigild; attestation on the software TPM of vigil-swtpm.service
# (README.Debian's "No TPM", then vigil-attest's README.Debian: the agent
# and the verifier from their units, the EK certificate checked against
# --ek-ca, the host trusted, then failed naming an unknown program);
# apt-get install and --reinstall of a signed package through the hook
# under enforcement; apt purge of every vigil package under enforcement,
# nothing of vigil left running, no TPM state left.
. "$SRCDIR/tests/lib.sh"
if ! command -v systemd-nspawn >/dev/null || ! command -v mmdebstrap >/dev/null ||
	! command -v dpkg-buildpackage >/dev/null; then
	echo "1..0 # SKIP needs systemd-nspawn, mmdebstrap and dpkg-buildpackage (scripts/deps.sh)"
	exit 0
fi
vg_init
. "$SRCDIR/tests/lib-debs.sh"
. "$SRCDIR/tests/lib-host.sh"
mount -o remount,size=5g "$T"
mount -t tmpfs -o mode=755 rig-run /run	# nspawn's state: this namespace's, not the machine's
H=$T/host
START=$SECONDS
trap '_rc=$?; vg_host_halt; (exit $_rc); vg_cleanup' EXIT

bail() {	# stop here: what follows needs what just failed
	echo "# $1; stopping here"
	[ -n "${2:-}" ] && [ -s "$2" ] && tail -40 "$2" | sed 's/^/#   /'
	if [ -n "${HOST_INIT:-}" ] && vg_host_unjam; then
		echo "# vigild's journal, the last lines:"
		vg_in journalctl -u vigild -o cat -n 30 --no-pager | sed 's/^/#   /'
	fi
	_failed=$((_failed + 1))
	exit 1
}
phase() { echo "# $1 (at $((SECONDS - START)) s)"; }
# in the container: a shell command line, from /root/debs (the .debs are there)
inh() { vg_in bash -c "cd /root/debs && $1"; }
# the storm's timed runs of /usr/bin/hostname (hold-storm-in.sh writes
# /tmp/storm/lat, "RC START END" a run): "RUNS FAILED P50 P99 MAX", in ms
storm_latency() {
	vg_in cat /tmp/storm/lat >"$T/lat"
	python3 - "$T/lat" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 3]
ok = sorted((float(e) - float(s)) * 1000 for rc, s, e in rows if rc == "0")
p = lambda q: ok[min(len(ok) - 1, int(q * len(ok)))] if ok else 0
print(len(ok), len(rows) - len(ok), "%.1f %.1f %.1f" % (p(0.5), p(0.99), max(ok) if ok else 0))
PY
}
# vigild's denials since the container's epoch time $1 (the journal's records of
# the denial message id), but those of the storm's own two programs
denials_since() {
	vg_in bash -c "journalctl -u vigild MESSAGE_ID=7e0c5a3f1b9d4c2e8f6a0b1c2d3e4f5a -o cat --since @${1%.*} |
		grep -v -e planted -e /usr/bin/hostname | grep deny | tail -5"
}
status_json() { vg_in vigil status --json; }
# a README's block, run as written by bash in the container from /root/debs;
# given on standard input, not as a file: root's reads of files are
# measured, and the attested list must not grow by the test's own scripts
block() {	# WHAT FILE
	check "$1: the block runs" vg_in bash -c "cd /root/debs && bash -s >/tmp/block.out 2>&1 || { cat /tmp/block.out; exit 1; }" <"$2"
}

phase "the packages and the root"
vg_debs || bail "the packages do not build" "$VG_DEBS_LOG"
vg_host_tar || bail "no Debian root (mmdebstrap, network)" "$BUILD_ROOT/fixtures/host-root.log"
vg_host_make "$H" || bail "no image"
mkdir -p "$H/root/debs"	# before it boots: nothing watches the image yet
cp "$VG_DEBS"/vigil_*.deb "$VG_DEBS"/vigil-attest_*.deb "$VG_DEBS"/libvigil0_*.deb "$H/root/debs/"
phase "boot"
check "the host boots (systemd as PID 1, running)" vg_host_boot "$H"
[ "$_failed" -eq 0 ] || bail "it did not boot" "$H.console"
check_eq "... no unit failed" "$(vg_in systemctl --failed --no-legend | wc -l)" 0

# --- 1. install: nothing starts -----------------------------------------------
phase "install"
check "apt installs vigil's packages from files" \
	inh "apt-get install -y -q ./vigil_*.deb ./vigil-attest_*.deb ./libvigil0_*.deb >/tmp/apt.log 2>&1 || { tail -20 /tmp/apt.log; exit 1; }"
check_eq "... vigild is not started" "$(vg_in systemctl is-active vigild)" inactive
check_eq "... nor enabled" "$(vg_in systemctl is-enabled vigild)" disabled
check_eq "... nor the agent, the verifier, the scan timer" \
	"$(vg_in systemctl is-active vigil-agent vigil-verifier vigil-scan.timer | sort -u)" inactive

# --- 2. README.Debian, followed as written ------------------------------------
phase "README.Debian"
mkdir -p "$T/readme"
/usr/bin/python3 "$SRCDIR/tests/helpers/readme-debian-blocks.py" "$SRCDIR/debian/README.Debian" "$T/readme" \
	>"$T/readme.list"
check "README.Debian's command blocks are found" test "$(wc -l <"$T/readme.list")" -ge 6
while read -r b; do
	line=${b%.sh}
	case "$(head -2 "$T/readme/$b" | tail -1)" in
	*vigil-swtpm*) echo "$b" >"$T/readme.tpm"; continue ;;	# "No TPM": with attestation, below
	esac
	block "README.Debian:$line" "$T/readme/$b"
done <"$T/readme.list"
[ "$_failed" -eq 0 ] || bail "README.Debian did not work as written"
check_eq "vigild enforces" "$(status_json | python3 -c 'import json,sys; print(json.load(sys.stdin)["mode"])')" \
	enforce
check "... appraising every program with the trust database" \
	vg_in grep -qx 'appraise func=BPRM_CHECK trust=archive' /etc/vigil/vigild.policy
status_json >"$T/status1.json"
check "... which holds the system's packages and vigil's own" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if s["counters"]["trust_files"] > 5000 else 1)' "$T/status1.json"
check "... it watches / (the image), and no filesystem of the machine's" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
w = {x["path"]: x for x in s["watched"]}
sys.exit(0 if "/" in w and not any(x["path"].startswith("/run/host") for x in s["watched"]) else 1)' \
	"$T/status1.json"
echo "# watched: $(python3 -c 'import json,sys; print(", ".join(x["path"] + " (" + x["fstype"] + ")" for x in json.load(open(sys.argv[1]))["watched"]))' "$T/status1.json")"
check "... memfd and userns accepted (a container), listed so" python3 -c '
import json, sys
g = {x["name"]: x["state"] for x in json.load(open(sys.argv[1]))["gaps"]}
sys.exit(0 if g.get("memfd") == "accepted" and g.get("userns") == "accepted" else 1)' "$T/status1.json"

# --- 3. a reboot with vigild enabled -----------------------------------------
phase "reboot"
vg_in systemctl reboot
vg_host_wait 60; rc=$?
check_eq "the container reboots (nspawn exits 133)" "$rc" 133
check "... and boots again, vigild enabled" vg_host_boot "$H"
check_eq "... vigild is active" "$(vg_in systemctl is-active vigild)" active
check_eq "... no unit failed" "$(vg_in systemctl --failed --no-legend | wc -l)" 0
check_eq "... no denial of the system's own programs (journal)" \
	"$(vg_in journalctl -b -u vigild MESSAGE_ID=7e0c5a3f1b9d4c2e8f6a0b1c2d3e4f5a -o cat | wc -l)" 0
check_eq "... nor in the audit trail" "$(vg_in grep -c '"action":"deny' /var/log/vigil/audit.jsonl)" 0
vg_in systemd-analyze critical-chain multi-user.target >"$T/chain" 2>&1
check "vigild was ready before multi-user.target" vg_in bash -c '
	v=$(systemctl show -P ActiveEnterTimestampMonotonic vigild)
	m=$(systemctl show -P ActiveEnterTimestampMonotonic multi-user.target)
	[ "$v" -gt 0 ] && [ "$v" -lt "$m" ]'
echo "# ran before vigild was ready: $(vg_in journalctl -b -u vigild -o cat | grep -o '[0-9]* processes were running before vigild' || echo '?')"
# what the boot ran before vigild was ready, by systemd's own accounting
# (issue 41, item 3): each service whose main process started earlier
vready=$(vg_in systemctl show -P ActiveEnterTimestampMonotonic vigild)
early=$(vg_in bash -c "systemctl list-units --type=service --all --no-legend --plain | awk '{print \$1}' |
	while read -r u; do t=\$(systemctl show -P ExecMainStartTimestampMonotonic \"\$u\");
	[ \"\${t:-0}\" -gt 0 ] && [ \"\$t\" -lt ${vready:-0} ] && echo \"\$u\"; done" | tr '\n' ' ')
echo "# services started before vigild was ready (systemd's timestamps): ${early:-none}"
# ... each of them systemd's own (its package's programs): nothing else
# from the root filesystem ran unjudged before vigild
pk=$(vg_in bash -c "for u in $early; do [ \"\$u\" = vigild.service ] && continue; p=\$(systemctl show -P ExecStart \"\$u\" | sed -n 's/.*path=\([^ ;]*\).*/\1/p' | head -1);
	[ -n \"\$p\" ] || continue; k=\$( (dpkg -S \"\$p\" || dpkg -S \"\${p#/usr}\") 2>/dev/null | head -1 | cut -d: -f1);
	echo \"\$u=\${p##*/}(\${k:-?})\"; done" | tr '\n' ' ')
echo "# their programs (package): $pk"
check "... each runs a program of the package systemd (systemd itself)" \
	bash -c "[ -n '$pk' ] && ! tr ' ' '\n' <<<'$pk' | grep . | grep -qv '(systemd)$'"
# and every program running now (what ran before vigild included, judged
# at its start) is in the measurement list
vg_in bash -c "vigil log show --format ascii /run/vigil/binary_runtime_measurements | awk '{print \$5}' | sort -u" >"$T/ml"
vg_in bash -c 'for p in /proc/[0-9]*; do readlink "$p/exe"; done 2>/dev/null | sort -u' >"$T/running"
check_eq "every program running in the host is in the measurement list ($(wc -l <"$T/running") programs, $(wc -l <"$T/ml") list paths)" \
	"$(comm -23 "$T/running" "$T/ml" | tr '\n' ' ')" ""

# --- 4. what it denies, and says ----------------------------------------------
phase "denials"
vg_in cp /usr/bin/true /usr/local/bin/planted
check_rc 126 "a planted unlabeled program is denied" vg_in /usr/local/bin/planted
check "... in the journal, with the record's fields" vg_in bash -c \
	"journalctl -u vigild MESSAGE_ID=7e0c5a3f1b9d4c2e8f6a0b1c2d3e4f5a -o json | grep '\"VIGIL_PATH\":\"/usr/local/bin/planted\"' | grep -q '\"VIGIL_ACTION\":\"deny\"'"
check "... as a line journalctl shows at warning" vg_in bash -c \
	"journalctl -u vigild -p warning -o cat | grep -q 'deny exec of /usr/local/bin/planted'"
check "... and in the audit trail" vg_in grep -q '"path":"/usr/local/bin/planted".*"action":"deny"' \
	/var/log/vigil/audit.jsonl
vg_in cp -a /usr/bin/hostname /root/hostname.orig
vg_in bash -c 'printf x >>/usr/bin/hostname'
check_rc 126 "a tampered packaged program is denied" vg_in /usr/bin/hostname
check "... in the journal" vg_in bash -c \
	"journalctl -u vigild MESSAGE_ID=7e0c5a3f1b9d4c2e8f6a0b1c2d3e4f5a -o json | grep -q '\"VIGIL_PATH\":\"/usr/bin/hostname\"'"
vg_in cp -a /root/hostname.orig /usr/bin/hostname
check "... restored, it runs again" vg_in /usr/bin/hostname

# --- 5. operating it -----------------------------------------------------------
phase "operating"
check "systemctl reload vigild" vg_in systemctl reload vigild
check "... vigil status answers" vg_in vigil status
pid1=$(vg_in systemctl show -P MainPID vigild)
check "systemctl restart vigild" vg_in systemctl restart vigild
pid2=$(vg_in systemctl show -P MainPID vigild)
check "... a new vigild ($pid1 -> $pid2), enforcing" bash -c "[ '$pid2' != '$pid1' ] && [ '$pid2' != 0 ]"
check_rc 126 "... and denying" vg_in /usr/local/bin/planted
# the watchdog: a monitor whose loop stops turning is killed and started
# again by the holder (vigild.hold = yes), which keeps the group; the unit's
# main process stays
mon2=$(vg_in cat "/proc/$pid2/task/$pid2/children" | awk '{print $1}')
t0=$(date +%s%N)
[ "${mon2:-0}" -gt 1 ] && vg_in kill -STOP "$mon2"
for _ in $(seq 200); do
	mon3=$(vg_in cat "/proc/$pid2/task/$pid2/children" | awk '{print $1}')
	[ -n "$mon3" ] && [ "$mon3" != "$mon2" ] && break
	sleep 0.05
done
ms=$((($(date +%s%N) - t0) / 1000000))
check "a monitor that stops answering is killed and started again ($ms ms; WatchdogSec=5s)" \
	bash -c "[ -n '$mon3' ] && [ '$mon3' != '$mon2' ] && [ $ms -le 6500 ]"
check "... by the holder, the unit's main process still ($pid2)" \
	test "$(vg_in systemctl show -P MainPID vigild)" = "$pid2"
check "... the journal says why" vg_in bash -c "journalctl -u vigild -o cat | grep -q \"the monitor's loop stopped turning\""
check_eq "... and the new one is ready" "$(vg_in systemctl is-active vigild)" active

# --- 5b. crashes: the holder keeps the group (issue 41) ----------------------
phase "crashes"
tph=$(vg_in date +%s)
KILLS=${VG_RIG_KILLS:-100}
out=$(vg_in bash -s "$KILLS" <"$SRCDIR/tests/helpers/hold-storm-in.sh")
sed "s/^/# /" <<<"$out"
read -r _ nk _ hb _ ha <<<"$out"
check_eq "$KILLS SIGKILLs of vigild's monitor at random instants, under the unit" "$nk" "$KILLS"
check_eq "... the unprivileged user's unlabeled program ran 0 times" "$(vg_in wc -l </dev/null /tmp/storm/runs | awk '{print $1}')" 0
read -r gok gbad p50 p99 pmax <<<"$(storm_latency)"
echo "# /usr/bin/hostname through the storm: $gok runs, $gbad failed, p50 $p50 ms, p99 $p99 ms, max $pmax ms"
check "... a program from the archive kept running ($gok runs, $gbad failed: in flight at a kill)" \
	bash -c "[ $gok -gt $KILLS ] && [ $gbad -le $KILLS ]"
check "... none waited longer than a restart and the deadline (max $pmax ms)" \
	python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 15000)" "$pmax"
nden=$(vg_in journalctl -u vigild -o cat | sed -n 's/^the monitor died: \([0-9]*\) accesses.*/\1/p' | awk '{s += $1} END {print s + 0}')
echo "# accesses in flight at the kills, denied by the holder: $nden"
check_eq "... the unit's main process is the one before (the holder)" "$ha" "$hb"
check_eq "... vigild active" "$(vg_in systemctl is-active vigild)" active
check_rc 126 "... and denying" vg_in /usr/local/bin/planted
check_eq "... no denial of the system's own programs" "$(denials_since "$tph")" ""

# the holder itself killed: the one process whose death releases the group
# (hold.h); measured and said, not hidden: the runs in that window, and the
# service manager's restart
thk=$(vg_in date +%s)
out=$(vg_in bash -s 0 "kill -9 \$(systemctl show -P MainPID vigild); for i in \$(seq 100); do
	sleep 0.1; systemctl is-active --quiet vigild && break; done; sleep 1; echo active=\$(systemctl is-active vigild)" \
	<"$SRCDIR/tests/helpers/hold-storm-in.sh")
hruns=$(vg_in wc -l </dev/null /tmp/storm/runs | awk '{print $1}')
echo "# SIGKILL of the holder (the group released until the service manager's restart): the unlabeled program ran $hruns times"
check "... after a SIGKILL of the holder the service manager starts vigild again" grep -q 'active=active' <<<"$out"
check_rc 126 "... denying" vg_in /usr/local/bin/planted
# (the dying monitor drains: an access it cannot finish judging within the
# deadline gets the fail action, "shutdown"; its appraisers may wait on the
# new instance's group meanwhile. Said, not required: seen once in 1,000 kills)
echo "# ... denials of the system's own programs around the holder's death: $(denials_since "$thk" | grep -c . || true)$(denials_since "$thk" | sed 's/^/; /' | tr -d '\n')"

# --- 5c. an upgrade of vigil's packages under enforcement (issue 41, item 2) ---
# a newer build: the same files, the version raised (the binaries are new
# files all the same: dpkg replaces /usr/sbin/vigild)
phase "upgrade"
tph=$(vg_in date +%s)
mkdir -p "$T/new"
for d in "$VG_DEBS"/vigil_*.deb "$VG_DEBS"/vigil-attest_*.deb "$VG_DEBS"/libvigil0_*.deb; do
	rm -rf "$T/x" && dpkg-deb -R "$d" "$T/x" &&
		ver=$(sed -n 's/^Version: //p' "$T/x/DEBIAN/control") &&
		sed -i "s/$ver/$ver+upg1/g" "$T/x/DEBIAN/control" &&
		dpkg-deb -b "$T/x" "$T/new/" >/dev/null
done
# into the host through its own processes: vigild there cannot tell who a
# process outside its pid namespace is, and denies such an opener
vg_in mkdir -p /root/debs/new
for d in "$T/new/"*.deb; do vg_in bash -c "cat >'/root/debs/new/${d##*/}'" <"$d"; done
main0=$(vg_in systemctl show -P MainPID vigild)
mon0=$(vg_in cat "/proc/$main0/task/$main0/children" | awk '{print $1}')
vg_in systemctl kill --kill-who=main --signal=SIGUSR1 vigild.service
for _ in $(seq 100); do
	mon1=$(vg_in cat "/proc/$main0/task/$main0/children" | awk '{print $1}')
	[ -n "$mon1" ] && [ "$mon1" != "$mon0" ] && break
	sleep 0.05
done
main1=$(vg_in systemctl show -P MainPID vigild)
check "systemctl kill --kill-who=main -s SIGUSR1 vigild: a new monitor ($mon0 -> $mon1), the same main process ($main1)" \
	bash -c "[ -n '$mon1' ] && [ '$mon1' != '$mon0' ] && [ '$main1' = '$main0' ]"
[ "$_failed" -eq 0 ] || vg_in journalctl -u vigild -o cat -n 15 --no-pager | sed 's/^/#   /'
check_eq "... vigild active" "$(vg_in systemctl is-active vigild)" active
out=$(vg_in bash -s 0 "cd /root/debs/new && apt-get install -y -q ./vigil_*.deb ./vigil-attest_*.deb ./libvigil0_*.deb >/tmp/upg.log 2>&1 &&
	echo after-install=\$(systemctl is-active vigild) &&
	apt-get install -y -q --reinstall ./vigil_*.deb >>/tmp/upg.log 2>&1; echo apt=\$?;
	echo after-reinstall=\$(systemctl is-active vigild)" <"$SRCDIR/tests/helpers/hold-storm-in.sh")
sed "s/^/# /" <<<"$out"
check "apt-get install of a newer build of vigil's packages, then --reinstall, while vigild enforces" \
	grep -q 'apt=0' <<<"$out"
check "... vigild active after the upgrade (debhelper's preinst stopped it: --no-stop-on-upgrade)" \
	grep -q 'after-install=active' <<<"$out"
check "... and after the --reinstall" grep -q 'after-reinstall=active' <<<"$out"
[ "$_failed" -eq 0 ] || vg_in tail -20 /tmp/upg.log | sed 's/^/#   /'
check "... vigil is the newer build" grep -q '+upg1$' <<<"$(vg_in dpkg-query -W -f='${Version}' vigil)"
read -r _ _ _ hb _ ha _ <<<"$(grep -o 'kills.*' <<<"$out")"
check_eq "... the unit's main process is the one before (the holder)" "$ha" "$hb"
mon2=$(vg_in cat "/proc/$ha/task/$ha/children" | awk '{print $1}')
mexe=$(vg_in readlink "/proc/$mon2/exe")
check "... a new monitor ($mon1 -> $mon2), from the new /usr/sbin/vigild ($mexe)" \
	bash -c "[ -n '$mon2' ] && [ '$mon2' != '$mon1' ] && [ '$mexe' = /usr/sbin/vigild ]"
check "... renewed, said so" vg_in bash -c "journalctl -u vigild -o cat | grep -q 'stopped to be renewed'"
check_eq "... the unprivileged user's unlabeled program ran 0 times meanwhile" \
	"$(vg_in wc -l /tmp/storm/runs | awk '{print $1}')" 0
if [ "$_failed" -gt 0 ]; then
	echo "# the upgrade's log, and vigild's journal:"
	vg_in tail -30 /tmp/upg.log | sed 's/^/#   /'
	vg_in journalctl -o short-monotonic --no-pager -n 400 | grep -v -e planted -e 'audit' | tail -60 | sed 's/^/#   /'
fi
read -r gok gbad p50 p99 pmax <<<"$(storm_latency)"
echo "# /usr/bin/hostname through the upgrade: $gok runs, $gbad failed, p50 $p50 ms, p99 $p99 ms, max $pmax ms"
check "... a program from the archive kept running ($gok runs, $gbad failed)" bash -c "[ $gok -gt 0 ] && [ $gbad -eq 0 ]"
check_eq "... vigild active" "$(vg_in systemctl is-active vigild)" active
check_rc 126 "... and denying" vg_in /usr/local/bin/planted
check_eq "... no denial of the system's own programs" "$(denials_since "$tph")" ""

# --- 5d. `systemctl restart vigild` under enforcement (issue 41, item 2) ---
# the holder hands the group to the new instance through --handoff's socket:
# the restarts are spaced within the unit's start limit (5 in 10 s)
phase "restart"
tph=$(vg_in date +%s)
RESTARTS=${VG_RIG_RESTARTS:-5}
vg_in bash -c "journalctl --rotate >/dev/null 2>&1; true"
counters() { status_json | python3 -c 'import json,sys; c = json.load(sys.stdin)["counters"]; print(c["events"], c["denied"])'; }
read -r ev0 den0 <<<"$(counters)"
t0=$(vg_in date +%s.%N)
out=$(vg_in bash -s 0 "for i in \$(seq $RESTARTS); do sleep 2.2; systemctl restart vigild && echo restarted; done;
	echo active=\$(systemctl is-active vigild)" <"$SRCDIR/tests/helpers/hold-storm-in.sh")
sed "s/^/# /" <<<"$out"
check_eq "$RESTARTS times systemctl restart vigild during the storm" "$(grep -c '^restarted' <<<"$out")" "$RESTARTS"
check "... vigild active after them" grep -q 'active=active' <<<"$out"
read -r _ _ _ hb _ ha _ <<<"$(grep -o 'kills.*' <<<"$out")"
check "... a new main process each time (the holder $hb -> $ha)" bash -c "[ -n '$ha' ] && [ '$ha' != '$hb' ]"
check_eq "... the unprivileged user's unlabeled program ran 0 times meanwhile" \
	"$(vg_in wc -l /tmp/storm/runs | awk '{print $1}')" 0
jr=$(vg_in journalctl -u vigild -o cat --since "@${t0%.*}")
# (journald's rate limit, 10,000 lines in 30 s, may drop a line of the
# storm's: the lines are counted, and the runs above are the proof)
ntook=$(grep -c 'took the group over from the vigild before the restart' <<<"$jr")
nhand=$(grep -c 'the group is with the new vigild' <<<"$jr")
echo "# the journal: $ntook of $RESTARTS instances say they took the group over, $nhand bridges that they handed it on$(grep -q 'Suppressed' <<<"$(vg_in journalctl -u systemd-journald -o cat --since "@${t0%.*}")" && echo '; journald suppressed lines meanwhile')"
check "... the new instances took the group over from the bridges before ($ntook, $nhand of $RESTARTS said)" \
	bash -c "[ $ntook -ge 1 ] && [ $nhand -ge 1 ] && [ $ntook -le $RESTARTS ]"
check_eq "... no bridge gave up" "$(grep -c 'no new vigild took the group' <<<"$jr")" 0
[ "$ntook" = "$RESTARTS" ] && [ "$nhand" = "$RESTARTS" ] ||
	vg_in journalctl -o short-monotonic --no-pager --since "@${t0%.*}" |
	grep -e 'the group waits in pid' -e 'the group is with' -e 'took the group over' -e 'handoff' -e Suppressed | sed 's/^/#   /'
read -r ev1 den1 <<<"$(counters)"
check "... vigild's counters continue across the restarts (events $ev0 -> $ev1, denied $den0 -> $den1)" \
	bash -c "[ ${ev1:-0} -gt ${ev0:-0} ] && [ ${den1:-0} -gt ${den0:-0} ]"
echo "# accesses that waited across the restarts: $(grep -o 'the group is with the new vigild.*' <<<"$jr" | grep -o '[0-9]* accesses' | tr '\n' ' ')"
if [ "$_failed" -gt 0 ]; then
	vg_in journalctl -o short-monotonic --no-pager -n 300 --since "@${t0%.*}" | grep -v -e planted -e audit | tail -60 | sed 's/^/#   /'
fi
read -r gok gbad p50 p99 pmax <<<"$(storm_latency)"
echo "# /usr/bin/hostname through the restarts: $gok runs, $gbad failed, p50 $p50 ms, p99 $p99 ms, max $pmax ms"
check "... a program from the archive kept running ($gok runs, $gbad failed)" bash -c "[ $gok -gt 0 ] && [ $gbad -eq 0 ]"
check_rc 126 "... and denying" vg_in /usr/local/bin/planted
check_eq "... no denial of the system's own programs" "$(denials_since "$tph")" ""
# a stop is not a restart: enforcement ends, said so, and nothing lingers
t0=$(vg_in date +%s.%N)
vg_in systemctl stop vigild
check "systemctl stop vigild: said to end enforcement" vg_in bash -c \
	"journalctl -u vigild -o cat --since @${t0%.*} | grep -q 'stop): vigild ends enforcement'"
check_eq "... no process of vigild's left" "$(vg_in pidof vigild)" ""
check "... an unlabeled program runs (nothing enforces)" vg_in /usr/local/bin/planted
vg_in systemctl start vigild
check_eq "... and started again" "$(vg_in systemctl is-active vigild)" active
check_rc 126 "... denying" vg_in /usr/local/bin/planted

# --- 6. a software TPM, and attestation --------------------------------------
phase "attestation"
[ -s "$T/readme.tpm" ] || bail "README.Debian has no \"No TPM\" block"
b=$(cat "$T/readme.tpm")
block "README.Debian:${b%.sh} (No TPM)" "$T/readme/$b"
check_eq "vigil-swtpm runs" "$(vg_in systemctl is-active vigil-swtpm)" active
check "... its state on / and its work copy on the tmpfs" \
	vg_in test -s /var/lib/vigil/swtpm/tpm2-00.permall -a -s /run/vigil-swtpm/state/tpm2-00.permall
check "... its CA's private keys are gone" vg_in bash -c '! find /var/lib/vigil/swtpm -name "*key*" | grep -q .'
check_eq "... vigild is active again" "$(vg_in systemctl is-active vigild)" active
check "... and no longer says it has no TPM" vg_in bash -c \
	"! journalctl -u vigild -o cat -n 40 --no-pager _PID=\$(systemctl show -P MainPID vigild) | grep -q 'no TPM'"
check "... PCR 10 of the TPM replays the list" vg_in bash -c \
	"vigil log replay --allow-prefix --tpm=swtpm:path=/run/vigil-swtpm/sock /run/vigil/binary_runtime_measurements"
mkdir -p "$T/attest"
/usr/bin/python3 "$SRCDIR/tests/helpers/readme-debian-blocks.py" "$SRCDIR/debian/vigil-attest.README.Debian" \
	"$T/attest" >"$T/attest.list"
check "vigil-attest's README.Debian: its command blocks are found" test "$(wc -l <"$T/attest.list")" -ge 4
while read -r b; do
	block "vigil-attest README.Debian:${b%.sh}" "$T/attest/$b"
done <"$T/attest.list"
[ "$_failed" -eq 0 ] || bail "vigil-attest's README.Debian did not work as written"
check_eq "the verifier runs (its unit, --ek-ca the software TPM's CA)" \
	"$(vg_in systemctl is-active vigil-verifier)" active
check_eq "the agent runs (its unit, the TPM from vigil.conf)" "$(vg_in systemctl is-active vigil-agent)" active
H=$(vg_in hostname)
vg_in vigil attest status --json "$H" >"$T/att1.json"
check "the host is trusted" python3 -c '
import json, sys
sys.exit(0 if json.load(open(sys.argv[1]))["state"] == "trusted" else 1)' "$T/att1.json"
# the verifier registered it under --ek-ca /etc/vigil/ek-ca.pem (it refuses an
# EK certificate that does not chain to it): openssl says the TPM's does
vg_in tpm2_nvread -T swtpm:path=/run/vigil-swtpm/sock 0x1c00002 >"$T/ek.der" 2>/dev/null
vg_in cat /etc/vigil/ek-ca.pem >"$T/ek-ca.pem"
check "... its EK certificate (the TPM's NV index) chains to the verifier's --ek-ca (openssl)" \
	bash -c "openssl x509 -inform DER -in '$T/ek.der' | openssl verify -CAfile '$T/ek-ca.pem'"
check "... and the verifier's unit runs with that --ek-ca" vg_in bash -c \
	"systemctl show -P ExecStart vigil-verifier | grep -q -- '--ek-ca /etc/vigil/ek-ca.pem'"
# a program the policy does not know runs (an administrator's own, measured
# at exec): the next round fails the host, naming it
vg_in bash -c 'printf "#!/bin/sh\necho x\n" >/usr/local/sbin/unknown-tool; chmod 755 /usr/local/sbin/unknown-tool'
vg_in vigil label --hmac-key /etc/vigil/evm.key /usr/local/sbin/unknown-tool >/dev/null 2>&1
vg_in /usr/local/sbin/unknown-tool >/dev/null 2>&1
for _ in $(seq 60); do
	vg_in vigil attest status --json "$H" >"$T/att2.json" 2>/dev/null
	grep -q '"failed"' "$T/att2.json" && break
	sleep 1
done
check "a program the policy does not know: the host fails, the program named" \
	grep -q 'unknown-tool' "$T/att2.json"

# --- 7. apt under enforcement: the hook records what dpkg is about to unpack ----
phase "apt"
# vigild's own count of denials, not the journal's lines: journald, behind
# the storms' tens of thousands, is no count of this phase's (on CI its
# count grew by one here, the line not kept; the checks above deny a
# program of their own just before). The lines since are shown if it grows
read -r _ d0 <<<"$(counters)"
ta=$(vg_in date +%s.%N)
check "apt-get install of a signed package while vigild enforces (apt's hook records it first)" \
	vg_in bash -c "apt-get install -y -q hello >/tmp/apt2.log 2>&1 || { tail -20 /tmp/apt2.log; exit 1; }"
check "... the new program runs, unlabeled: the trust database has it" vg_in hello
check "apt-get install --reinstall of an installed package" \
	vg_in bash -c "apt-get install -y -q --reinstall hostname >/tmp/apt3.log 2>&1 || { tail -20 /tmp/apt3.log; exit 1; }"
check "... it runs" vg_in hostname
read -r _ d1 <<<"$(counters)"
check_eq "... and neither denied anything (vigild's count of denials)" "$d1" "$d0"
[ "$d1" = "$d0" ] || vg_in journalctl -u vigild MESSAGE_ID=7e0c5a3f1b9d4c2e8f6a0b1c2d3e4f5a -o cat \
	--since "@${ta%.*}" | tail -5 | sed 's/^/#   denied: /'

# --- 8. removal under enforcement ------------------------------------------------
phase "purge"
check "apt purge of every vigil package while vigild enforces" \
	vg_in bash -c "apt-get purge -y -q vigil vigil-attest libvigil0 >/tmp/purge.log 2>&1 || { tail -20 /tmp/purge.log; exit 1; }"
check "... nothing of vigil runs any more" vg_in bash -c "! pgrep -x vigild && ! pgrep -x vigil-agent && ! pgrep -x vigil-verifier && ! pgrep -x swtpm"
check "... and no vigil package is left" vg_in bash -c "! dpkg -l | grep -E '^(ii|iH|iU|rc) +(vigil|vigil-attest|libvigil0) '"
check "... nor the software TPM's state" vg_in test ! -e /var/lib/vigil/swtpm
check "... the programs it denied before run now" vg_in /usr/local/bin/planted
vg_host_halt
phase "done"
