#!/usr/bin/python3
# tests/helpers/journal-recv.py SOCKET LOG - a journal's native socket for tests:
# binds an AF_UNIX datagram socket at SOCKET and appends each entry that
# arrives (systemd's native protocol: NAME=VALUE lines, or NAME, a newline,
# a 64-bit little-endian length and the bytes) to LOG as one JSON object
# per line, values decoded as UTF-8 with escapes. Refuses a malformed
# datagram loudly (a line {"_malformed": ...}). Stopped by its PID (SIGTERM),
# it removes SOCKET; SIGSTOP makes it a journal that does not read.
import json
import os
import signal
import socket
import struct
import sys

path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.bind(path)
signal.signal(signal.SIGTERM, lambda *_: (os.unlink(path), sys.exit(0)))


def parse(b):
    out, i = {}, 0
    while i < len(b):
        nl = b.index(b"\n", i)
        line = b[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            i = nl + 1
        else:
            k = line
            (n,) = struct.unpack("<Q", b[nl + 1:nl + 9])
            v = b[nl + 9:nl + 9 + n]
            if b[nl + 9 + n:nl + 10 + n] != b"\n":
                raise ValueError("binary field not ended by a newline")
            i = nl + 10 + n
        out[k.decode()] = v.decode("utf-8", "backslashreplace")
    return out


with open(log, "a", buffering=1) as f:
    while True:
        data = s.recv(1 << 16)
        try:
            f.write(json.dumps(parse(data)) + "\n")
        except (ValueError, struct.error) as e:
            f.write(json.dumps({"_malformed": str(e)}) + "\n")
