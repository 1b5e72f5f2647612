#!/usr/bin/env python3
"""tests/helpers/host-mirror.py ROOT: the archive as the rig's host sees it (issue 40).

mmdebstrap's customize hook (tests/lib-host.sh) runs this on the root it
made, with apt's lists of deb.debian.org and every .deb it installed kept:
a file: repository at ROOT/srv/mirror is made of the archive's own signed
InRelease, the Packages list it vouches for, and each installed .deb at
its pool path (the archive's layout), and apt is pointed at it. The .debs
then leave apt's cache, as on a host that apt has cleaned: README.Debian's
`vigil trust build --download` fetches them again, offline, through the
archive's real signature chain (a copy of part of a mirror is a mirror for
those packages: gpgv checks the same bytes).
"""
import glob
import os
import shutil
import sys


def stanzas(text):
    for block in text.split("\n\n"):
        f = {}
        for line in block.splitlines():
            if line and not line[0].isspace() and ":" in line:
                k, v = line.split(":", 1)
                f[k] = v.strip()
        if "Package" in f:
            yield f


def main(root):
    lists = os.path.join(root, "var/lib/apt/lists")
    cache = os.path.join(root, "var/cache/apt/archives")
    mirror = os.path.join(root, "srv/mirror")
    inrel = glob.glob(os.path.join(lists, "*_dists_bookworm_InRelease"))
    pkgs = glob.glob(os.path.join(lists, "*_dists_bookworm_main_binary-amd64_Packages"))
    if len(inrel) != 1 or len(pkgs) != 1:
        sys.exit(f"host-mirror: {lists}: no single bookworm InRelease and Packages list")
    bindir = os.path.join(mirror, "dists/bookworm/main/binary-amd64")
    os.makedirs(bindir)
    shutil.copyfile(inrel[0], os.path.join(mirror, "dists/bookworm/InRelease"))
    shutil.copyfile(pkgs[0], os.path.join(bindir, "Packages"))
    placed = 0
    for s in stanzas(open(pkgs[0], encoding="utf-8").read()):
        name = f"{s['Package']}_{s['Version'].replace(':', '%3a')}_{s['Architecture']}.deb"
        src = os.path.join(cache, name)
        if not os.path.exists(src):
            continue
        dst = os.path.join(mirror, s["Filename"])
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.move(src, dst)
        placed += 1
    left = glob.glob(os.path.join(cache, "*.deb"))
    if placed < 50 or left:
        sys.exit(f"host-mirror: {placed} .debs placed, {len(left)} not in the list: {left[:5]}")
    for f in glob.glob(os.path.join(lists, "*")):
        if os.path.isfile(f) and not f.endswith("/lock"):
            os.unlink(f)
    with open(os.path.join(root, "etc/apt/sources.list"), "w") as out:
        out.write("deb file:/srv/mirror bookworm main\n")
    # the mirror has the list uncompressed only (its .xz is not kept): apt
    # asks for no compressed one
    with open(os.path.join(root, "etc/apt/apt.conf.d/50rig-mirror"), "w") as out:
        out.write('Acquire::CompressionTypes::Order { "uncompressed"; };\n')
        for c in ("xz", "gz", "bz2", "lzma", "lz4", "zstd"):
            out.write(f'Acquire::CompressionTypes::{c} "false";\n')
    print(f"host-mirror: {placed} .debs at their pool paths in /srv/mirror")


if __name__ == "__main__":
    main(sys.argv[1])
