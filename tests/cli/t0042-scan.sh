#!/usr/bin/env bash
# vigil scan: --init records a tree; --check reports exactly the changes
# made and no others, each with its old and new value; --update records
# the tree as found and keeps the previous database; the database refuses
# to load when altered in any way or checked with another key; a failed
# --init or --update leaves the database as it was.
. "$SRCDIR/tests/lib.sh"
vg_init
K=$VECTORS/evmctl/keys
HK=$K/evm-key-plain.bin
export VIGIL_CONFIG=/dev/null
vg_ext4 fs 32
R=fs/r
mkdir -p $R/a/b $R/c
for i in $(seq 1 50); do head -c $((i * 131)) /dev/urandom >$R/a/f$i; done
echo hi >$R/c/x; ln -s x $R/c/sym; mkfifo $R/c/fifo; ln $R/c/x $R/c/hard
printf 'n' >"$R/c/$(printf 'new\nline')"
setfattr -n user.tag -v one $R/a/f1
mkdir $R/c/dir
cp $R/a/f2 db.f2

check "scan --init" "$VIGIL" scan --init -q -o db --hmac-key "$HK" $R
check_eq "init summary" "$("$VIGIL" scan --init -o db2 --hmac-key "$HK" $R)" \
	"recorded 60 entries (53 files, 0.2 MB) in db2"
check "an unchanged tree: --check exits 0" "$VIGIL" scan --check db --hmac-key "$HK"
check_eq "an unchanged tree: no change" "$("$VIGIL" scan --check db --hmac-key "$HK")" \
	"60 entries checked: 0 added, 0 removed, 0 changed"

# one change of each kind
flip_last_byte $R/a/f2		# content, same size
chmod 0600 $R/a/f3
chown 5 $R/a/f4
chgrp 5 $R/a/f5
setfattr -n user.tag -v two $R/a/f1
setfattr -n security.ima -v 0x0401 $R/a/f6
rm $R/a/f7
echo new >$R/a/new
ln -sf f8 $R/c/sym
rm $R/a/f9; mkdir $R/a/f9
touch -d @0 $R/a/f10		# only the times
d2_then=$(sha256sum <db.f2 | cut -d' ' -f1)
out=$("$VIGIL" scan --check db --hmac-key "$HK"); rc=$?
check_eq "changes: exit 1" "$rc" 1
full=$out
out=$(grep -v '^  ' <<<"$full")
want="60 entries checked: 1 added, 1 removed, 9 changed
added: $R/a/new
removed: $R/a/f7
changed: $R/a/f1 (ctime, xattrs: user.tag)
changed: $R/a/f10 (mtime, ctime)
changed: $R/a/f2 (content, mtime, ctime)
changed: $R/a/f3 (mode, ctime)
changed: $R/a/f4 (uid, ctime)
changed: $R/a/f5 (gid, ctime)
changed: $R/a/f6 (ctime, xattrs: security.ima)
changed: $R/a/f9 (type)
changed: $R/c/sym (size, mtime, ctime, inode, target)"
check_eq "exactly the changes made: the counts, then added, removed, changed, each sorted" "$out" "$want"
# each change with its old and new value, under its line
detail() { grep -A12 -F "changed: $R/a/$1 (" <<<"$full" | sed -n '2,$p' | sed '/^[^ ]/,$d'; }
check_eq "old -> new: mode" "$(detail f3 | grep mode:)" "  mode: 0644 -> 0600"
check_eq "old -> new: uid" "$(detail f4 | grep uid:)" "  uid: 0 -> 5"
check_eq "old -> new: gid" "$(detail f5 | grep gid:)" "  gid: 0 -> 5"
check_eq "old -> new: content digest" "$(detail f2 | grep content:)" \
	"  content: sha256:$d2_then -> sha256:$(sha256sum <$R/a/f2 | cut -d' ' -f1)"
check_eq "old -> new: an xattr's value" "$(detail f1 | grep xattr)" "  xattr user.tag: 6f6e65 -> 74776f"
check_eq "old -> new: an xattr added" "$(detail f6 | grep xattr)" "  xattr security.ima: (none) -> 0401"
check_eq "old -> new: mtime, in UTC with nanoseconds" "$(detail f10 | grep mtime: | sed 's/.*-> //')" \
	"1970-01-01T00:00:00.000000000Z"
check_eq "old -> new: the type" "$(detail f9)" "  type: regular file -> directory"
check_eq "old -> new: a link's target" \
	"$(grep -A6 -F "changed: $R/c/sym (" <<<"$full" | grep target:)" "  target: x -> f8"

js=$("$VIGIL" scan --check db --json --hmac-key "$HK")
check "--json: valid, one object per change and a summary" python3 -c '
import json,sys
o=[json.loads(l) for l in sys.stdin]
assert o[-1]=={"summary":True,"checked":60,"added":1,"removed":1,"changed":9}, o[-1]
c={x["file"].split("/")[-1]:x for x in o[:-1]}
assert c["f2"]["what"]==["content","mtime","ctime"], c["f2"]
assert c["f7"]["change"]=="removed" and c["new"]["change"]=="added"
assert c["f1"]["xattrs"]=="user.tag"
assert c["f3"]["diff"]["mode"]=={"old":"0644","new":"0600"}, c["f3"]
assert c["f1"]["diff"]["xattrs"]=={"user.tag":{"old":"6f6e65","new":"74776f"}}, c["f1"]
assert c["f6"]["diff"]["xattrs"]["security.ima"]=={"old":None,"new":"0401"}
assert c["sym"]["diff"]["target"]=={"old":"x","new":"f8"}
assert set(c["f2"]["diff"])==set(c["f2"]["what"]), c["f2"]' <<<"$js"

# --update: the same report, then DB is the tree as found, DB.old the one before
cp db db.before
"$VIGIL" scan --update db --hmac-key "$HK" >upd.out; rc=$?
check_eq "--update with changes: exit 1" "$rc" 1
check_eq "--update reports what --check did" "$(grep -v '^  ' upd.out | sed '$d')" "$want"
check "--update says what it wrote" grep -qx "db updated (60 entries); the previous database is db.old" upd.out
check "--update: the previous database is db.old, byte for byte" cmp db.before db.old
check_rc 1 "--update: db.old still reports the changes" "$VIGIL" scan --check db.old -q --hmac-key "$HK"
check "--update: the new database checks clean" "$VIGIL" scan --check db -q --hmac-key "$HK"
check_eq "--update: no temporary file left" "$(ls -a | grep -c vigil-tmp)" 0
# --compare: two databases, no tree; the report --check gave
"$VIGIL" scan --compare db.old db --hmac-key "$HK" >cmp.out; rc=$?
check_eq "--compare of the databases before and after: exit 1" "$rc" 1
check_eq "--compare: the same changes, with the same old and new values" "$(cat cmp.out)" "$full"
check_rc 0 "--compare of a database with itself: exit 0" "$VIGIL" scan --compare db db --hmac-key "$HK"
cp db.old db.bad; flip_byte db.bad $(( $(stat -c %s db.bad) - 20 ))
check_rc 2 "--compare with an altered database: refused" "$VIGIL" scan --compare db.bad db --hmac-key "$HK"
check_rc 2 "--compare needs two databases" "$VIGIL" scan --compare db --hmac-key "$HK"
# --limit: one subtree checked; --update --limit records it and keeps the rest
chmod 0640 $R/a/f30
echo more >>$R/c/x
check_eq "--limit: only the subtree's change" \
	"$("$VIGIL" scan --check db --limit $R/c/ --hmac-key "$HK" | grep -v '^  ')" \
	"7 entries checked: 0 added, 0 removed, 2 changed
changed: $R/c/hard (content, size, mtime, ctime)
changed: $R/c/x (content, size, mtime, ctime)"
check_rc 1 "--update --limit: exit 1 (changes)" "$VIGIL" scan --update db --limit $R/c -q --hmac-key "$HK"
check_eq "--update --limit: the subtree recorded, the rest as it was" \
	"$("$VIGIL" scan --check db --hmac-key "$HK" | grep -v '^  ')" \
	"60 entries checked: 0 added, 0 removed, 1 changed
changed: $R/a/f30 (mode, ctime)"
# --report and --on-change (as dailyaidecheck mails the report)
"$VIGIL" scan --check db --hmac-key "$HK" >plain.out
"$VIGIL" scan --check db --hmac-key "$HK" --report rep.txt \
	--on-change 'cat >hook.in; echo "$VIGIL_SCAN_DB $VIGIL_SCAN_CHANGES" >hook.env' >both.out; rc=$?
check_eq "--report, --on-change: exit 1 (changes)" "$rc" 1
check "--report: the report, as printed" cmp rep.txt plain.out
check_eq "--report: mode 0640" "$(stat -c %a rep.txt)" 640
check "--on-change: the report on the command's stdin" cmp hook.in plain.out
check_eq "--on-change: its environment" "$(cat hook.env)" "db 1"
check "stdout unchanged by either" cmp both.out plain.out
check_rc 2 "--on-change: a failing command is an error (exit 2)" \
	"$VIGIL" scan --check db --hmac-key "$HK" -q --on-change 'exit 3'
cp "$T/.out" hook.err
check "... saying so" grep -q "on-change: 'exit 3' exited with status 3" hook.err
"$VIGIL" scan --check db --limit $R/c --hmac-key "$HK" --on-change 'touch ran' >/dev/null
check "--on-change: not run without a change" test ! -e ran
check_rc 2 "--limit outside the recorded roots: refused" "$VIGIL" scan --check db --limit /etc --hmac-key "$HK"
cp "$T/.out" limit.err
check "... naming the roots" grep -q "not under a root of db" limit.err
# an entry that cannot be read (the scan runs as nobody): nothing written
mkdir -m 777 nb
cp db nb/db; cp db nb/db.keep; cp "$HK" nb/hk; chown -R 65534:65534 nb
chmod 000 $R/a/f20
check_rc 2 "--update with an unreadable entry: exit 2" setpriv --reuid=65534 --regid=65534 \
	--clear-groups "$VIGIL" scan --update nb/db --hmac-key nb/hk
cp "$T/.out" nb.err
check "... saying the database was not updated" grep -q "could not be read; nb/db not updated" nb.err
chmod 644 $R/a/f20
check "... and it is as it was" cmp nb/db nb/db.keep
check "... with no db.old and no temporary file" test "$(ls -a nb)" = "$(printf '.\n..\ndb\ndb.keep\nhk')"

# the database is authenticated
head -c 32 /dev/urandom >other.key
check_rc 2 "another key: refused" "$VIGIL" scan --check db --hmac-key other.key
"$VIGIL" scan --check db --hmac-key other.key 2>err
check "another key: the message says why" grep -q 'db: MAC mismatch: the database was altered, or the key differs' err
alter() {
	cp db db.alt
	sqlite3 db.alt "$1"
	"$VIGIL" scan --check db.alt --hmac-key "$HK" >/dev/null 2>err
	echo $?
}
check_eq "altered: a mode edited" "$(alter "UPDATE files SET mode = mode | 2048 WHERE path = CAST('$R/a/f11' AS BLOB)")" 2
check "altered: refused with MAC mismatch" grep -q 'MAC mismatch' err
check_eq "altered: a digest edited" "$(alter "UPDATE files SET digest = zeroblob(32) WHERE path = CAST('$R/a/f12' AS BLOB)")" 2
check_eq "altered: a row deleted" "$(alter "DELETE FROM files WHERE path = CAST('$R/a/f13' AS BLOB)")" 2
check_eq "altered: a row added" "$(alter "INSERT INTO files SELECT CAST('$R/zz' AS BLOB), mode, uid, gid, size, ino, mtime, ctime, nlink, xattrs, target, algo, digest FROM files LIMIT 1")" 2
check_eq "altered: a link count edited" "$(alter "UPDATE files SET nlink = 3 WHERE path = CAST('$R/c/x' AS BLOB)")" 2
check_eq "altered: a TPM counter added to the header" "$(alter "INSERT INTO meta VALUES('tpm_counter', X'015647530000000000000009')")" 2
check_eq "altered: a root changed" "$(alter "UPDATE meta SET value = CAST('/etc' || char(0) AS BLOB) WHERE key = 'roots'")" 2
check_eq "altered: the MAC removed" "$(alter "DELETE FROM meta WHERE key = 'mac'")" 2
check "the MAC removed: said so" grep -q 'has no MAC' err
# each header row removed (found by clang's analyzer: a missing row was freed twice)
for k in format algo roots; do
	check_eq "altered: the '$k' row removed: refused" "$(alter "DELETE FROM meta WHERE key = '$k'")" 2
	check "... not a crash" sh -c "! grep -qi 'sanitizer\|double free\|abort' err"
done
check_eq "altered: xattrs of a row edited" "$(alter "UPDATE files SET xattrs = X'00' WHERE path = CAST('$R/a/f1' AS BLOB)")" 2
# the schema is the attacker's too, and is read before the MAC: a view
# yielding rows for ever, a trigger, an extra table: refused at once
schema_alter() {
	cp db db.alt
	sqlite3 db.alt "$1"
	timeout 20 "$VIGIL" scan --check db.alt --hmac-key "$HK" >/dev/null 2>err
	echo $?
}
check_eq "altered: files replaced by an endless view" "$(schema_alter "DROP TABLE files;
	CREATE VIEW files AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
	SELECT CAST(x AS BLOB) AS path, 0 AS mode, 0 AS uid, 0 AS gid, 0 AS size, 0 AS ino,
	0 AS mtime, 0 AS ctime, 1 AS nlink, X'' AS xattrs, X'' AS target, 4 AS algo, X'' AS digest FROM c")" 2
check "... the schema named" grep -q "db.alt: not a vigil scan database: its schema" err
check_eq "altered: a trigger added" "$(schema_alter "CREATE TRIGGER t AFTER INSERT ON meta BEGIN SELECT 1; END")" 2
check_eq "altered: a table added" "$(schema_alter "CREATE TABLE extra(x)")" 2
head -c 3000 /dev/urandom >garbage.db
check_rc 2 "garbage: refused" "$VIGIL" scan --check garbage.db --hmac-key "$HK"
"$VIGIL" scan --check garbage.db --hmac-key "$HK" 2>err
check "garbage: not a vigil scan database" grep -q 'garbage.db: not a vigil scan database' err
check_rc 2 "a missing database" "$VIGIL" scan --check nonexistent.db --hmac-key "$HK"

# a failed --init writes nothing
check_rc 2 "init of a missing path fails" "$VIGIL" scan --init -q -o fail.db --hmac-key "$HK" $R nonexistent
check "and leaves no database" test ! -e fail.db
check_eq "and no temporary file" "$(ls | grep -c 'fail.db')" 0
cp db keep.db
check_rc 2 "init over an existing database that fails" "$VIGIL" scan --init -q -o keep.db --hmac-key "$HK" nonexistent
check "keeps the old database intact" cmp db keep.db

# the MAC, recomputed from the rows alone (the format of lib/scan.c, written
# out here independently): a database of many batches, from 1 and 2 workers
B=$PWD/big
mkdir -p $B
python3 - "$B" <<'PY'
import os, sys
for i in range(9000):
    d = os.path.join(sys.argv[1], "d%02d" % (i % 37))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(os.urandom(i % 700))
PY
setfattr -n user.x -v "$(printf 'a\001b')" $B/d03/f00003
"$VIGIL" scan --init -q -J 1 -o big1.db --hmac-key "$HK" $B
"$VIGIL" scan --init -q -J 2 -o big2.db --hmac-key "$HK" $B
mac_of() { sqlite3 "$1" "SELECT hex(value) FROM meta WHERE key = 'mac'"; }
check_eq "9,000 files over many batches: 1 and 2 workers, the same MAC" "$(mac_of big1.db)" "$(mac_of big2.db)"
check_eq "every entry recorded once" "$(sqlite3 big2.db 'SELECT count(*) FROM files')" \
	"$(find $B | wc -l)"
# scanmac.py: the MAC of docs/scan.md, formats 1 and 2; "write1" turns a
# format 2 database into the format 1 database of the same rows
cat >scanmac.py <<'PY'
import hashlib, hmac, sqlite3, struct, sys
u64 = lambda v: struct.pack(">Q", v & (2**64 - 1))
s = lambda b: struct.pack(">I", len(b)) + b
COLS = "path, mode, uid, gid, size, ino, mtime, ctime, xattrs, target, algo, digest"
def mac(key, fmt, algo, roots, counter, rows):
    k = hmac.new(key, b"vigil scan database v1", hashlib.sha256).digest()
    m = s(b"vigil-scan") + u64(fmt) + u64(algo) + u64(len(roots)) + b"".join(s(r) for r in roots)
    if fmt >= 2:
        m += s(counter or b"")
    for p, mode, uid, gid, size, ino, mt, ct, xa, tg, algo_, dg, nl in sorted(rows, key=lambda r: bytes(r[0])):
        m += s(bytes(p)) + u64(mode) + u64(uid) + u64(gid) + u64(size) + u64(ino) + u64(mt) + u64(ct)
        if fmt >= 2:
            m += u64(nl)
        m += s(bytes(xa or b"")) + s(bytes(tg or b"")) + u64(algo_) + s(bytes(dg or b""))
    return hmac.new(k, m + u64(len(rows)), hashlib.sha256).digest()
def load(path):
    db = sqlite3.connect(path)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    fmt = meta["format"][0]
    rows = db.execute("SELECT " + COLS + (", nlink" if fmt >= 2 else ", 0") + " FROM files").fetchall()
    roots = [r for r in bytes(meta["roots"]).split(b"\0") if r]
    return meta, fmt, roots, rows
key = open(sys.argv[2], "rb").read()
meta, fmt, roots, rows = load(sys.argv[3])
if sys.argv[1] == "check":
    counter = bytes(meta["tpm_counter"]) if "tpm_counter" in meta else None
    assert mac(key, fmt, meta["algo"][0], roots, counter, rows) == bytes(meta["mac"]), "MAC differs"
else:  # write1 OUT
    out = sqlite3.connect(sys.argv[4])
    out.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value BLOB)")
    out.execute("CREATE TABLE files(path BLOB PRIMARY KEY, mode INTEGER, uid INTEGER, gid INTEGER,"
                " size INTEGER, ino INTEGER, mtime INTEGER, ctime INTEGER, xattrs BLOB, target BLOB,"
                " algo INTEGER, digest BLOB) WITHOUT ROWID")
    out.executemany("INSERT INTO files VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", [r[:12] for r in rows])
    for k_, v in (("format", b"\x01"), ("algo", bytes(meta["algo"])), ("roots", bytes(meta["roots"])),
                  ("mac", mac(key, 1, meta["algo"][0], roots, None, rows))):
        out.execute("INSERT INTO meta VALUES(?, ?)", (k_, v))
    out.commit()
PY
check "the MAC is HMAC-SHA256 over the rows in path order, as documented" \
	python3 scanmac.py check "$HK" big2.db
check_eq "format 2" "$(sqlite3 big2.db "SELECT hex(value) FROM meta WHERE key = 'format'")" 02
check "and it checks clean" "$VIGIL" scan --check big2.db -q --hmac-key "$HK"

# the hard link count: recorded (format 2), compared for all but directories
L=fs/l
mkdir -p $L/sub; echo one >$L/f; echo two >$L/g
"$VIGIL" scan --init -q -o nl.db --hmac-key "$HK" $L
check_eq "nlink recorded" "$(sqlite3 nl.db "SELECT nlink FROM files WHERE path = CAST('$L/f' AS BLOB)")" 1
python3 scanmac.py write1 "$HK" nl.db nl1.db
check "a format 1 database (written by hand, the documented MAC) checks clean" \
	"$VIGIL" scan --check nl1.db --hmac-key "$HK"
ln $L/f $L/sub/f2
mkdir $L/sub/d		# the directory's own link count goes from 2 to 3
out=$("$VIGIL" scan --check nl.db --hmac-key "$HK"); rc=$?
check_eq "a hard link added: exit 1" "$rc" 1
check_eq "... the link count reported, old -> new; the directory's not compared" \
	"$(grep -v 'ctime' <<<"$out")" "6 entries checked: 2 added, 0 removed, 1 changed
added: $L/sub/d
added: $L/sub/f2
  nlink: 1 -> 2"
check "... with the field named" grep -qx "changed: $L/f (ctime, nlink)" <<<"$out"
"$VIGIL" scan --check nl.db --json --hmac-key "$HK" >nl.json
check "... and in JSON" python3 -c '
import json,sys
c=[json.loads(l) for l in open(sys.argv[1])][2]
assert c["what"]==["ctime","nlink"] and c["diff"]["nlink"]=={"old":"1","new":"2"}, c' nl.json
check "... and in AIDE's layout: n column, Linkcount line" sh -c \
	"'$VIGIL' scan --check nl.db --format aide --hmac-key '$HK' | grep -q 'Linkcount *: 1 *| 2'"
out=$("$VIGIL" scan --check nl1.db --hmac-key "$HK"); rc=$?
check_eq "format 1: the link count unknown, not compared" "$(grep '^changed' <<<"$out")" \
	"changed: $L/f (ctime)"
check_rc 1 "format 1: --update (exit 1: changes)" "$VIGIL" scan --update nl1.db -q --hmac-key "$HK"
check_eq "... writes format 2" "$(sqlite3 nl1.db "SELECT hex(value) FROM meta WHERE key = 'format'")" 02
check "... which checks clean, as documented" python3 scanmac.py check "$HK" nl1.db
check "... and by vigil" "$VIGIL" scan --check nl1.db -q --hmac-key "$HK"
check "... the old one kept as format 1" python3 scanmac.py check "$HK" nl1.db.old

# the same entry twice (overlapping roots): refused, by name, nothing written
"$VIGIL" scan --init -q -o dup.db --hmac-key "$HK" $R/a $R/a/b 2>err; rc=$?
check_eq "overlapping roots: exit 2" "$rc" 2
check "overlapping roots: the entry named" grep -q "$R/a/b: recorded twice" err
check "overlapping roots: no database" test ! -e dup.db

# usage
check_rc 2 "no key" "$VIGIL" scan --init -o x.db $R
check_rc 2 "both modes" "$VIGIL" scan --init --check db -o x.db --hmac-key "$HK" $R
check_rc 2 "--init without -o" "$VIGIL" scan --init --hmac-key "$HK" $R
check_rc 2 "--init -o - (a database is a file)" "$VIGIL" scan --init -q -o - --hmac-key "$HK" $R
check "... no file named -" test ! -e ./-
check_rc 2 "--check with a path" "$VIGIL" scan --check db --hmac-key "$HK" $R
check_rc 2 "--check and --update" "$VIGIL" scan --check db --update db --hmac-key "$HK"
check "--help" "$VIGIL" scan --help
