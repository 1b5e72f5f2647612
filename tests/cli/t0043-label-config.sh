#!/usr/bin/env bash
# vigil.conf: the hash algorithm, extra EVM-protected xattrs, keys, the
# UUID setting and the label/skip rules (path prefix, filesystem type,
# owner, mode, size), first match wins.
. "$SRCDIR/tests/lib.sh"
vg_init
K=$VECTORS/evmctl/keys
HK=$K/evm-key-plain.bin
vg_ext4 fs 32
R=fs/r
mkdir -p $R/usr/bin $R/var/log $R/home/u $R/tmp
for f in usr/bin/ls usr/bin/cat var/log/syslog home/u/notes tmp/x; do echo "$f" >$R/$f; done
chown 1000 $R/home/u/notes
echo ww >$R/usr/bin/world-writable; chmod 0666 $R/usr/bin/world-writable
head -c 5000 /dev/urandom >$R/usr/bin/large
mkdir $R/tmp/mnt; mount -t tmpfs tt $R/tmp/mnt; echo t >$R/tmp/mnt/t

cat >vigil.conf <<CONF
# test configuration
hash = sha512
evm.xattr = security.vigil.integrity   # an extra protected name
key.hmac = $HK
evm.uuid = none
skip path=$PWD/$R/var/log
label path=$PWD/$R/usr/bin/large
skip size>4096
skip uid=1000
skip mode=+0002
skip fstype=tmpfs
CONF
export VIGIL_CONFIG=$PWD/vigil.conf
out=$("$VIGIL" label -r --cross-mounts "$PWD/$R")
check "label with the configuration" test $? -eq 0
check_eq "skipped by the rules" "$(grep '  excluded' <<<"$out")" "  excluded: 4"
lab() { getfattr -n security.ima "$PWD/$R/$1" >/dev/null 2>&1 && echo yes || echo no; }
check_eq "usr/bin/ls labeled" "$(lab usr/bin/ls)" yes
check_eq "var/log skipped by path" "$(lab var/log/syslog)" no
check_eq "uid 1000 skipped" "$(lab home/u/notes)" no
check_eq "world-writable skipped by mode" "$(lab usr/bin/world-writable)" no
check_eq "the tmpfs mount skipped by fstype" "$(lab tmp/mnt/t)" no
check_eq "size>4096 skipped, but an earlier label rule wins" "$(lab usr/bin/large)" yes
check_eq "hash = sha512 used (digest-ng, algo 6)" "$(xhex $R/usr/bin/ls security.ima | cut -c1-4)" 0406
check "the config's key.hmac was used" "$VIGIL" appraise --config /dev/null --hmac-key "$HK" --no-uuid \
	--evm-xattr security.vigil.integrity "$PWD/$R/usr/bin/ls"
check "appraise takes everything from the config" "$VIGIL" appraise "$PWD/$R/usr/bin/ls"

# the extra protected xattr is covered
setfattr -n security.vigil.integrity -v high "$PWD/$R/usr/bin/cat"
check_rc 1 "a new security.vigil.integrity breaks the HMAC" "$VIGIL" appraise "$PWD/$R/usr/bin/cat"
check "without it in the list, the same file passes" "$VIGIL" appraise --config /dev/null \
	--hmac-key "$HK" --no-uuid "$PWD/$R/usr/bin/cat"
"$VIGIL" label -q "$PWD/$R/usr/bin/cat"
check "labeled again with it, it passes" "$VIGIL" appraise "$PWD/$R/usr/bin/cat"
setfattr -n security.vigil.integrity -v low "$PWD/$R/usr/bin/cat"
check_rc 1 "and changing it is detected" "$VIGIL" appraise "$PWD/$R/usr/bin/cat"

# --config overrides VIGIL_CONFIG; the default file is optional
check_rc 2 "--config FILE that is missing" "$VIGIL" appraise --config missing.conf "$PWD/$R/usr/bin/ls"
VIGIL_CONFIG= check_rc 2 "no configuration file and no key: scan refuses" \
	"$VIGIL" scan --init -o x.db "$PWD/$R"
for bad in 'hash' 'evm.uuid = maybe' 'evm.type = rsa' 'skip mode=999' 'skip uid=-1' \
	'skip fstype=nosuchfs' 'skip size>x' 'skip color=red' 'label path=/a path=/b' \
	'evm.xattr = user.foo'; do
	printf '%s\n' "$bad" >b.conf
	check_rc 2 "config refused: $bad" "$VIGIL" label --config b.conf --no-evm "$PWD/$R/usr/bin/ls"
done
