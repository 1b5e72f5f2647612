// app.js - the script of vigil-verifier's operators' page (docs/web.md):
// lists the agents by state with their last failure, each one's history on
// demand, filters by state and policy, and asks again every few seconds.
//
// Read-only, and it asks only what a read token may: GET /v1/agents and
// GET /v1/agents/ID/history. The token comes from the operator (the form)
// or from the URL fragment (#token=...: never sent to any server, removed
// from the address bar at once) and is kept in this tab's sessionStorage,
// nowhere else; it is sent only to this origin, as a bearer token.
//
// Everything an agent's host controls (failure messages, paths, digests,
// URLs) is attacker-controlled: it is put in the page with textContent
// (or as an attribute value through dataset), never parsed as HTML. The
// Content-Security-Policy (verifier/web.h) allows no inline script anyway.
'use strict';

(function () {
	const KEY = 'vigil-read-token';
	const POLL_MS = 5000;
	const TOKEN_RE = /^vg1\.[0-9a-f]{8}\.[0-9a-f]{64}$/;
	// the order agents are listed in: what needs an operator first
	const ORDER = ['failed', 'unreachable', 'late', 'registered', 'trusted'];
	const NO_POLICY = ' ';		// not a policy name ([A-Za-z0-9._-]): "none"

	let token = null;
	let agents = [];
	let timer = null;
	const opened = new Set();	// ids whose history is shown
	const histories = new Map();	// id -> [verdict] or an Error

	const $ = (id) => document.getElementById(id);

	function el(tag, cls, text) {
		const e = document.createElement(tag);
		if (cls)
			e.className = cls;
		if (text !== undefined && text !== null)
			e.textContent = String(text);
		return e;
	}

	function when(t) {
		if (typeof t !== 'number' || t <= 0)
			return '\u2014';
		return new Date(t * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
	}

	// an agent's place in the lists: its state, or "late" beside it (a
	// silent push agent, "stale", with them: neither is plainly trusted)
	function rank(a) {
		const i = ORDER.indexOf((a.late || a.stale) && a.state === 'trusted' ? 'late' : a.state);
		return i < 0 ? ORDER.length : i;
	}

	function setStatus(text, error) {
		const s = $('status');
		s.textContent = text;
		s.classList.toggle('error', !!error);
	}

	class AuthError extends Error {}

	async function api(path) {
		const r = await fetch(path, {
			headers: { 'Authorization': 'Bearer ' + token, 'Accept': 'application/json' },
			cache: 'no-store', credentials: 'omit', redirect: 'error', referrerPolicy: 'no-referrer',
		});
		if (r.status === 401)
			throw new AuthError('the verifier refused this token (401)');
		if (r.status === 403)
			throw new AuthError('this token may not read (403)');
		if (!r.ok)
			throw new Error(path + ': HTTP ' + r.status);
		return r.json();
	}

	// ---- filters ----

	function filterState() { return $('f-state').value; }
	function filterPolicy() { return $('f-policy').value; }

	function matches(a) {
		const s = filterState(), p = filterPolicy();
		if (s === 'late' ? !a.late : s && a.state !== s)
			return false;
		if (p === NO_POLICY ? a.policy !== '' : p && a.policy !== p)
			return false;
		return true;
	}

	// options of a <select>: "all" and @values (kept: the current choice)
	function fillSelect(sel, values, label) {
		const cur = sel.value;
		const want = [''].concat(values);
		if (cur && !want.includes(cur))
			want.push(cur);
		const have = Array.from(sel.options).map((o) => o.value);
		if (have.length === want.length && have.every((v, i) => v === want[i]))
			return;
		sel.replaceChildren();
		for (const v of want)
			sel.append(new Option(v === '' ? 'all' : label(v), v));
		sel.value = cur;
	}

	function fillFilters() {
		const states = ORDER.slice();
		const policies = [];
		for (const a of agents) {
			if (!states.includes(a.state))
				states.push(a.state);
			const p = a.policy === '' ? NO_POLICY : a.policy;
			if (!policies.includes(p))
				policies.push(p);
		}
		policies.sort();
		fillSelect($('f-state'), states, (v) => v);
		fillSelect($('f-policy'), policies, (v) => (v === NO_POLICY ? '(none)' : v));
	}

	function summary() {
		const counts = new Map(ORDER.map((s) => [s, 0]));
		for (const a of agents) {
			counts.set(a.state, (counts.get(a.state) || 0) + 1);
			if (a.late)
				counts.set('late', counts.get('late') + 1);
		}
		const box = $('summary');
		box.replaceChildren();
		const all = el('button', null, 'all ' + agents.length);
		all.type = 'button';
		all.dataset.state = '';
		box.append(all);
		for (const [s, n] of counts) {
			const b = el('button', null, s + ' ' + n);
			b.type = 'button';
			b.dataset.state = s;
			box.append(b);
		}
		for (const b of box.children) {
			b.setAttribute('aria-pressed', String(b.dataset.state === filterState()));
			b.addEventListener('click', () => {
				$('f-state').value = b.dataset.state;
				render();
			});
		}
	}

	// ---- the table ----

	function historyRow(a) {
		const tr = el('tr', 'history-row');
		const td = el('td');
		td.colSpan = 7;
		tr.append(td);
		const h = histories.get(a.id);
		if (h === undefined) {
			td.textContent = 'loading the history\u2026';
		} else if (h instanceof Error) {
			td.textContent = 'history: ' + h.message;
		} else if (h.length === 0) {
			td.textContent = 'no failure recorded';
		} else {
			const t = el('table', 'history');
			const head = el('tr');
			for (const c of ['Time', 'Failure', 'Entry', 'Path', 'Digest', 'Message'])
				head.append(el('th', null, c));
			t.append(el('thead'));
			t.tHead.append(head);
			const body = el('tbody');
			for (const v of h) {
				const r = el('tr', 'verdict');
				r.append(el('td', 'time', when(v.time)), el('td', 'failure', v.failure),
					 el('td', 'entry', v.entry), el('td', 'path', v.path),
					 el('td', 'digest', v.digest), el('td', 'msg', v.message));
				body.append(r);
			}
			t.append(body);
			td.append(t);
		}
		return tr;
	}

	function agentRow(a) {
		const tr = el('tr', 'agent');
		tr.dataset.id = a.id;
		tr.dataset.state = a.state;
		tr.dataset.late = String(!!a.late);
		tr.dataset.stale = String(!!a.stale);
		tr.dataset.policy = a.policy;
		const idc = el('td', 'id');
		const b = el('button', 'expand', a.id);
		b.type = 'button';
		b.title = a.url;
		b.setAttribute('aria-expanded', String(opened.has(a.id)));
		b.addEventListener('click', () => toggle(a.id));
		idc.append(b);
		const st = el('td', 'state-cell');
		const known = ['trusted', 'failed', 'unreachable', 'registered'].includes(a.state);
		st.append(el('span', 'state state-' + (known ? a.state : 'other'), a.state));
		if (a.late)
			st.append(el('span', 'late', 'late ' + Math.round(a.late_ms / 1000) + ' s'));
		if (a.stale)
			st.append(el('span', 'late', 'stale ' + Math.round(a.silent_ms / 1000) + ' s'));
		tr.append(idc, st, el('td', 'policy', a.policy || '(none)'),
			  el('td', 'failure', a.last_failure), el('td', 'msg', a.last_message),
			  el('td', 'seen', when(a.last_seen)), el('td', 'rounds', a.rounds));
		return tr;
	}

	function render() {
		fillFilters();
		summary();
		const shown = agents.filter(matches).sort((x, y) => rank(x) - rank(y) ||
			(x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
		const rows = [];
		for (const a of shown) {
			rows.push(agentRow(a));
			if (opened.has(a.id))
				rows.push(historyRow(a));
		}
		$('rows').replaceChildren(...rows);
		$('empty').hidden = shown.length > 0;
		document.body.dataset.shown = String(shown.length);
	}

	async function loadHistory(id) {
		try {
			const h = await api('/v1/agents/' + encodeURIComponent(id) + '/history');
			histories.set(id, Array.isArray(h.history) ? h.history : []);
		} catch (e) {
			if (e instanceof AuthError)
				throw e;
			histories.set(id, e);
		}
	}

	function toggle(id) {
		if (opened.has(id)) {
			opened.delete(id);
			render();
			return;
		}
		opened.add(id);
		render();
		loadHistory(id).then(render, failed);
	}

	// ---- polling ----

	function failed(e) {
		if (e instanceof AuthError) {
			forget(e.message);
			return;
		}
		setStatus('not updated: ' + e.message, true);
	}

	async function poll() {
		timer = null;
		try {
			const o = await api('/v1/agents');
			agents = Array.isArray(o.agents) ? o.agents : [];
			for (const id of opened)
				await loadHistory(id);
			render();
			document.body.dataset.loaded = 'true';
			setStatus(agents.length + ' agents, updated ' +
				  new Date().toISOString().slice(11, 19) + ' UTC' +
				  (o.auth === 'disabled' ? ' \u2014 WARNING: this verifier runs without authentication' : ''),
				  o.auth === 'disabled');
		} catch (e) {
			failed(e);
			if (e instanceof AuthError)
				return;
		}
		if (token)
			timer = setTimeout(poll, POLL_MS);
	}

	function start() {
		$('login').hidden = true;
		$('main').hidden = false;
		setStatus('loading');
		poll();
	}

	function forget(why) {
		token = null;
		sessionStorage.removeItem(KEY);
		if (timer)
			clearTimeout(timer);
		timer = null;
		agents = [];
		histories.clear();
		$('rows').replaceChildren();
		$('main').hidden = true;
		$('login').hidden = false;
		$('login-msg').textContent = why ||
			'A read token of this verifier (docs/api-auth.md) shows its agents.';
		setStatus(why ? 'signed out' : 'no token', !!why);
		$('token').focus();
	}

	function use(t) {
		t = t.trim();
		if (!TOKEN_RE.test(t)) {
			forget('that is not a vigil token (vg1.ID.SECRET)');
			return;
		}
		token = t;
		sessionStorage.setItem(KEY, t);
		start();
	}

	function init() {
		const f = new URLSearchParams(location.hash.slice(1));
		const given = f.get('token');
		if (f.has('token')) {
			f.delete('token');
			const rest = f.toString();
			history.replaceState(null, '', location.pathname + location.search + (rest ? '#' + rest : ''));
		}
		// a link may choose the filters: #state=failed&policy=NAME
		fillFilters();
		for (const [k, id] of [['state', 'f-state'], ['policy', 'f-policy']]) {
			const v = f.get(k);
			if (v !== null) {
				const sel = $(id);
				if (!Array.from(sel.options).some((o) => o.value === v))
					sel.append(new Option(v, v));
				sel.value = v;
			}
		}
		$('f-state').addEventListener('change', render);
		$('f-policy').addEventListener('change', render);
		$('forget').addEventListener('click', () => forget(null));
		$('login').addEventListener('submit', (ev) => {
			ev.preventDefault();
			const i = $('token');
			const t = i.value;
			i.value = '';
			use(t);
		});
		const saved = given !== null ? given : sessionStorage.getItem(KEY);
		if (saved)
			use(saved);
		else
			forget(null);
	}

	init();
})();
