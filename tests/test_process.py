"""keep_freed_memory: a process that keeps freed large buffers stops faulting their pages in again."""

import subprocess
import sys

PROBE = """
import resource, sys
if sys.argv[1] == "keep":
    from scoring.process import keep_freed_memory
    keep_freed_memory()
import numpy as np
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for i in range(60):
    a = np.ones(1536 * 1536 * 3 + i * 4096, dtype=np.uint8)  # a map's pixels, its size varying
    del a
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_freed_map_buffers_are_reused_without_page_faults():
    default, kept = _faults("default"), _faults("keep")
    # by default each 7 MB buffer is mapped afresh (hundreds of page faults each time, how many
    # depends on the kernel's huge pages and the load); kept, it is reused: far fewer faults, and
    # at most a handful per buffer
    assert kept < max(default / 5, 60 * 20), (default, kept)
