// SPDX-License-Identifier: MIT
/*
 * store_client.c - the network process's side of the store process: a
 * store.h backend whose every operation is one request over the
 * socketpair and its replies (store_ipc.h), so the rest of the verifier
 * calls vg_store_* unchanged. One mutex serialises the requests of all
 * threads (a request and its replies, a streamed list included, are one
 * exchange); the time limit of one call is the store process's own
 * (--db-timeout, forwarded by set_timeout), as it was the backend's.
 * List callbacks run here, in the caller's thread, as rows arrive; when
 * one returns non-zero the remaining rows are read and dropped and its
 * value is returned, as a backend stops.
 *
 * Also vg_privsep_store_open, which forks the store process and then
 * forgets the credentials of the URL (privsep.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <openssl/crypto.h>

#include "log.h"
#include "privsep.h"
#include "store_ipc.h"
#include "store_proc.h"

#define WHO "the store process's answer"

struct sclient {
	struct ipc_chan ch;
	pid_t pid;
	pthread_mutex_t lock;
	uint64_t requests;		/* exchanges since the start (vg_privsep_store_requests) */
};

/* what a request expects besides DONE */
struct want {
	uint32_t row;			/* SIPC_AGENT, SIPC_VERDICT, SIPC_POLICY or 0 */
	bool many;			/* a list: any number of rows */
	struct vg_store_agent *agent;	/* agent_get's or a list's row */
	vg_store_agent_cb acb;
	vg_store_verdict_cb vcb;
	vg_store_verifier_cb wcb;
	vg_store_due_cb dcb;
	uint64_t *states;		/* agent_states' counts */
	struct vg_store_push_req *push;	/* the push op's */
	void *arg;
	char **doc;
	size_t *doclen;
	int cb_ret;
	size_t rows;
};

static _Noreturn void gone(void)
{
	vlog_err("the store process is gone");
	_exit(2);
}

static void row(struct ipc_in *in, struct want *w)
{
	struct vg_store_verdict v;
	size_t len;
	const uint8_t *p;

	if (in->type != w->row || (!w->many && w->rows))
		ipc_die(WHO, "a reply that does not answer the request");
	w->rows++;
	switch (in->type) {
	case SIPC_AGENT:
		sipc_get_agent(in, w->agent);
		ipc_end(in);
		if (w->acb && !w->cb_ret)
			w->cb_ret = w->acb(w->arg, w->agent);
		break;
	case SIPC_VERDICT:
		sipc_get_verdict(in, &v);
		ipc_end(in);
		if (!w->cb_ret)
			w->cb_ret = w->vcb(w->arg, &v);
		break;
	case SIPC_DUE: {
		struct vg_store_due a;

		sipc_get_due(in, &a);
		ipc_end(in);
		if (!w->cb_ret)
			w->cb_ret = w->dcb(w->arg, &a);
		break;
	}
	case SIPC_STATES:
		for (int i = 0; i < VG_STORE_STATES; i++)
			w->states[i] = (uint64_t)ipc_get_i64(in);
		ipc_end(in);
		break;
	case SIPC_PUSH_ROW:
		sipc_get_push(in, w->push);
		ipc_end(in);
		break;
	case SIPC_VERIFIER: {
		struct vg_store_verifier vr;

		sipc_get_verifier(in, &vr);
		ipc_end(in);
		if (!w->cb_ret)
			w->cb_ret = w->wcb(w->arg, &vr);
		break;
	}
	default:	/* SIPC_POLICY: the document moved to the front of the buffer, which is handed over */
		p = ipc_get_bytes(in, SIPC_DOC_MAX, &len);
		ipc_end(in);
		memmove(in->p, p, len);
		*w->doc = (char *)in->p;	/* ipc_recv allocated one byte more */
		in->p = NULL;
		(*w->doc)[len] = 0;
		*w->doclen = len;
		break;
	}
}

static int call(struct sclient *c, uint32_t type, struct ipc_out *o, struct want *w,
		struct vg_diag *diag)
{
	struct want none = { 0 };
	int r;

	if (!w)
		w = &none;
	if (o->err) {
		ipc_out_free(o);
		return vg_diag_set(diag, o->err, "store: a request too large");
	}
	pthread_mutex_lock(&c->lock);
	c->requests++;
	if (ipc_send(&c->ch, type, o, -1) < 0)
		gone();
	for (;;) {
		struct ipc_in in;

		if (ipc_recv(&c->ch, &in) < 0)
			gone();
		if (in.type != SIPC_DONE) {
			row(&in, w);
			ipc_in_free(&in);
			continue;
		}
		r = sipc_get_done(&in, diag);
		ipc_end(&in);
		ipc_in_free(&in);
		break;
	}
	pthread_mutex_unlock(&c->lock);
	if (!w->many && w->row && w->rows != (r == 0))
		ipc_die(WHO, "a row missing, or one with a failure");
	return w->cb_ret ? w->cb_ret : r;
}

static int put_name(struct ipc_out *o, const char *s)
{
	size_t n = strlen(s);

	if (n > SIPC_NAME_MAX - 1)
		return -ENOENT;		/* longer than any stored name */
	ipc_put_bytes(o, s, n);
	return 0;
}

static int c_agent_put(void *ctx, const struct vg_store_agent *a, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };

	sipc_put_agent(&o, a);
	return call(ctx, SIPC_AGENT_PUT, &o, NULL, diag);
}

static int c_agent_get(void *ctx, const char *id, struct vg_store_agent *ret, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };
	struct want w = { .row = SIPC_AGENT, .agent = ret };

	if (put_name(&o, id) < 0)
		return -ENOENT;
	return call(ctx, SIPC_AGENT_GET, &o, &w, diag);
}

/* an EK comes as its key id (vg_store_agent_find made it), which the store process looks up */
static int c_agent_find(void *ctx, unsigned int key, const uint8_t *val, size_t len,
			const char *except, struct vg_store_agent *ret, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };
	struct want w = { .row = SIPC_AGENT, .agent = ret };

	if (len > SIPC_COL_MAX || strlen(except) > SIPC_NAME_MAX - 1)
		return -ENOENT;		/* no column holds it, no id is that long */
	ipc_put_u32(&o, key);
	ipc_put_bytes(&o, val, len);
	(void)put_name(&o, except);
	return call(ctx, SIPC_AGENT_FIND, &o, &w, diag);
}

static int c_agent_del(void *ctx, const char *id, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };

	if (put_name(&o, id) < 0)
		return -ENOENT;
	return call(ctx, SIPC_AGENT_DEL, &o, NULL, diag);
}

static int c_agent_list(void *ctx, vg_store_agent_cb cb, void *arg, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };
	struct want w = { .row = SIPC_AGENT, .many = true, .acb = cb, .arg = arg };
	int r;

	w.agent = malloc(sizeof(*w.agent));
	if (!w.agent)
		return -ENOMEM;
	r = call(ctx, SIPC_AGENT_LIST, &o, &w, diag);
	free(w.agent);
	return r;
}

static int c_agent_update(void *ctx, const struct vg_store_agent *old,
			  const struct vg_store_agent *a, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };

	sipc_put_agent(&o, old);
	sipc_put_agent(&o, a);
	return call(ctx, SIPC_AGENT_UPDATE, &o, NULL, diag);
}

static int c_policy_put(void *ctx, const char *name, const char *doc, size_t len,
			struct vg_diag *diag)
{
	struct ipc_out o = { 0 };

	if (len > SIPC_DOC_MAX || strlen(name) > SIPC_NAME_MAX - 1)
		return vg_diag_set(diag, -EFBIG, "store: a policy over %u bytes", SIPC_DOC_MAX);
	put_name(&o, name);
	ipc_put_tail(&o, doc, len);
	return call(ctx, SIPC_POLICY_PUT, &o, NULL, diag);
}

static int c_policy_get(void *ctx, const char *name, char **ret, size_t *len, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };
	struct want w = { .row = SIPC_POLICY, .doc = ret, .doclen = len };

	*ret = NULL;
	if (put_name(&o, name) < 0)
		return -ENOENT;
	return call(ctx, SIPC_POLICY_GET, &o, &w, diag);
}

static int c_policy_del(void *ctx, const char *name, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };

	if (put_name(&o, name) < 0)
		return -ENOENT;
	return call(ctx, SIPC_POLICY_DEL, &o, NULL, diag);
}

static int c_verdict_add(void *ctx, const char *id, const struct vg_store_verdict *v,
			 struct vg_diag *diag)
{
	struct ipc_out o = { 0 };

	if (put_name(&o, id) < 0)
		return -ENOENT;
	sipc_put_verdict(&o, v);
	return call(ctx, SIPC_VERDICT_ADD, &o, NULL, diag);
}

static int c_verdict_list(void *ctx, const char *id, size_t max, vg_store_verdict_cb cb,
			  void *arg, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };
	struct want w = { .row = SIPC_VERDICT, .many = true, .vcb = cb, .arg = arg };

	if (put_name(&o, id) < 0)
		return 0;	/* no such agent: no history */
	ipc_put_i64(&o, (int64_t)max);
	return call(ctx, SIPC_VERDICT_LIST, &o, &w, diag);
}

static int c_agent_due(void *ctx, int64_t before, vg_store_due_cb cb, void *arg,
		       struct vg_diag *diag)
{
	struct ipc_out o = { 0 };
	struct want w = { .row = SIPC_DUE, .many = true, .dcb = cb, .arg = arg };

	ipc_put_i64(&o, before);
	return call(ctx, SIPC_AGENT_DUE, &o, &w, diag);
}

static int c_push(void *ctx, unsigned int verb, struct vg_store_push_req *rq, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };
	struct want w = { .row = SIPC_PUSH_ROW, .push = rq };

	ipc_put_u32(&o, verb);
	sipc_put_push(&o, rq);
	return call(ctx, SIPC_PUSH, &o, &w, diag);
}

static int c_lease_release(void *ctx, const char *id, const char *owner, int64_t next_due,
			   struct vg_diag *diag)
{
	struct ipc_out o = { 0 };

	if (put_name(&o, id) < 0 || put_name(&o, owner) < 0) {
		ipc_out_free(&o);
		return -ESTALE;
	}
	ipc_put_i64(&o, next_due);
	return call(ctx, SIPC_LEASE_RELEASE, &o, NULL, diag);
}

static int c_lease_drop(void *ctx, const char *id, const char *owner, int64_t lease_until,
			struct vg_diag *diag)
{
	struct ipc_out o = { 0 };

	if (put_name(&o, id) < 0 || put_name(&o, owner) < 0) {
		ipc_out_free(&o);
		return -ESTALE;
	}
	ipc_put_i64(&o, lease_until);
	return call(ctx, SIPC_LEASE_DROP, &o, NULL, diag);
}

static int c_agent_states(void *ctx, uint64_t n[VG_STORE_STATES], struct vg_diag *diag)
{
	struct ipc_out o = { 0 };
	struct want w = { .row = SIPC_STATES, .states = n };

	return call(ctx, SIPC_AGENT_STATES, &o, &w, diag);
}

static int c_lease_take(void *ctx, const char *done, int64_t next_due, const char *owner,
			int64_t now, int64_t lease_ms, unsigned int max, vg_store_agent_cb cb,
			void *arg, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };
	struct want w = { .row = SIPC_AGENT, .many = true, .acb = cb, .arg = arg };
	int r;

	if (put_name(&o, done ? done : "") < 0) {
		ipc_out_free(&o);
		return -EINVAL;
	}
	ipc_put_i64(&o, next_due);
	if (put_name(&o, owner) < 0) {
		ipc_out_free(&o);
		return -EINVAL;
	}
	ipc_put_i64(&o, now);
	ipc_put_i64(&o, lease_ms);
	ipc_put_u32(&o, max);
	w.agent = malloc(sizeof(*w.agent));
	if (!w.agent) {
		ipc_out_free(&o);
		return -ENOMEM;
	}
	r = call(ctx, SIPC_LEASE_TAKE, &o, &w, diag);
	free(w.agent);
	return r ? r : (int)w.rows;
}

/* lease_claim as a LEASE_TAKE that releases nothing: each claimed row's id and due time to @cb */
struct claim_fwd {
	vg_store_lease_cb cb;
	void *arg;
};

static int claim_fwd(void *arg, const struct vg_store_agent *a)
{
	const struct claim_fwd *f = arg;

	return f->cb(f->arg, a->id, a->next_due);
}

static int c_lease_claim(void *ctx, const char *owner, int64_t now, int64_t lease_ms,
			 unsigned int max, vg_store_lease_cb cb, void *arg, struct vg_diag *diag)
{
	struct claim_fwd f = { cb, arg };

	return c_lease_take(ctx, NULL, 0, owner, now, lease_ms, max, claim_fwd, &f, diag);
}

static int c_verifier_beat(void *ctx, const struct vg_store_verifier *v, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };

	sipc_put_verifier(&o, v);
	return call(ctx, SIPC_VERIFIER_BEAT, &o, NULL, diag);
}

static int c_verifier_list(void *ctx, vg_store_verifier_cb cb, void *arg, struct vg_diag *diag)
{
	struct ipc_out o = { 0 };
	struct want w = { .row = SIPC_VERIFIER, .many = true, .wcb = cb, .arg = arg };

	return call(ctx, SIPC_VERIFIER_LIST, &o, &w, diag);
}

static void c_set_timeout(void *ctx, unsigned int ms)
{
	struct ipc_out o = { 0 };

	ipc_put_u32(&o, ms);
	call(ctx, SIPC_SET_TIMEOUT, &o, NULL, NULL);
}

static void c_close(void *ctx)
{
	struct sclient *c = ctx;

	close(c->ch.fd);	/* the store process closes the database and exits */
	while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
		;
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static const struct vg_store_ops ipc_ops = {
	.agent_put = c_agent_put,
	.agent_get = c_agent_get,
	.agent_find = c_agent_find,
	.agent_del = c_agent_del,
	.agent_list = c_agent_list,
	.lease_take = c_lease_take,
	.agent_states = c_agent_states,
	.agent_update = c_agent_update,
	.policy_put = c_policy_put,
	.policy_get = c_policy_get,
	.policy_del = c_policy_del,
	.verdict_add = c_verdict_add,
	.verdict_list = c_verdict_list,
	.lease_claim = c_lease_claim,
	.agent_due = c_agent_due,
	.lease_release = c_lease_release,
	.lease_drop = c_lease_drop,
	.verifier_beat = c_verifier_beat,
	.verifier_list = c_verifier_list,
	.push = c_push,
	.close = c_close,
	.set_timeout = c_set_timeout,
};

void vg_privsep_forget_url(char *url)
{
	struct vg_store_span sp[8];
	size_t n = vg_store_url_secrets(url, sp, sizeof(sp) / sizeof(sp[0]));
	char *pw = getenv("PGPASSWORD");

	for (size_t i = 0; i < n && i < sizeof(sp) / sizeof(sp[0]); i++)
		memset(url + sp[i].off, '*', sp[i].len);
	if (pw)
		OPENSSL_cleanse(pw, strlen(pw));
	unsetenv("PGPASSWORD");
}

int vg_privsep_store_open(char *url, struct vg_store **ret, struct vg_diag *diag)
{
	struct sclient *c = calloc(1, sizeof(*c));
	struct vg_store *s = calloc(1, sizeof(*s));
	struct ipc_in in;
	int fd, r;

	if (!c || !s) {
		free(c);
		free(s);
		return vg_diag_set(diag, -ENOMEM, "store process");
	}
	c->pid = proc_start(&vf_procs[VF_PROC_STORE], &fd);
	if (c->pid == 0)
		store_proc_main(fd, url);
	if (c->pid < 0) {
		r = (int)c->pid;
		free(c);
		free(s);
		return vg_diag_set(diag, r, "store process: %s", strerror(-r));
	}
	sipc_chan(&c->ch, fd, WHO);
	pthread_mutex_init(&c->lock, NULL);
	if (ipc_recv(&c->ch, &in) < 0)
		gone();
	if (in.type != SIPC_DONE)
		ipc_die(WHO, "not the result of the open");
	r = sipc_get_done(&in, diag);
	ipc_end(&in);
	ipc_in_free(&in);
	vg_privsep_forget_url(url);
	if (r < 0) {
		c_close(c);
		free(s);
		return r;
	}
	s->ops = &ipc_ops;
	s->ctx = c;
	*ret = s;
	return 0;
}

uint64_t vg_privsep_store_requests(struct vg_store *s)
{
	struct sclient *c = s->ctx;
	uint64_t n;

	if (s->ops != &ipc_ops)
		return 0;
	pthread_mutex_lock(&c->lock);
	n = c->requests;
	pthread_mutex_unlock(&c->lock);
	return n;
}
