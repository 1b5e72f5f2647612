#!/usr/bin/env bash
# t0045: vigil scan's per-path rules (scan.group, scan.rule in vigil.conf):
# a table of cases (path, rule, change made, attributes reported) shows
# that the rules select exactly the attributes they name; = (the path
# only) against a regular selection (the path and what is under it); !
# (neither recorded nor reported, in --init, --check, --update and
# --compare); rules restricted to file types; deepest-then-first precedence; growing sizes (grown: not
# reported, shrunk: reported); --explain in text and JSON; bad rules
# refused with FILE:LINE; --import-aide on fixtures (and on Debian's
# /etc/aide/aide.conf when it is installed). No rules: every attribute,
# as before (t0042 and t0044 run without any).
. "$SRCDIR/tests/lib.sh"
vg_init
HK=$VECTORS/evmctl/keys/evm-key-plain.bin
export VIGIL_CONFIG=/dev/null
R=$T/r
# $R as a regular expression ($T has dots in it)
RX=$(printf '%s' "$R" | sed 's/[][\.*^$(){}+?|]/\\&/g')

mkdir -p $R/meta $R/eq/sub $R/logs $R/skip/deep $R/keep $R/bin $R/links
for f in meta/f meta/g meta/h eq/child eq/sub/x bin/tool bin/first top skip/x skip/old \
	skip/deep/y keep/z links/a links/b; do
	echo "content of $f" >$R/$f
done
head -c 1000 /dev/urandom >$R/logs/app.log
head -c 1000 /dev/urandom >$R/logs/trunc.log

cat >rules.conf <<EOF
# per-path scan rules for t0045
scan.group META = p+u+g
scan.group LOG = META+s+growing
scan.rule = $RX R
scan.rule = $RX/meta META
scan.rule = =$RX/eq META
scan.rule = $RX/logs LOG
scan.rule = !$RX/skip
scan.rule = $RX/bin/.* content
scan.rule = $RX/bin/first mode
scan.rule = $RX/bin/first uid
scan.rule = $RX/keep all-ctime-mtime
scan.rule = $RX/links n
EOF
C="--config rules.conf"

check "scan --init with rules" "$VIGIL" scan --init -q -o db $C --hmac-key "$HK" $R
check "... a clean tree checks clean" "$VIGIL" scan --check db $C --hmac-key "$HK"
"$VIGIL" scan --init -q -o db.all --hmac-key "$HK" $R
# the ! subtree is not in the database: checked without rules, it is added
"$VIGIL" scan --check db --hmac-key "$HK" >out.txt
check_eq "! entries are not recorded by --init" \
	"$(grep -c "^added: $R/skip" out.txt)" 5

sleep 0.02
# one change per case
printf 'CONTENT of meta/f\n' >$R/meta/f	# same size, new content, new times
chmod 600 $R/meta/g
chown 5 $R/meta/h
chown 5 $R/eq
echo more >>$R/eq/child
echo more >>$R/eq/sub/x
chmod 700 $R/eq/sub
head -c 500 /dev/urandom >>$R/logs/app.log
truncate -s 10 $R/logs/trunc.log
chmod 600 $R/logs/app.log
echo changed >$R/skip/x; rm $R/skip/old; echo new >$R/skip/new; chmod 700 $R/skip/deep
printf 'TOOL\n' >$R/bin/tool; printf 'TOOL\n' >$R/bin/tool2
chmod 700 $R/bin/first; chown 7 $R/bin/first; echo x >>$R/bin/first
chmod 600 $R/top
echo more >>$R/keep/z
ln $R/links/a $R/links/a2; chmod 600 $R/links/b

"$VIGIL" scan --check db $C --hmac-key "$HK" >out.txt; rc=$?
check_eq "--check with rules: exit 1" "$rc" 1
# the attributes reported for PATH in out.txt ("" when not reported)
got() { sed -n "s|^changed: $R/$1 (\(.*\))\$|\1|p" "${2:-out.txt}"; }
# path | rule deciding | change made | reported
while IFS='|' read -r path why change want; do
	check_eq "$path ($why; $change): $want" "$(got "$path")" "$want"
done <<'EOF'
meta/f|META|content, same size|
meta/g|META|chmod|mode
meta/h|META|chown|uid
eq|=eq META: this path|chown|uid
eq/child|/ R: = is not for children|append|content, size, mtime, ctime
eq/sub|/ R: = is not for children|chmod|mode
eq/sub/x|/ R|append|content, size, mtime, ctime
logs/app.log|LOG, growing|append, chmod|mode
logs/trunc.log|LOG, growing|truncate|size
bin/tool|bin/.* content|new content|content
bin/first|bin/first mode: deepest, then first|chmod, chown, append|mode
top|/ R|chmod|mode, ctime
keep/z|all-ctime-mtime|append|content, size
links/a|links n (AIDE's link count)|hard link added|nlink
links/b|links n|chmod|
EOF
check_eq "! entries: neither changed, added nor removed" "$(grep -c "$R/skip" out.txt)" 0
check "an added file under a rule is reported" grep -q "^added: $R/bin/tool2\$" out.txt
check "the summary counts only what the rules select" \
	grep -q "^.* entries checked: 2 added, 0 removed, 13 changed\$" out.txt

# without rules, every attribute, as before
"$VIGIL" scan --check db.all --hmac-key "$HK" >all.txt
check_eq "no rules: meta/f content and times" "$(got meta/f all.txt)" "content, mtime, ctime"
check_eq "no rules: logs/app.log every change" "$(got logs/app.log all.txt)" \
	"content, size, mode, mtime, ctime"
check_eq "no rules: bin/first every change" "$(got bin/first all.txt)" \
	"content, size, mode, uid, mtime, ctime"
check "no rules: the ! subtree is reported" grep -q "^removed: $R/skip/old\$" all.txt

# --json selects the same attributes
"$VIGIL" scan --check db $C --hmac-key "$HK" --json >out.json
check_eq "--json: the same attributes" "$(/usr/bin/python3 -c '
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d.get("file", "").endswith("/bin/first"):
        print(",".join(d["what"]), ",".join(sorted(d["diff"])))' out.json)" "mode mode"

# --compare DB1 DB2 applies the rules too
cp db before.db
check_rc 1 "--update with rules" "$VIGIL" scan --update db $C -q --hmac-key "$HK"
check "... then checks clean" "$VIGIL" scan --check db $C --hmac-key "$HK"
"$VIGIL" scan --compare before.db db $C --hmac-key "$HK" >cmp.txt
check_eq "--compare: rules applied (meta/f not reported)" "$(got meta/f cmp.txt)" ""
check_eq "--compare: rules applied (bin/first)" "$(got bin/first cmp.txt)" "mode"
check_eq "--update did not record the ! subtree" \
	"$("$VIGIL" scan --check db --hmac-key "$HK" | grep -c "^added: $R/skip")" 5
# growing: a log that grew again is not reported, one that shrank is
head -c 100 /dev/urandom >>$R/logs/app.log
"$VIGIL" scan --check db $C --hmac-key "$HK" >grow.txt
check_eq "growing: grown again, not reported" "$(got logs/app.log grow.txt)" ""
truncate -s 5 $R/logs/app.log
"$VIGIL" scan --check db $C --hmac-key "$HK" >grow.txt
check_eq "growing: shrunk, size reported" "$(got logs/app.log grow.txt)" "size"

# ---- --explain ----
ex() { "$VIGIL" scan --explain "$1" $C "${@:2}"; }
check_eq "--explain: regular selection" "$(ex $R/meta/f)" \
"$R/meta/f: regular selection (the path and what is under it) by rules.conf:5: scan.rule = $RX/meta META
  group: META
  attributes: mode+uid+gid"
check_eq "--explain: equals" "$(ex $R/eq | head -1)" \
	"$R/eq: equals selection (this path only) by rules.conf:6: scan.rule = =$RX/eq META"
check_eq "--explain: excluded" "$(ex $R/skip/deep/y)" \
"$R/skip/deep/y: excluded by rules.conf:8: scan.rule = !$RX/skip
  neither recorded nor reported; a directory is not walked"
check_eq "--explain: growing" "$(ex $R/logs/a | tail -2)" \
"  attributes: size+mode+uid+gid+growing
  growing: a size, mtime or ctime that grew is no change"
check_eq "--explain: precedence (deepest, then first)" "$(ex $R/bin/first | head -1)" \
"$R/bin/first: regular selection (the path and what is under it) by rules.conf:10: scan.rule = $RX/bin/first mode"
check_eq "--explain: no rule" "$(ex /elsewhere)" \
	"/elsewhere: no rule: every attribute (type+content+size+mode+uid+gid+mtime+ctime+inode+xattrs+target+nlink)"
check_eq "--explain: no configuration at all" "$("$VIGIL" scan --explain /x)" \
	"/x: no rule: every attribute (type+content+size+mode+uid+gid+mtime+ctime+inode+xattrs+target+nlink)"
ex $R/logs/a/ --json >x.json
check "--explain --json: the rule and its attributes" /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
want = {"path": sys.argv[2] + "/logs/a", "selection": "regular", "excluded": False,
        "rule": {"file": "rules.conf", "line": 7, "regex": sys.argv[3] + "/logs", "types": None,
                 "group": "LOG"},
        "attributes": ["size", "mode", "uid", "gid"], "growing": True, "walked": True}
assert d == want, d' x.json "$R" "$RX"
check "--explain --json validates" sh -c \
	"'$VIGIL' scan --explain $R/skip --config rules.conf --json >x.json &&
	 /usr/bin/python3 '$SRCDIR/tests/helpers/json_validate.py' '$SRCDIR/docs/schemas/scan-explain.schema.json' x.json"
# restricted to file types (AIDE's restricted rules)
printf 'scan.rule = %s/eq d p\nscan.rule = !%s/skip f\n' "$RX" "$RX" >typed.conf
check_eq "--explain: a rule restricted to directories, for a directory" \
	"$("$VIGIL" scan --explain $R/eq --config typed.conf | head -1)" \
	"$R/eq: regular selection (the path and what is under it) by typed.conf:1: scan.rule = $RX/eq d p"
check_eq "... not for a file under it" \
	"$("$VIGIL" scan --explain $R/eq/child --config typed.conf | head -1)" \
	"$R/eq/child: no rule: every attribute (type+content+size+mode+uid+gid+mtime+ctime+inode+xattrs+target+nlink)"
check_eq "... a ! rule restricted to files" \
	"$("$VIGIL" scan --explain $R/skip/x --config typed.conf | head -1)" \
	"$R/skip/x: excluded by typed.conf:2: scan.rule = !$RX/skip f"
check_eq "... a path that is not there: type unknown" \
	"$("$VIGIL" scan --explain $R/none --config typed.conf | tail -1)" \
	"  (not found here: the rules restricted to file types were not considered)"
check_rc 2 "--explain with --check is refused" "$VIGIL" scan --explain /x --check db

# ---- bad rules: FILE:LINE ----
bad() {
	printf '# a comment\n%s\n' "$2" >bad.conf
	"$VIGIL" scan --explain /x --config bad.conf >/dev/null 2>err.txt; rc=$?
	check_eq "bad rule refused ($1): exit 2" "$rc" 2
	check "... naming bad.conf:2 ($1)" grep -q "bad.conf:2: $3" err.txt
}
bad "unknown attribute" "scan.rule = /x p+nosuch" "unknown attribute or group 'nosuch'"
bad "unknown group" "scan.rule = /x NOGROUP" "unknown attribute or group 'NOGROUP'"
bad "bad regex" "scan.rule = /x(y p" "bad regular expression '/x(y'"
bad "AIDE attribute vigil lacks" "scan.group G = p+selinux" "AIDE attribute 'selinux'"
bad "! with attributes" "scan.rule = !/x p+u" "'p+u' is no list of file types (f,d,l,c,b,p,s or 0); a ! rule takes no attributes"
bad "unknown file type" "scan.rule = /x f,q p" "'f,q' is no list of file types"
bad "no attributes" "scan.rule = /x" "the rule needs a group"
bad "relative regex" "scan.rule = x p" "a scan rule is \[=|!\]REGEX"
bad "built-in group redefined" "scan.group R = p" "'R' is an attribute or a built-in group"
check_rc 2 "--check refuses a bad rule too" "$VIGIL" scan --check db --config bad.conf \
	--hmac-key "$HK"

# ---- --import-aide ----
cat >fixture.conf <<'EOF'
# a small aide.conf
Perms = p+u+g+ftype
Logs = Perms+s+growing
Full = Perms+i+l+s+m+c+sha256+xattrs

/usr Full
=/etc Perms
/var/log Logs
!/proc
/var/log/auth\.log >
EOF
"$VIGIL" scan --import-aide fixture.conf >imp.conf 2>imp.err; rc=$?
check_eq "--import-aide: all translated: exit 0" "$rc" 0
check_eq "... nothing on stderr" "$(cat imp.err)" ""
check_eq "--import-aide: the translation" "$(grep -v '^# translated' imp.conf)" \
"# a small aide.conf
scan.group Perms = mode+uid+gid+type
scan.group Logs = Perms+size+growing
scan.group Full = Perms+inode+target+size+mtime+ctime+content+xattrs

scan.rule = /usr Full
scan.rule = =/etc Perms
scan.rule = /var/log Logs
scan.rule = !/proc
scan.rule = /var/log/auth\\.log >"
check_eq "... it loads: --explain with it" \
	"$("$VIGIL" scan --explain /var/log/auth.log --config imp.conf | tail -1)" \
	"  growing: a size, mtime or ctime that grew is no change"

cat >partial.conf <<'EOF'
@@define DIR /srv
database_in=file:/var/lib/aide/aide.db
report_url=stdout
Acl = p+acl+selinux
/bin R+a+b+e2fsattrs+caps
/srv/data f,D R
!/tmp d
/opt f p+u
@@ifdef X
/data/@@{DIR} R
EOF
"$VIGIL" scan --import-aide partial.conf >part.out 2>part.err; rc=$?
check_eq "--import-aide: some not translated: exit 1" "$rc" 1
while IFS='|' read -r line what; do
	check "... partial.conf:$line: $what" grep -q "^vigil scan: partial.conf:$line: not translated: $what" part.err
done <<'EOF'
1|macro line '@@define DIR /srv'
2|option 'database_in'
3|option 'report_url'
4|attribute 'acl' dropped
4|attribute 'selinux' dropped
5|attribute 'a' dropped (vigil does not record atime)
5|attribute 'b' dropped
5|attribute 'e2fsattrs' dropped
5|attribute 'caps' dropped
6|'f,D': Solaris doors and event ports
9|macro line '@@ifdef X'
10|'/data/@@{DIR} R' uses a macro variable
EOF
check "... and counts the lines" grep -q "partial.conf: 8 lines not (wholly) translated" part.err
check_eq "... the rest is translated" "$(grep '^scan' part.out)" \
"scan.group Acl = mode
scan.rule = /bin R
scan.rule = !/tmp d
scan.rule = /opt f mode+uid"
# aide.conf then aide.conf.d files: the groups of one are known to the next
mkdir conf.d; printf '/srv Logs\n!/srv/tmp\n' >conf.d/10_srv
"$VIGIL" scan --import-aide fixture.conf conf.d/10_srv >two.conf 2>two.err; rc=$?
check_eq "--import-aide with aide.conf.d: exit 0" "$rc" 0
check_eq "... the second file uses the first's groups" "$(tail -3 two.conf)" \
"# translated from conf.d/10_srv by vigil scan --import-aide
scan.rule = /srv Logs
scan.rule = !/srv/tmp"
check_rc 2 "--import-aide: a missing file" "$VIGIL" scan --import-aide none.conf
printf '#!/bin/sh\necho /x R\n' >script.conf
check_rc 1 "--import-aide: an executable aide.conf.d script is refused whole" \
	"$VIGIL" scan --import-aide script.conf

if [ -r /etc/aide/aide.conf ]; then
	"$VIGIL" scan --import-aide /etc/aide/aide.conf >deb.conf 2>deb.err; rc=$?
	check "Debian's aide.conf: imported (exit 0 or 1)" test "$rc" -le 1
	check "... the output loads" "$VIGIL" scan --explain / --config deb.conf
else
	echo "# /etc/aide/aide.conf not installed: Debian's file not imported"
fi
