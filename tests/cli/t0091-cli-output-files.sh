#!/usr/bin/env bash
# Every -o (log convert, attest policy import/create,
# scan --init, key create --force) writes through one function
# (lib/outfile.c): a regular file is replaced atomically; a character
# device or fifo is written in place by the commands whose output is a
# document, refused by those whose output must be a file (scan database,
# key file); a symbolic link, a directory, a socket and a block device are
# refused with exit 2, naming the kind, nothing written. Issue 19 item 6:
# `-o /dev/null` used to replace the device node with a regular file; here
# the device, fifo, link and socket are the test's own, on its tmpfs.
# Temporaries of a writer killed mid-write (SIGKILL during scan --init)
# are removed by the next write of the same target; a live writer's are not.
. "$SRCDIR/tests/lib.sh"
vg_init
HK=$VECTORS/evmctl/keys/evm-key-plain.bin
LOG=$VECTORS/imalog/ibmtss-imatest.log
export VIGIL_CONFIG=/dev/null

mknod null c 1 3		# the test's own copy of /dev/null
mkfifo fifo
mkdir dir
mknod blk b 240 0		# a block device node no driver answers
python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'
echo keep >target
ln -s target link
mkdir -p tree/a && for i in 1 2 3; do echo $i >tree/a/f$i; done
kind() { stat -c %F "$1"; }
no_temps() { ! compgen -G '.*vigil-tmp*' >/dev/null; }

"$VIGIL" log convert "$LOG" >want.txt

# a character device: written in place, still the device
check "log convert -o NULL (char device 1,3) succeeds" "$VIGIL" log convert "$LOG" -o null
check_eq "... null is still a character device" "$(kind null)" "character special file"
check_eq "... and still 1,3" "$(stat -c '%t,%T' null)" "1,3"
check "attest policy create -o NULL succeeds" "$VIGIL" attest policy create --tree tree -o null
check_eq "... null is still a character device" "$(kind null)" "character special file"
"$VIGIL" attest policy create --tree tree -o pol.json
check "attest policy import -o NULL succeeds" "$VIGIL" attest policy import pol.json -o null
check_eq "... null is still a character device" "$(kind null)" "character special file"

# a fifo: written in place, the reader gets the whole output
cat fifo >got.txt &
reader=$!
check "log convert -o FIFO succeeds" "$VIGIL" log convert "$LOG" -o fifo
wait $reader
check "... the reader got exactly the output" cmp got.txt want.txt
check_eq "... fifo is still a fifo" "$(kind fifo)" "fifo"

# standard output
check "log convert -o /dev/stdout writes standard output" \
	sh -c '"$0" log convert "$1" -o /dev/stdout >out.txt && cmp out.txt want.txt' "$VIGIL" "$LOG"
check "log convert -o - writes standard output" \
	sh -c '"$0" log convert "$1" -o - >out2.txt && cmp out2.txt want.txt' "$VIGIL" "$LOG"

# refused: symlink, directory, socket, block device; nothing written
for t in link dir sock blk; do
	before=$(kind $t)
	check_rc 2 "log convert -o $t ($before) is refused" "$VIGIL" log convert "$LOG" -o $t
	check_eq "... still a $before" "$(kind $t)" "$before"
done
"$VIGIL" log convert "$LOG" -o link 2>err
check "... the link: 'a symbolic link; not followed'" grep -q "link: a symbolic link; not followed" err
check_eq "... its target is untouched" "$(cat target)" keep
"$VIGIL" log convert "$LOG" -o dir 2>err
check "... the directory: 'not a regular file (directory)'" grep -q "dir: not a regular file (directory)" err
"$VIGIL" log convert "$LOG" -o sock 2>err
check "... the socket: 'not a regular file (socket)'" grep -q "sock: not a regular file (socket)" err
"$VIGIL" log convert "$LOG" -o blk 2>err
check "... the block device: 'not a regular file (block device)'" \
	grep -q "blk: not a regular file (block device)" err
check_rc 2 "attest policy import -o LINK is refused" "$VIGIL" attest policy import pol.json -o link
check_eq "... the link's target is untouched" "$(cat target)" keep

# outputs that must be files refuse devices and fifos too
check_rc 2 "scan --init -o NULL is refused" "$VIGIL" scan --init -q -o null --hmac-key "$HK" tree
check_eq "... null is still a character device" "$(kind null)" "character special file"
"$VIGIL" scan --init -q -o null --hmac-key "$HK" tree 2>err
check "... 'not a regular file (character device)'" grep -q "null: not a regular file (character device)" err
check_rc 2 "scan --init -o FIFO is refused" "$VIGIL" scan --init -q -o fifo --hmac-key "$HK" tree
check_eq "... fifo is still a fifo" "$(kind fifo)" "fifo"
check_rc 2 "scan --init -o LINK is refused" "$VIGIL" scan --init -q -o link --hmac-key "$HK" tree
check_eq "... the link's target is untouched" "$(cat target)" keep
printf 'pw\n' >pass
check_rc 2 "key create --force -o NULL is refused" "$VIGIL" key create --passphrase \
	--passphrase-file pass --scrypt-logn 10 --force -o null
check_eq "... null is still a character device" "$(kind null)" "character special file"
check "no temporary file was left by any of these" no_temps

# a regular file: replaced by rename (a new inode), never partly written
echo old >reg.txt
ino=$(stat -c %i reg.txt)
check "log convert -o REGULAR replaces it" "$VIGIL" log convert "$LOG" -o reg.txt
check "... with the whole output" cmp reg.txt want.txt
check "... by rename (another inode)" test "$(stat -c %i reg.txt)" != "$ino"
check "... no temporary left" no_temps

# a writer killed mid-write: its temporary is removed by the next write
mkdir -p big
for d in $(seq 1 40); do
	mkdir big/$d
	for f in $(seq 1 100); do head -c 8192 /dev/urandom >big/$d/$f; done
done
killed=no
for _ in 1 2 3 4 5; do
	"$VIGIL" scan --init -q -J 1 -o db --hmac-key "$HK" big &
	pid=$!
	for _ in $(seq 20000); do
		if compgen -G '.db.vigil-tmp.*' >/dev/null; then
			kill -KILL $pid
			killed=yes
			break
		fi
	done
	wait $pid 2>/dev/null
	[ $killed = yes ] && [ ! -e db ] && break
	killed=no
	rm -f db
done
check_eq "scan --init killed (SIGKILL) while writing its temporary" "$killed" yes
stale=$(compgen -G '.db.vigil-tmp.*')
check "... left its temporary (.db.vigil-tmp.XXXXXX)" test -n "$stale"
check "... and no database" test ! -e db
# a live writer's temporary (locked) must survive; a dead one must not
exec 9>.db.vigil-tmp.LiVe42
flock 9
check "the next scan --init succeeds" "$VIGIL" scan --init -q -o db --hmac-key "$HK" tree
check "... removed the dead writer's temporary" test ! -e "$stale"
check "... kept the temporary a live writer holds" test -e .db.vigil-tmp.LiVe42
check "... the database checks" "$VIGIL" scan --check db --hmac-key "$HK"
exec 9>&-
check "a write of another target leaves it alone" "$VIGIL" log convert "$LOG" -o other.txt
check "... (still there)" test -e .db.vigil-tmp.LiVe42
check "the next write of the same target removes it, now unlocked" \
	"$VIGIL" scan --init -q -o db --hmac-key "$HK" tree
check "... gone" no_temps
