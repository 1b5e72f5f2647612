#!/usr/bin/env python3
"""bench/unlabel.py DIR - remove security.ima and security.evm from every
regular file under DIR, so that the next `vigil label` labels a fresh tree
(bench/tree's vigil-label-fresh). Not timed."""
import os
import sys

for top, dirs, files in os.walk(sys.argv[1]):
    for f in files:
        p = os.path.join(top, f)
        for name in ("security.ima", "security.evm"):
            try:
                os.removexattr(p, name, follow_symlinks=False)
            except OSError:
                pass
