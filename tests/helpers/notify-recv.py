#!/usr/bin/python3
# tests/helpers/notify-recv.py SOCKET LOG - a service manager's notify socket for
# tests: binds an AF_UNIX datagram socket at SOCKET and appends each
# datagram that arrives to LOG, one line each (its newlines as ' | ').
# Runs nothing itself; stopped by its PID (SIGTERM), it removes SOCKET.
import os
import signal
import socket
import sys

path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
signal.signal(signal.SIGTERM, lambda *_: (os.unlink(path), sys.exit(0)))
with open(log, "a", buffering=1) as out:
    out.write("")
    while True:
        data = s.recv(4096)
        out.write(data.decode("utf-8", "replace").replace("\n", " | ") + "\n")
