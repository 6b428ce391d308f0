"""A stage's progress as a (done, total) callback, and no tqdm needed unless a terminal bar is
asked for (the QGIS plugin passes a callback driving Processing's bar; its Python has no tqdm)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from scoring.execute import LocalExecutor

ROOT = Path(__file__).resolve().parents[2]


def _double(item: int, shared: int) -> int:
    return item * 2 + shared


def test_callback_sees_every_weighted_step_and_results_keep_their_order():
    seen: list[tuple[int, int]] = []
    out = list(
        LocalExecutor(1).map(
            _double, [1, 2, 3], shared=1, progress=lambda d, t: seen.append((d, t)), weights=[2, 1, 3]
        )
    )
    assert out == [3, 5, 7]
    assert seen == [(0, 6), (2, 6), (3, 6), (6, 6)]


def test_a_raising_callback_stops_the_stage():
    class StopError(Exception):
        pass

    def cancel(done: int, total: int) -> None:
        if done >= 1:
            raise StopError

    with pytest.raises(StopError):
        list(LocalExecutor(1).map(_double, [1, 2, 3], shared=0, progress=cancel))


def test_no_tqdm_is_imported_without_a_terminal_bar_and_its_absence_is_no_error():
    code = (
        "import sys; sys.modules['tqdm'] = None\n"
        "from scoring.execute import LocalExecutor\n"
        "f = lambda i, s: i\n"
        "assert list(LocalExecutor(1).map(f, [1, 2], progress=False)) == [1, 2]\n"
        "assert list(LocalExecutor(1).map(f, [1, 2], progress=True)) == [1, 2]\n"
        "print('ok')"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]
