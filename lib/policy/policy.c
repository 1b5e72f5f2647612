// SPDX-License-Identifier: MIT
/*
 * policy.c - a policy as a whole: its text cut into rules (one a line,
 * blank lines and '#' comments skipped, a NUL byte refused: the kernel
 * would cut the write there), what the policy uses, its reference count.
 *
 * One rule is read by policy_parse.c and checked by policy_validate.c;
 * the words they share live in policy_token.c, path patterns in
 * policy_glob.c; matching lives in policy_match.c, printing in
 * policy_print.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "policy_internal.h"
#include "policy_parse.h"
#include "vigil/fileio.h"
#include "vigil/policy.h"

void vg__policy_rule_release(struct vg_policy_rule *r)
{
	free(r->fsname);
	for (int i = 0; i < VG_LSM__MAX; i++)
		free(r->lsm[i]);
	for (size_t i = 0; i < r->nkeyrings; i++)
		free(r->keyrings[i]);
	free(r->keyrings);
	for (size_t i = 0; i < r->nlabels; i++)
		free(r->labels[i]);
	free(r->labels);
	free(r->appraise_flag);
	free(r->path);
	free(r->subj_exe);
	for (size_t i = 0; i < r->nattrs; i++) {
		free(r->attrs[i].name);
		free(r->attrs[i].value);
	}
	free(r->attrs);
	memset(r, 0, sizeof(*r));
}

static void policy_free(struct vg_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		vg__policy_rule_release(&p->rules[i]);
	free(p->rules);
	free(p);
}

static unsigned int rule_uses(const struct vg_policy_rule *r)
{
	unsigned int u = 0;

	if (r->xflags & VG_POLX_PATH)
		u |= VG_POLICY_USES_PATH;
	if (r->xflags & VG_POLX_SUBJ_EXE)
		u |= VG_POLICY_USES_SUBJ_EXE;
	if (r->xflags & VG_POLX_APPRAISAL)
		u |= VG_POLICY_USES_APPRAISAL;
	if (r->xflags & VG_POLX_SUBJ_APPRAISAL)
		u |= VG_POLICY_USES_SUBJ_APPRAISAL;
	if (r->xflags & VG_POLX_ATTR)
		u |= VG_POLICY_USES_ATTR;
	if (r->xflags & VG_POLX_TRUST_ARCHIVE)
		u |= VG_POLICY_USES_TRUST_ARCHIVE;
	if (r->flags & VG_POLF_FSUUID)
		u |= VG_POLICY_USES_FSUUID;
	if (r->flags & VG_POLF_FSNAME)
		u |= VG_POLICY_USES_FSNAME;
	if (r->lsm[VG_LSM_OBJ_USER] || r->lsm[VG_LSM_OBJ_ROLE] || r->lsm[VG_LSM_OBJ_TYPE])
		u |= VG_POLICY_USES_OBJ_LSM;
	if (r->lsm[VG_LSM_SUBJ_USER] || r->lsm[VG_LSM_SUBJ_ROLE] || r->lsm[VG_LSM_SUBJ_TYPE])
		u |= VG_POLICY_USES_SUBJ_LSM;
	if (vg_policy_action_class(r->action) == VG_CLASS_ACCESS)
		u |= VG_POLICY_USES_ACCESS_RULES;
	if (r->xflags || vg_policy_action_class(r->action) == VG_CLASS_ACCESS)
		u |= VG_POLICY_USES_EXTENSIONS;
	return u;
}

int vg_policy_parse(const char *text, size_t len, unsigned int flags,
		    struct vg_policy **ret, struct vg_policy_error *err)
{
	struct vg_policy *p;
	size_t pos = 0, cap = 0;
	unsigned int line = 0;
	char *buf = NULL;
	int e = 0;

	if (!ret || (!text && len))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		goto enomem;
	atomic_init(&p->refs, 1);
	while (pos < len) {
		const char *l = text + pos, *nl = memchr(l, '\n', len - pos), *z;
		size_t ll = nl ? (size_t)(nl - l) : len - pos, skip;
		struct vg_policy_rule *grown;

		pos += ll + (nl != NULL);
		line++;
		z = memchr(l, '\0', ll);
		if (z) {
			struct parse ps = { .err = err, .line = line };

			e = vg__policy_perr(&ps, (unsigned int)(z - l) + 1, -EINVAL, "NUL byte in the policy text");
			goto fail;
		}
		/* the text need not be NUL-terminated: stay within the line */
		for (skip = 0; skip < ll && (l[skip] == ' ' || l[skip] == '\t'); skip++)
			;
		if (skip == ll || l[skip] == '#')
			continue;
		if (p->n == cap) {
			size_t ncap = cap ? cap * 2 : 16;

			grown = realloc(p->rules, ncap * sizeof(*p->rules));
			if (!grown)
				goto enomem;
			p->rules = grown;
			cap = ncap;
		}
		free(buf);
		buf = strndup(l + skip, ll - skip);
		if (!buf)
			goto enomem;
		e = vg__policy_parse_rule(buf, line, (unsigned int)skip + 1, flags, &p->rules[p->n], err);
		if (e < 0) {
			vg__policy_rule_release(&p->rules[p->n]);
			goto fail;
		}
		p->uses |= rule_uses(&p->rules[p->n]);
		/* ima_update_policy_flags(): classes with a "do" rule, SETXATTR_CHECK aside */
		if (p->rules[p->n].func != VG_FUNC_SETXATTR_CHECK) {
			switch (p->rules[p->n].action) {
			case VG_POL_MEASURE: p->do_classes |= 1u << VG_CLASS_MEASURE; break;
			case VG_POL_APPRAISE: p->do_classes |= 1u << VG_CLASS_APPRAISE; break;
			case VG_POL_AUDIT: p->do_classes |= 1u << VG_CLASS_AUDIT; break;
			case VG_POL_HASH: p->do_classes |= 1u << VG_CLASS_HASH; break;
			}
		}
		p->n++;
	}
	free(buf);
	if (p->n == 0 && !(flags & VG_POLICY_ALLOW_EMPTY)) {
		struct parse ps = { .err = err };

		policy_free(p);
		return vg__policy_perr(&ps, 0, -ENODATA, "no rules (the kernel refuses an empty policy)");
	}
	*ret = p;
	return 0;
enomem:
	{
		struct parse ps = { .err = err, .line = line };

		e = nomem(&ps, 0);
	}
fail:
	free(buf);
	policy_free(p);
	return e;
}

int vg_policy_load_file(const char *path, unsigned int flags, struct vg_policy **ret,
			struct vg_policy_error *err)
{
	struct parse ps = { .err = err };
	uint8_t *text = NULL;
	size_t len = 0;
	int fd, e;

	/* any readable file, a pipe too: vg_fd_read_all(), not vg_file_read() */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		return vg__policy_perr(&ps, 0, e, "%s", strerror(-e));
	}
	e = vg_fd_read_all(fd, (64u << 20) - 1, &text, &len);
	close(fd);
	if (e == -EFBIG)
		return vg__policy_perr(&ps, 0, e, "policy larger than 64 MiB");
	if (e == -ENOMEM)
		return nomem(&ps, 0);
	if (e < 0)
		return vg__policy_perr(&ps, 0, e, "%s", strerror(-e));
	e = vg_policy_parse((const char *)text, len, flags, ret, err);
	free(text);
	return e;
}

struct vg_policy *vg_policy_ref(struct vg_policy *p)
{
	if (p)
		atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
	return p;
}

void vg_policy_unref(struct vg_policy *p)
{
	if (p && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
		policy_free(p);
}

size_t vg_policy_count(const struct vg_policy *p)
{
	return p ? p->n : 0;
}

const struct vg_policy_rule *vg_policy_rule(const struct vg_policy *p, size_t i)
{
	return p && i < p->n ? &p->rules[i] : NULL;
}

unsigned int vg_policy_uses(const struct vg_policy *p)
{
	return p ? p->uses : 0;
}

