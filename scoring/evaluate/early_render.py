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
from scoring.evaluate.timing import wait_with_cpu

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
        self._sent = False
        self.cpu_seconds: float | None = None  # the render's and its workers', once it ended

    def send(self, ids: list[str]) -> None:
        """Hand the ids over (once; an empty list ends the render): it starts drawing now, while
        the sweep plans its runs. A render that died meanwhile reports in `render`."""
        if self._sent:
            return
        self._sent = True
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write("\n".join(ids).encode("ascii"))
            stdin.close()
        except BrokenPipeError:
            pass

    async def render(self, ids: list[str]) -> None:
        """Draw the maps of ``ids`` (none: the render ends at once), raising its error if it fails."""
        from scoring.evaluate.cities import say  # cities imports this module

        if ids:
            say(f"rendering {len(ids)} maps of {self.bench} in the background")
        self.send(ids)
        try:
            # in a thread: the event loop keeps sending requests meanwhile
            err = await asyncio.to_thread(self._wait)
        finally:
            if self._proc.poll() is None:  # interrupted: let the render shut its pool down
                self._interrupt()
        if self._proc.returncode != 0:
            tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            raise SpatialGapError(f"rendering the maps of {self.bench} failed: {tail[0]}")

    def _wait(self) -> bytes:
        """Its standard error, once it exits (its only pipe left: reading it to the end first
        cannot block the render)."""
        assert self._proc.stderr is not None
        err = self._proc.stderr.read()
        self.cpu_seconds = wait_with_cpu(self._proc)
        return err

    def stop(self) -> None:
        """End the render: unused, it reads no ids and exits; drawing, it is interrupted."""
        if self._proc.poll() is not None:
            return
        try:
            self._proc.stdin.close()  # type: ignore[union-attr]
        except (OSError, ValueError):  # already closed by `send`
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
