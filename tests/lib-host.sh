# shellcheck shell=bash
# tests/lib-host.sh - the booted host rig (issue 40): a Debian 12 root with
# systemd on an ext4 image of its own, booted with systemd-nspawn -b
# (systemd as PID 1, journald, the units as the packages ship them), so
# that vigild runs the way it ships: its unit, watching the container's
# whole /, which is the image's filesystem and never the machine's. Source
# it after tests/lib.sh and vg_init. The container has a network namespace
# of its own (--private-network: loopback only); the root is built from
# Debian's archive (once, with the machine's network).
#
#   vg_host_tar          the root, built once per build directory into
#                        $BUILD_ROOT/fixtures/host-root.tar under flock:
#                        mmdebstrap --variant=minbase bookworm with systemd,
#                        dbus, apt, the dependencies of vigil's packages
#                        ($VG_DEBS, tests/lib-debs.sh), swtpm and tpm2-tools,
#                        then apt pointed at a file: copy of the part of the
#                        archive it installed (tests/helpers/host-mirror.py: the
#                        archive's signed InRelease, its Packages, the .debs
#                        at their pool paths, and hello's, not installed: a
#                        package to install) and its cache emptied, as on a
#                        host apt has cleaned: README.Debian's trust build
#                        --download fetches them, offline, through the real
#                        signature chain
#   vg_host_make DIR     an ext4 image DIR.img (sparse), loop-mounted on DIR,
#                        the root extracted into it
#   vg_host_boot DIR     boot it: systemd-nspawn -b -D DIR (in the
#                        background, under timeout), wait until systemd
#                        says running or degraded. Sets HOST_NSPAWN (its
#                        timeout's PID), HOST_INIT (the container's PID 1 as
#                        the host sees it). Return: 0, 1 (did not boot)
#   vg_in CMD...         run CMD in the container (nsenter into every
#                        namespace of its PID 1, its root and cwd /), killed
#                        after $VG_IN_TIMEOUT seconds (300)
#   vg_host_wait SECS    wait for nspawn to exit (a reboot, a poweroff); not
#                        in SECS: the container's PID 1 killed. Return:
#                        nspawn's status (133: rebooted)
#   vg_host_halt         poweroff, vg_host_wait 30
#   vg_host_unjam        vigild in the container killed and its unit stopped
#                        (a failed test can then look inside)
#
# What nspawn needs on this kind of machine (docs: shared/notes/host-trial.md):
# -D on the mounted image (not -i), --keep-unit --register=no (PID 1 here
# is not systemd), a tmpfs on /run/systemd/nspawn, --system-call-filter
# adding fanotify, Landlock, open_by_handle_at and seccomp. Nothing of the
# machine's is bound in: no resolv.conf, no time zone, no journal link;
# the only view of the host's filesystem is nspawn's read-only bind of its
# os-release, which vigild does not mark (a part of a filesystem, not it).

VG_HOST_TAR=${BUILD_ROOT:?}/fixtures/host-root.tar
VG_HOST_MIRROR=${VG_HOST_MIRROR:-http://deb.debian.org/debian}

# the dependencies of vigil's packages, by name
vg_host_deps() {
	local f
	for f in "$VG_DEBS"/vigil_*.deb "$VG_DEBS"/vigil-attest_*.deb "$VG_DEBS"/libvigil0_*.deb; do
		dpkg-deb -f "$f" Depends Recommends | sed 's/^[A-Za-z-]*: //'
	done | tr ',' '\n' | sed -e 's/([^)]*)//g' -e 's/|.*//' -e 's/ //g' | grep -v '^$' |
		grep -vE '^(vigil|vigil-attest|libvigil0|libcurl4)$' | sort -u | tr '\n' ','
	echo libcurl4
}

vg_host_tar() {
	local dir=${VG_HOST_TAR%/*} deps
	mkdir -p "$dir" || return 1
	# the recipe's version with the packages: a root made otherwise is made again
	deps="r4:$(vg_host_deps)" || return 1
	(
		flock 9 || exit 1
		[ -s "$VG_HOST_TAR" ] && [ "$(cat "$VG_HOST_TAR.deps" 2>/dev/null)" = "$deps" ] && exit 0
		command -v mmdebstrap >/dev/null || exit 1
		rm -f "$VG_HOST_TAR"
		unshare -m mmdebstrap --quiet --variant=minbase \
			--include="systemd,systemd-sysv,dbus,apt,procps,swtpm,swtpm-tools,tpm2-tools,${deps#r4:}" \
			--skip=cleanup/apt --skip=essential/unlink --format=tar \
			--customize-hook='echo vigilhost >"$1/etc/hostname"' \
			--customize-hook='rm -f "$1/etc/machine-id"; : >"$1/etc/machine-id"' \
			--customize-hook='chroot "$1" sh -c "cd /var/cache/apt/archives && apt-get download -q hello"' \
			--customize-hook="/usr/bin/python3 $SRCDIR/tests/helpers/host-mirror.py \"\$1\"" \
			--customize-hook='chroot "$1" apt-get update -q' \
			bookworm "$VG_HOST_TAR.tmp" "$VG_HOST_MIRROR" >"$dir/host-root.log" 2>&1 &&
			mv "$VG_HOST_TAR.tmp" "$VG_HOST_TAR" && echo "$deps" >"$VG_HOST_TAR.deps"
	) 9>"$dir/host-root.lock"
	[ -s "$VG_HOST_TAR" ]
}

vg_host_make() {
	local dir=$1
	mkdir -p "$dir" || return 1
	truncate -s 3G "$dir.img" && mkfs.ext4 -q -F -b 4096 -I 256 "$dir.img" &&
		mount -o loop "$dir.img" "$dir" && tar -C "$dir" -xf "$VG_HOST_TAR"
}

vg_host_boot() {
	local dir=$1 state
	if ! mountpoint -q /run/systemd/nspawn 2>/dev/null; then
		mkdir -p /run/systemd/nspawn && mount -t tmpfs vg-nspawn /run/systemd/nspawn || return 1
	fi
	timeout -s KILL 3600 systemd-nspawn -q -b -D "$dir" --keep-unit --register=no \
		--private-network --resolv-conf=off --timezone=off --link-journal=no \
		--console=passive \
		--system-call-filter='fanotify_init fanotify_mark open_by_handle_at name_to_handle_at landlock_create_ruleset landlock_add_rule landlock_restrict_self seccomp' \
		>"$dir.console" 2>&1 &
	HOST_NSPAWN=$!
	HOST_INIT=
	# nspawn's child is pid 1 of the new namespace before it execs systemd: wait for systemd
	for _ in $(seq 600); do
		HOST_INIT=$(vg_host_init)
		case "$(readlink "/proc/${HOST_INIT:-0}/exe" 2>/dev/null)" in
		*/systemd) [ -d "/proc/$HOST_INIT/root/run/systemd/system" ] && break ;;
		esac
		kill -0 "$HOST_NSPAWN" 2>/dev/null || return 1
		sleep 0.1
	done
	[ -d "/proc/${HOST_INIT:-0}/root/run/systemd/system" ] || return 1
	# systemd's bus comes up after /run/systemd/system: ask until it answers, then wait
	for _ in $(seq 1800); do
		state=$(vg_in systemctl is-system-running 2>/dev/null)
		case "$state" in
		running | degraded | maintenance | stopping) break ;;
		esac
		kill -0 "$HOST_NSPAWN" 2>/dev/null || return 1
		sleep 0.1
	done
	echo "# the rig booted: $state"
	[ "$state" = running ] || [ "$state" = degraded ]
}

# the container's PID 1 as seen from here: nspawn's descendant that is pid 1 of its own namespace
vg_host_init() {
	local p todo=$HOST_NSPAWN next
	while [ -n "$todo" ]; do
		next=
		for p in $todo; do
			if grep -qE '^NSpid:[[:space:]]+[0-9]+[[:space:]]+1$' "/proc/$p/status" 2>/dev/null; then
				echo "$p"
				return 0
			fi
			next="$next $(ps -o pid= --ppid "$p" | tr -d ' ' | tr '\n' ' ')"
		done
		todo=$next
		[ -n "${todo// /}" ] || todo=
	done
}

vg_in() {
	timeout -k 5 "${VG_IN_TIMEOUT:-300}" nsenter -t "$HOST_INIT" -m -u -i -n -p -C -r -w -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 "$@"
}

# vigild in the container stopped from outside (its processes killed, then
# the unit stopped before systemd restarts it), so that a test that failed
# can still run programs in there to say why. Return: 0 once it is stopped.
vg_host_unjam() {
	local p ns
	ns=$(readlink "/proc/$HOST_INIT/ns/pid") || return 1
	for _ in 1 2 3 4 5; do
		for p in $(pgrep -x vigild); do
			[ "$(readlink "/proc/$p/ns/pid" 2>/dev/null)" = "$ns" ] && kill -KILL "$p" 2>/dev/null
		done
		sleep 0.05
		timeout 10 nsenter -t "$HOST_INIT" -m -u -i -n -p -C -r -w -- /usr/bin/systemctl stop \
			vigild.service >/dev/null 2>&1 &&
			[ "$(timeout 10 nsenter -t "$HOST_INIT" -m -u -i -n -p -C -r -w -- \
				/usr/bin/systemctl is-active vigild.service)" != active ] && return 0
	done
	return 1
}

# Wait up to $1 seconds for nspawn to exit; then kill the container's PID 1
# (its whole PID namespace goes with it; nspawn killed alone would leave
# the container running). Return: nspawn's exit status (137: killed).
vg_host_wait() {
	local secs=$1 rc
	for _ in $(seq $((secs * 10))); do
		kill -0 "$HOST_NSPAWN" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$HOST_NSPAWN" 2>/dev/null; then
		echo "# the container did not stop in $secs s: killed" >&2
		[ -n "${HOST_INIT:-}" ] && kill -KILL "$HOST_INIT" 2>/dev/null
		sleep 1
		kill -KILL "$HOST_NSPAWN" 2>/dev/null
	fi
	wait "$HOST_NSPAWN" 2>/dev/null
	rc=$?
	# nspawn gone, its PID 1 must be too
	[ -n "${HOST_INIT:-}" ] && [ -d "/proc/$HOST_INIT" ] && kill -KILL "$HOST_INIT" 2>/dev/null
	HOST_NSPAWN= HOST_INIT=
	return "$rc"
}

vg_host_halt() {
	[ -n "${HOST_NSPAWN:-}" ] || return 0
	[ -n "${HOST_INIT:-}" ] && timeout 30 nsenter -t "$HOST_INIT" -m -u -i -n -p -C -r -w -- \
		/usr/bin/systemctl poweroff >/dev/null 2>&1
	vg_host_wait 30
	return 0
}
