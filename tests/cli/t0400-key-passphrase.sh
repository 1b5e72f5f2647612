#!/usr/bin/env bash
# vigil key create --passphrase: the key file holds salt, scrypt parameters
# and a check value, never the key; labels made with it appraise with it
# (and only with the right passphrase); a wrong or missing passphrase is a
# clear operational error (exit 2) that never echoes the passphrase.
. "$SRCDIR/tests/lib.sh"
vg_init
K=$VECTORS/evmctl/keys
# run a command keeping its exit status in $RC and its output in $OUT
run() { OUT=$("$@" 2>&1); RC=$?; }
said() { grep -q -- "$1" <<<"$OUT"; }

echo 'correct horse battery staple' >pass
echo 'correct horse battery stapler' >wrong
check "create a passphrase key (scrypt 2^14)" \
	"$VIGIL" key create --passphrase --passphrase-file pass --scrypt-logn 14 -o p.key
check_eq "the key file is mode 0600" "$(stat -c %a p.key)" 600
check_eq "the key file starts with the magic" "$(head -c 8 p.key)" VIGILKEY
check_rc 2 "create refuses to overwrite" \
	"$VIGIL" key create --passphrase --passphrase-file pass --scrypt-logn 14 -o p.key
check "create --force replaces" \
	"$VIGIL" key create --passphrase --passphrase-file pass --scrypt-logn 14 --force -o p.key
check_eq "show names kind and KDF" "$("$VIGIL" key show p.key | head -2 | tr -s ' ')" \
	"p.key: passphrase key, 32 bytes
 kdf: scrypt N=2^14 r=8 p=1"

# the key is scrypt(passphrase, salt) as OpenSSL computes it, and not in the file
salt=$("$VIGIL" key show --json p.key | python3 -c 'import json,sys; print(json.load(sys.stdin)["salt"])')
key=$(openssl kdf -keylen 32 -kdfopt 'pass:correct horse battery staple' -kdfopt "hexsalt:$salt" \
	-kdfopt n:16384 -kdfopt r:8 -kdfopt p:1 SCRYPT | tr -d ':\n' | tr A-F a-f)
check_eq "the key is not stored in the file" "$(od -An -tx1 -v p.key | tr -d ' \n' | grep -c "$key")" 0
python3 -c "import sys; sys.stdout.buffer.write(bytes.fromhex('$key'))" >raw.key
check_eq "raw equivalent has 32 bytes" "$(stat -c %s raw.key)" 32

head -c 5000 /dev/urandom >f
chmod 0644 f
"$VIGIL" hash -w f >/dev/null
check "evm --hmac-key with a passphrase key file" "$VIGIL" evm --hmac-key p.key --passphrase-file pass f
check_eq "appraise with the passphrase key" "$("$VIGIL" appraise --hmac-key p.key --passphrase-file pass f)" "f: ok"
check_eq "appraise with the equivalent raw key (same HMAC)" "$("$VIGIL" appraise --hmac-key raw.key f)" "f: ok"
check_eq "\$VIGIL_PASSPHRASE_FILE works too" \
	"$(VIGIL_PASSPHRASE_FILE=pass "$VIGIL" appraise --hmac-key p.key f)" "f: ok"
check_eq "passphrase from stdin (--passphrase-file -)" \
	"$("$VIGIL" appraise --hmac-key p.key --passphrase-file - f <pass)" "f: ok"

check_rc 2 "a wrong passphrase: exit 2" "$VIGIL" appraise --hmac-key p.key --passphrase-file wrong f
check_eq "... saying so" "$("$VIGIL" appraise --hmac-key p.key --passphrase-file wrong f 2>&1)" \
	"vigil appraise: HMAC key p.key: wrong passphrase"
run setsid "$VIGIL" appraise --hmac-key p.key f </dev/null
check_eq "no passphrase and no terminal: exit 2" "$RC" 2
check "... naming --passphrase-file" said --passphrase-file
run "$VIGIL" evm --hmac-key p.key --passphrase-file wrong f
check_eq "evm with a wrong passphrase: exit 2, nothing written" "$RC" 2
check_rc 1 "... and the passphrase never appears" said battery
check_eq "the label is unchanged" "$("$VIGIL" appraise --hmac-key raw.key f)" "f: ok"
check_rc 2 "unseal with a wrong passphrase: exit 2" "$VIGIL" key unseal --passphrase-file wrong p.key
check_eq "unseal with the right one" "$("$VIGIL" key unseal --passphrase-file pass p.key)" \
	"p.key: key available (passphrase, 32 bytes)"
: >empty
check_rc 2 "an empty passphrase file is refused" \
	"$VIGIL" key create --passphrase --passphrase-file empty -o e.key
check_rc 1 "... and no key file is left" test -e e.key

# corrupted key files: rejected cleanly, naming the file
cp p.key bad.key; printf '\x02' | dd of=bad.key bs=1 seek=8 conv=notrunc status=none
run "$VIGIL" appraise --hmac-key bad.key --passphrase-file pass f
check_eq "unknown key file version" "$RC" 2
check "... named" said "bad.key: key file version 2"
head -c 40 p.key >short.key
run "$VIGIL" appraise --hmac-key short.key --passphrase-file pass f
check_eq "truncated key file" "$RC" 2
check "... named" said "short.key: "
cp p.key salt.key; flip_byte salt.key 30
run "$VIGIL" appraise --hmac-key salt.key --passphrase-file pass f
check_eq "changed salt: the passphrase no longer checks" "$RC" 2
check "... reported as a wrong passphrase" said "wrong passphrase"
check_eq "raw keys still work" "$("$VIGIL" key show "$K/evm-key-plain.bin" | sed 's|.*: ||')" "raw key, 32 bytes"
# the terminal: a pty from script(1); input waits for the prompt (echo off flushes type-ahead)
tty_in() { sleep 1.5; printf '%s\n' "$1"; sleep 1; printf '%s\n' "$2"; sleep 0.5; }
out=$(tty_in 'tty words' 'tty words' | script -qec "$VIGIL key create --passphrase --scrypt-logn 12 -o tty.key" /dev/null)
check_eq "create on a terminal: asked twice" "$(tr -d '\r' <<<"$out")" "Passphrase for tty.key: 
Again: 
tty.key: passphrase key, scrypt N=2^12 r=8 p=1"
echo 'tty words' >ttypass
check "... the key is derived from what was typed" "$VIGIL" key unseal --passphrase-file ttypass tty.key
out=$(tty_in 'one' 'two' | script -qec "$VIGIL key create --passphrase --scrypt-logn 12 -o tty2.key" /dev/null)
check "two different passphrases are refused" grep -q "the passphrases differ" <<<"$out"
check_rc 1 "... and nothing is written" test -e tty2.key
out=$(tty_in 'tty words' '' | script -qec "$VIGIL appraise --hmac-key tty.key f" /dev/null)
check "appraise asks on the terminal" grep -q "Passphrase for tty.key" <<<"$out"
check_eq "... and the typed passphrase is not echoed" "$(grep -c 'tty words' <<<"$out")" 0
check_rc 2 "key: unknown subcommand" "$VIGIL" key frobnicate
check "key --help" "$VIGIL" key --help
