"""A render started before its benchmark exists: `spatialgap render --ids-file -` loads the renderer
(an interpreter, matplotlib, fonts: about a CPU-second) while the sweep checks itself and builds,
when a core is still partly idle, then reads the ids of the maps to draw once the build is done.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

from scoring.errors import SpatialGapError

STOP_S = 30.0  # for an interrupted render to shut its worker pool down


class EarlyRender:
    """``render(ids)`` hands the ids over and waits for the maps; ``stop()`` ends it unused."""

    def __init__(self, bench: Path, jobs: int):
        self.bench = bench
        cmd = [sys.executable, "-m", "scoring", "render", "--bench", str(bench), "--jobs", str(jobs)]
        # the map runs go editing first (scoring.evaluate.sweep.plan_runs)
        cmd += ["--no-progress", "--modalities", "image", "--edit-first", "--ids-file", "-"]
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )

    async def render(self, ids: list[str]) -> None:
        """Draw the maps of ``ids`` (none: the render ends at once), raising its error if it fails."""
        from scoring.evaluate.cities import say  # cities imports this module

        if ids:
            say(f"rendering {len(ids)} maps of {self.bench} in the background")
        data = "\n".join(ids).encode("ascii")
        try:
            # in a thread: the event loop keeps sending requests meanwhile
            _, err = await asyncio.to_thread(self._proc.communicate, data)
        finally:
            if self._proc.poll() is None:  # interrupted: let the render shut its pool down
                self._interrupt()
        if self._proc.returncode != 0:
            tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise SpatialGapError(f"rendering the maps of {self.bench} failed: {tail[0]}")

    def stop(self) -> None:
        """End the render: unused, it reads no ids and exits; drawing, it is interrupted."""
        if self._proc.poll() is not None:
            return
        try:
            self._proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        try:
            self._proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            self._interrupt()

    def _interrupt(self) -> None:
        self._proc.send_signal(signal.SIGINT)
        try:
            self._proc.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
