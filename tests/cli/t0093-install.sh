#!/usr/bin/env bash
# What `meson install` puts on a host, installed from this very build into
# a throwaway root on the test's tmpfs (--destdir; nothing outside $T is
# written): the four programs, libvigil.so.0 with its soname links, every
# public header flat in include/vigil/, vigil.pc, the units, the sysusers.d
# file, the bash completion, the sample configuration and (when the man
# pages are built) the man pages. Then a small C program is built against
# the installed copy with nothing but `pkg-config --cflags --libs vigil`,
# run against the installed library, and checked; every installed header
# compiles on its own the same way.
. "$SRCDIR/tests/lib.sh"
vg_init

D=$T/root
check "meson install --destdir (this build)" \
	meson install -C "$BUILD_ROOT" --no-rebuild --quiet --destdir "$D"

# the install directories of this build, absolute
eval "$(meson introspect --buildoptions "$BUILD_ROOT" | /usr/bin/python3 -c '
import json, os, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
for k in ("bindir", "sbindir", "libdir", "includedir", "sysconfdir", "datadir", "mandir",
          "libexecdir"):
    print("%s=%s" % (k, os.path.join(o["prefix"], o[k])))
')"
version=$("$VIGIL" --version | awk '{print $2}')
check "the project has a version" test -n "$version"

# --- the programs ---------------------------------------------------------
check "vigil in bindir" test -x "$D$bindir/vigil"
for p in vigild vigil-agent vigil-verifier; do
	check "$p in sbindir" test -x "$D$sbindir/$p"
done
for p in "$bindir/vigil" "$sbindir/vigild" "$sbindir/vigil-agent" "$sbindir/vigil-verifier"; do
	check_eq "installed $(basename "$p") --version" "$("$D$p" --version 2>&1)" "$(basename "$p") $version"
	# the programs link libvigil's static libraries (the sandboxes of vigild's
	# appraisers and the verifier's processes need no shared library path)
	check "$(basename "$p") does not need libvigil.so" \
		bash -c "! readelf -d '$D$p' | grep -q 'NEEDED.*libvigil'"
	check "$(basename "$p") keeps no build-tree run path" \
		bash -c "! readelf -d '$D$p' | grep -Eq 'RPATH|RUNPATH'"
done

# --- the library ----------------------------------------------------------
lib=$D$libdir
check "libvigil.so.$version is a file" test -f "$lib/libvigil.so.$version" -a ! -L "$lib/libvigil.so.$version"
check_eq "libvigil.so.0 -> libvigil.so.$version" "$(readlink "$lib/libvigil.so.0")" "libvigil.so.$version"
check_eq "libvigil.so -> libvigil.so.0 (for -lvigil)" "$(readlink "$lib/libvigil.so")" "libvigil.so.0"
check_eq "soname libvigil.so.0" \
	"$(readelf -d "$lib/libvigil.so.$version" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')" "libvigil.so.0"
check "libvigil keeps no build-tree run path" \
	bash -c "! readelf -d '$lib/libvigil.so.$version' | grep -Eq 'RPATH|RUNPATH'"
nm -D --defined-only "$lib/libvigil.so.$version" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}' \
	>"$T/exports"
check "libvigil exports functions" test "$(wc -l <"$T/exports")" -gt 100
check_eq "libvigil exports only vg_* (libvigil.sym), not the vg__ helpers" \
	"$(grep -v '^vg_[a-z]' "$T/exports" | head -5)" ""
check "vg_hash_buf and vg_policy_parse are exported" \
	bash -c "grep -qx vg_hash_buf '$T/exports' && grep -qx vg_policy_parse '$T/exports'"

# --- headers and vigil.pc -------------------------------------------------
(cd "$SRCDIR/include" && ls */vigil/*.h | xargs -n1 basename | sort) >"$T/hdr-src"
(cd "$D$includedir/vigil" && ls | sort) >"$T/hdr-inst"
check "every public header is installed, flat in include/vigil/" diff "$T/hdr-src" "$T/hdr-inst"
check "vigil.pc in libdir/pkgconfig" test -f "$lib/pkgconfig/vigil.pc"

export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
check_eq "pkg-config --modversion vigil" "$(pkg-config --modversion vigil)" "$version"
cflags=$(pkg-config --cflags vigil)
libs=$(pkg-config --libs vigil)
check "pkg-config --cflags names the installed include dir" \
	bash -c "[[ ' $cflags ' == *' -I$D$includedir '* ]]"
check "pkg-config --libs: -L the installed libdir, -lvigil" \
	bash -c "[[ ' $libs ' == *' -L$lib '* && ' $libs ' == *' -lvigil '* ]]"
# Requires.private: what static linking needs (and tss2-esys for tpm_esys.h)
check "vigil.pc: Requires.private lists libcrypto and tss2-esys" \
	bash -c "grep '^Requires.private:' '$lib/pkgconfig/vigil.pc' | grep -q libcrypto &&
		 grep '^Requires.private:' '$lib/pkgconfig/vigil.pc' | grep -q tss2-esys"

# The test build's library is built with the sanitizers: a program linked
# to it must be too (the runtime has to come first). A release build's
# library needs nothing but pkg-config's flags.
san=()
readelf -d "$lib/libvigil.so.$version" | grep -q 'NEEDED.*libasan' && san+=(-fsanitize=address)
readelf -d "$lib/libvigil.so.$version" | grep -q 'NEEDED.*libubsan' && san+=(-fsanitize=undefined)

mkdir "$T/app" && cd "$T/app" || exit 1
for h in $(cat "$T/hdr-inst"); do
	printf '#include <vigil/%s>\nint vg_header_probe;\n' "$h" >"probe.c"
	check "<vigil/$h> compiles on its own (C17, -Wall -Wextra -Werror)" \
		cc -std=c17 -Wall -Wextra -Werror -fsyntax-only $cflags probe.c
done

cat >app.c <<'C'
/* a user of the installed libvigil: a digest, and a policy line or two */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vigil/diag.h>
#include <vigil/hash.h>
#include <vigil/policy.h>

int main(void)
{
	static const char good[] = "measure mask=MAY_EXEC func=BPRM_CHECK # programs\n";
	static const char bad[] = "measure func=BPRM_CHECK\nappraise func=NO_SUCH_HOOK\n";
	struct vg_policy_error err;
	struct vg_policy *p = NULL;
	struct vg_digest d;
	char hex[2 * VG_HASH_MAX_DIGEST + 1], *text = NULL;
	int algo = vg_hash_by_name("sha256");

	if (algo < 0 || vg_hash_buf((unsigned int)algo, "abc", 3, &d, NULL) < 0)
		return 2;
	vg_hex_encode(d.bytes, d.len, hex);
	printf("%s:%s\n", vg_hash_name(d.algo), hex);

	if (vg_policy_parse(good, strlen(good), 0, &p, &err) < 0 || vg_policy_format(p, &text, NULL) < 0)
		return 2;
	printf("%zu rule: %s", vg_policy_count(p), text);
	free(text);
	vg_policy_unref(p);

	p = NULL;
	if (vg_policy_parse(bad, strlen(bad), 0, &p, &err) == 0)
		return 2;
	printf("refused at %u:%u\n", err.line, err.col);
	return 0;
}
C
check "a program builds with only pkg-config --cflags --libs vigil" \
	cc -std=c17 -Wall -Wextra -Werror "${san[@]}" app.c -o app $cflags $libs
LD_LIBRARY_PATH=$lib ./app >app.out 2>&1
check_eq "it runs against the installed library" "$?" 0
check_eq "  and loads libvigil.so.0 from the installed tree" \
	"$(LD_LIBRARY_PATH=$lib ldd ./app | awk '$1 == "libvigil.so.0" {print $3}')" "$lib/libvigil.so.0"
check_eq "  sha256 of 'abc' (FIPS 180-2)" "$(sed -n 1p app.out)" \
	"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
check_eq "  a policy line in canonical form" "$(sed -n 2p app.out)" \
	"1 rule: measure func=BPRM_CHECK mask=MAY_EXEC"
check "  a bad rule refused with its line" grep -q '^refused at 2:' app.out

# --- everything else a host gets ------------------------------------------
for u in vigild.service vigil-agent.service vigil-verifier.service vigil-scan.service \
	vigil-scan.timer; do
	check "unit $u in $VG_UNITDIR" test -f "$D$VG_UNITDIR/$u"
done
check "sysusers.d file (user vigil) in $VG_SYSUSERSDIR" grep -q '^u vigil ' "$D$VG_SYSUSERSDIR/vigil.conf"
check "bash completion in $VG_COMPLETIONDIR" cmp "$SRCDIR/completions/vigil" "$D$VG_COMPLETIONDIR/vigil"
check "sample vigil.conf in sysconfdir/vigil" cmp "$SRCDIR/etc/vigil.conf" "$D$sysconfdir/vigil/vigil.conf"
check "sample vigild.policy in sysconfdir/vigil" cmp "$SRCDIR/etc/vigild.policy" "$D$sysconfdir/vigil/vigild.policy"
check "apt hook in libexecdir/vigil, executable" test -x "$D$libexecdir/vigil/apt-trust"
check "  the same script as apt/apt-trust" cmp "$SRCDIR/apt/apt-trust" "$D$libexecdir/vigil/apt-trust"
check "vigil-swtpm's state helper in libexecdir/vigil, executable" test -x "$D$libexecdir/vigil/vigil-swtpm-state"
check "apt configuration in sysconfdir/apt/apt.conf.d/50vigil" test -f "$D$sysconfdir/apt/apt.conf.d/50vigil"
check "  runs the installed hook before dpkg (Pre-Install-Pkgs, Version 1) and after" \
	bash -c "grep -qxF 'DPkg::Pre-Install-Pkgs {\"$libexecdir/vigil/apt-trust pre\";};' '$D$sysconfdir/apt/apt.conf.d/50vigil' &&
		 grep -qxF 'DPkg::Tools::Options::$libexecdir/vigil/apt-trust::Version \"1\";' '$D$sysconfdir/apt/apt.conf.d/50vigil' &&
		 grep -qxF 'DPkg::Post-Invoke {\"if [ -x $libexecdir/vigil/apt-trust ]; then $libexecdir/vigil/apt-trust post; fi\";};' '$D$sysconfdir/apt/apt.conf.d/50vigil'"
check "the boot announcement hook in libexecdir/vigil, executable, the same script" \
	sh -c "test -x '$D$libexecdir/vigil/boot-announce' && cmp '$SRCDIR/apt/boot-announce' '$D$libexecdir/vigil/boot-announce'"
check "  run by update-initramfs and by a kernel's postinst" bash -c \
	"grep -qxF 'exec $libexecdir/vigil/boot-announce initramfs \"\$@\"' '$D$sysconfdir/initramfs/post-update.d/vigil' &&
	 grep -qxF 'exec $libexecdir/vigil/boot-announce kernel \"\$@\"' '$D$sysconfdir/kernel/postinst.d/zz-vigil' &&
	 test -x '$D$sysconfdir/initramfs/post-update.d/vigil' -a -x '$D$sysconfdir/kernel/postinst.d/zz-vigil'"
# a removed, not purged package keeps them (conffiles): they must not fail
# update-initramfs or a kernel's postinst once boot-announce is gone
if [ ! -e "$libexecdir/vigil/boot-announce" ]; then
	check "  with boot-announce gone (removed, not purged), each does nothing and exits 0" sh -c \
		"sh '$D$sysconfdir/initramfs/post-update.d/vigil' 6.1.0-1-amd64 /nonexistent/initrd &&
		 sh '$D$sysconfdir/kernel/postinst.d/zz-vigil' 6.1.0-1-amd64 /nonexistent/vmlinuz"
fi
# the man pages (man/NAME.SECTION.scd -> mandir/manSECTION/NAME.SECTION),
# when the build has them: man/ in the build and scdoc to make them
if grep -q "^subdir('man')" "$SRCDIR/meson.build" && command -v scdoc >/dev/null; then
	n=0
	for s in "$SRCDIR"/man/*.scd; do
		page=$(basename "$s" .scd)
		check "man page $page in mandir" test -s "$D$mandir/man${page##*.}/$page"
		n=$((n + 1))
	done
	check "  at least vigil(1), vigild(8), vigil.conf(5)" test $n -ge 3
else
	echo "# man pages not built here (no man/ in the build, or no scdoc): not checked"
fi
# nothing else: every installed file is one of the above
(cd "$D" && find . ! -type d | sed 's|^\.||' | sort) >"$T/all"
grep -v -e "^$bindir/vigil\$" -e "^$sbindir/vigil" -e "^$libdir/libvigil.so" \
	-e "^$libdir/pkgconfig/vigil.pc\$" -e "^$includedir/vigil/" -e "^$VG_UNITDIR/vigil" \
	-e "^$VG_SYSUSERSDIR/vigil.conf\$" -e "^$VG_COMPLETIONDIR/vigil\$" \
	-e "^$sysconfdir/vigil/vigil" -e "^$mandir/man[158]/vigil" \
	-e "^$libexecdir/vigil/apt-trust\$" -e "^$sysconfdir/apt/apt.conf.d/50vigil\$" \
	-e "^$libexecdir/vigil/boot-announce\$" -e "^$sysconfdir/initramfs/post-update.d/vigil\$" \
	-e "^$sysconfdir/kernel/postinst.d/zz-vigil\$" -e "^$libexecdir/vigil/vigil-swtpm-state\$" "$T/all" >"$T/extra"
check_eq "no other file installed (no test program)" "$(head -5 "$T/extra")" ""

# --- make install: the same through the Makefile -------------------------
cd "$SRCDIR" || exit 1
make -n install PREFIX=/opt/vigil-probe DESTDIR=/nonexistent/destdir >"$T/make.out" 2>&1
check "make install PREFIX=... configures that prefix" grep -q -- '--prefix=/opt/vigil-probe' "$T/make.out"
check "  and installs into DESTDIR" grep -q -- '--destdir /nonexistent/destdir' "$T/make.out"
