#!/usr/bin/python3
"""openapi_check.py COMMAND OPENAPI.json ...

docs/openapi.json against the verifier (t0515):

  lint OPENAPI                 every $ref resolves, every operation has
                               x-vigil-role none|read|admin|agent, responses,
                               its path parameters declared; role none
                               and only it has "security": []
  routes OPENAPI ROUTES        the routes (METHOD PATH ROLE lines, as
                               tests/cli/api_routes prints the verifier's
                               table) equal the description's, both ways
  probe OPENAPI BASE READ ADMIN  every documented operation on the live
                               verifier: no credential 401 (none: 200),
                               read 403 where admin or agent is needed and not
                               401/403 where read is; a method the
                               description does not list 405; paths it
                               does not describe 404
  validate OPENAPI METHOD PATH_TEMPLATE STATUS FILE
                               FILE (an answer body) against the schema
                               the description gives that operation and
                               status (application/json)

Exit 0 when all holds, 1 with each difference on stderr, 2 usage.
"""
import json
import os
import sys
import urllib.error
import urllib.request

import jsonschema

METHODS = ('get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace')


def load(path):
    return json.load(open(path))


def operations(doc):
    for p, item in doc['paths'].items():
        for m, op in item.items():
            if m in METHODS:
                yield p, m, op, item


def pointer(doc, ref):
    node = doc
    for part in ref.lstrip('#/').split('/'):
        node = node[part.replace('~1', '/').replace('~0', '~')]
    return node


def lint(doc_path):
    doc = load(doc_path)
    errs = []
    base = os.path.dirname(os.path.abspath(doc_path))

    def refs(node, where):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == '$ref':
                    f, _, frag = v.partition('#')
                    try:
                        target = load(os.path.join(base, f)) if f else doc
                        if frag:
                            pointer(target, frag)
                    except (OSError, KeyError, ValueError) as e:
                        errs.append('%s: $ref %s does not resolve (%s)' % (where, v, e))
                else:
                    refs(v, where + '/' + k)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                refs(v, '%s/%d' % (where, i))
    refs(doc, '')
    if not doc.get('openapi', '').startswith('3.'):
        errs.append('not OpenAPI 3')
    for name in doc['components']['securitySchemes']:
        if not any(name in s for s in doc.get('security', [])):
            errs.append('security scheme %s is not used' % name)
    for p, m, op, item in operations(doc):
        what = '%s %s' % (m.upper(), p)
        role = op.get('x-vigil-role')
        if role not in ('none', 'read', 'admin', 'agent'):
            errs.append('%s: x-vigil-role is %r' % (what, role))
        if (role == 'none') != (op.get('security') == []):
            errs.append('%s: role %s, security %r' % (what, role, op.get('security')))
        if not op.get('responses'):
            errs.append('%s: no responses' % what)
        if role in ('read', 'admin', 'agent') and '401' not in op.get('responses', {}):
            errs.append('%s: no 401 answer documented' % what)
        if role in ('admin', 'agent') and '403' not in op.get('responses', {}):
            errs.append('%s: no 403 answer documented' % what)
        params = [pointer(doc, q['$ref']) if '$ref' in q else q
                  for q in item.get('parameters', []) + op.get('parameters', [])]
        names = {q['name'] for q in params if q.get('in') == 'path'}
        want = {s[1:-1] for s in p.split('/') if s.startswith('{')}
        if names != want:
            errs.append('%s: path parameters %s, declared %s' % (what, sorted(want), sorted(names)))
    return errs


def routes(doc_path, routes_path):
    doc = {(m.upper(), p, op.get('x-vigil-role')) for p, m, op, _ in operations(load(doc_path))}
    code = set()
    for line in open(routes_path):
        if line.strip():
            m, p, r = line.split()
            code.add((m, p, r))
    errs = ['the verifier serves %s %s (role %s), not in the description' % r
            for r in sorted(code - doc)]
    errs += ['the description has %s %s (role %s), the verifier does not' % r
             for r in sorted(doc - code)]
    return errs


def request(base, method, path, token=None, body=None):
    req = urllib.request.Request(base + path, method=method,
                                 data=body if body is not None else
                                 (b'{}' if method in ('POST', 'PUT') else None))
    if token:
        req.add_header('Authorization', 'Bearer ' + token)
    if req.data is not None:
        req.add_header('Content-Type', 'application/json')
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


# what a path template is probed with: agent host-ok, policy p (the test's)
def instance(p, agent, policy):
    return p.replace('{id}', agent).replace('{name}', policy)


def probe(doc_path, base, read, admin, agent='h-ok', policy='p'):
    doc = load(doc_path)
    errs = []
    documented = {}
    for p, m, op, _ in operations(doc):
        documented.setdefault(p, set()).add(m.upper())
        path = instance(p, agent, policy)
        role = op['x-vigil-role']
        what = '%s %s (%s)' % (m.upper(), path, role)
        st, _ = request(base, m.upper(), path)
        if role == 'none' and st != 200:
            errs.append('%s without a credential: %d, not 200' % (what, st))
        if role != 'none' and st != 401:
            errs.append('%s without a credential: %d, not 401' % (what, st))
        st, _ = request(base, m.upper(), path, 'vg1.00000000.' + '0' * 64)
        if role != 'none' and st != 401:
            errs.append('%s with an unknown token: %d, not 401' % (what, st))
        # the read token: refused on admin routes; never read routes (which change nothing)
        st, _ = request(base, m.upper(), path, read)
        if role in ('admin', 'agent') and st != 403:
            errs.append('%s with the read token: %d, not 403' % (what, st))
        if role in ('read', 'none') and st in (401, 403):
            errs.append('%s with the read token: %d' % (what, st))
        if role in ('read', 'none') and str(st) not in op['responses']:
            errs.append('%s with the read token: %d, not a documented answer' % (what, st))
    # methods not documented on a documented path: 405 (with admin, so authorisation passes)
    for p, ms in documented.items():
        for m in ('GET', 'POST', 'PUT', 'DELETE', 'PATCH'):
            if m in ms:
                continue
            st, _ = request(base, m, instance(p, agent, policy), admin)
            if st != 405:
                errs.append('%s %s (undocumented method): %d, not 405' % (m, p, st))
    # paths not documented: 404 (with a credential; 401 first without)
    for path in ('/', '/ui', '/ui/index.html', '/ui/x.js', '/v1', '/v1/agent', '/v2/agents',
                 '/v1/agents/%s/unknown' % agent, '/v1/policies', '/metrics/', '/v1/verify',
                 '/v1/agents/%s/history/x' % agent, '/openapi.json', '/v1/openapi.json'):
        st, _ = request(base, 'GET', path, read)
        if st != 404:
            errs.append('GET %s (undocumented): %d, not 404' % (path, st))
        st, _ = request(base, 'GET', path)
        if st != 401:
            errs.append('GET %s (undocumented) without a credential: %d, not 401' % (path, st))
    return errs


def validate(doc_path, method, template, status, file):
    doc = load(doc_path)
    op = doc['paths'][template][method.lower()]
    resp = op['responses'][status]
    if '$ref' in resp:
        resp = pointer(doc, resp['$ref'])
    schema = resp['content']['application/json']['schema']
    uri = 'file://' + os.path.abspath(doc_path)
    resolver = jsonschema.RefResolver(uri, doc)
    v = jsonschema.Draft202012Validator(schema, resolver=resolver)
    body = json.load(open(file))
    errs = sorted(v.iter_errors(body), key=lambda e: list(e.path))
    return ['%s %s %s: %s (at %s)' % (method, template, status, e.message,
                                      '/'.join(str(p) for p in e.absolute_path) or 'top')
            for e in errs[:5]]


def main(argv):
    cmds = {'lint': (lint, 1), 'routes': (routes, 2), 'probe': (probe, 4), 'validate': (validate, 5)}
    if len(argv) < 3 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    errs = cmds[argv[1]][0](*argv[2:])
    for e in errs:
        print('openapi_check: ' + e, file=sys.stderr)
    return 1 if errs else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
