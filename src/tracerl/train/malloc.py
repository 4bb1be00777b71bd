"""Give freed activation memory back to the OS, so peak RSS is the live peak.

glibc's malloc serves a block of 128 KB or more from its own mapping, but raises that
threshold to the size of any such block freed (up to 32 MB): after the first update,
the activation tensors of later ones (a few MB each) come from the heap, whose freed
space is kept and fragments as batch shapes change from step to step. Measured on
SmolLM2-135M (LoRA, 1,536-position micro-batches, RL updates of varying shapes): RSS
held at 4.7 GB between updates and peaked at 4.9 GB with the default; with a fixed 1 MB
threshold RSS fell back to 1.8-2.0 GB after each update and peaked at 3.9 GB
(docs/benchmarks.md, "Pretrained models"). Fixing the threshold also stops the dynamic
raise. Blocks under 1 MB (every tensor of the tiny policy's batches) are unaffected.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3
"""mallopt's parameter number (malloc.h)."""

MMAP_THRESHOLD = 1 << 20


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
