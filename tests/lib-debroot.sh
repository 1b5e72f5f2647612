# shellcheck shell=bash
# tests/lib-debroot.sh - a minimal Debian root and a local apt repository
# for the tests that run apt and dpkg for real (t0114). Source it after
# tests/lib.sh and vg_init.
#
#   vg_debroot DIR           extract the cached bookworm root into DIR
#                            (fails if it cannot be built: no network)
#   vg_debroot_mounts DIR    /proc and /dev inside DIR (this test's own
#                            namespace: vg_cleanup unmounts them)
#   vg_debroot_vigil DIR     the test build's vigil runnable in the chroot:
#                            the binary and every library ldd names copied to
#                            DIR/usr/local/lib/vigil-test, DIR/usr/bin/vigil
#                            running it through the copied dynamic loader
#   vg_repo_key NAME         a throwaway OpenPGP key ($T/gnupg-NAME) and its
#                            public keyring $T/NAME.gpg
#   vg_hello_deb OUT VER     vg-hello VER: /usr/bin/vg-hello (a script),
#                            the conffile /etc/vg-hello.conf, a preinst, and
#                            a postinst that runs the new /usr/bin/vg-hello
#   vg_repo_index REPO KEY   dists/vgtest/{main/binary-amd64/Packages,Release,
#                            InRelease} of REPO/pool (apt-ftparchive), the
#                            InRelease clearsigned by key KEY
#
# The root: `mmdebstrap --variant=apt bookworm` with its apt lists and the
# .debs it installed kept (--skip=cleanup/apt, --skip=essential/unlink),
# built once per build directory into $BUILD_ROOT/fixtures/debroot.tar
# under flock (about 70 s and 60 MB from deb.debian.org; 330 MB of tar),
# and rebuilt only when missing.

VG_DEBROOT_TAR=${BUILD_ROOT:?}/fixtures/debroot.tar
VG_DEBROOT_MIRROR=${VG_DEBROOT_MIRROR:-http://deb.debian.org/debian}

# the cached tarball, built if missing. Return: 0, or 1 (no mmdebstrap, no network)
vg_debroot_tar() {
	local dir=${VG_DEBROOT_TAR%/*}
	mkdir -p "$dir" || return 1
	(
		flock 9 || exit 1
		[ -s "$VG_DEBROOT_TAR" ] && exit 0
		command -v mmdebstrap >/dev/null || exit 1
		# a private mount namespace: mmdebstrap's own mounts never leak
		unshare -m mmdebstrap --quiet --variant=apt \
			--skip=cleanup/apt,essential/unlink --format=tar \
			bookworm "$VG_DEBROOT_TAR.tmp" "$VG_DEBROOT_MIRROR" >"$dir/debroot.log" 2>&1 &&
			mv "$VG_DEBROOT_TAR.tmp" "$VG_DEBROOT_TAR"
	) 9>"$dir/debroot.lock"
	[ -s "$VG_DEBROOT_TAR" ]
}

vg_debroot() {
	vg_debroot_tar || return 1
	mkdir -p "$1" && tar -C "$1" -xf "$VG_DEBROOT_TAR"
}

vg_debroot_mounts() {
	mkdir -p "$1/proc" "$1/dev"
	mount -t proc proc "$1/proc" &&
		mount --rbind /dev "$1/dev" && mount --make-rslave "$1/dev"
}

vg_debroot_vigil() {
	local root=$1 d=$1/usr/local/lib/vigil-test lib ld=
	mkdir -p "$d" "$root/usr/bin"
	cp "$VIGIL" "$d/vigil" || return 1
	for lib in $(ldd "$VIGIL" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
		cp -L "$lib" "$d/" || return 1
		case $lib in */ld-linux*) ld=${lib##*/} ;; esac
	done
	[ -n "$ld" ] || return 1
	cat >"$root/usr/bin/vigil" <<-EOF
		#!/bin/sh
		# the test build's vigil (tests/lib-debroot.sh), with its own libraries
		exec /usr/local/lib/vigil-test/$ld --library-path /usr/local/lib/vigil-test \\
			/usr/local/lib/vigil-test/vigil "\$@"
	EOF
	chmod 755 "$root/usr/bin/vigil"
}

vg_repo_key() {
	local h=$T/gnupg-$1
	mkdir -p "$h" && chmod 700 "$h"
	GNUPGHOME=$h gpg --batch --quiet --passphrase '' --quick-gen-key "vigil test $1 <$1@test.invalid>" \
		ed25519 sign never 2>/dev/null &&
		GNUPGHOME=$h gpg --batch --quiet --export >"$T/$1.gpg"
}

vg_hello_deb() {
	local out=$1 v=$2 b
	b=$(mktemp -d "$T/.hello-XXXXXX")
	mkdir -p "$b/DEBIAN" "$b/usr/bin" "$b/etc"
	printf '#!/bin/sh\necho "vg-hello %s"\n' "$v" >"$b/usr/bin/vg-hello"
	chmod 755 "$b/usr/bin/vg-hello"
	printf 'greeting=%s\n' "$v" >"$b/etc/vg-hello.conf"
	printf '/etc/vg-hello.conf\n' >"$b/DEBIAN/conffiles"
	cat >"$b/DEBIAN/control" <<-EOF
		Package: vg-hello
		Version: $v
		Architecture: all
		Maintainer: vigil tests <tests@test.invalid>
		Description: vigil's test package
	EOF
	printf '#!/bin/sh\nset -e\necho "vg-hello preinst %s $1" >>/var/log/vg-hello.log\n' "$v" >"$b/DEBIAN/preinst"
	# the postinst runs the program just unpacked: an enforcing vigild must trust it by then
	printf '#!/bin/sh\nset -e\n/usr/bin/vg-hello >>/var/log/vg-hello.log\n' >"$b/DEBIAN/postinst"
	chmod 755 "$b/DEBIAN/preinst" "$b/DEBIAN/postinst"
	mkdir -p "$out"
	dpkg-deb --root-owner-group -Zgzip -b "$b" "$out/vg-hello_${v}_all.deb" >/dev/null
	rm -rf "$b"
}

vg_repo_index() {
	local repo=$1 key=$2 d=dists/vgtest
	(
		cd "$repo" || exit 1
		mkdir -p $d/main/binary-amd64
		apt-ftparchive packages pool >$d/main/binary-amd64/Packages 2>/dev/null || exit 1
		apt-ftparchive -o APT::FTPArchive::Release::Origin=vigil-test \
			-o APT::FTPArchive::Release::Suite=vgtest -o APT::FTPArchive::Release::Codename=vgtest \
			-o APT::FTPArchive::Release::Components=main \
			-o APT::FTPArchive::Release::Architectures=amd64 release $d >$d/Release.new || exit 1
		mv $d/Release.new $d/Release
		rm -f $d/InRelease
		GNUPGHOME=$T/gnupg-$key gpg --batch --quiet --digest-algo SHA256 --clearsign \
			-o $d/InRelease $d/Release
	)
}
