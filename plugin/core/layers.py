"""Scenes and edits as styled memory layers (no geometry logic here: shapes come from the scene
GeoJSON and scoring.constraints.explain; constraint drawings live in constraint_layers)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import shapely
from qgis.core import (
    QgsCategorizedSymbolRenderer,
    QgsFeature,
    QgsFeatureRequest,
    QgsLayerTreeGroup,
    QgsRendererCategory,
    QgsRuleBasedLabeling,
    QgsSingleSymbolRenderer,
    QgsVectorLayer,
)
from shapely.geometry import shape

from scoring.constraints.explain import directed_lines
from scoring.formats.records import Instance

from ..core.constraint_layers import (
    CONSTRAINT_FIELDS,
    constraint_features,
    constraint_layers,
)
from ..core.layer_util import (
    GEOM_TYPES,
    add_group,
    add_to_group,
    crs_of,
    explode,
    geom_class,
    is_created_group,
    memory_layer,
    remove_group,
    replace_group,
    scene_feature,
    to_qgs,
    to_shapely,
)
from ..core.styles import (
    FAIL_COLOR,
    FEATURE_COLOR,
    PASS_COLOR,
    TARGET_COLOR,
    TARGET_LABEL_PRIORITY,
    TARGET_LABEL_Z,
    directed_line_symbol,
    kind_name,
    label_settings,
    set_labels,
    symbol,
)
from ..utils.compat import FIELD_BOOL, FIELD_DOUBLE, FIELD_LONGLONG, FIELD_STRING
from ..utils.i18n import tr

__all__ = [  # the names other modules take from here
    "CONSTRAINT_FIELDS",
    "FAIL_COLOR",
    "PASS_COLOR",
    "ContextSource",
    "add_group",
    "constraint_features",
    "constraint_layers",
    "crs_of",
    "edit_layers",
    "explode",
    "is_created_group",
    "remove_group",
    "replace_group",
    "scene_feature",
    "scene_layers",
    "to_shapely",
]


# ------------------------------------------------------------------------- scene


def _scene_renderer(kind: str, directed: bool) -> QgsCategorizedSymbolRenderer:
    """Categories by role (the target F0 emphasised); lines whose direction the instance uses get
    arrows and first / last vertex marks."""
    categories = []
    for role, color, width, size, alpha, name in (
        ("target", TARGET_COLOR, 1.2, 4.0, 110, tr("target (F0)")),
        ("feature", FEATURE_COLOR, 0.7, 3.0, 60, tr("other features")),
    ):
        categories.append(QgsRendererCategory(role, symbol(kind, color, width, size, alpha), name))
        if kind == "line" and directed:
            categories.append(
                QgsRendererCategory(
                    f"{role} directed",
                    directed_line_symbol(color, width),
                    tr("{name}: travelled from ● (first vertex) to ■ (last vertex)").format(name=name),
                )
            )
    renderer = QgsCategorizedSymbolRenderer("role || if(\"directed\", ' directed', '')", categories)
    # The target drawn last: a feature at the same spot never hides it.
    renderer.setOrderBy(
        QgsFeatureRequest.OrderBy([QgsFeatureRequest.OrderByClause("\"role\" = 'target'", True)])
    )
    renderer.setOrderByEnabled(True)
    return renderer


def scene_layers(
    instance: Instance, group: QgsLayerTreeGroup, context: ContextSource | None = None, name_prefix: str = ""
) -> list[QgsVectorLayer]:
    """The instance's scene as one layer per geometry type, labelled with feature ids (F0's label
    placed first, always); optional muted OSM context underneath."""
    epsg = int(instance["crs"]["epsg"])
    target = instance.get("target", "F0")
    directed = directed_lines(instance)
    rows: dict[str, list] = {k: [] for k, _, _ in GEOM_TYPES}
    for f in instance["scene"]["features"]:
        props = dict(f.get("properties") or {})
        fid = f.get("id") or props.get("id")
        geom = shape(f["geometry"])
        kind = geom_class(geom)
        if kind:
            extra = {k: v for k, v in props.items() if k not in ("id", "kind")}
            rows[kind].append(
                (
                    fid,
                    props.get("kind", ""),
                    "target" if fid == target else "feature",
                    json.dumps(extra, ensure_ascii=False) if extra else "",
                    kind == "line" and fid in directed,
                    geom,
                )
            )
    fields = [
        ("id", FIELD_STRING),
        ("kind", FIELD_STRING),
        ("role", FIELD_STRING),
        ("attributes", FIELD_STRING),
        ("directed", FIELD_BOOL),
    ]
    layers = []
    for kind, _, _ in GEOM_TYPES:  # added top-down: points above lines above polygons
        if not rows[kind]:
            continue
        layer = memory_layer(
            kind, epsg, name_prefix + tr("scene {kind}").format(kind=kind_name(kind)), fields
        )
        feats = []
        for *attrs, geom in rows[kind]:
            qf = QgsFeature(layer.fields())
            qf.setAttributes(attrs)
            qf.setGeometry(to_qgs(geom))
            feats.append(qf)
        layer.dataProvider().addFeatures(feats)
        layer.setRenderer(_scene_renderer(kind, any(r[4] for r in rows[kind])))
        _target_label_first(layer, kind)
        layers.append(add_to_group(layer, group))
    if context is not None:
        ctx_group = add_group(group, tr("OSM context"))
        layers += context.layers(instance, ctx_group)
    return layers


def _target_label_first(layer: QgsVectorLayer, kind: str) -> None:
    """F0's id as a label, placed first and winning every conflict (highest priority, drawn on
    top). The other ids are keys (plugin/core/keys.py): marker symbols, which no label collision
    can remove."""
    root = QgsRuleBasedLabeling.Rule(None)
    for expr, priority, z in (("\"role\" = 'target'", TARGET_LABEL_PRIORITY, TARGET_LABEL_Z),):
        pal = label_settings(kind, '"id"', size=10.0, bold=True, priority=priority, z_index=z)
        rule = QgsRuleBasedLabeling.Rule(pal)
        rule.setFilterExpression(expr)
        root.appendChild(rule)
    layer.setLabeling(QgsRuleBasedLabeling(root))
    layer.setLabelsEnabled(True)


class ContextSource:
    """The benchmark's real OSM context (context.geojsonl), indexed once, drawn muted around
    the instance being shown."""

    MARGIN_M = 150.0

    def __init__(self, path: Path):
        self.geoms, self.pools = [], []
        if path.is_file():
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    if not line.strip():
                        continue
                    try:
                        f = json.loads(line)
                        g = shape(f["geometry"])
                    except (ValueError, KeyError, TypeError, AttributeError, shapely.errors.GEOSException):
                        continue
                    if not g.is_empty:
                        self.geoms.append(g)
                        self.pools.append((f.get("properties") or {}).get("pool", ""))
        self.tree = shapely.STRtree(self.geoms) if self.geoms else None

    def __len__(self) -> int:
        return len(self.geoms)

    def layers(self, instance: Instance, group: QgsLayerTreeGroup, around=None) -> list[QgsVectorLayer]:
        """The context within MARGIN_M of the scene (and of `around`: where an edit moved F0)."""
        if self.tree is None:
            return []
        shapes = [shape(f["geometry"]) for f in instance["scene"]["features"]]
        scene = shapely.GeometryCollection(shapes + ([around] if around is not None else []))
        box = shapely.box(*scene.bounds).buffer(self.MARGIN_M, join_style=2)
        idx = sorted(self.tree.query(box, predicate="intersects"))
        epsg = int(instance["crs"]["epsg"])
        out = []
        for kind, _, _ in GEOM_TYPES:
            chosen = [i for i in idx if geom_class(self.geoms[i]) == kind and self.pools[i] != "water"]
            if chosen:
                sym = symbol(kind, "#b8b8b8", width=0.3, size=1.4, fill_alpha=40, outline="#c8c8c8")
                out.append(
                    self._layer(
                        kind, epsg, tr("context {kind}").format(kind=kind_name(kind)), chosen, sym, group
                    )
                )
        # Sea, lakes and basins: their own layer at the bottom, in the headless maps' water colour
        # (a grey wash over the harbour would read as land).
        water = [i for i in idx if self.pools[i] == "water" and geom_class(self.geoms[i]) == "polygon"]
        if water:
            sym = symbol("polygon", "#c6dbe9", width=0.0, fill_alpha=255, outline="#c6dbe9")
            out.append(
                self._layer("polygon", epsg, tr("context {kind}").format(kind=tr("water")), water, sym, group)
            )
        return out

    def _layer(self, kind: str, epsg: int, name: str, chosen: list[int], sym, group) -> QgsVectorLayer:
        layer = memory_layer(kind, epsg, name, [("pool", FIELD_STRING)])
        feats = []
        for i in chosen:
            qf = QgsFeature(layer.fields())
            qf.setAttributes([self.pools[i]])
            qf.setGeometry(to_qgs(self.geoms[i]))
            feats.append(qf)
        layer.dataProvider().addFeatures(feats)
        layer.setRenderer(QgsSingleSymbolRenderer(sym))
        layer.setOpacity(0.6)
        return add_to_group(layer, group)


# ------------------------------------------------------------------------- edits


def _qvariant_type(value):
    if isinstance(value, bool):
        return FIELD_BOOL
    if isinstance(value, int):
        return FIELD_LONGLONG
    if isinstance(value, float):
        return FIELD_DOUBLE
    return FIELD_STRING


def edit_layers(
    instance: Instance,
    edited_scene: Mapping[str, Any],
    group: QgsLayerTreeGroup,
    title: str,
    attributes: tuple[str, ...] = (),
) -> list[QgsVectorLayer]:
    """The edited target beside a ghost of the original one. `attributes`: extra fields on the
    edited layer (the target's attributes an analyst may change in the attribute form)."""
    epsg = int(instance["crs"]["epsg"])
    target = instance.get("target", "F0")
    out = []
    for label, fc, style in (
        (tr("{id} before the edit").format(id=target), instance["scene"], "ghost"),
        (title, edited_scene, "edited"),
    ):
        try:
            feature = scene_feature(fc, target)
        except KeyError:
            continue
        geom = shape(feature["geometry"])
        kind = geom_class(geom)
        if kind is None:  # a geometry collection: nothing to edit with QGIS's tools
            continue
        props = feature.get("properties") or {}
        extra = [a for a in attributes if a not in ("id", "state")] if style == "edited" else []
        fields = [("id", FIELD_STRING), ("state", FIELD_STRING)] + [
            (a, _qvariant_type(props.get(a, ""))) for a in extra
        ]
        layer = memory_layer(kind, epsg, label, fields)
        qf = QgsFeature(layer.fields())
        qf.setAttributes([target, style] + [props.get(a) for a in extra])
        qf.setGeometry(to_qgs(geom))
        layer.dataProvider().addFeatures([qf])
        if style == "ghost":
            sym = symbol(kind, "#777777", width=0.6, size=3.5, fill_alpha=0, dashed=True, outline="#777777")
        else:
            sym = symbol(kind, "#ff7f00", width=1.4, size=4.5, fill_alpha=120, outline="#b35900")
        layer.setRenderer(QgsSingleSymbolRenderer(sym))
        set_labels(
            layer,
            f"'{target}' || if(\"state\" = 'ghost', ' ({tr('before')})', ' ({tr('after')})')",
            size=10.0,
            bold=style == "edited",
            # Where F0 went, right after the verdicts; its ghost is labelled F0 already.
            priority=7 if style == "edited" else 2,
        )
        out.append(add_to_group(layer, group))
    return out
