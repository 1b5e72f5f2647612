#!/usr/bin/python3
# tests/helpers/fuse-server.py MOUNTPOINT FILE [hang] [allow_other] - a FUSE filesystem for the
# tests, spoken raw on /dev/fuse (no libfuse): mounted by fusermount3 (the
# setuid helper any user may run, through its _FUSE_COMMFD protocol), it
# holds one read-only file, "prog", whose bytes are FILE's. With "hang" it
# answers INIT and then nothing at all: every lookup, stat and open of it
# waits for ever, as a hostile user's server can. With "allow_other" others
# (root) may reach it, which /etc/fuse.conf must allow (user_allow_other);
# without, its user alone can, root included. It prints "mounted" once
# the filesystem is there and runs until unmounted or killed.
import array
import errno
import os
import socket
import struct
import subprocess
import sys

mnt, path = sys.argv[1], sys.argv[2]
hang = "hang" in sys.argv[3:]
opts = "fsname=vigiltest,subtype=vigiltest" + (",allow_other" if "allow_other" in sys.argv[3:] else "")
data = open(path, "rb").read()

# fusermount3 hands the /dev/fuse descriptor back over a socket
ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
os.set_inheritable(theirs.fileno(), True)
env = dict(os.environ, _FUSE_COMMFD=str(theirs.fileno()))
p = subprocess.Popen(["fusermount3", "-o", opts, "--", mnt],
                     env=env, pass_fds=(theirs.fileno(),))
theirs.close()
fds = array.array("i")
msg, anc, _, _ = ours.recvmsg(1, socket.CMSG_SPACE(4))
for level, kind, payload in anc:
    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
        fds.frombytes(payload[:4])
p.wait()
if not fds:
    sys.exit("fusermount3 gave no /dev/fuse descriptor")
fuse = fds[0]

ROOT, PROG = 1, 2
LOOKUP, FORGET, GETATTR, OPEN, READ, STATFS, RELEASE, GETXATTR, LISTXATTR, FLUSH, INIT = \
    1, 2, 3, 14, 15, 17, 18, 22, 23, 25, 26
OPENDIR, READDIR, RELEASEDIR, ACCESS, INTERRUPT, DESTROY, BATCH_FORGET = 27, 28, 29, 34, 36, 38, 42


def attr(ino):
    if ino == ROOT:
        mode, size, nlink = 0o040555, 0, 2
    else:
        mode, size, nlink = 0o100755, len(data), 1
    # ino size blocks atime mtime ctime | nsec x3 mode nlink uid gid rdev blksize flags
    return struct.pack("<QQQQQQIIIIIIIIII", ino, size, (size + 511) // 512, 1, 1, 1, 0, 0, 0,
                       mode, nlink, os.getuid(), os.getgid(), 0, 4096, 0)


def reply(unique, err=0, body=b""):
    os.write(fuse, struct.pack("<IiQ", 16 + len(body), -err, unique) + body)


announced = False
while True:
    try:
        req = os.read(fuse, 1 << 20)
    except OSError as e:
        if e.errno in (errno.ENODEV,):
            break	# unmounted
        if e.errno == errno.EINTR:
            continue
        raise
    length, opcode, unique, nodeid, uid, gid, pid = struct.unpack("<IIQQIII", req[:36])
    body = req[40:length]
    if opcode == INIT:
        major, minor, readahead, flags = struct.unpack("<IIII", body[:16])
        out = struct.pack("<IIIIHHIIHHII", 7, 31, readahead, 0, 16, 12, 65536, 1, 0, 0, 0, 0)
        reply(unique, 0, out + b"\0" * (64 - len(out)))
        if not announced:
            print("mounted", flush=True)
            announced = True
        continue
    if hang or opcode in (FORGET, BATCH_FORGET, INTERRUPT):
        continue	# hang: nothing else is ever answered
    if opcode == DESTROY:
        reply(unique)
        break
    if opcode == LOOKUP:
        name = body.split(b"\0", 1)[0]
        if nodeid == ROOT and name == b"prog":
            reply(unique, 0, struct.pack("<QQQQII", PROG, 1, 1, 1, 0, 0) + attr(PROG))
        else:
            reply(unique, errno.ENOENT)
    elif opcode == GETATTR:
        reply(unique, 0, struct.pack("<QII", 1, 0, 0) + attr(nodeid))
    elif opcode in (OPEN, OPENDIR):
        reply(unique, 0, struct.pack("<QII", 0, 0, 0))
    elif opcode == READ:
        fh, offset, size = struct.unpack("<QQI", body[:20])
        reply(unique, 0, data[offset:offset + size])
    elif opcode in (RELEASE, RELEASEDIR, FLUSH, ACCESS):
        reply(unique)
    elif opcode == READDIR:
        reply(unique, 0, b"")
    elif opcode == STATFS:
        reply(unique, 0, struct.pack("<QQQQQIIII", 1, 0, 0, 1, 0, 4096, 255, 4096, 0) + b"\0" * 24)
    elif opcode in (GETXATTR, LISTXATTR):
        reply(unique, errno.ENODATA if opcode == GETXATTR else 0,
              struct.pack("<II", 0, 0) if opcode == LISTXATTR else b"")
    else:
        reply(unique, errno.ENOSYS)
