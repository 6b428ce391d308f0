"""What every Spatial Gap Processing algorithm shares: no group (the provider is the group),
the README's help, one-line errors, and the progress bar driven by scoring's executor."""

from __future__ import annotations

from collections.abc import Callable

from qgis.core import (
    QgsProcessingAlgorithm,
    QgsProcessingException,
    QgsProcessingFeedback,
)

from scoring.errors import SpatialGapError

from ..gui.help import readme_url
from ..utils.compat import FILE_BEHAVIOR_FILE, FILE_BEHAVIOR_FOLDER, NUMBER_INTEGER
from ..utils.i18n import tr
from ..utils.icons import icon

FOLDER, FILE, INT = FILE_BEHAVIOR_FOLDER, FILE_BEHAVIOR_FILE, NUMBER_INTEGER

PROCESSING_SECTION = "the-qgis-plugin"


def progress_to(feedback: QgsProcessingFeedback | None) -> Callable[[int, int], None]:
    """scoring's progress callback: moves Processing's bar and stops the stage on Cancel (the
    executor calls it after each item, so a cancel ends the work at the next item)."""

    def report(done: int, total: int) -> None:
        if feedback is None:
            return
        if feedback.isCanceled():
            raise QgsProcessingException(tr("Cancelled"))
        feedback.setProgress(100.0 * done / total if total else 100.0)

    return report


def comma_list(text: str) -> list[str]:
    """`a, b,,c` -> ['a', 'b', 'c'] (the relations and instance ids typed in a text field)."""
    return [part.strip() for part in text.split(",") if part.strip()]


class SpatialGapAlgorithm(QgsProcessingAlgorithm):
    def createInstance(self):  # noqa: N802
        return type(self)()

    # No group: the provider is already "Spatial Gap", a group of the same name would nest it
    # twice in the toolbox.
    def group(self):
        return ""

    def groupId(self):  # noqa: N802
        return ""

    def helpUrl(self):  # noqa: N802
        return readme_url(PROCESSING_SECTION)

    def icon(self):
        return icon()

    def process(self, parameters, context, feedback) -> dict:
        raise NotImplementedError

    def processAlgorithm(self, parameters, context, feedback):  # noqa: N802
        try:
            return self.process(parameters, context, feedback)
        except SpatialGapError as exc:  # one clear line, not a traceback
            raise QgsProcessingException(str(exc)) from None
