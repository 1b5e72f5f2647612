#!/usr/bin/env bash
# vigil appraise --json: one JSON object per file, parseable, with the
# cause, statuses, keyid and digest; errors as objects too.
. "$SRCDIR/tests/lib.sh"
vg_init
K=$VECTORS/evmctl/keys

printf 'abc' >a
"$VIGIL" sign --key "$K/ecp256.key.pem" a
printf 'xyz' >b
"$VIGIL" appraise --json --keyring "$K/ecp256.cert.pem" a b no-such >out.json
check_rc 2 "json: exit status as in text mode" "$VIGIL" appraise --json --keyring "$K/ecp256.cert.pem" a b no-such
check_eq "json: three lines" "$(wc -l <out.json)" 3
field() { python3 -c "import json,sys; l=open('out.json').read().splitlines(); print(json.loads(l[$1]).get('$2'))"; }
check_eq "json: a passes" "$(field 0 result)" ok
check_eq "json: a's keyid" "$(field 0 keyid)" a8f6ddf0
check_eq "json: a's digest" "$(field 0 digest)" "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
check_eq "json: b fails" "$(field 1 result)" fail
check_eq "json: b's cause" "$(field 1 cause)" missing-hash
check_eq "json: b's status" "$(field 1 ima_status)" no_label
check_eq "json: no-such is an error" "$(field 2 result)" error
check "json: the error says why" bash -c "python3 -c \"import json; l=open('out.json').read().splitlines(); assert 'No such file' in json.loads(l[2])['error']\""
f=$'quo"te\nnl'
printf q >"$f"
"$VIGIL" appraise --json "$f" >q.json
check_eq "json: odd names round-trip" "$(python3 -c "import json; print(repr(json.loads(open('q.json').read())['file']))")" "'quo\"te\\nnl'"
