"""Following a run's samples: the protocol a display implements, and the tqdm bar of
`spatialgap run`."""

from __future__ import annotations

import sys
from typing import Protocol


class RunObserver(Protocol):
    """Follows one run's samples (the progress bar of `spatialgap run`, or a sweep's display)."""

    def finish(self, ok: bool) -> None: ...
    def retry_started(self) -> None: ...
    def retry_ended(self) -> None: ...
    def close(self) -> None: ...


class SampleBar:
    """One tqdm bar over a run's samples (nothing when disabled)."""

    def __init__(self, total: int, enabled: bool):
        self.done = self.failed = self.retrying = 0
        self._bar = None
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

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
