#!/usr/bin/env python3
"""api_idle_cost.py - what an idle kept-alive API connection costs a
vigil-verifier: N connections opened, one request answered on each, then
left idle; the verifier's memory (RSS and PSS of all its processes, from
/proc) before and after, per connection.

  bench/api_idle_cost.py PIDS URL N [--ca CA.pem] [--cert C.pem --key K.pem]
                         [--token FILE] [--path /metrics]

PIDS: the verifier's processes, comma-separated (network, store, key).
URL: http://HOST:PORT or https://HOST:PORT (loopback). Each connection
comes from its own source address in 127/8 (127.1.x.y), so --api-max-conn
(per address) does not cap it; run the verifier with --api-connections
above N and --api-idle-timeout above the time this takes.
"""
import argparse
import os
import socket
import ssl
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "helpers"))
import keepalive  # noqa: E402  (tests/helpers/keepalive.py: the one HTTP answer reader)


def mem(pids):
    rss = pss = 0
    for p in pids:
        with open("/proc/%s/smaps_rollup" % p) as f:
            for line in f:
                k, v = line.split(":", 1)
                if k == "Rss":
                    rss += int(v.split()[0])
                elif k == "Pss":
                    pss += int(v.split()[0])
    return rss, pss


def answer(s):
    """The status line of one answer (t0539's reader); closed: OSError."""
    line = keepalive.answer(s)
    if line is None:
        raise OSError("closed")
    return line


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pids")
    ap.add_argument("url")
    ap.add_argument("n", type=int)
    ap.add_argument("--ca")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--token")
    ap.add_argument("--path", default="/metrics")
    ap.add_argument("--hold", type=float, default=0, help="seconds to keep them open after")
    o = ap.parse_args()
    pids = o.pids.split(",")
    tls = o.url.startswith("https://")
    host, port = o.url.split("//", 1)[1].rsplit(":", 1)
    port = int(port)
    ctx = None
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(o.ca)
        if o.cert:
            ctx.load_cert_chain(o.cert, o.key)
    hdr = "Authorization: Bearer %s\r\n" % open(o.token).read().strip() if o.token else ""
    req = ("GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (o.path, host, hdr)).encode()
    time.sleep(1)
    r0, p0 = mem(pids)
    conns, status = [], {}
    for i in range(o.n):
        s = socket.socket()
        s.bind(("127.1.%d.%d" % (i // 250, i % 250 + 1), 0))
        s.connect((host, port))
        if ctx:
            s = ctx.wrap_socket(s, server_hostname=host)
        s.sendall(req)
        st = answer(s)
        status[st] = status.get(st, 0) + 1
        conns.append(s)
    time.sleep(2)
    r1, p1 = mem(pids)
    print("%d idle %s connections (answers: %s): RSS %d -> %d KiB (%.1f KiB each), "
          "PSS %d -> %d KiB (%.1f KiB each)" % (
              o.n, "TLS" if tls else "plain", ", ".join("%s %d" % (k, v)
                                                       for k, v in status.items()),
              r0, r1, (r1 - r0) / o.n, p0, p1, (p1 - p0) / o.n))
    sys.stdout.flush()
    time.sleep(o.hold)
    for s in conns:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
