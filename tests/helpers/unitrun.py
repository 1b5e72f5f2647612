#!/usr/bin/python3
"""tests/helpers/unitrun.py - what t0095-package.sh needs of a systemd unit
without systemd: the command line of its ExecStart=, its Environment= and
the directories systemd would create for it, and a $NOTIFY_SOCKET receiver.

  unitrun.py exec UNIT [KEY]
                            ExecStart= (or KEY=, e.g. ExecReload) of
                            [Service], one NUL-terminated argument each, as
                            systemd splits it (quotes, line continuations,
                            the %-specifiers of a system unit, $VAR/${VAR}
                            from Environment=, $MAINPID from ours)
  unitrun.py env UNIT       Environment= assignments, one per line
  unitrun.py dirs UNIT      the absolute paths of RuntimeDirectory=,
                            StateDirectory=, LogsDirectory=, CacheDirectory=
                            and ConfigurationDirectory=, one per line
  unitrun.py user UNIT      User= (empty line if none)
  unitrun.py has-reload UNIT  exit 0 if it has an ExecReload= line
  unitrun.py notify SOCKET SECONDS
                            bind a datagram socket at SOCKET, print each
                            message received, exit 0 at the first READY=1,
                            1 after SECONDS without one

It reads units, it does not judge them: systemd-analyze verify does that.
"""
import os
import re
import shlex
import socket
import sys
import time

DIRS = {
    "RuntimeDirectory": "/run",
    "StateDirectory": "/var/lib",
    "CacheDirectory": "/var/cache",
    "LogsDirectory": "/var/log",
    "ConfigurationDirectory": "/etc",
}
# the specifiers of a system unit that a command line may use (systemd.unit(5))
SPECIFIERS = {"t": "/run", "S": "/var/lib", "C": "/var/cache", "L": "/var/log",
              "E": "/etc", "T": "/tmp", "V": "/var/tmp", "%": "%"}


def service_section(path):
    """[(key, value)] of [Service], continuation lines joined, comments dropped."""
    out, section, cur = [], None, None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if cur is not None:
                if line.lstrip().startswith(("#", ";")):
                    continue
                cur += " " + line.strip()
            else:
                s = line.strip()
                if not s or s.startswith(("#", ";")):
                    continue
                if s.startswith("["):
                    section = s
                    continue
                cur = s
            if cur.endswith("\\"):
                cur = cur[:-1].rstrip()
                continue
            if section == "[Service]" and "=" in cur:
                k, v = cur.split("=", 1)
                out.append((k.strip(), v.strip()))
            cur = None
    return out


def specifiers(s, unit):
    def one(m):
        c = m.group(1)
        if c in SPECIFIERS:
            return SPECIFIERS[c]
        if c == "N":
            return os.path.basename(unit).rsplit(".", 1)[0]
        sys.exit(f"unitrun.py: {unit}: specifier %{c} is not handled here")
    return re.sub(r"%(.)", one, s)


def environment(kv, unit):
    env = {}
    for k, v in kv:
        if k == "Environment":
            for a in shlex.split(specifiers(v, unit)):
                name, _, val = a.partition("=")
                env[name] = val
    return env


def exec_line(kv, unit, key="ExecStart"):
    lines = [v for k, v in kv if k == key]
    if len(lines) != 1:
        sys.exit(f"unitrun.py: {unit}: {len(lines)} {key}= lines, expected 1")
    line = lines[0].lstrip("-@:+!")
    env = environment(kv, unit)
    if "MAINPID" in os.environ:
        env["MAINPID"] = os.environ["MAINPID"]
    argv = []
    for a in shlex.split(specifiers(line, unit)):
        a = re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), ""), a)
        if re.fullmatch(r"\$\w+", a):		# $VAR alone: split on spaces
            argv += env.get(a[1:], "").split()
            continue
        argv.append(a)
    return argv


def notify(path, seconds):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    os.chmod(path, 0o666)
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return 1
        s.settimeout(left)
        try:
            msg = s.recv(4096).decode("utf-8", "replace")
        except socket.timeout:
            return 1
        print(msg.replace("\n", " "), flush=True)
        if "READY=1" in msg.split("\n"):
            return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "notify":
        return notify(argv[2], float(argv[3]))
    if len(argv) == 4 and argv[1] == "exec":
        for a in exec_line(service_section(argv[2]), argv[2], argv[3]):
            sys.stdout.write(a + "\0")
        return 0
    if len(argv) != 3:
        sys.exit(__doc__)
    cmd, unit = argv[1], argv[2]
    kv = service_section(unit)
    if cmd == "exec":
        for a in exec_line(kv, unit):
            sys.stdout.write(a + "\0")
    elif cmd == "env":
        for k, v in environment(kv, unit).items():
            print(f"{k}={v}")
    elif cmd == "dirs":
        for k, v in kv:
            if k in DIRS:
                for d in specifiers(v, unit).split():
                    print(DIRS[k] + "/" + d.split(":")[0])
    elif cmd == "user":
        print(next((v for k, v in kv if k == "User"), ""))
    elif cmd == "has-reload":
        return 0 if any(k == "ExecReload" for k, v in kv) else 1
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
