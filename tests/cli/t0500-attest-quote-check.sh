#!/usr/bin/env bash
# t0500: `vigil attest quote-check` agrees with tpm2_checkquote on quotes
# made by tpm2_quote against swtpm (ECDSA and RSA AKs under the EK), good
# and tampered (nonce, signed bytes, PCR values, selection).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/lib-tpm.sh"
vg_init
vg_tpm_start

fl() { tpm2_flushcontext -t >/dev/null 2>&1; }
tpm2_createek -c ek.ctx -G rsa -u ek.pub >/dev/null 2>&1; fl
N=0
# agree WHAT WANT(0 ok / 1 fail) MSG SIG PCRS NONCE LIST: both tools must give WANT
agree() {
	local what=$1 want=$2 msg=$3 sig=$4 pcrs=$5 nonce=$6 list=$7 t v
	tpm2_checkquote -u ak.pub -m "$msg" -s "$sig" -f "$pcrs" -g sha256 -q "$nonce" >/dev/null 2>&1
	t=$?; [ $t -ne 0 ] && t=1
	"$VIGIL" attest quote-check --ak ak.pub --msg "$msg" --sig "$sig" --pcrs "$pcrs" \
		--nonce "$nonce" --pcr-list "$list" >"$T/.qc" 2>&1
	v=$?
	check_eq "$what: tpm2_checkquote $t, vigil $v (want $want)" "$t/$v" "$want/$want"
}

for alg in ecc rsa; do
	rm -f ak.ctx ak.pub
	tpm2_createak -C ek.ctx -c ak.ctx -G $alg -g sha256 -s $([ $alg = ecc ] && echo ecdsa || echo rsassa) \
		-u ak.pub -f tss >/dev/null 2>&1; fl
	check "$alg: AK created" test -s ak.pub
	for i in 1 2 3; do
		tpm2_pcrextend 10:sha256=$(printf "%064x" $i) >/dev/null 2>&1
	done
	nonce=$(openssl rand -hex 20)
	tpm2_quote -c ak.ctx -l sha256:0,7,10 -q "$nonce" -m q.msg -s q.sig -o q.pcrs -F serialized \
		-g sha256 >/dev/null 2>&1; fl
	check "$alg: tpm2_quote made a quote" test -s q.msg
	agree "$alg good quote" 0 q.msg q.sig q.pcrs "$nonce" sha256:0,7,10
	check "$alg: vigil prints the clock" grep -q "^OK clock=.* safe=1" "$T/.qc"
	agree "$alg wrong nonce" 1 q.msg q.sig q.pcrs "$(openssl rand -hex 20)" sha256:0,7,10
	cp q.msg bad.msg
	flip_byte bad.msg 60
	agree "$alg signed bytes altered" 1 bad.msg q.sig q.pcrs "$nonce" sha256:0,7,10
	cp q.pcrs bad.pcrs
	# the first value (PCR 0) starts at 132 + 4 + 4 + 2
	printf '\x01' | dd of=bad.pcrs bs=1 seek=142 conv=notrunc status=none
	agree "$alg PCR value altered" 1 q.msg q.sig bad.pcrs "$nonce" sha256:0,7,10
	"$VIGIL" attest quote-check --ak ak.pub --msg q.msg --sig q.sig --pcrs q.pcrs \
		--nonce "$nonce" --pcr-list sha256:0,10 >"$T/qc.out" 2>&1
	check_rc 0 "$alg: other selection asked: exit 1" test $? -eq 1
	check "$alg: typed quote.selection" grep -q "quote.selection" "$T/qc.out"
	rm -f ak.ctx
done
# the signature of another AK
tpm2_createak -C ek.ctx -c ak2.ctx -G ecc -g sha256 -s ecdsa -u ak2.pub >/dev/null 2>&1; fl
nonce=$(openssl rand -hex 20)
tpm2_quote -c ak2.ctx -l sha256:10 -q "$nonce" -m q2.msg -s q2.sig -o q2.pcrs -g sha256 >/dev/null 2>&1; fl
agree "quote by another AK" 1 q2.msg q2.sig q2.pcrs "$nonce" sha256:10
"$VIGIL" attest quote-check --ak ak.pub --msg q2.msg --sig q2.sig --pcrs q2.pcrs --nonce "$nonce" \
	--pcr-list sha256:10 >"$T/qc.out" 2>&1
check "other AK: typed quote.scheme or quote.signature" grep -Eq "quote\.(signature|scheme)" "$T/qc.out"
check_rc 2 "missing options: usage error" "$VIGIL" attest quote-check --ak ak.pub
# a real TPM's quote in Keylime's pull-API form (keylime-perf-tests), AK as TPM2B_PUBLIC
J=$VECTORS/attest/keylime-perf-tests__hw_quote_pcr0-16.json
jf() { python3 -c "import json,sys; print(json.load(open('$J'))['$1'])"; }
jf ak_tpm_b64_TPM2B_PUBLIC | base64 -d >hw.ak
hwnonce=$(printf %s "$(jf qualifying_data_ascii)" | od -An -tx1 | tr -d ' \n')
check "Keylime-format hardware quote verifies" "$VIGIL" attest quote-check --ak hw.ak \
	--keylime "$(jf keylime_pull_format_quote)" --nonce "$hwnonce" --pcr-list sha256:0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16
"$VIGIL" attest quote-check --ak hw.ak --keylime "$(jf keylime_pull_format_quote)" --nonce 00 \
	--pcr-list sha256:0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 >"$T/qc.out" 2>&1
check_eq "with another nonce: exit 1" "$?" 1
check "typed quote.nonce" grep -q "FAIL quote.nonce" "$T/qc.out"
check_rc 2 "a malformed Keylime string: usage error" "$VIGIL" attest quote-check --ak hw.ak \
	--keylime "x:y" --nonce 00 --pcr-list sha256:10
