#!/usr/bin/python3
"""web_check.py CHROMIUM BASE READ_TOKEN PNG_DIR > result.json

Drives headless Chromium over its DevTools protocol (--remote-debugging-pipe:
no port, no python3-websocket) on the verifier's operators' page (t0515):

  1. /ui/#token=READ: waits until the agents are shown, then compares rows
     with GET /v1/agents asked at the same time (again for up to 15 s:
     the page asks every 5 s, and a state may change meanwhile), checks the
     hostile failure message is shown as text, sets the state and policy
     filters through their <select> and reads the rows again, opens a
     failed agent's history; screenshots into PNG_DIR;
  2. a new tab without a token (the login form, no data request), and one
     with a well-formed token the verifier does not know (401: back to the
     form, token forgotten).

Every request the page made is recorded (Network domain): the result says
whether each data request carried exactly the read token, in the header
only. Prints one JSON object of named results; the shell test checks them.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import base64
import urllib.request


class Browser:
    def __init__(self, exe, profile):
        cmd_r, self.cmd_w = os.pipe()
        self.res_r, res_w = os.pipe()

        def child():
            a, b = os.dup(cmd_r), os.dup(res_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.p = subprocess.Popen(
            [exe, '--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe',
             '--user-data-dir=' + profile, '--window-size=1280,900', '--no-first-run',
             '--no-default-browser-check', '--disable-extensions', '--disable-sync',
             '--disable-background-networking', '--disable-component-update',
             '--mute-audio', 'about:blank'],
            pass_fds=(3, 4), preexec_fn=child, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(profile, 'chromium.err'), 'w'))
        os.close(cmd_r)
        os.close(res_w)
        self.buf = b''
        self.n = 0
        self.events = []

    def _read(self, deadline):
        while b'\0' not in self.buf:
            if time.time() > deadline:
                raise TimeoutError('no answer from chromium')
            chunk = os.read(self.res_r, 65536)
            if not chunk:
                raise EOFError('chromium closed its pipe')
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=30):
        self.n += 1
        m = {'id': self.n, 'method': method, 'params': params or {}}
        if session:
            m['sessionId'] = session
        os.write(self.cmd_w, json.dumps(m).encode() + b'\0')
        deadline = time.time() + timeout
        while True:
            r = self._read(deadline)
            if r.get('id') == self.n:
                if 'error' in r:
                    raise RuntimeError('%s: %s' % (method, r['error']))
                return r.get('result', {})
            self.events.append(r)

    def tab(self, url):
        t = self.send('Target.createTarget', {'url': 'about:blank'})['targetId']
        s = self.send('Target.attachToTarget', {'targetId': t, 'flatten': True})['sessionId']
        for d in ('Network.enable', 'Page.enable', 'Runtime.enable', 'Log.enable'):
            self.send(d, session=s)
        self.send('Page.navigate', {'url': url}, session=s)
        return s

    def js(self, s, expr):
        r = self.send('Runtime.evaluate', {'expression': expr, 'returnByValue': True,
                                           'awaitPromise': True}, session=s)
        if 'exceptionDetails' in r:
            raise RuntimeError('%s: %s' % (expr[:60], r['exceptionDetails']))
        return r['result'].get('value')

    def until(self, s, expr, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            # before the page is there (document.body null), not yet
            v = self.js(s, '(() => { try { return (%s); } catch (e) { return null; } })()' % expr)
            if v:
                return v
            time.sleep(0.2)
        return None

    def shot(self, s, path):
        png = self.send('Page.captureScreenshot', {'format': 'png', 'captureBeyondViewport': True},
                        session=s)['data']
        with open(path, 'wb') as f:
            f.write(base64.b64decode(png))

    def close(self):
        try:
            self.send('Browser.close', timeout=5)
        except Exception:
            pass
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


ROWS = '''JSON.stringify(Array.from(document.querySelectorAll('#rows tr.agent')).map(r => ({
  id: r.dataset.id, state: r.dataset.state, late: r.dataset.late === 'true',
  policy: r.dataset.policy, failure: r.querySelector('td.failure').textContent,
  message: r.querySelector('td.msg').textContent})))'''


def rows(b, s):
    return json.loads(b.js(s, ROWS))


def select(b, s, sel, value):
    b.js(s, '(() => { const e = document.getElementById(%s); e.value = %s; '
            'e.dispatchEvent(new Event("change")); return e.value; })()'
         % (json.dumps(sel), json.dumps(value)))


def api_agents(base, token):
    req = urllib.request.Request(base + '/v1/agents',
                                 headers={'Authorization': 'Bearer ' + token})
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.load(r)['agents']


# an unreachable agent's message names the last round's nonce: not compared
def msg(m):
    return re.sub(r'nonce=[0-9a-f]+', 'nonce=N', m)


def agree(b, s, base, token, keep, timeout=15):
    """(rows shown, API agents kept by @keep) until the two agree, or the last ones."""
    deadline = time.time() + timeout
    while True:
        shown = rows(b, s)
        api = api_agents(base, token)
        want = sorted((a['id'], a['state'], a['late'], a['policy'], a['last_failure'],
                       msg(a['last_message'])) for a in api if keep(a))
        got = sorted((r['id'], r['state'], r['late'], r['policy'], r['failure'], msg(r['message']))
                     for r in shown)
        if want == got or time.time() > deadline:
            return want == got, shown, api
        time.sleep(0.5)


def main(argv):
    exe, base, token, pngdir = argv[1:5]
    res = {}
    profile = tempfile.mkdtemp(prefix='chromium-')
    b = Browser(exe, profile)
    try:
        s = b.tab(base + '/ui/#token=' + token)
        res['loaded'] = bool(b.until(s, 'document.body.dataset.loaded === "true"', 40))
        res['rows_match_api'], shown, api = agree(b, s, base, token, lambda a: True)
        res['rows'] = shown
        res['api'] = api
        res['summary'] = b.js(s, 'document.getElementById("summary").textContent')
        hostile = [r for r in shown if '<img' in r['message']]
        res['hostile_as_text'] = bool(hostile) and all('onerror=' in r['message'] for r in hostile)
        res['no_img_element'] = b.js(s, 'document.images.length') == 0
        res['not_pwned'] = b.js(s, '!document.body.dataset.pwned && !window.pwned') is True
        res['url_without_token'] = token not in b.js(s, 'location.href')
        res['session_storage'] = b.js(s, 'sessionStorage.getItem("vigil-read-token")') == token
        res['no_local_storage_or_cookie'] = b.js(s, 'localStorage.length === 0 && '
                                                    'document.cookie === ""') is True
        b.shot(s, os.path.join(pngdir, 'agents.png'))

        # filters, through the <select>s as an operator would
        for st in sorted({a['state'] for a in api}) + ['late']:
            select(b, s, 'f-state', st)
            res['filter_state_' + st] = agree(
                b, s, base, token, lambda a: a['late'] if st == 'late' else a['state'] == st)[0]
        select(b, s, 'f-state', 'failed')
        b.shot(s, os.path.join(pngdir, 'agents-failed.png'))
        select(b, s, 'f-state', '')
        for pol in sorted({a['policy'] for a in api if a['policy']}):
            select(b, s, 'f-policy', pol)
            res['filter_policy_' + pol] = agree(b, s, base, token,
                                                lambda a: a['policy'] == pol)[0]
        select(b, s, 'f-policy', '')

        # a failed agent's history, opened by its button
        failed = sorted(a['id'] for a in api if a['state'] == 'failed')
        if failed:
            b.js(s, 'document.querySelector(%s).click()' %
                 json.dumps('#rows tr.agent[data-id="%s"] button.expand' % failed[0]))
            h = b.until(s, '''(() => { const v = document.querySelectorAll('tr.history-row tr.verdict');
                return v.length ? JSON.stringify(Array.from(v).map(r => ({
                  failure: r.querySelector('td.failure').textContent,
                  path: r.querySelector('td.path').textContent,
                  message: r.querySelector('td.msg').textContent}))) : null; })()''')
            res['history'] = json.loads(h) if h else []
            res['history_hostile_as_text'] = any('<img' in v['path'] for v in res['history'])
            res['no_img_element_after_history'] = b.js(s, 'document.images.length') == 0
            b.shot(s, os.path.join(pngdir, 'agent-history.png'))
        # live: it asks again by itself (POLL_MS)
        n0 = sum(1 for e in b.events if e.get('method') == 'Network.requestWillBeSent'
                 and e['params']['request']['url'].endswith('/v1/agents'))
        time.sleep(6)
        b.js(s, '1')
        n1 = sum(1 for e in b.events if e.get('method') == 'Network.requestWillBeSent'
                 and e['params']['request']['url'].endswith('/v1/agents'))
        res['polls_again'] = n1 > n0

        # without a token: the form, and no data request
        s2 = b.tab(base + '/ui/')
        res['no_token_form'] = bool(b.until(s2, '!document.getElementById("login").hidden && '
                                               'document.getElementById("main").hidden'))
        # a well-formed token the verifier does not know: 401, back to the form
        bad = 'vg1.00000000.' + '0' * 64
        s3 = b.tab(base + '/ui/#token=' + bad)
        res['bad_token_form'] = bool(b.until(s3, '!document.getElementById("login").hidden && '
                                                'document.getElementById("login-msg").textContent'
                                                '.includes("401")'))
        res['bad_token_forgotten'] = b.js(s3, 'sessionStorage.getItem("vigil-read-token")') is None
        b.shot(s3, os.path.join(pngdir, 'login-refused.png'))

        # every request: same origin; data requests with the token in the header only
        reqs = [e['params'] for e in b.events if e.get('method') == 'Network.requestWillBeSent']
        res['requests'] = len(reqs)
        data = [r for r in reqs if '/v1/' in r['request']['url']]
        res['data_requests'] = len(data)
        res['data_requests_from_tab2'] = sum(1 for e in b.events
                                             if e.get('method') == 'Network.requestWillBeSent'
                                             and e.get('sessionId') == s2
                                             and '/v1/' in e['params']['request']['url'])
        res['only_this_origin'] = all(r['request']['url'].startswith(base + '/') or
                                      r['request']['url'].startswith('about:')
                                      for r in reqs)
        res['token_never_in_url'] = not any(token in r['request']['url'] for r in reqs)
        res['data_with_read_token'] = all(
            r['request']['headers'].get('Authorization') == 'Bearer ' + token
            for r in data if r['request']['headers'].get('Authorization') != 'Bearer ' + bad)
        res['csp_violations'] = [e['params']['entry']['text'] for e in b.events
                                 if e.get('method') == 'Log.entryAdded'
                                 and 'Content Security Policy' in e['params']['entry'].get('text', '')]
        res['js_exceptions'] = [e['params']['exceptionDetails'].get('text', '')
                                for e in b.events if e.get('method') == 'Runtime.exceptionThrown']
    finally:
        b.close()
    json.dump(res, sys.stdout, indent=1)
    print()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
