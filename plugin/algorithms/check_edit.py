"""Processing: check an edited layer against an edit instance's constraints, into a report
table and the constraint drawings (styled as the dock draws them)."""

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
    QgsProcessingException,
    QgsProcessingOutputBoolean,
    QgsProcessingOutputNumber,
    QgsProcessingParameterFeatureSink,
    QgsProcessingParameterFeatureSource,
    QgsProcessingParameterFile,
    QgsProcessingParameterString,
    QgsProcessingUtils,
    QgsProject,
)
from shapely.geometry import mapping

from scoring.constraints.explain import explain_constraints
from scoring.formats.benchmark import Benchmark

from ..core.constraint_layers import constraint_features, label_text, style_constraint_layer
from ..core.layer_util import scene_feature, to_shapely
from ..utils.compat import (
    FIELD_BOOL,
    FIELD_INT,
    FIELD_STRING,
    SOURCE_ANY_GEOMETRY,
    SOURCE_LINE,
    SOURCE_POINT,
    SOURCE_POLYGON,
    SOURCE_VECTOR,
    WKB_MULTILINE,
    WKB_MULTIPOINT,
    WKB_MULTIPOLYGON,
    WKB_NONE,
)
from ..utils.i18n import tr
from .base import FOLDER, SpatialGapAlgorithm

REPORT_FIELDS = (
    ("constraint", FIELD_INT),
    ("text", FIELD_STRING),
    ("measure", FIELD_STRING),
    ("op", FIELD_STRING),
    ("measured", FIELD_STRING),
    ("passed", FIELD_BOOL),
    ("error", FIELD_STRING),
)
PART_FIELDS = (
    ("constraint", FIELD_INT),
    ("role", FIELD_STRING),
    ("measured", FIELD_STRING),
    ("passed", FIELD_BOOL),
    ("label", FIELD_STRING),
)


def _fields(spec) -> QgsFields:
    fields = QgsFields()
    for name, qtype in spec:
        fields.append(QgsField(name, qtype))
    return fields


class CheckEdit(SpatialGapAlgorithm):
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
        self.addParameter(QgsProcessingParameterFile("BENCH", tr("Benchmark directory"), FOLDER))
        instance = QgsProcessingParameterString("INSTANCE", tr("Edit instance id"))
        # A picker over the chosen benchmark's edit instances (imported here: Processing's GUI).
        from .instance_picker import InstancePickerWrapper

        instance.setMetadata({"widget_wrapper": {"class": InstancePickerWrapper}})
        self.addParameter(instance)
        self.addParameter(
            QgsProcessingParameterFeatureSource("EDITED", tr("Edited layer"), [SOURCE_ANY_GEOMETRY])
        )
        self.addParameter(QgsProcessingParameterFeatureSink("REPORT", tr("Constraint report"), SOURCE_VECTOR))
        self.addParameter(
            QgsProcessingParameterFeatureSink("POINTS", tr("Constraint points"), SOURCE_POINT, optional=True)
        )
        self.addParameter(
            QgsProcessingParameterFeatureSink("LINES", tr("Constraint lines"), SOURCE_LINE, optional=True)
        )
        self.addParameter(
            QgsProcessingParameterFeatureSink(
                "POLYGONS", tr("Constraint polygons"), SOURCE_POLYGON, optional=True
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
            WKB_NONE,
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
            sink.addFeature(row, QgsFeatureSink.Flag.FastInsert)
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
            feedback.pushInfo(label_text(view))  # as the map labels say it: "#2 … — holds ✔"
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
            ("POINTS", "point", WKB_MULTIPOINT),
            ("LINES", "line", WKB_MULTILINE),
            ("POLYGONS", "polygon", WKB_MULTIPOLYGON),
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
                sink.addFeature(part, QgsFeatureSink.Flag.FastInsert)
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
