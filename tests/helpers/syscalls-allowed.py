#!/usr/bin/python3
# syscalls-allowed.py UNIT TRACE...: the system calls the strace -f logs
# TRACE... show a program making that the unit's SystemCallFilter= lines
# would refuse (one a line; nothing when all are allowed). The groups
# (@system-service, ...) are expanded with `systemd-analyze syscall-filter`
# of this host's systemd, as systemd would expand them.
import re, subprocess, sys

groups, cur = {}, None
for line in subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    if line.startswith("@"):
        cur = line.split()[0]
        groups[cur] = []
    elif cur and line.strip() and not line.strip().startswith("#"):
        groups[cur].append(line.strip())

def expand(names, seen=()):
    out = set()
    for n in names:
        if n.startswith("@"):
            if n not in seen:
                out |= expand(groups.get(n, []), seen + (n,))
        else:
            out.add(n)
    return out

# as systemd reads the lines in order: the first one decides whether the
# filter is an allow list (then "~" lines take names out of it and later
# plain lines put them back) or a deny list (the other way round)
allow, deny = None, None
for line in open(sys.argv[1]):
    m = re.match(r"SystemCallFilter=(~?)(.*)", line.strip())
    if not m:
        continue
    names = expand(m.group(2).split())
    if allow is None and deny is None:
        if m.group(1):
            deny = names
        else:
            allow = names
    elif allow is not None:
        allow = allow - names if m.group(1) else allow | names
    else:
        deny = deny | names if m.group(1) else deny - names
used = set()
for t in sys.argv[2:]:
    for line in open(t, errors="replace"):
        m = re.match(r"(?:\d+\s+)?(?:<\.\.\. ([a-z_][a-z0-9_]*) resumed>|([a-z_][a-z0-9_]*)\()", line)
        if m:
            used.add(m.group(1) or m.group(2))
bad = sorted(s for s in used if (allow is not None and s not in allow) or (deny is not None and s in deny))
print("\n".join(bad))
