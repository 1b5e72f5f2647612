#!/usr/bin/env bash
# What `meson install` ships besides the programs, checked against the
# programs themselves:
# - the bash completion of vigil (completions/vigil): `complete -p vigil`
#   after sourcing it in bash; every command `vigil --help` lists, every
#   verb and every option each `vigil COMMAND --help` prints is completed;
#   the values of options with a fixed set of them;
# - the sample configuration (etc/): vigild.policy passes `vigil policy
#   check`, only measures (its enforcing lines are comments, and pass too
#   once uncommented), and vigild starts with it and the sample vigil.conf
#   and measures what runs; vigil.conf loads (`vigil label --config`), sets
#   no key or certificate (a fresh host has none) and keeps pseudo
#   filesystems out of tree walks.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-vigild.sh"
vg_init
trap '_rc=$?; vd_stop; (exit $_rc); vg_cleanup' EXIT

C=$SRCDIR/completions/vigil
# complete WORDS...: what the completion offers for the last word
complete_words() {
	bash --norc --noprofile -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _vigil
		printf "%s\n" "${COMPREPLY[@]}"' _ "$C" "$@"
}
check_eq "complete -p vigil (after sourcing it)" \
	"$(bash --norc --noprofile -c '. "$1" && complete -p vigil' _ "$C")" "complete -F _vigil vigil"

commands=$("$VIGIL" --help | awk '/^commands:/ {f = 1; next} f && /^  [a-z]/ {print $1} f && /^$/ {exit}')
check "vigil --help lists commands" test "$(echo "$commands" | wc -w)" -ge 10
offered=$(complete_words vigil "")
for c in $commands; do
	check "command '$c' completed" grep -qx "$c" <<<"$offered"
	# the usage block (up to the first blank line), and option lines
	help=$("$VIGIL" $c --help 2>&1; [ "$c" = log ] && "$VIGIL" log boot --help 2>&1)
	opts=$( { sed '/^$/q' <<<"$help"; grep -E '^ +(-[a-zA-Z], )?--' <<<"$help"; } |
		grep -oE -- '(^|[][ (|,])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+' | sort -u)
	copts=$(complete_words vigil "$c" --)
	for o in $opts; do
		check "  vigil $c $o completed" grep -qx -- "$o" <<<"$copts"
	done
	# verbs: the words after 'vigil COMMAND' in the usage lines
	verbs=$(sed '/^$/q' <<<"$help" | grep -oE "vigil $c [a-z][a-z-]*" | awk '{print $3}' | sort -u)
	cverbs=$(complete_words vigil "$c" "")
	for v in $verbs; do
		check "  vigil $c $v completed" grep -qx "$v" <<<"$cverbs"
	done
done
check_eq "vigil log boot: its verbs" "$(complete_words vigil log boot "" | tr '\n' ' ')" "show replay "
check_eq "vigil attest policy: its verbs" "$(complete_words vigil attest policy "" | sort | tr '\n' ' ')" \
	"assign check create get import set "
check_eq "vigil status --mode: the modes" "$(complete_words vigil status --mode "" | tr '\n' ' ')" \
	"enforce permissive fix "
check_eq "vigil log show --format: the formats" \
	"$(complete_words vigil log show --format "" | tr '\n' ' ')" "ascii binary json "
check "vigil hash --algo: sha256 among the algorithms" grep -qx sha256 <(complete_words vigil hash --algo "")
touch "$T/policy-file"
check "vigil policy check: file names" grep -qx "$T/policy-file" <(complete_words vigil policy check "$T/policy-f")

# --- etc/vigild.policy ------------------------------------------------------
P=$SRCDIR/etc/vigild.policy
check "vigil policy check etc/vigild.policy" "$VIGIL" policy check "$P"
"$VIGIL" policy show "$P" >shown 2>&1
check "it only measures (every rule measure or dont_measure)" \
	bash -c "test -s shown && ! grep -Ev '^(measure|dont_measure) ' shown"
check "it measures what runs" grep -qx 'measure func=BPRM_CHECK mask=MAY_EXEC' shown
grep -E '^#(appraise|deny|allow|audit_access) ' "$P" | sed 's/^#//' >enforcing
check "its commented enforcing lines: appraise and deny among them" \
	bash -c "grep -q '^appraise ' enforcing && grep -q '^deny ' enforcing"
sed -E 's/^#((appraise|deny|allow|audit_access) )/\1/' "$P" >uncommented
check "  uncommented, the policy still passes vigil policy check" "$VIGIL" policy check uncommented
check_eq "  every one of them is in force then" \
	"$("$VIGIL" policy show uncommented | grep -cEv '^(measure|dont_measure) ')" "$(wc -l <enforcing)"

# --- etc/vigil.conf ----------------------------------------------------------
V=$SRCDIR/etc/vigil.conf
check_eq "vigil.conf sets no key, keyring or other file" \
	"$(grep -Ev '^[[:space:]]*(#|$)' "$V" | grep -Ev '^(skip|label) ' |
		grep -Ev -e '^vigild\.watch(_mounts)? = /$' -e '^vigild\.hold = yes$')" ""
check_eq "... vigild watches / and what is mounted under it (issue 38), held across crashes (issue 41)" \
	"$(grep -E '^vigild\.' "$V")" "vigild.watch = /
vigild.watch_mounts = /
vigild.hold = yes"
vg_ext4 "$T/fs" 32
cp /usr/bin/true "$T/fs/prog"
echo data >"$T/fs/data"
check "vigil label -r --config etc/vigil.conf (ext4)" \
	"$VIGIL" label -q -r --no-evm --config "$V" "$T/fs"
check "  labeled the files" test -n "$(xhex "$T/fs/prog" security.ima)"
mkdir "$T/tmpfs-tree" && echo x >"$T/tmpfs-tree/f"
check "vigil label -r --config etc/vigil.conf (tmpfs: skipped)" \
	"$VIGIL" label -q -r --no-evm --config "$V" "$T/tmpfs-tree"
check_eq "  nothing labeled on tmpfs" "$(xhex "$T/tmpfs-tree/f" security.ima)" ""

# --- vigild with both, as its unit starts it (on the test's own mount) --------
"$VIGIL" label -q -r --no-evm --config "$V" "$T/fs"
check "vigild starts with the sample policy and vigil.conf" \
	vd_start --config "$V" --policy "$P" --watch "$T/fs" --log "$T/ml" --no-tpm
check "a program on the marked filesystem runs" "$T/fs/prog"
check "a file there is read" cat "$T/fs/data"
vd_stop
check_eq "vigild stops cleanly" "$?" 0
check "the program's run was measured" grep -q "$T/fs/prog" <("$VIGIL" log show "$T/ml")
