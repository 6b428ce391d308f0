"""Following a run's samples: the protocol a display implements, and the tqdm bar of
`spatialgap run`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol

LONG_WAIT_S = 5.0  # a pause at least this long is said: silence that long looks like a hang


class RunObserver(Protocol):
    """Follows one run's samples (the progress bar of `spatialgap run`, or a sweep's display)."""

    def finish(self, ok: bool) -> None: ...
    def retry_started(self) -> None: ...
    def retry_ended(self) -> None: ...
    def close(self) -> None: ...


class WaitSayer:
    """Says a run's first long wait before a retry and its first give-up on the wait budget
    (each with the budget and how to change it), then counts the rest: a 429 storm over 200
    samples is two lines, not 400."""

    def __init__(self, say: Callable[[str], None], label: str = ""):
        self._say, self._label = say, label
        self.waits = self.gave_up = 0

    def __call__(self, notice: Any) -> None:
        prefix = f"{self._label}: " if self._label else ""
        if notice.gave_up:
            self.gave_up += 1
            if self.gave_up == 1:
                self._say(prefix + notice.line())
        elif notice.delay_s >= LONG_WAIT_S:
            self.waits += 1
            if self.waits == 1:
                self._say(prefix + notice.line())

    def summary(self) -> str | None:
        if self.gave_up > 1:
            return f"{self.gave_up} samples not retried: their wait would pass the wait budget (max_wait_s)"
        return None


class SampleBar:
    """One tqdm bar over a run's samples (nothing when disabled)."""

    def __init__(self, total: int, enabled: bool):
        self.done = self.failed = self.retrying = 0
        self._bar: Any = None
        self.waiting = WaitSayer(self._say)
        if enabled:
            # tqdm only for the command line: inside QGIS a QgsTask reports progress instead
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="sample", dynamic_ncols=True, file=sys.stderr)
            self._refresh()

    def _refresh(self) -> None:
        if self._bar is not None:
            self._bar.set_postfix(done=self.done, failed=self.failed, retrying=self.retrying, refresh=False)

    def finish(self, ok: bool) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        if self._bar is not None:
            self._bar.update(1)
        self._refresh()

    def retry_started(self) -> None:
        self.retrying += 1
        self._refresh()

    def retry_ended(self) -> None:
        self.retrying -= 1
        self._refresh()

    def _say(self, text: str) -> None:
        # shown with or without the bar (--no-progress): a long pause must never be silent
        if self._bar is not None:
            self._bar.write(text, file=sys.stderr)
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        note = self.waiting.summary()
        if note:
            self._say(note)
        if self._bar is not None:
            self._bar.close()
