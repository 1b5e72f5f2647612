// SPDX-License-Identifier: MIT
/*
 * fuzz_trust.c - the text parsers of lib/trust: a Release file's signed
 * text (vg_trust_release_parse) and Packages stanzas
 * (vg_trust_packages_parse). Both read only bytes that a signature or a
 * signed digest vouched for, but a parser must not trust its input either.
 *
 * The input up to its first NUL is a Release text, the rest a Packages
 * text. Properties: the result is 0 or -EBADMSG (-ENOMEM only when out of
 * memory); a parsed release has at least one file, each with a non-empty
 * path without blanks, and finds each entry by its own digest and size; a
 * parsed Packages text yields stanzas with every field set, each found
 * again by its package, version and architecture.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "vigil/trust.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const uint8_t *nul = memchr(data, '\0', size);
	size_t rlen = nul ? (size_t)(nul - data) : size;
	struct vg_trust_release rel;
	struct vg_trust_packages pk = { 0 };
	int r;

	r = vg_trust_release_parse(text, rlen, &rel, NULL);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM);
	if (r == 0) {
		FUZZ_CHECK(rel.nfiles >= 1);
		for (size_t i = 0; i < rel.nfiles; i++) {
			const struct vg_trust_relfile *f = &rel.files[i];
			const struct vg_trust_relfile *g;

			FUZZ_CHECK(f->path[0] && !strpbrk(f->path, " \t\n"));
			g = vg_trust_release_find(&rel, f->sha256, f->size);
			FUZZ_CHECK(g && g->size == f->size && memcmp(g->sha256, f->sha256, 32) == 0);
		}
		vg_trust_release_release(&rel);
	}
	if (!nul)
		return 0;
	r = vg_trust_packages_parse(&pk, (const char *)nul + 1, size - rlen - 1, 5, NULL);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM);
	if (r == 0) {
		for (size_t i = 0; i < pk.n; i++) {
			const struct vg_trust_pkg *p = &pk.pkgs[i];

			FUZZ_CHECK(p->package && p->package[0] && p->version && p->version[0] &&
				   p->arch && p->arch[0] && p->filename && p->filename[0]);
			FUZZ_CHECK(p->release == 5);
		}
		for (size_t i = 0; i < pk.n; i++) {
			struct vg_trust_pkg p = pk.pkgs[i];	/* find() sorts the array */
			const struct vg_trust_pkg *first = NULL;
			size_t n = vg_trust_packages_find(&pk, p.package, p.version, p.arch, &first);

			FUZZ_CHECK(n >= 1 && first);
			for (size_t j = 0; j < n; j++)
				FUZZ_CHECK(strcmp(first[j].package, p.package) == 0 &&
					   strcmp(first[j].version, p.version) == 0 &&
					   strcmp(first[j].arch, p.arch) == 0);
		}
	}
	vg_trust_packages_release(&pk);
	return 0;
}
