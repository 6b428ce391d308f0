"""The endpoint dialog's connection test as a QGIS task: the request waits up to its timeout
(30 s at most), which on the main thread froze QGIS for as long."""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable

from qgis.core import QgsMessageLog, QgsTask

from ..utils.compat import MSG_WARNING
from ..utils.i18n import tr
from .tasks import LOG_TAG

# The tasks under way: the Python side of a QgsTask must outlive its run() (a collected wrapper
# loses its run() override while QGIS still calls it), whatever became of the dialog.
_RUNNING: set[ConnectionTask] = set()


Check = Callable[[], tuple[bool, str]]
Done = Callable[[bool, str], None]


class ConnectionTask(QgsTask):
    """Runs `check()` -> (ok, message) off the main thread, then `on_done(ok, message)` on it."""

    def __init__(
        self, name: str, check: Callable[[], tuple[bool, str]], on_done: Callable[[bool, str], None]
    ):
        super().__init__(tr("Spatial Gap: testing {name}").format(name=name), QgsTask.Flag(0))
        self.check, self.on_done = check, on_done
        self.ok, self.message = False, ""
        _RUNNING.add(self)

    def run(self) -> bool:
        # Everything is caught here: an exception escaping run() aborts QGIS (a hostile model
        # list once raised RecursionError from the parser).
        try:
            self.ok, self.message = self.check()
        except BaseException as exc:  # noqa: BLE001 - nothing may leave a task's run()
            self.ok = False
            self.message = tr("The connection test failed: {error}").format(error=type(exc).__name__)
            self.details = traceback.format_exc()
        return True

    def finished(self, result: bool) -> None:
        _RUNNING.discard(self)
        if getattr(self, "details", None):
            QgsMessageLog.logMessage(self.details, LOG_TAG, MSG_WARNING)
        # RuntimeError: the dialog was closed meanwhile, nobody is waiting for the answer.
        with contextlib.suppress(RuntimeError):
            self.on_done(self.ok, self.message)
