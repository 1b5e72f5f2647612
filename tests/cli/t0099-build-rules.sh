#!/usr/bin/env bash
# t0099: rules of the house that the build checks, beside t0092's layering
# (docs/STYLE.md):
#  - no product file (the library, its headers, common/, the programs) is
#    over 800 lines, but those listed below, each with the reason it may
#    be for now; a listed file back under the limit must leave the list;
#  - CI (.ci/run) also builds the release build with the tests on and
#    warnings as errors (gcc -O3 finds what -O0 does not:
#    -Wformat-truncation, -Wstringop-*), and the build with Debian's
#    hardening flags (-O2 -D_FORTIFY_SOURCE=2 -fstack-protector-strong),
#    so a warning that only optimisation shows stops CI, not a packager;
#    and it runs the sandbox tests in the release build, whose allow-lists
#    lack the calls a sanitizer's runtime adds.
. "$SRCDIR/tests/lib.sh"
vg_init

MAX=800
# file -> why it may be over $MAX lines for now (keep this list empty if you can)
declare -A allowed=()

cd "$SRCDIR" || exit 1
files=$(git ls-files 'lib/*.[ch]' 'include/*.h' 'common/*.[ch]' 'cli/*.[ch]' 'daemon/*.[ch]' \
	'agent/*.[ch]' 'verifier/*.[ch]' 2>/dev/null)
[ -n "$files" ] || files=$(find lib include common cli daemon agent verifier -name '*.[ch]')
over=
for f in $files; do
	n=$(wc -l <"$f")
	if [ "$n" -gt $MAX ] && [ -z "${allowed[$f]:-}" ]; then
		over="$over $f($n)"
	fi
done
check_eq "no product file over $MAX lines but the listed ones" "${over# }" ""
for f in "${!allowed[@]}"; do
	check "listed $f is still over $MAX lines (else take it off the list)" \
		test "$(wc -l <"$f" 2>/dev/null || echo 0)" -gt $MAX
done

ci=.ci/run
check "CI builds the release build with the tests on" \
	grep -Eq -- "meson setup [^ ]+ .*--buildtype=release.*-Dtests=true" "$ci"
check "CI tries the daemons' sandboxes in the release build (no sanitizer runtime's calls)" \
	grep -q -- "meson test -C build-ci-release .*test_sandbox" "$ci"
check "CI builds with Debian's hardening flags" \
	grep -q -- "-O2 -D_FORTIFY_SOURCE=2 -fstack-protector-strong" "$ci"
check "warnings are errors in every build (meson.build)" grep -q "'werror=true'" meson.build
