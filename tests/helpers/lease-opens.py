#!/usr/bin/python3
# tests/helpers/lease-opens.py DIR N - what an unprivileged user does to hold up a
# fanotify listener with leases: makes N empty files of his own in DIR,
# takes a write lease on each (F_SETLEASE F_WRLCK) with SIGIO ignored, so
# that no lease is ever given back before fs.lease-break-time, then opens
# all N at once from N threads. Prints "opened X refused Y seconds S":
# against a listener that opened its event descriptors blocking, each open
# held the listener's read() for the break time (45 s).
import fcntl
import os
import signal
import sys
import threading
import time

F_SETLEASE = 1024
d, n = sys.argv[1], int(sys.argv[2])
signal.signal(signal.SIGIO, signal.SIG_IGN)
held = []
for i in range(n):
    p = os.path.join(d, "lease%d" % i)
    fd = os.open(p, os.O_RDONLY | os.O_CREAT, 0o644)
    # a listener's read lease on the new file (its own descriptor) refuses a
    # write lease: an open for writing breaks it, then the lease is taken
    for _ in range(200):
        try:
            fcntl.fcntl(fd, F_SETLEASE, fcntl.F_WRLCK)
            break
        except BlockingIOError:
            os.close(os.open(p, os.O_WRONLY))
            time.sleep(0.01)
    else:
        sys.exit("no write lease on %s" % p)
    held.append(fd)
res = {"opened": 0, "refused": 0}
lock = threading.Lock()


def one(i):
    try:
        os.close(os.open(os.path.join(d, "lease%d" % i), os.O_RDONLY))
        k = "opened"
    except OSError:
        k = "refused"
    with lock:
        res[k] += 1


t0 = time.monotonic()
ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("opened %d refused %d seconds %.2f" % (res["opened"], res["refused"], time.monotonic() - t0))
