// SPDX-License-Identifier: MIT
/*
 * store_proc.c - the store process: forked by vg_privsep_store_open, it
 * alone opens the database (the --db URL with its password, the SQLite
 * file, the libpq connection) and answers the store_ipc.h requests of the
 * network process, one at a time, with the real backend (store.h). It
 * parses nothing but those messages; one that breaks the protocol ends it
 * (ipc.h), and the network process, whose every store call then fails,
 * with it. It ends when the network process closes the socket.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_ipc.h"
#include "store_proc.h"

#define WHO "store process"

/* one request at a time: the rows live here, not on the stack */
static struct vg_store_agent a1, a2;
static struct vg_store_verdict vd;
static struct vg_store_verifier vr;
static struct vg_store_push_req push;
static char name[SIPC_NAME_MAX + 1];

static void reply(struct ipc_chan *ch, uint32_t t, struct ipc_out *o)
{
	if (ipc_send(ch, t, o, -1) < 0)
		_exit(0);	/* the network process is gone */
}

static void done(struct ipc_chan *ch, int r, const struct vg_diag *d)
{
	struct ipc_out o = { 0 };

	sipc_put_done(&o, r, d);
	reply(ch, SIPC_DONE, &o);
}

static int send_agent(void *arg, const struct vg_store_agent *a)
{
	struct ipc_out o = { 0 };

	sipc_put_agent(&o, a);
	reply(arg, SIPC_AGENT, &o);
	return 0;
}

static int send_verdict(void *arg, const struct vg_store_verdict *v)
{
	struct ipc_out o = { 0 };

	sipc_put_verdict(&o, v);
	reply(arg, SIPC_VERDICT, &o);
	return 0;
}

static int send_due(void *arg, const struct vg_store_due *a)
{
	struct ipc_out o = { 0 };

	sipc_put_due(&o, a);
	reply(arg, SIPC_DUE, &o);
	return 0;
}

static int send_verifier(void *arg, const struct vg_store_verifier *v)
{
	struct ipc_out o = { 0 };

	sipc_put_verifier(&o, v);
	reply(arg, SIPC_VERIFIER, &o);
	return 0;
}

static void answer(struct ipc_chan *ch, struct vg_store *s, struct ipc_in *in)
{
	struct vg_diag d = { 0 };
	struct ipc_out o = { 0 };
	char *doc = NULL;
	size_t len = 0;
	const uint8_t *p;
	uint64_t max;
	int r;

	switch (in->type) {
	case SIPC_AGENT_PUT:
		sipc_get_agent(in, &a1);
		ipc_end(in);
		r = vg_store_agent_put(s, &a1, &d);
		break;
	case SIPC_AGENT_GET:
		ipc_get_name(in, name, sizeof(name));
		ipc_end(in);
		r = vg_store_agent_get(s, name, &a1, &d);
		if (r == 0)
			send_agent(ch, &a1);
		break;
	case SIPC_AGENT_FIND: {
		uint32_t key = ipc_get_u32(in);

		p = ipc_get_bytes(in, SIPC_COL_MAX, &len);
		ipc_get_name(in, name, sizeof(name));
		ipc_end(in);
		/*
		 * the backend's own lookup: vg_store_agent_find() in the verifier
		 * made an EK its key id already (store_client.c sends that)
		 */
		r = key < VG_STORE_KEY__COUNT ?
		    s->ops->agent_find(s->ctx, key, p, len, name, &a1, &d) :
		    vg_diag_set(&d, -EINVAL, "store: agent find: key %u", key);
		if (r == 0)
			send_agent(ch, &a1);
		break;
	}
	case SIPC_AGENT_DUE: {
		int64_t before = ipc_get_i64(in);

		ipc_end(in);
		r = vg_store_agent_due(s, before, send_due, ch, &d);
		break;
	}
	case SIPC_PUSH: {
		uint32_t verb = ipc_get_u32(in);

		sipc_get_push(in, &push);
		ipc_end(in);
		r = vg_store_push(s, verb, &push, &d);
		if (r == 0) {
			sipc_put_push(&o, &push);
			reply(ch, SIPC_PUSH_ROW, &o);
		}
		break;
	}
	case SIPC_AGENT_DEL:
		ipc_get_name(in, name, sizeof(name));
		ipc_end(in);
		r = vg_store_agent_del(s, name, &d);
		break;
	case SIPC_AGENT_LIST:
		ipc_end(in);
		r = vg_store_agent_list(s, send_agent, ch, &d);
		break;
	case SIPC_AGENT_UPDATE:
		sipc_get_agent(in, &a1);
		sipc_get_agent(in, &a2);
		ipc_end(in);
		r = vg_store_agent_update(s, &a1, &a2, &d);
		break;
	case SIPC_POLICY_PUT:
		ipc_get_name(in, name, sizeof(name));
		p = ipc_get_bytes(in, SIPC_DOC_MAX, &len);
		ipc_end(in);
		r = vg_store_policy_put(s, name, (const char *)p, len, &d);
		break;
	case SIPC_POLICY_GET:
		ipc_get_name(in, name, sizeof(name));
		ipc_end(in);
		r = vg_store_policy_get(s, name, &doc, &len, &d);
		if (r == 0) {
			ipc_put_tail(&o, doc, len);
			reply(ch, SIPC_POLICY, &o);
			free(doc);
		}
		break;
	case SIPC_POLICY_DEL:
		ipc_get_name(in, name, sizeof(name));
		ipc_end(in);
		r = vg_store_policy_del(s, name, &d);
		break;
	case SIPC_VERDICT_ADD:
		ipc_get_name(in, name, sizeof(name));
		sipc_get_verdict(in, &vd);
		ipc_end(in);
		r = vg_store_verdict_add(s, name, &vd, &d);
		break;
	case SIPC_VERDICT_LIST:
		ipc_get_name(in, name, sizeof(name));
		max = (uint64_t)ipc_get_i64(in);
		ipc_end(in);
		r = vg_store_verdict_list(s, name, (size_t)max, send_verdict, ch, &d);
		break;
	case SIPC_SET_TIMEOUT:
		vg_store_set_timeout(s, ipc_get_u32(in));
		ipc_end(in);
		r = 0;
		break;
	case SIPC_LEASE_RELEASE: {
		int64_t due;

		ipc_get_name(in, name, sizeof(name));
		ipc_get_name(in, a1.lease_owner, sizeof(a1.lease_owner));
		due = ipc_get_i64(in);
		ipc_end(in);
		r = vg_store_lease_release(s, name, a1.lease_owner, due, &d);
		break;
	}
	case SIPC_LEASE_DROP: {
		int64_t until;

		ipc_get_name(in, name, sizeof(name));
		ipc_get_name(in, a1.lease_owner, sizeof(a1.lease_owner));
		until = ipc_get_i64(in);
		ipc_end(in);
		r = vg_store_lease_drop(s, name, a1.lease_owner, until, &d);
		break;
	}
	case SIPC_AGENT_STATES: {
		uint64_t n[VG_STORE_STATES];

		ipc_end(in);
		r = vg_store_agent_states(s, n, &d);
		if (r == 0) {
			for (int i = 0; i < VG_STORE_STATES; i++)
				ipc_put_i64(&o, (int64_t)n[i]);
			reply(ch, SIPC_STATES, &o);
		}
		break;
	}
	case SIPC_LEASE_TAKE: {
		int64_t due, now, lease;
		uint32_t n;

		ipc_get_name(in, name, sizeof(name));
		due = ipc_get_i64(in);
		ipc_get_name(in, a1.lease_owner, sizeof(a1.lease_owner));
		now = ipc_get_i64(in);
		lease = ipc_get_i64(in);
		n = ipc_get_u32(in);
		ipc_end(in);
		r = vg_store_lease_take(s, name, due, a1.lease_owner, now, lease, n, send_agent, ch,
					&d);
		if (r > 0)
			r = 0;		/* the count is the rows sent */
		break;
	}
	case SIPC_VERIFIER_BEAT:
		sipc_get_verifier(in, &vr);
		ipc_end(in);
		r = vg_store_verifier_beat(s, &vr, &d);
		break;
	case SIPC_VERIFIER_LIST:
		ipc_end(in);
		r = vg_store_verifier_list(s, send_verifier, ch, &d);
		break;
	default:
		ipc_die(WHO, "not a request");
	}
	done(ch, r, &d);
}

_Noreturn void store_proc_main(int fd, const char *url)
{
	struct vg_diag d = { 0 };
	struct vg_store *s = NULL;
	struct ipc_chan ch;
	int r;

	/*
	 * set up by proc_start (vf_procs[VF_PROC_STORE]): named, nothing of the
	 * parent's but stdio, ended with it; a ^C or a TERM to the group is the
	 * network process's to handle: it closes us
	 */
	sipc_chan(&ch, fd, WHO);
	r = vg_store_open(url, &s, &d);
	done(&ch, r < 0 ? r : 0, &d);
	if (r < 0)
		_exit(0);
	for (;;) {
		struct ipc_in in;

		r = ipc_recv(&ch, &in);
		if (r < 0)
			break;		/* closed: the network process is done */
		answer(&ch, s, &in);
		ipc_in_free(&in);
	}
	vg_store_close(s);
	_exit(0);
}
