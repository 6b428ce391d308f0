"""Processing: render the map image of every instance (the same bytes as `spatialgap render`)."""

from __future__ import annotations

from qgis.core import (
    QgsProcessingOutputFolder,
    QgsProcessingOutputNumber,
    QgsProcessingParameterFile,
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
            "`spatialgap render`. With the map folder left empty the maps go to the benchmark's "
            "own maps/ folder, where image runs look for them."
        )

    def initAlgorithm(self, config=None):  # noqa: N802
        self.addParameter(QgsProcessingParameterFile("BENCH", tr("Benchmark directory"), FOLDER))
        self.addParameter(
            QgsProcessingParameterString(
                "IDS", tr("Instance ids (comma-separated, empty: all)"), optional=True
            )
        )
        # An input folder, not a folder destination: Processing fills an empty destination with a
        # temporary folder, whose maps vanish with QGIS and which image runs never read.
        self.addParameter(
            QgsProcessingParameterFile(
                "OUTPUT", tr("Map folder (empty: the benchmark's maps/)"), FOLDER, optional=True
            )
        )
        self.addOutput(QgsProcessingOutputFolder("OUTPUT", tr("Map folder")))
        self.addOutput(QgsProcessingOutputNumber("MAPS", tr("Maps rendered")))

    def process(self, parameters, context, feedback):
        from scoring.render import render_benchmark  # matplotlib: loaded only when rendering

        bench = self.parameterAsFile(parameters, "BENCH", context)
        ids = comma_list(self.parameterAsString(parameters, "IDS", context))
        out = self.parameterAsFile(parameters, "OUTPUT", context) or None
        summary = render_benchmark(
            bench, jobs=1, progress=progress_to(feedback), ids=ids or None, out_dir=out
        )
        return {"OUTPUT": str(summary.out_dir), "MAPS": len(summary.rendered)}
