#!/usr/bin/env bash
# Every command has --help; usage errors exit 2 and say what is wrong;
# operational errors name the file.
. "$SRCDIR/tests/lib.sh"
vg_init

check "vigil --help" "$VIGIL" --help
check "vigil --version" "$VIGIL" --version
v=$("$VIGIL" --version | cut -d' ' -f2)
check_eq "vigild --version" "$("$VIGILD" --version)" "vigild $v"
check_eq "vigil-agent --version" "$("$VIGIL_AGENT_BIN" --version)" "vigil-agent $v"
check_eq "vigil-verifier --version" "$("$VIGIL_VERIFIER_BIN" --version)" "vigil-verifier $v"
for b in "$VIGILD" "$VIGIL_AGENT_BIN" "$VIGIL_VERIFIER_BIN"; do
	"$b" --help | grep -q -- '--version'
	check "$(basename "$b") --help lists --version" test $? -eq 0
done
check_rc 2 "vigil with no command" "$VIGIL"
check_rc 2 "unknown command" "$VIGIL" frobnicate
for c in hash sign evm appraise; do
	check "$c --help exits 0" "$VIGIL" "$c" --help
	check "help $c" "$VIGIL" help "$c"
	check_rc 2 "$c --bogus-option exits 2" "$VIGIL" "$c" --bogus-option
	check_rc 2 "$c without FILE exits 2" bash -c "'$VIGIL' $c $( [ $c = sign ] && echo --key "$VECTORS/evmctl/keys/rsa2048.key.pem") $( [ $c = evm ] && echo --hmac-key "$VECTORS/evmctl/keys/evm-key-plain.bin")"
done
"$VIGIL" hash --help | grep -q -- '--write'
check "hash --help documents --write" test $? -eq 0

check_rc 2 "hash: missing file exits 2" "$VIGIL" hash no-such-file
"$VIGIL" hash no-such-file 2>err
check "hash: the error names the file and the cause" grep -q "no-such-file: No such file or directory" err
check_rc 2 "hash: unknown algorithm" "$VIGIL" hash -a sha999 /dev/null
"$VIGIL" hash -a streebog256 /dev/null 2>err
check "hash: algorithm OpenSSL lacks is named" grep -q "streebog256" err
mkdir d
check_rc 2 "hash: a directory exits 2" "$VIGIL" hash d
printf x >ok
check_rc 2 "hash: one bad file among good ones exits 2" "$VIGIL" hash ok no-such-file
check_eq "hash: the good file is still printed" "$("$VIGIL" hash -a sha1 ok no-such-file 2>/dev/null | wc -l)" 1

check_rc 2 "sign: --key required" "$VIGIL" sign ok
check_rc 2 "sign: a certificate is no private key" "$VIGIL" sign --key "$VECTORS/evmctl/keys/rsa2048.cert.pem" ok
"$VIGIL" sign --key /nonexistent.pem ok 2>err
check "sign: missing key file is named" grep -q "/nonexistent.pem" err
check_rc 2 "sign: bad --keyid" "$VIGIL" sign --key "$VECTORS/evmctl/keys/rsa2048.key.pem" --keyid 12 ok

check_rc 2 "evm: neither --key nor --hmac-key" "$VIGIL" evm ok
check_rc 2 "evm: both --key and --hmac-key" "$VIGIL" evm --key "$VECTORS/evmctl/keys/rsa2048.key.pem" --hmac-key "$VECTORS/evmctl/keys/evm-key-plain.bin" ok
check_rc 2 "evm: --portable needs --key" "$VIGIL" evm --portable --hmac-key "$VECTORS/evmctl/keys/evm-key-plain.bin" ok
head -c 16 /dev/urandom >short.key
"$VIGIL" evm --hmac-key short.key ok 2>err
check_rc 2 "evm: a 16-byte HMAC key is refused" "$VIGIL" evm --hmac-key short.key ok
check "evm: the key error names the file and the size" grep -q "short.key.*32 to 128 bytes.*16" err
check_rc 2 "evm: bad --uuid" "$VIGIL" evm --hmac-key "$VECTORS/evmctl/keys/evm-key-plain.bin" --uuid nope ok
check_rc 2 "evm: --uuid with --no-uuid" "$VIGIL" evm --hmac-key "$VECTORS/evmctl/keys/evm-key-plain.bin" --uuid 6a1f4e2c-3b5d-4c7e-9f80-112233445566 --no-uuid ok
check_rc 2 "evm: --evm-xattr outside security." "$VIGIL" evm --hmac-key "$VECTORS/evmctl/keys/evm-key-plain.bin" --evm-xattr user.x ok
check_rc 2 "evm: bad --inode" "$VIGIL" evm --hmac-key "$VECTORS/evmctl/keys/evm-key-plain.bin" --inode -3 ok
check_rc 2 "evm: --generation past 2^32" "$VIGIL" evm --hmac-key "$VECTORS/evmctl/keys/evm-key-plain.bin" --generation 4294967296 ok
check_eq "evm: nothing was written by the failed runs" "$(xhex ok security.evm)" ""

check_rc 2 "appraise: bad keyring file" "$VIGIL" appraise --keyring ok ok
"$VIGIL" appraise --keyring ok ok 2>err
check "appraise: the keyring error names the file" grep -q "keyring: ok:" err
check_rc 2 "appraise: missing file exits 2" "$VIGIL" appraise no-such-file
"$VIGIL" hash -w ok >/dev/null
check_rc 2 "appraise: an error beats a pass" "$VIGIL" appraise ok no-such-file
printf y >nolabel
check_rc 1 "appraise: a file without label fails with 1" "$VIGIL" appraise nolabel
check_rc 2 "appraise: an error beats a failure" "$VIGIL" appraise nolabel no-such-file

# libcurl is loaded only by the commands that talk to the verifier
check_eq "libcurl is not linked (loaded before main by every command)" \
	"$(ldd "$VIGIL" | grep -c libcurl)" 0
check_eq "file commands do not load it" \
	"$(LD_DEBUG=libs "$VIGIL" hash ok 2>&1 >/dev/null | grep -c 'calling init: .*libcurl')" 0
"$VIGIL" attest status --verifier http://127.0.0.1:9 2>err; rc=$?
check_eq "attest loads it: a closed port is reported by curl, exit 2" "$rc" 2
check "attest loads it: curl's message" grep -q 'verifier http://127.0.0.1:9: ' err
check_eq "and loaded it" "$(LD_DEBUG=libs "$VIGIL" attest status --verifier http://127.0.0.1:9 2>&1 | grep -c 'calling init: .*libcurl')" 1

# inputs without an end (/dev/zero, as a pipe or device would be): every
# reader stops at its limit, names the file and the limit, exits 2
endless() {	# WANT-MESSAGE COMMAND...
	local want=$1 rc
	shift
	timeout 60 "$VIGIL" "$@" >/dev/null 2>err; rc=$?
	check_eq "endless input: $1 $2: exit 2" "$rc" 2
	check "... says '$want'" grep -q "/dev/zero: $want" err
}
echo x >f
endless "larger than 1 GiB" log show /dev/zero
endless "larger than 1 MiB" log replay --pcrs /dev/zero f
endless "larger than 64 MiB" log boot show /dev/zero
endless "larger than 64 MiB" policy check /dev/zero
endless "larger than 256 MiB" attest policy check --policy /dev/zero f
endless "larger than 256 MiB" attest policy import /dev/zero
endless "larger than 16 MiB" appraise --keyring /dev/zero f
endless "larger than 1 MiB" appraise --config /dev/zero f
endless "not a regular file" measure --log /dev/zero f
endless "larger than 1 MiB" measure --log m.log --pcrs /dev/zero f
endless "not a vigil scan database" scan --check /dev/zero --hmac-key "$VECTORS/evmctl/keys/evm-key-plain.bin"
mkfifo fifo
endless "not a regular file" measure --log m.log /dev/zero
endless "not a regular file" sign --key "$VECTORS/evmctl/keys/rsa2048.key.pem" /dev/zero
endless "not a regular file" hash -w /dev/zero
check_rc 2 "hash -w of a fifo: refused at once, not waiting for a writer" timeout 10 "$VIGIL" hash -w fifo
