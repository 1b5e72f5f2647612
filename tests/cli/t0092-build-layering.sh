#!/usr/bin/env bash
# libvigil's layering is enforced by the build (lib/meson.build): each
# subsystem is compiled against the public headers of itself and of the
# subsystems below it only. This takes the compiler command the build
# really uses for each subsystem (compile_commands.json) and compiles, with
# it, a file that includes one header of every other subsystem: a header
# from below must compile, one from above must fail ("No such file").
. "$SRCDIR/tests/lib.sh"
vg_init

db="$BUILD_ROOT/compile_commands.json"
check "the build wrote compile_commands.json" test -s "$db"

# what each subsystem may include besides itself (keep in step with lib/meson.build)
declare -A below=(
	[core]="" [tpm]="core" [measure]="core" [scan]="core" [label]="scan tpm core"
	[policy]="label scan tpm core" [attest]="tpm measure trust core" [trust]="core"
	[auth]="core" [results]="attest tpm measure core" [agent]="attest tpm measure core"
	[api]="results attest auth tpm measure core"
)
# one header of each subsystem
declare -A hdr=(
	[core]=hash.h [tpm]=tpm.h [measure]=imalog.h [scan]=scan.h [label]=evm.h [policy]=policy.h
	[attest]=attest.h [trust]=trust.h [auth]=auth.h [results]=attest_ear.h [agent]=tpm_attest.h
	[api]=attest_api.h
)

# cmd_of L: the command that compiles the first source of lib/L, as a bash array literal
/usr/bin/python3 - "$db" "$SRCDIR" >cmds <<'PY'
import json, shlex, sys, os
db, src = sys.argv[1], os.path.realpath(sys.argv[2])
seen = {}
for e in json.load(open(db)):
    f = os.path.realpath(os.path.join(e["directory"], e["file"]))
    rel = os.path.relpath(f, src)
    parts = rel.split(os.sep)
    if len(parts) != 3 or parts[0] != "lib" or parts[1] in seen:
        continue
    args = shlex.split(e["command"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MQ", "-MF", "-c"):
            skip = True
            continue
        if a == "-MD":
            continue
        out.append(a)
    seen[parts[1]] = (e["directory"], out)
for layer, (d, a) in sorted(seen.items()):
    print(layer, d, shlex.join(a))
PY
check_eq "a compiler command for each of the twelve subsystems" "$(awk '{print $1}' cmds | sort | tr '\n' ' ')" \
	"agent api attest auth core label measure policy results scan tpm trust "

while read -r layer dir cmd; do
	for other in core tpm measure scan label policy attest trust auth results agent api; do
		[ "$other" = "$layer" ] && continue
		printf '#include "vigil/%s"\nint vg_layering_probe;\n' "${hdr[$other]}" >"$T/probe-$layer-$other.c"
		(cd "$dir" && eval "$cmd -fsyntax-only '$T/probe-$layer-$other.c'") >"$T/out" 2>&1
		rc=$?
		if [[ " ${below[$layer]} " == *" $other "* ]]; then
			check_eq "$layer may include $other's ${hdr[$other]}" "$rc" 0
		else
			check "$layer including $other's ${hdr[$other]} does not compile" test "$rc" -ne 0
			check "  ... because the header is not on its path" grep -q "${hdr[$other]}: No such file" "$T/out"
		fi
	done
done <cmds
