#!/usr/bin/env python3
"""Runs a command and says its peak resident memory on stderr last ("peak_rss_bytes N"), with
the command's own exit status: the high-water mark the kernel kept for it, however briefly."""
import resource
import subprocess
import sys

if len(sys.argv) < 2:
    sys.exit("usage: peak-rss.py COMMAND [ARGS...]")
try:
    rc = subprocess.run(sys.argv[1:]).returncode
except OSError as e:
    sys.exit(f"peak-rss.py: {sys.argv[1]}: {e}")
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"peak_rss_bytes {peak_kib * 1024}", file=sys.stderr)
sys.exit(rc if rc >= 0 else 128 - rc)
