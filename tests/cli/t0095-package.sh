#!/usr/bin/env bash
# The Debian packages (issue 15, item 3), built once from a copy of the
# source tree: dpkg-buildpackage -us -uc -b, lintian --fail-on error, then
# dpkg -i of vigil, vigil-attest, libvigil0 and libvigil-dev and what an
# administrator would try first: vigil --version, vigil hash, man -w,
# pkg-config and a program linked against the installed libvigil,
# systemd-analyze verify of the installed units, each unit's ExecStart line
# run in the foreground until it reports READY=1 on a test $NOTIFY_SOCKET,
# then dpkg --purge and every installed file gone.
#
# Nothing is written to the machine's own /etc, /usr or /var: the packages
# are installed with dpkg into an overlay of / (upper layer on this test's
# tmpfs) inside the private mount namespace of vg_init, and in a network
# namespace of its own (loopback only), so the daemons' ports meet no one
# else's. The overlay is real dpkg on this machine's system, its database
# and maintainer scripts included; it vanishes with the namespace, even if
# the test is killed. vigild's ExecStart (--watch /) runs chrooted into a
# throwaway root on a loop-mounted ext4, so the only filesystem it marks
# (FAN_MARK_FILESYSTEM of the watched path, daemon/fanotify.c) is that
# one; the test reads its marks from /proc/PID/fdinfo and checks them. Its
# /usr is a read-only bind of the installed tree: another filesystem, not
# marked. Every daemon runs under `timeout` and is stopped by its PID.
#
# A daemon that does not send READY=1 yet (the string is not in its
# binary) is accepted on its stderr's "listening on" line, said in a TAP
# comment; once it sends READY=1 the test insists on it.
. "$SRCDIR/tests/lib.sh"
if ! command -v dpkg-buildpackage >/dev/null; then
	echo "1..0 # SKIP needs dpkg-buildpackage (dpkg-dev)"
	exit 0
fi
if [ -z "${VG_IN_NETNS:-}" ] && [ "$(id -u)" -eq 0 ]; then
	export VG_IN_NETNS=1
	exec unshare -n bash "$0" "$@"
fi
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
ip link set lo up
mount -o remount,size=3g "$T"
UNITRUN=$SRCDIR/tests/helpers/unitrun.py
PY=/usr/bin/python3
B=				# where the .debs are (tests/lib-debs.sh)
R=$T/root			# the overlay of / the packages are installed into
V=$T/vroot			# vigild's throwaway root (loop ext4)
DAEMONS=			# "timeout-PID" of every daemon still running
START=$SECONDS

pk_cleanup() {
	local rc=$? p
	for p in $DAEMONS; do
		kill -KILL "$(ps -o pid= --ppid "$p" | tr -d ' ')" "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	[ -n "${NOTIFY_PID:-}" ] && kill "$NOTIFY_PID" 2>/dev/null
	[ -n "$TPMDIR" ] && bash "$SRCDIR/scripts/swtpm.sh" stop "$TPMDIR" >/dev/null 2>&1
	(exit $rc)
	vg_cleanup
}
trap pk_cleanup EXIT
trap 'exit 143' TERM INT HUP

bail() {	# stop here: what follows needs what just failed
	echo "# $1; stopping here"
	[ -n "${2:-}" ] && [ -s "$2" ] && tail -40 "$2" | sed 's/^/#   /'
	_failed=$((_failed + 1))
	exit 1
}

phase() { echo "# $1 (at $((SECONDS - START)) s)"; }

# --- build -----------------------------------------------------------------
# built once per build directory, shared with the host rig (tests/lib-debs.sh)
phase "dpkg-buildpackage"
. "$SRCDIR/tests/lib-debs.sh"
if [ -n "${VG_T0095_DEBS:-}" ]; then
	# debugging this script: the packages of an earlier build of this tree
	VG_DEBS=$VG_T0095_DEBS VG_DEBS_LOG=/dev/null
	echo "# VG_T0095_DEBS: not built, taken from $VG_T0095_DEBS"
	true
else
	vg_debs
fi
_report $? "dpkg-buildpackage -us -uc -b builds the packages"
B=$VG_DEBS
cp "$VG_DEBS_LOG" "$T/build.log" 2>/dev/null
[ "$_failed" -eq 0 ] || bail "the build failed" "$T/build.log"
check "the test suite is neither built (-Dtests=false) nor run" \
	bash -c "! grep -qE 'tests/unit/|meson test|ninja test|^Ok: +[0-9]' '$T/build.log'"
PKGS="vigil vigil-attest libvigil0 libvigil-dev"
DEBS=()
for p in $PKGS; do
	DEBS+=("$(ls "$B/${p}_"*.deb 2>/dev/null | head -1)")
	check "package $p is built" test -f "${DEBS[-1]}"
done

phase "lintian"
lintian --fail-on error "$B"/vigil_*.changes >"$T/lintian.out" 2>&1
check_eq "lintian --fail-on error passes on the .changes" "$?" 0
grep -v 'running with root privileges' "$T/lintian.out" | sed 's/^/# lintian: /'

# what each package holds (dpkg-deb -c), whatever the build installs
contents() { dpkg-deb -c "$B/${1}_"*.deb | awk '{print $6}' | sed 's|^\./|/|'; }
has() {	# PACKAGE PATH-REGEX...
	local p=$1 re
	shift
	for re in "$@"; do
		contents "$p" | grep -qE "^$re\$" || { echo "$p lacks $re"; return 1; }
	done
}
check "vigil holds vigil, vigild, the vigild unit, sysusers, completion, sample configs" \
	has vigil /usr/bin/vigil /usr/sbin/vigild '/(usr/)?lib/systemd/system/vigild\.service' \
	/usr/lib/sysusers.d/vigil.conf /usr/share/bash-completion/completions/vigil \
	/etc/vigil/vigil.conf /etc/vigil/vigild.policy
check "vigil holds the apt hook and its configuration (a link: removal removes it)" \
	has vigil /usr/libexec/vigil/apt-trust /usr/share/vigil/apt.conf /etc/apt/apt.conf.d/50vigil
check "... the configuration is not a conffile" \
	bash -c "! dpkg-deb -I '${DEBS[0]}' conffiles | grep -q apt.conf.d"
check "vigil-attest holds the agent, the verifier and their units" \
	has vigil-attest /usr/sbin/vigil-agent /usr/sbin/vigil-verifier \
	'/(usr/)?lib/systemd/system/vigil-agent\.service' \
	'/(usr/)?lib/systemd/system/vigil-verifier\.service'
check "libvigil0 holds libvigil.so.0" has libvigil0 '/usr/lib/[^/]+/libvigil\.so\.0(\..*)?'
check "libvigil-dev holds headers, libvigil.so and vigil.pc" \
	has libvigil-dev /usr/include/vigil/hash.h '/usr/lib/[^/]+/libvigil\.so' \
	'/usr/lib/[^/]+/pkgconfig/vigil\.pc'
MAN=0
if ls "$SRCDIR"/man/*.scd >/dev/null 2>&1; then
	MAN=1
	check "man pages: vigil(1), vigil.conf(5), vigild.policy(5), vigild(8) in vigil" \
		has vigil '/usr/share/man/man1/vigil\.1\.gz' '/usr/share/man/man5/vigil\.conf\.5\.gz' \
		'/usr/share/man/man5/vigild\.policy\.5\.gz' '/usr/share/man/man5/vigil-policy\.5\.gz' \
		'/usr/share/man/man8/vigild\.8\.gz'
	check "man pages: vigil-agent(8), vigil-verifier(8) in vigil-attest" \
		has vigil-attest '/usr/share/man/man8/vigil-agent\.8\.gz' \
		'/usr/share/man/man8/vigil-verifier\.8\.gz'
fi
check "the sample configs are conffiles" \
	bash -c "dpkg-deb -I '${DEBS[0]}' conffiles | grep -qx /etc/vigil/vigil.conf &&
		dpkg-deb -I '${DEBS[0]}' conffiles | grep -qx /etc/vigil/vigild.policy"

# an upgrade stops no daemon (debhelper's --no-start alone stops each unit in
# the preinst and starts none again: an apt upgrade ended enforcement)
for d in "${DEBS[@]}"; do
	case $d in *dbgsym*|*-dev_*) continue ;; esac
	check "${d##*/}: no maintainer script stops a unit on upgrade" \
		bash -c "! dpkg-deb -I '$d' preinst 2>/dev/null | grep -q 'stop'"
done

# --- install into an overlay of / --------------------------------------------
phase "dpkg -i"
mkdir -p "$T/ovl/upper" "$T/ovl/work" "$R"
mount -t overlay vigil-t0095 -o "lowerdir=/,upperdir=$T/ovl/upper,workdir=$T/ovl/work" "$R" ||
	bail "cannot mount an overlay of /"
mount -t proc proc "$R/proc"
mount -t tmpfs -o mode=755 run "$R/run"
mount -t tmpfs -o mode=1777 tmp "$R/tmp"
# a /dev without a TPM: the machine's own TPM, if any, is never extended
mkdev() {
	mount -t tmpfs -o mode=755 dev "$1/dev"
	for n in null zero full random urandom; do
		touch "$1/dev/$n" && mount --bind "/dev/$n" "$1/dev/$n"
	done
	ln -s /proc/self/fd "$1/dev/fd"
	mkdir "$1/dev/shm"
}
mkdev "$R"
mkdir "$R/debs" && cp "${DEBS[@]}" "$R/debs/"
# the user vigil as on a machine that never had it (this one may: tests
# create it), so that the package's sysusers is what creates it
sed -i '/^vigil:/d' "$R/etc/passwd" "$R/etc/group" "$R/etc/shadow" "$R/etc/gshadow"
rin() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"; }
check "dpkg -i installs the four packages" \
	rin env DEBIAN_FRONTEND=noninteractive dpkg -i "${DEBS[@]/#*\//\/debs\/}"
[ "$_failed" -eq 0 ] || bail "the packages do not install" "$T/.out"
for p in $PKGS; do
	rin dpkg-query -L "$p" | sort -u >"$T/files.$p"
done

check "the user vigil is created on installation (sysusers)" rin getent passwd vigil
check "nothing is enabled on installation" \
	bash -c "! ls '$R'/etc/systemd/system/*.wants/ 2>/dev/null | grep -q '^vigil'"

# --- what an administrator tries first ---------------------------------------
phase "the installed programs"
v=$(rin vigil --version 2>&1)
check "vigil --version names the packaged version" grep -q '0\.1\.0' <<<"$v"
echo "# vigil --version: $v"
for d in vigild vigil-agent vigil-verifier; do
	check "$d --version" rin "$d" --version
done
printf 'hello, vigil\n' >"$R/tmp/hello"
got=$(rin vigil hash --algo sha256 /tmp/hello 2>&1)
check_eq "vigil hash of a file" "$got" "sha256:$(sha256sum <"$R/tmp/hello" | cut -d' ' -f1)  /tmp/hello"
check "README.Debian's first step: vigil policy check /etc/vigil/vigild.policy" \
	rin vigil policy check /etc/vigil/vigild.policy
if [ $MAN -eq 1 ]; then
	check "man -w vigil" rin man -w vigil
	check "man -w vigild" rin man -w vigild
	check "man -w vigil-agent and vigil-verifier" rin man -w vigil-agent vigil-verifier
else
	echo "# no man/*.scd in the source yet: man pages not checked"
fi

cat >"$R/tmp/tiny.c" <<'EOF'
#include <stdio.h>
#include <vigil/hash.h>
int main(void)
{
	struct vg_digest d;
	char hex[2 * VG_HASH_MAX_DIGEST + 1];
	int algo = vg_hash_by_name("sha256");

	if (algo < 0 || vg_hash_buf((unsigned int)algo, "abc", 3, &d, NULL) < 0)
		return 1;
	vg_hex_encode(d.bytes, d.len, hex);
	printf("%s:%s\n", vg_hash_name((unsigned int)algo), hex);
	return 0;
}
EOF
libs=$(rin pkg-config --libs vigil 2>&1 | sed "s/ *$//")
check_eq "pkg-config --libs vigil" "$libs" "-lvigil"
check "a program builds with pkg-config --cflags --libs vigil only" \
	rin sh -c 'cc -o /tmp/tiny /tmp/tiny.c $(pkg-config --cflags --libs vigil)'
check "it runs against the installed libvigil.so.0" \
	bash -c "chroot '$R' ldd /tmp/tiny | grep -qE 'libvigil\.so\.0 => (/usr)?/lib/[^ ]*/libvigil\.so\.0'"
check_eq "and computes sha256(abc) through it" "$(rin /tmp/tiny 2>&1)" \
	"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

# --- units ---------------------------------------------------------------------
phase "units"
unit_path() { ls "$R"/usr/lib/systemd/system/"$1" "$R"/lib/systemd/system/"$1" 2>/dev/null | head -1; }
UNITS="vigild.service vigil-agent.service vigil-verifier.service"
for u in $UNITS; do
	check "$u is installed" test -n "$(unit_path "$u")"
	check "systemd-analyze verify $u (--root, offline)" \
		bash -c "systemd-analyze verify --man=no --root='$R' '$(unit_path "$u" | sed "s|^$R||")' \
			2>&1 | tee /dev/stderr | { ! grep -q .; }"
	s=$(systemd-analyze security --offline=true --root="$R" "$(unit_path "$u" | sed "s|^$R||")" \
		2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: //p')
	echo "# systemd-analyze security $u: ${s:-?}"
done

# wait_ready NAME ROOT BINARY ERRFILE: after the daemon's timeout process
# $DPID started with NOTIFY_SOCKET=/run/t0095-NAME.sock in ROOT, wait (30 s)
# for READY=1 there, or the stderr fallback if BINARY cannot send it.
# Sets READY_HOW.
wait_ready() {
	local name=$1 root=$2 bin=$3 err=$4 i strict=1
	READY_HOW=
	grep -qa 'READY=1' "$root$bin" || strict=0
	for i in $(seq 300); do
		if ! kill -0 "$NOTIFY_PID" 2>/dev/null; then
			wait "$NOTIFY_PID" && { READY_HOW="READY=1 on \$NOTIFY_SOCKET"; return 0; }
			echo "no READY=1 in 30 s" >>"$err"; return 1
		fi
		if [ $strict -eq 0 ] && grep -q 'listening on' "$err"; then
			READY_HOW="stderr 'listening on' (no READY=1 in $bin yet)"
			return 0
		fi
		kill -0 "$DPID" 2>/dev/null || { echo "exited before it was ready" >>"$err"; return 1; }
		sleep 0.1
	done
	return 1
}
start_notify() {	# SOCKET-PATH-OUTSIDE
	rm -f "$1"
	$PY "$UNITRUN" notify "$1" 30 >"$1.msgs" &
	NOTIFY_PID=$!
	for _ in $(seq 50); do [ -S "$1" ] && return 0; sleep 0.1; done
	return 1
}
daemon_pid() { ps -o pid= --ppid "$1" | tr -d ' '; }
stop_daemon() {	# stop $DPID's daemon by its PID; its exit status
	local pid rc
	pid=$(daemon_pid "$DPID")
	kill -TERM "${pid:-$DPID}" 2>/dev/null
	wait "$DPID"; rc=$?
	DAEMONS=${DAEMONS//$DPID/}
	kill "$NOTIFY_PID" 2>/dev/null; wait "$NOTIFY_PID" 2>/dev/null
	NOTIFY_PID=
	return $rc
}
# make_dirs ROOT UNIT: what systemd makes before ExecStart (RuntimeDirectory= ...)
make_dirs() {
	local d
	for d in $($PY "$UNITRUN" dirs "$2"); do mkdir -p "$1$d"; done
}
unit_env() { $PY "$UNITRUN" env "$1"; }
# reload ROOT UNIT NAME: the unit's ExecReload= line, if it has one, in ROOT
# while $DPID's daemon runs ($MAINPID is its PID)
reload() {
	local -a cmd
	$PY "$UNITRUN" has-reload "$2" || return 0
	mapfile -d '' cmd < <(MAINPID=$(daemon_pid "$DPID") $PY "$UNITRUN" exec "$2" ExecReload)
	echo "# ExecReload: ${cmd[*]}"
	check "$3's ExecReload line succeeds while it runs" \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin timeout 30 chroot "$1" "${cmd[@]}"
	check "$3 still runs after the reload" kill -0 "$(daemon_pid "$DPID")"
}

# a machine with a TPM: a swtpm, reached by the daemons through $VIGIL_TCTI
# (the command lines stay as the units have them) at a socket inside the
# roots they run in
check "swtpm is installed (scripts/deps.sh)" command -v swtpm
[ "$_failed" -eq 0 ] || bail "no swtpm"
vg_tpm_start
trap pk_cleanup EXIT
trap 'exit 143' TERM INT HUP
mkdir -p "$R/run/t0095-tpm" && mount --bind "$TPMDIR" "$R/run/t0095-tpm"
TCTI="swtpm:path=/run/t0095-tpm/sock"

# vigild: chrooted into a loop-mounted ext4, the only filesystem it may mark
phase "vigild's ExecStart in a throwaway root"
U=$(unit_path vigild.service)
mapfile -d '' ARGV < <($PY "$UNITRUN" exec "$U")
echo "# ExecStart: ${ARGV[*]}"
check_eq "vigild's ExecStart runs /usr/sbin/vigild" "${ARGV[0]}" /usr/sbin/vigild
vg_ext4 "$V" 64
mkdir -p "$V"/{usr,etc,proc,dev,run,tmp,var/log,var/lib}
for l in bin sbin lib lib64; do [ -L "/$l" ] && ln -s "$(readlink "/$l")" "$V/$l"; done
mount --bind "$R/usr" "$V/usr" && mount -o remount,bind,ro "$V/usr"
cp -a "$R/etc/vigil" "$V/etc/"
cp -a "$R"/etc/{passwd,group,nsswitch.conf,ld.so.cache} "$V/etc/"
[ -d "$R/etc/ssl" ] && cp -a "$R/etc/ssl" "$V/etc/"
mount -t proc proc "$V/proc"
mount -t tmpfs -o mode=755 run "$V/run"
mkdev "$V"
mkdir -p "$V/run/t0095-tpm" && mount --bind "$TPMDIR" "$V/run/t0095-tpm"
make_dirs "$V" "$U"
make_dirs "$R" "$U"	# as systemd would on the installed system: purge must clean them
start_notify "$V/run/t0095-vigild.sock" || bail "no notify socket"
mapfile -t UENV < <(unit_env "$U")
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin NOTIFY_SOCKET=/run/t0095-vigild.sock VIGIL_TCTI="$TCTI" \
	"${UENV[@]}" \
	timeout -s KILL 60 chroot "$V" "${ARGV[@]}" 2>"$T/vigild.err" &
DPID=$!; DAEMONS="$DAEMONS $DPID"
wait_ready vigild "$V" /usr/sbin/vigild "$T/vigild.err"
_report $? "vigild reports ready from its ExecStart line"
cp "$T/vigild.err" "$T/.out"
echo "# vigild ready: ${READY_HOW:-no}"
VPID=$(daemon_pid "$DPID")
marks() {	# every superblock vigild's fanotify groups mark: major:minor
	local f
	for f in /proc/"$VPID"/fdinfo/*; do
		# fanotify's own lines only: an epoll descriptor's fdinfo names its targets' sdev too
		grep '^fanotify ' "$f" 2>/dev/null | grep -o 'sdev:[0-9a-f]*' 
	done | sort -u | while IFS=: read -r _ dev; do
		echo "$((0x$dev >> 20)):$((0x$dev & 0xfffff))"
	done | sort -u
}
loopdev=$(mountpoint -d "$V")
m=$(marks)
echo "# vigild marks: $(tr "\n" " " <<<"${m:-none}"); the throwaway root is $loopdev, / is $(mountpoint -d /)"
# vigil.conf as shipped watches every filesystem mounted under / that users
# could write and run from (vigild.watch_mounts = /): in the chroot, the
# throwaway root and its own /run, never /dev (device nodes), nor anything
# of the host's
own=$(awk -v v="$V" '$5 == v || index($5, v "/") == 1 {print $3}' /proc/self/mountinfo | sort -u)
check "vigild marks the throwaway root's filesystem" grep -qx "$loopdev" <<<"$m"
check "... and only filesystems mounted in the throwaway root" \
	bash -c 'for x in $1; do grep -qx "$x" <<<"$2" || exit 1; done' _ "$m" "$own"
check "... not its /dev (device nodes)" bash -c "! grep -qx '$(mountpoint -d "$V/dev" 2>/dev/null || echo none)' <<<'$m'"
check "... never the host's /" bash -c "! grep -qx '$(mountpoint -d /)' <<<'$m'"
reload "$V" "$U" vigild
check "vigild stops on SIGTERM, exit 0" stop_daemon
sed 's/^/# vigild: /' "$T/vigild.err" | head -20

# the agent and the verifier, in the overlay, after the credentials that
# README.Debian tells an administrator to make
phase "vigil-verifier and vigil-agent from their ExecStart lines"
check "README.Debian's credentials: admin token, verifier-tokens" \
	rin vigil-verifier --create-token admin /etc/vigil/attest-token --auth-tokens /etc/vigil/verifier-tokens
check "README.Debian's credentials: the agents' token, agent-tokens" \
	rin vigil-verifier --create-token verifier /etc/vigil/agent-token --auth-tokens /etc/vigil/agent-tokens
# vigil-attest's README.Debian: the CAs the agents' EK certificates chain
# to, at /etc/vigil/ek-ca.pem (here a CA of the test's own)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=t0095 EK CA" -keyout "$T/ekca.key" -out "$T/ekca.pem" 2>/dev/null
check "README.Debian's EK CA at /etc/vigil/ek-ca.pem" install -m 644 "$T/ekca.pem" "$R/etc/vigil/ek-ca.pem"
for d in vigil-verifier vigil-agent; do
	U=$(unit_path "$d.service")
	mapfile -d '' ARGV < <($PY "$UNITRUN" exec "$U")
	echo "# ExecStart: ${ARGV[*]}"
	check_eq "$d's ExecStart runs /usr/sbin/$d" "${ARGV[0]}" "/usr/sbin/$d"
	make_dirs "$R" "$U"
	user=$($PY "$UNITRUN" user "$U")
	spec=()
	if [ -n "$user" ]; then
		spec=(--userspec="$user:$(rin id -gn "$user")")
		for x in $($PY "$UNITRUN" dirs "$U"); do chroot "$R" chown -R "$user:" "$x"; done
	fi
	start_notify "$R/run/t0095-$d.sock" || bail "no notify socket"
	mapfile -t UENV < <(unit_env "$U")
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin NOTIFY_SOCKET=/run/t0095-$d.sock \
		VIGIL_TCTI="$TCTI" "${UENV[@]}" \
		timeout -s KILL 60 chroot "${spec[@]}" "$R" "${ARGV[@]}" 2>"$T/$d.err" &
	DPID=$!; DAEMONS="$DAEMONS $DPID"
	wait_ready "$d" "$R" "/usr/sbin/$d" "$T/$d.err"
	_report $? "$d reports ready from its ExecStart line${user:+ (as $user)}"
	echo "# $d ready: ${READY_HOW:-no}"
	reload "$R" "$U" "$d"
	check "$d stops on SIGTERM" stop_daemon
	sed "s/^/# $d: /" "$T/$d.err" | head -10
done

# --- purge ---------------------------------------------------------------------
phase "dpkg --purge"
check "dpkg --purge removes the four packages" \
	rin dpkg --purge vigil vigil-attest libvigil-dev libvigil0
left() {	# a path dpkg -L listed that is still in the overlay and not in /
	local p f
	for p in $PKGS; do
		while read -r f; do
			[ -n "$f" ] && [ "$f" != "/." ] || continue
			if [ -e "$R$f" ] || [ -L "$R$f" ]; then
				[ -e "$f" ] || [ -L "$f" ] || echo "left behind: $f ($p)"
			fi
		done <"$T/files.$p"
	done
	for f in /etc/vigil /var/lib/vigil /var/log/vigil; do
		[ -e "$R$f" ] && echo "left behind: $f ($(ls -A "$R$f" | tr '\n' ' '))"
	done
}
l=$(left)
check_eq "every installed file, the state and the credentials are gone" "$l" ""
check "no package of vigil's is known to dpkg any more" \
	bash -c "! chroot '$R' dpkg-query -W $PKGS 2>/dev/null | grep -q ."
check "the user vigil stays after purge (Debian leaves system users; README.Debian)" \
	rin getent passwd vigil
echo "# t0095 took $((SECONDS - START)) s"
