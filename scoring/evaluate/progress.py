"""One live display for a whole sweep (tqdm): a bar over every sample of every run with its ETA,
one bar per run in progress (done / total, retries, errors, ETA), and a line per finished run.
Without a terminal (or with --no-progress) only the lines are printed."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tqdm import tqdm

from scoring.runner.progress import WaitSayer


@dataclass
class RunLine:
    """What the display knows about one run."""

    label: str
    total: int = 0
    done: int = 0
    failed: int = 0
    retries: int = 0
    started: float = 0.0
    seconds: float = 0.0
    status: str = "pending"  # pending | running | complete | incomplete | stopped | skipped
    bar: tqdm | None = field(default=None, repr=False)


class RunFollower:
    """The `RunObserver` of one run, feeding the sweep display."""

    def __init__(self, display: SweepDisplay, line: RunLine):
        self.display, self.line = display, line
        self.waiting = WaitSayer(display.write, line.label)

    def finish(self, ok: bool) -> None:
        self.line.done += 1
        if not ok:
            self.line.failed += 1
        self.display.advance(self.line)

    def retry_started(self) -> None:
        self.line.retries += 1
        self.display.refresh(self.line)

    def retry_ended(self) -> None:
        pass

    def close(self) -> None:
        note = self.waiting.summary()
        if note:
            self.display.write(f"{self.line.label}: {note}")


class SweepDisplay:
    def __init__(self, live: bool, total: int = 0):
        self.live = live and sys.stderr.isatty()
        self.lines: list[RunLine] = []
        self.t0 = time.perf_counter()
        self._overall: tqdm | None = None
        self._free_positions: list[int] = []
        self._next_position = 1
        if self.live:
            self._overall = tqdm(
                total=total, desc="sweep", unit="sample", dynamic_ncols=True, file=sys.stderr, position=0
            )

    def add_total(self, n: int) -> None:
        if self._overall is not None:
            self._overall.total = (self._overall.total or 0) + n
            self._overall.refresh()

    def follower(self, label: str) -> tuple[RunLine, Callable[[int], RunFollower]]:
        """(the run's line, the factory `run_benchmark` calls with the run's sample count)."""
        line = RunLine(label)
        self.lines.append(line)

        def start(total: int) -> RunFollower:
            line.total, line.status, line.started = total, "running", time.perf_counter()
            if self.live:
                pos = self._free_positions.pop(0) if self._free_positions else self._next_position
                if pos == self._next_position:
                    self._next_position += 1
                line.bar = tqdm(
                    total=total,
                    desc=label,
                    unit="sample",
                    dynamic_ncols=True,
                    file=sys.stderr,
                    position=pos,
                    leave=False,
                )
            return RunFollower(self, line)

        return line, start

    def advance(self, line: RunLine) -> None:
        if line.bar is not None:
            line.bar.update(1)
            self.refresh(line)
        if self._overall is not None:
            self._overall.update(1)
            n_err = sum(x.failed for x in self.lines)
            n_retry = sum(x.retries for x in self.lines)
            runs_done = sum(x.status not in ("pending", "running") for x in self.lines)
            self._overall.set_postfix(
                runs=f"{runs_done}/{len(self.lines)}", retries=n_retry, errors=n_err, refresh=False
            )

    def refresh(self, line: RunLine) -> None:
        if line.bar is not None:
            line.bar.set_postfix(retries=line.retries, errors=line.failed, refresh=False)

    def ended(self, line: RunLine, status: str, note: str = "") -> None:
        """A run is over: its bar makes room and one line records it."""
        line.status = status
        line.seconds = time.perf_counter() - line.started if line.started else 0.0
        if line.bar is not None:
            pos = line.bar.pos
            line.bar.close()
            line.bar = None
            self._free_positions.append(abs(pos))
            self._free_positions.sort()
        text = (
            f"{status:<10} {line.label}: {line.done - line.failed}/{line.total} ok, {line.failed} failed, "
            f"{line.retries} retried, {line.seconds:.1f} s{(' -- ' + note) if note else ''}"
        )
        self.write(text)

    def write(self, text: str) -> None:
        if self.live:
            tqdm.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        for line in self.lines:
            if line.bar is not None:
                line.bar.close()
                line.bar = None
        if self._overall is not None:
            self._overall.close()
            self._overall = None
