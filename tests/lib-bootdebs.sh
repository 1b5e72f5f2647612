# shellcheck shell=bash
# tests/lib-bootdebs.sh - the boot chain of Debian 12 from the real archive,
# for the measured-boot tests of issue 45 (t0529). Source it after
# tests/lib.sh and vg_init.
#
#   vg_bootdebs            fetch once per build directory, under flock, into
#                          $VG_BOOTDEBS: apt's lists of bookworm and
#                          bookworm-security (InRelease, Packages: lists/),
#                          and the .debs (debs/) of shim-signed,
#                          grub-efi-amd64-signed and linux-image-amd64's
#                          kernel from bookworm, the kernel of
#                          bookworm-security; names them in $VG_BOOTDEBS/env
#                          (SHIM_DEB, GRUB_DEB, KOLD_DEB, KNEW_DEB, KOLD,
#                          KNEW: the two kernels' ABI, 6.1.0-N-amd64);
#                          debs-old/ holds bookworm's chain (shim, GRUB, the
#                          kernel), debs-new/ the bookworm-security kernel
#                          (hard links: vigil trust build --debs reads
#                          regular files).
#                          Return: 1 when the archive cannot be reached.
#
# apt-get runs with a private configuration (its own sources, lists, cache
# and no status file): nothing of the host's apt is read or written. About
# 145 MB from deb.debian.org (two kernels of 70 MB each), once.

VG_BOOTDEBS=${BUILD_ROOT:?}/fixtures/bootdebs
VG_BOOTDEBS_MIRROR=${VG_BOOTDEBS_MIRROR:-http://deb.debian.org}

_vg_bootapt() {
	local c=$VG_BOOTDEBS
	apt-get -q -o Dir::Etc::SourceList="$c/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null \
		-o Dir::State::Lists="$c/lists" -o Dir::Cache="$c/cache" \
		-o Dir::State::Status="$c/status" -o APT::Architecture=amd64 \
		-o APT::Architectures::=amd64 -o Acquire::Languages=none \
		-o APT::Sandbox::User=root -o Debug::NoLocking=1 "$@"
}

_vg_bootapt_cache() {
	local c=$VG_BOOTDEBS
	apt-cache -o Dir::Etc::SourceList="$c/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null \
		-o Dir::State::Lists="$c/lists" -o Dir::Cache="$c/cache" \
		-o Dir::State::Status="$c/status" -o APT::Architecture=amd64 "$@"
}

# the newest version of $1 that suite $2's Packages list (the name of the list file)
_vg_bootver() {
	local pkg=$1 suite=$2 f
	for f in "$VG_BOOTDEBS"/lists/*_dists_"${suite}"_main_binary-amd64_Packages*; do
		case $f in *.lz4) lz4cat "$f" ;; *.gz) zcat "$f" ;; *.xz) xzcat "$f" ;; *) cat "$f" ;; esac
	done | awk -v p="$pkg" '/^Package: /{ok = ($2 == p)} ok && /^Version: /{print $2}' |
		sort -V | tail -1
}

# the kernel ABI package linux-image-amd64 VERSION depends on
_vg_bootabi() {
	_vg_bootapt_cache show "linux-image-amd64=$1" 2>/dev/null |
		sed -n 's/^Depends: \(linux-image-[0-9][^ ,]*\).*/\1/p' | head -1
}

vg_bootdebs() {
	local c=$VG_BOOTDEBS
	mkdir -p "$c" || return 1
	(
		flock 9 || exit 1
		[ -s "$c/env" ] && exit 0
		rm -rf "$c/lists" "$c/cache" "$c/debs" "$c/debs.tmp" "$c/debs-old" "$c/debs-new"
		mkdir -p "$c/lists/partial" "$c/cache/archives/partial" "$c/debs.tmp"
		: >"$c/status"
		kr=/usr/share/keyrings/debian-archive-keyring.gpg
		cat >"$c/sources.list" <<-EOF
			deb [signed-by=$kr] $VG_BOOTDEBS_MIRROR/debian bookworm main
			deb [signed-by=$kr] $VG_BOOTDEBS_MIRROR/debian-security bookworm-security main
		EOF
		_vg_bootapt update >"$c/fetch.log" 2>&1 || exit 1
		shim=$(_vg_bootver shim-signed bookworm)
		grub=$(_vg_bootver grub-efi-amd64-signed bookworm)
		mold=$(_vg_bootver linux-image-amd64 bookworm)
		mnew=$(_vg_bootver linux-image-amd64 bookworm-security)
		kold=$(_vg_bootabi "$mold")
		knew=$(_vg_bootabi "$mnew")
		[ -n "$shim" ] && [ -n "$grub" ] && [ -n "$kold" ] && [ -n "$knew" ] || exit 1
		# one kernel version in both suites: no upgrade to simulate
		[ "$kold" != "$knew" ] || exit 1
		vold=$(_vg_bootver "$kold" bookworm)
		vnew=$(_vg_bootver "$knew" bookworm-security)
		(cd "$c/debs.tmp" && _vg_bootapt download "shim-signed=$shim" \
			"grub-efi-amd64-signed=$grub" "$kold=$vold" "$knew=$vnew") >>"$c/fetch.log" 2>&1 ||
			exit 1
		mkdir -p "$c/debs.tmp/old" "$c/debs.tmp/new"
		ln "$c"/debs.tmp/shim-signed_*.deb "$c"/debs.tmp/grub-efi-amd64-signed_*.deb \
			"$c"/debs.tmp/"$kold"_*.deb "$c/debs.tmp/old/" &&
			ln "$c"/debs.tmp/"$knew"_*.deb "$c/debs.tmp/new/" || exit 1
		mv "$c/debs.tmp/old" "$c/debs-old" && mv "$c/debs.tmp/new" "$c/debs-new" &&
			mv "$c/debs.tmp" "$c/debs"
		{
			echo "SHIM_DEB='$(ls "$c"/debs/shim-signed_*.deb)'"
			echo "GRUB_DEB='$(ls "$c"/debs/grub-efi-amd64-signed_*.deb)'"
			echo "KOLD_DEB='$(ls "$c"/debs/"$kold"_*.deb)'"
			echo "KNEW_DEB='$(ls "$c"/debs/"$knew"_*.deb)'"
			echo "KOLD='${kold#linux-image-}'"
			echo "KNEW='${knew#linux-image-}'"
			echo "KOLD_VER='$vold'"
			echo "KNEW_VER='$vnew'"
		} >"$c/env.tmp" && mv "$c/env.tmp" "$c/env"
	) 9>"$c.lock"
	[ -s "$c/env" ] && . "$c/env"
}
