#!/usr/bin/python3
"""json_validate.py SCHEMA [--lines] FILE

Validates FILE ('-': stdin) against the JSON Schema SCHEMA (draft 2020-12,
python3-jsonschema): the whole document, or with --lines every non-empty
line as one document (JSON lines). Exit 0 valid, 1 invalid or not JSON
(the first error on stderr, with the line), 2 usage.
"""
import json
import sys

import jsonschema


def main(argv):
    args = [a for a in argv[1:] if a != '--lines']
    lines = '--lines' in argv[1:]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    schema = json.load(open(args[0]))
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    text = sys.stdin.read() if args[1] == '-' else open(args[1]).read()
    docs = [(i + 1, l) for i, l in enumerate(text.split('\n')) if l.strip()] if lines \
        else [(1, text)]
    if not docs:
        print('json_validate: %s: no document' % args[1], file=sys.stderr)
        return 1
    for no, d in docs:
        try:
            doc = json.loads(d)
        except ValueError as e:
            print('json_validate: %s:%d: not JSON: %s' % (args[1], no, e), file=sys.stderr)
            return 1
        errs = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
        if errs:
            e = errs[0]
            print('json_validate: %s:%d: %s (at %s)' % (args[1], no, e.message,
                  '/'.join(str(p) for p in e.absolute_path) or 'top'), file=sys.stderr)
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
