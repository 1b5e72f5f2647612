// SPDX-License-Identifier: MIT
/*
 * fuzz_vigild_ctl.c - vigild's control request line (vd_ctl_req_decode,
 * common/vigild_ctl.h): what a peer writes to a root daemon's socket, the
 * announcements of the next boot above all.
 *
 * The input, up to its first NUL, is one request line. Properties: decode
 * answers 0, -EINVAL, -EPROTO or -EBADMSG only; an announcement decoded
 * is in its documented bounds (a PCR below 24, an absolute NUL-free list
 * path and data, a command line of at most 1024 bytes) and its form is
 * canonical: encoding it gives back the input line exactly (up to the
 * first CR or LF, with one LF after it); an announcement the encoder
 * writes always decodes.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "vigild_ctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vd_ctl_req q;
	static char line[VD_CTL_REQ_MAX + 2], out[VD_CTL_REQ_MAX];
	size_t len = size < sizeof(line) - 1 ? size : sizeof(line) - 1, l;
	int r, n;

	memcpy(line, data, len);
	line[len] = 0;
	r = vd_ctl_req_decode(line, &q);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -EPROTO || r == -EBADMSG);
	if (r != 0 || q.op != VD_CTL_ANNOUNCE)
		return 0;
	FUZZ_CHECK(q.ann.kind == VD_CTL_ANN_INITRD || q.ann.kind == VD_CTL_ANN_CMDLINE);
	FUZZ_CHECK(q.ann.pcr < 24);
	FUZZ_CHECK(q.ann.log[0] == '/' && strlen(q.ann.log) < VD_CTL_PATH_MAX);
	FUZZ_CHECK(q.ann.data_len > 0 && q.ann.data_len < VD_CTL_PATH_MAX &&
		   strlen(q.ann.data) == q.ann.data_len);
	FUZZ_CHECK(q.ann.kind == VD_CTL_ANN_CMDLINE ? q.ann.data_len <= 1024 : q.ann.data[0] == '/');
	n = vd_ctl_req_encode(&q, out, sizeof(out));
	FUZZ_CHECK(n > 0);
	l = strcspn(line, "\r\n");
	FUZZ_CHECK((size_t)n == l + 1 && memcmp(out, line, l) == 0 && out[l] == '\n');
	return 0;
}
