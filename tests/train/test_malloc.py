"""The mmap threshold is set in a fresh process, and large freed blocks leave RSS."""

import subprocess
import sys

SCRIPT = """
import ctypes, sys
from tracerl.train.malloc import map_large_blocks

def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096

if sys.argv[1] == "1":
    assert map_large_blocks()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
# an 8 MB block, freed, then many 2 MB blocks: glibc raises its threshold to 8 MB on
# the first free unless it is fixed, and the 2 MB blocks then stay in the heap
big = libc.malloc(8 << 20); ctypes.memset(big, 1, 8 << 20); libc.free(big)
blocks = [libc.malloc(2 << 20) for _ in range(100)]
for b in blocks:
    ctypes.memset(b, 1, 2 << 20)
before = rss()
for b in blocks[::2]:
    libc.free(b)
print(before - rss())
"""


def _freed(fix: bool) -> int:
    out = subprocess.run([sys.executable, "-c", SCRIPT, "1" if fix else "0"], check=True,
                         capture_output=True, text=True)
    return int(out.stdout)


def test_freed_large_blocks_go_back_to_the_os_only_with_the_fixed_threshold():
    assert _freed(True) >= 90 << 20  # the 50 freed 2 MB blocks
    assert _freed(False) < 10 << 20  # the heap keeps them
