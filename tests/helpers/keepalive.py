#!/usr/bin/env python3
"""keepalive.py - one HTTP/1.1 connection to a verifier's API, kept, for
t0539: what the verifier does with it between requests.

  keepalive.py PORT TOKEN_FILE idle S     GET /metrics, S seconds idle, GET again:
                                          prints "kept" (answered on the same
                                          connection) or "closed"
  keepalive.py PORT TOKEN_FILE partial S  GET /metrics, then the first half of a
                                          second request, S seconds: prints "cut"
                                          (the verifier closed it) or "open"

Plain HTTP on 127.0.0.1 only; the token is sent as a bearer token.
"""
import socket
import sys
import time


def request(tok):
    return ("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Authorization: Bearer %s\r\n\r\n" % tok).encode()


def answer(s):
    """One answer with a Content-Length. Return: its status line, None (closed)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            return None
        buf += d
    head, body = buf.split(b"\r\n\r\n", 1)
    n = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v.strip())
    while len(body) < n:
        d = s.recv(65536)
        if not d:
            return None
        body += d
    return head.split(b"\r\n")[0].decode()


def closed(s, wait):
    """True when the peer closes @s within @wait seconds."""
    s.settimeout(wait)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def main():
    port, tok, mode, secs = int(sys.argv[1]), open(sys.argv[2]).read().strip(), sys.argv[3], \
        float(sys.argv[4])
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(request(tok))
    if answer(s) is None:
        print("no answer")
        return 1
    if mode == "idle":
        time.sleep(secs)
        try:
            s.sendall(request(tok))
            st = answer(s)
        except OSError:
            st = None
        print("kept" if st else "closed")
        return 0
    half = request(tok)
    s.sendall(half[:len(half) // 2])
    print("cut" if closed(s, secs) else "open")
    return 0


if __name__ == "__main__":
    sys.exit(main())
