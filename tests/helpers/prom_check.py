#!/usr/bin/python3
"""prom_check.py FILE [--require NAME]... [--expect 'SAMPLE VALUE']...

Checks that FILE ('-': stdin) is valid Prometheus text exposition format
0.0.4 as vigild and vigil-verifier write it, and prints one line per
family. Exit 0 valid, 1 invalid (the first problem on stderr).

Checked: every line is a # HELP, a # TYPE, another comment or a sample;
metric and label names are valid; label values are quoted with only the
escapes \\\\, \\" and \\n; values are floats (or +Inf, -Inf, NaN); every
sample belongs to a family with a # TYPE given before its first sample,
a family's samples are contiguous and its TYPE and HELP come at most
once; counter families are named NAME_total and never negative; a
histogram's samples are NAME_bucket{le=...}, NAME_sum and NAME_count,
the buckets of each label set are cumulative in increasing le, end with
le="+Inf", and that bucket equals NAME_count. --require NAME: a family
NAME must be present. --expect 'NAME{LABELS} VALUE': that exact sample
line must be present.
"""
import math
import re
import sys

NAME = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*$')
LABEL = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]*$')
TYPES = ('counter', 'gauge', 'histogram', 'summary', 'untyped')


class Bad(Exception):
    pass


def parse_value(s, where):
    if s in ('+Inf', 'Inf'):
        return math.inf
    if s == '-Inf':
        return -math.inf
    if s == 'NaN':
        return math.nan
    try:
        return float(s)
    except ValueError:
        raise Bad('%s: value %r is not a float' % (where, s))


def parse_labels(s, i, where):
    """s[i] == '{'. Return (dict, index after '}')."""
    labels = {}
    i += 1
    while True:
        if s[i:i + 1] == '}':
            return labels, i + 1
        m = re.match(r'([^=]*)="', s[i:])
        if not m:
            raise Bad('%s: malformed label at %r' % (where, s[i:]))
        name = m.group(1)
        if not LABEL.match(name) or name.startswith('__'):
            raise Bad('%s: invalid label name %r' % (where, name))
        if name in labels:
            raise Bad('%s: label %r twice' % (where, name))
        i += m.end()
        v = []
        while True:
            if i >= len(s):
                raise Bad('%s: unterminated label value' % where)
            c = s[i]
            if c == '\\':
                n = s[i + 1:i + 2]
                if n not in ('\\', '"', 'n'):
                    raise Bad('%s: invalid escape \\%s' % (where, n))
                v.append('\n' if n == 'n' else n)
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == '\n':
                raise Bad('%s: raw newline in a label value' % where)
            else:
                v.append(c)
                i += 1
        labels[name] = ''.join(v)
        if s[i:i + 1] == ',':
            i += 1
        elif s[i:i + 1] != '}':
            raise Bad('%s: expected , or } after a label' % where)


def family_of(name, types):
    """The family a sample name belongs to."""
    if name in types:
        return name
    for suf in ('_bucket', '_sum', '_count'):
        if name.endswith(suf) and types.get(name[:-len(suf)]) in ('histogram', 'summary'):
            return name[:-len(suf)]
    return None


def check(text, require=(), expect=()):
    types, helps, fams = {}, {}, []
    seen_samples = set()
    samples = []       # (family, name, labels, value)
    lines = text.split('\n')
    if text and not text.endswith('\n'):
        raise Bad('the last line has no newline')
    for no, line in enumerate(lines[:-1] if text.endswith('\n') else lines, 1):
        where = 'line %d' % no
        if not line.strip():
            continue
        if line.startswith('#'):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ('HELP', 'TYPE'):
                name = parts[2]
                if not NAME.match(name):
                    raise Bad('%s: invalid metric name %r' % (where, name))
                if parts[1] == 'TYPE':
                    t = parts[3] if len(parts) > 3 else ''
                    if t not in TYPES:
                        raise Bad('%s: unknown type %r' % (where, t))
                    if name in types:
                        raise Bad('%s: a second TYPE for %s' % (where, name))
                    if name in seen_samples:
                        raise Bad('%s: TYPE for %s after its samples' % (where, name))
                    types[name] = t
                else:
                    if name in helps:
                        raise Bad('%s: a second HELP for %s' % (where, name))
                    helps[name] = parts[3] if len(parts) > 3 else ''
            continue
        m = re.match(r'[^{\s]+', line)
        name = m.group(0) if m else ''
        if not NAME.match(name):
            raise Bad('%s: invalid metric name %r' % (where, name))
        i = len(name)
        labels = {}
        if line[i:i + 1] == '{':
            labels, i = parse_labels(line, i, where)
        rest = line[i:].split()
        if len(rest) not in (1, 2) or not line[i:i + 1].isspace():
            raise Bad('%s: expected NAME{LABELS} VALUE [TIMESTAMP]' % where)
        value = parse_value(rest[0], where)
        fam = family_of(name, types)
        if fam is None:
            raise Bad('%s: sample %s has no # TYPE before it' % (where, name))
        if fams and fams[-1] != fam and fam in fams:
            raise Bad('%s: samples of %s are not together' % (where, fam))
        if not fams or fams[-1] != fam:
            fams.append(fam)
        seen_samples.add(fam)
        key = (name, tuple(sorted(labels.items())))
        if key in {(s[1], tuple(sorted(s[2].items()))) for s in samples}:
            raise Bad('%s: sample %s%s given twice' % (where, name, labels))
        samples.append((fam, name, labels, value, line))
    for fam in fams:
        t = types[fam]
        mine = [s for s in samples if s[0] == fam]
        if t == 'counter':
            if not fam.endswith('_total'):
                raise Bad('counter %s is not named NAME_total' % fam)
            for s in mine:
                if s[1] != fam:
                    raise Bad('counter %s has a sample %s' % (fam, s[1]))
                if not s[3] >= 0:
                    raise Bad('counter %s is negative or NaN' % s[4])
        if t == 'histogram':
            groups = {}
            for s in mine:
                if s[1] == fam:
                    raise Bad('histogram %s has a plain sample' % fam)
                lab = dict(s[2])
                le = lab.pop('le', None)
                key = tuple(sorted(lab.items()))
                g = groups.setdefault(key, {'buckets': [], 'sum': None, 'count': None})
                if s[1] == fam + '_bucket':
                    if le is None:
                        raise Bad('%s has no le label' % s[4])
                    g['buckets'].append((parse_value(le, s[4]), s[3]))
                elif le is not None:
                    raise Bad('%s: le on a non-bucket sample' % s[4])
                elif s[1] == fam + '_sum':
                    g['sum'] = s[3]
                else:
                    g['count'] = s[3]
            for key, g in groups.items():
                b = g['buckets']
                if not b:
                    raise Bad('histogram %s%s has no bucket' % (fam, dict(key)))
                if g['sum'] is None or g['count'] is None:
                    raise Bad('histogram %s%s lacks _sum or _count' % (fam, dict(key)))
                for (l1, v1), (l2, v2) in zip(b, b[1:]):
                    if not l2 > l1:
                        raise Bad('histogram %s: le %g after %g' % (fam, l2, l1))
                    if v2 < v1:
                        raise Bad('histogram %s: bucket le=%g (%g) below le=%g (%g): '
                                  'not cumulative' % (fam, l2, v2, l1, v1))
                if b[-1][0] != math.inf:
                    raise Bad('histogram %s: the last bucket is not le="+Inf"' % fam)
                if b[-1][1] != g['count']:
                    raise Bad('histogram %s: +Inf bucket %g != _count %g'
                              % (fam, b[-1][1], g['count']))
    for r in require:
        if r not in fams:
            raise Bad('no family %s' % r)
    got = {s[4].strip() for s in samples}
    for e in expect:
        if e not in got:
            raise Bad('no sample line %r' % e)
    return fams, types, samples


def main(argv):
    require, expect, path = [], [], None
    i = 1
    while i < len(argv):
        if argv[i] == '--require':
            require.append(argv[i + 1])
            i += 2
        elif argv[i] == '--expect':
            expect.append(argv[i + 1])
            i += 2
        else:
            path = argv[i]
            i += 1
    text = sys.stdin.read() if path in (None, '-') else open(path).read()
    try:
        fams, types, samples = check(text, require, expect)
    except Bad as e:
        print('prom_check: %s: %s' % (path or '-', e), file=sys.stderr)
        return 1
    for f in fams:
        print('%s %s %d' % (f, types[f], sum(1 for s in samples if s[0] == f)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
