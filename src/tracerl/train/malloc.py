"""Give large freed blocks back to the OS, so peak RSS stays near the live peak.

glibc's malloc serves a block of 128 KB or more from its own mapping, but raises that
threshold to the size of any such block freed (up to 32 MB): after the first update,
the activation tensors of later ones come from the heap, whose freed space is kept and
fragments as batch shapes change from step to step. Fixing the threshold stops the
raise. Measured on SmolLM2-135M (LoRA on a bfloat16 base, 1,536-position micro-batches,
three RL updates of different shapes, one process each; docs/memory.md):

- default: peak 4.24 GB, RSS held at 4.0 GB between updates;
- fixed at 1 MB: peak 3.8 GB, RSS back to 1.8-2.0 GB, but 5x the system time (every
  activation tensor its own mapping: page faults and unmaps on each update);
- fixed at 4 MB: peak 3.88 GB, system time as the default's (7 s in 3 updates).

4 MB it is: the big blocks (logit chunks, an update's larger activations) are mapped,
the many small ones stay in the heap. The tiny policy's tensors are all smaller.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3
"""mallopt's parameter number (malloc.h)."""

MMAP_THRESHOLD = 4 << 20


def map_large_blocks(threshold: int = MMAP_THRESHOLD) -> bool:
    """Serve allocations of `threshold` bytes or more from their own mappings, returned
    to the OS when freed. False where the C library is not glibc (nothing changes)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):  # musl, macOS: no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_THRESHOLD, threshold))
