"""How fast this machine is right now: a fixed CPU workload that uses none of the package.

A virtual machine's speed drifts with what its host runs: on the 2-core development VM the same
`make run` took 56 s in one hour and 90 s in another, with 1.5x the CPU-seconds and nothing else
running in the VM. Timing this probe beside a figure says which phase the figure was measured
in: compare figures taken at similar probe times.

    .venv/bin/python tests/perf/speed_probe.py   # prints JSON
"""

from __future__ import annotations

import json
import time
import zlib


def _python_loop(n: int = 300_000) -> int:
    """Interpreter work of the kind the pipeline's Python is made of: calls, dicts, strings."""
    table: dict[str, int] = {}
    total = 0
    for i in range(n):
        key = f"k{i % 997}"
        table[key] = table.get(key, 0) + i
        total += len(key)
    return total + len(table)


# Flat runs with some texture, like a map's rows: the deflate work is of the render's kind.
_BUFFER = bytes((i // 517 * 7 + (i % 3)) & 0xFF for i in range(1 << 21)) * 2


def _deflate() -> int:
    return len(zlib.compress(_BUFFER, 1))


def _memory() -> int:
    """Copies of a buffer larger than the cache, as a map's 9 MB canvas is copied and scanned: a
    neighbour on the host competing for memory bandwidth slows this more than the loops above."""
    big = bytearray(_BUFFER) * 8  # 32 MiB
    return sum(len(bytes(big)) for _ in range(4))


PIECES = {"python_ms": _python_loop, "deflate_ms": _deflate, "memory_ms": _memory}


def probe(rounds: int = 5) -> dict[str, float]:
    """Best of `rounds` milliseconds for each piece (best: the machine's speed, not its noise)."""
    best = dict.fromkeys(PIECES, float("inf"))
    for _ in range(rounds):
        for name, work in PIECES.items():
            t0 = time.perf_counter()
            work()
            best[name] = min(best[name], 1000 * (time.perf_counter() - t0))
    return {k: round(v, 1) for k, v in best.items()}


if __name__ == "__main__":
    print(json.dumps(probe()))
