# shellcheck shell=bash
# tests/lib-debs.sh - vigil's own Debian packages, built once per build
# directory and shared by the tests that install them (t0095, the host rig):
# dpkg-buildpackage -us -uc -b of a copy of the source tree as it is
# (committed or not, without ignored build directories), under flock, into
# $BUILD_ROOT/fixtures/debs; rebuilt when the tree's content differs from
# the one they were built from (the SHA-256 of its file list and bytes).
#
#   vg_debs             build if needed; then $VG_DEBS is the directory
#                       (vigil_*.deb, vigil-attest_*.deb, libvigil0_*.deb,
#                       libvigil-dev_*.deb, the .changes) and $VG_DEBS_LOG
#                       the build's log. Return: 0, or 1 (the build failed:
#                       its log is there)

VG_DEBS=${BUILD_ROOT:?}/fixtures/debs
VG_DEBS_LOG=$VG_DEBS/build.log

# the source tree's files as tar on stdout (what the package is built from);
# with "key", times and owners left out (the cache's key: the content only)
vg_debs_tree() {
	local norm=()
	[ "${1:-}" = key ] && norm=(--sort=name --mtime=@0 --owner=0 --group=0)
	if git -C "$SRCDIR" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$SRCDIR" ls-files -z -co --exclude-standard |
			tar -C "$SRCDIR" --null --ignore-failed-read "${norm[@]}" -T - -cf - 2>/dev/null
	else
		tar -C "$SRCDIR" --exclude='./build*' --exclude='./obj-*' --exclude=./.git "${norm[@]}" \
			-cf - .
	fi
}

vg_debs() {
	mkdir -p "$VG_DEBS" || return 1
	(
		flock 9 || exit 1
		key=$(vg_debs_tree key | sha256sum | cut -d' ' -f1)
		if [ "$(cat "$VG_DEBS/tree.sha256" 2>/dev/null)" = "$key" ] &&
			ls "$VG_DEBS"/vigil_*.deb >/dev/null 2>&1; then
			exit 0
		fi
		rm -rf "$VG_DEBS/src" "$VG_DEBS"/*.deb "$VG_DEBS"/*.changes "$VG_DEBS"/*.buildinfo \
			"$VG_DEBS"/*.ddeb "$VG_DEBS/tree.sha256"
		mkdir -p "$VG_DEBS/src/vigil" && vg_debs_tree | tar -C "$VG_DEBS/src/vigil" -xf - || exit 1
		# its own process group: a signal to the test reaches it (setsid), and nice: tests run beside it
		(cd "$VG_DEBS/src/vigil" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
			exec setsid nice dpkg-buildpackage -us -uc -b) >"$VG_DEBS_LOG" 2>&1 || exit 1
		mv "$VG_DEBS"/src/*.deb "$VG_DEBS"/src/*.changes "$VG_DEBS"/src/*.buildinfo "$VG_DEBS/" &&
			rm -rf "$VG_DEBS/src" && echo "$key" >"$VG_DEBS/tree.sha256"
	) 9>"$VG_DEBS.lock"
}
