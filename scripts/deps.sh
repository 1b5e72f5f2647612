#!/usr/bin/env bash
# Install every Debian package vigil needs to build, test and run its demo.
# Idempotent: asks apt only for what is missing, and runs `apt-get update`
# at most once. `--bench` adds the peers that bench/ compares against.
set -euo pipefail

pkgs=(
	# build
	meson ninja-build pkgconf gcc clang libclang-rt-14-dev
	libssl-dev libtss2-dev libmicrohttpd-dev libjson-c-dev
	libsqlite3-dev libpq-dev libcmocka-dev libblkid-dev libseccomp-dev libsystemd-dev
	libcurl4-openssl-dev	# headers; `vigil attest` dlopen()s libcurl.so.4 (libcurl4)
	libgnutls28-dev		# TLS of the two HTTP daemons (libmicrohttpd)
	libarchive-dev		# lib/trust: .debs (ar, tar) and apt's compressed Packages lists
	libgpgme-dev		# vigil attest policy import --allowlist-sig: OpenPGP detached signatures
	scdoc			# man/*.scd to roff (man pages; skipped without it)
	# test and demo: the real tools vigil is checked against
	openssl attr ima-evm-utils tpm2-tools swtpm swtpm-tools
	util-linux e2fsprogs python3 sqlite3
	man-db		# man -l renders the built pages (t0096)
	python3-jsonschema	# t0097: every --json output against its docs/schemas/ schema;
				# t0515: live API answers against docs/openapi.json
	chromium	# t0515: the verifier's operators' page in headless Chromium
	python3-jwcrypto	# t0525: the verifier's EARs verified with an independent JOSE library;
				# tests/vectors/jws made with it
	aide		# t0044: vigil scan beside AIDE on the same changes (and bench/tree's peer)
	# vigil trust (t0110, t0111, bench/trust): the archive chain and its peers
	gpgv debian-archive-keyring lz4 debsums
	pesign sbsigntool python3-pefile	# t0529: Authenticode digests checked by pesign and pefile; a local kernel signed
	mmdebstrap apt-utils gnupg	# t0114: a bookworm root (tests/lib-debroot.sh), apt-ftparchive, a repository key
	systemd strace	# t0094: systemd-analyze verify/security of the units; the daemons' system calls
	systemd-container	# t0730: the booted host rig (systemd-nspawn -b: the packages as shipped)
	fuse3		# t0715: a user's own FUSE filesystem (fusermount3) against vigild
	valgrind	# make leakcheck LEAKCHECK=valgrind
	postgresql	# server binaries for the tests' throwaway clusters (tests/lib-pg.sh); the
			# system cluster is not started (policy-rc.d below) nor used
	# packaging: debian/ and t0095 (dpkg-buildpackage, lintian, ip for the test's own loopback)
	dpkg-dev debhelper lintian iproute2
)
if [ "${1:-}" = "--bench" ]; then
	pkgs+=(hyperfine fapolicyd)
fi

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages (${missing[*]}); run as root to install them" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# fapolicyd (a bench peer) must never start on the host with its default
# configuration: it would mark /. Keep package scripts from starting services.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
