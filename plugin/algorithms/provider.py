"""The Processing provider: registers the algorithms, one per module (build, render, score,
check_edit), modeler and batch friendly."""

from __future__ import annotations

from qgis.core import QgsProcessingProvider

from ..utils.i18n import tr
from ..utils.icons import icon
from .build import BuildBenchmark
from .check_edit import CheckEdit
from .render import RenderMaps
from .score import ScoreRun

ALGORITHMS = (BuildBenchmark, RenderMaps, ScoreRun, CheckEdit)


class SpatialGapProvider(QgsProcessingProvider):
    def id(self):
        return "spatialgap"

    def name(self):
        return tr("Spatial Gap")

    def icon(self):
        return icon()

    def loadAlgorithms(self):  # noqa: N802
        for alg in ALGORITHMS:
            self.addAlgorithm(alg())
