"""Processing: render the map image of every instance (the same bytes as `spatialgap render`)."""

from __future__ import annotations

from qgis.core import (
    QgsProcessingOutputNumber,
    QgsProcessingParameterFile,
    QgsProcessingParameterFolderDestination,
    QgsProcessingParameterString,
)

from ..utils.i18n import tr
from .base import FOLDER, SpatialGapAlgorithm, comma_list, progress_to


class RenderMaps(SpatialGapAlgorithm):
    def name(self):
        return "rendermaps"

    def displayName(self):  # noqa: N802
        return tr("Render benchmark maps")

    def shortHelpString(self):  # noqa: N802
        return tr(
            "Renders the map image of every instance (the image modality), the same bytes as "
            "`spatialgap render`."
        )

    def initAlgorithm(self, config=None):  # noqa: N802
        self.addParameter(QgsProcessingParameterFile("BENCH", tr("Benchmark directory"), FOLDER))
        self.addParameter(
            QgsProcessingParameterString(
                "IDS", tr("Instance ids (comma-separated, empty: all)"), optional=True
            )
        )
        self.addParameter(QgsProcessingParameterFolderDestination("OUTPUT", tr("Map folder"), optional=True))
        self.addOutput(QgsProcessingOutputNumber("MAPS", tr("Maps rendered")))

    def process(self, parameters, context, feedback):
        from scoring.render import render_benchmark  # matplotlib: loaded only when rendering

        bench = self.parameterAsFile(parameters, "BENCH", context)
        ids = comma_list(self.parameterAsString(parameters, "IDS", context))
        out = self.parameterAsString(parameters, "OUTPUT", context) or None
        summary = render_benchmark(
            bench, jobs=1, progress=progress_to(feedback), ids=ids or None, out_dir=out
        )
        return {"OUTPUT": str(summary.out_dir), "MAPS": len(summary.rendered)}
