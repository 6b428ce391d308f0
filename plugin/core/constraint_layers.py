"""Constraint explanations as styled memory layers: the parts scoring.constraints.explain draws, one layer per
geometry class, each constraint labelled with what was measured as a sentence and its ✔ / ✘.

A constraint's zones (where it holds, where the target must not go, their edges) are drawn in
its own hue whatever the verdict; only what was measured takes the verdict's colour, and a
failing part is drawn over a passing one on the same geometry."""

from __future__ import annotations

from collections.abc import Collection

import shapely
from qgis.core import (
    QgsFeature,
    QgsFeatureRequest,
    QgsLayerTreeGroup,
    QgsRuleBasedRenderer,
    QgsVectorLayer,
)
from shapely.geometry.base import BaseGeometry

from scoring.formats.records import Instance

from ..core import styles
from ..core.layer_util import GEOM_TYPES, add_to_group, explode, geom_class, memory_layer, to_qgs
from ..utils.compat import FIELD_BOOL, FIELD_INT, FIELD_STRING
from ..utils.i18n import tr
from ..utils.sentences import measured_value, requirement

CONSTRAINT_FIELDS = [
    ("constraint", FIELD_INT),
    ("text", FIELD_STRING),
    ("measure", FIELD_STRING),
    ("role", FIELD_STRING),
    ("measured", FIELD_STRING),
    ("passed", FIELD_BOOL),
    ("label", FIELD_STRING),
]
# The part of a constraint that carries its label, first found wins.
LABEL_ORDER = (
    "measured",
    "intersection",
    "violation",
    "allowed",
    "forbidden",
    "limit",
    "marker",
    "reference",
)
# Roles drawn in the verdict's colour; every other role has one style whatever the verdict.
VERDICT_ROLES = ("measured",)
# Zones drawn in their constraint's hue (styles.CONSTRAINT_HUES), whatever the verdict.
ZONE_ROLES = ("allowed", "forbidden", "limit")


def role_name(role: str | None, kind: str) -> str:
    """A role as plain words for the legend."""
    if role == "measured":
        return {
            "point": tr("measured point"),
            "line": tr("measured distance or direction"),
            "polygon": tr("measured area"),
        }[kind]
    return {
        "allowed": tr("zone where the constraint holds"),
        "forbidden": tr("zone the feature must stay out of"),
        "limit": tr("edge of that zone"),
        "reference": tr("feature it is measured against"),
        "intersection": tr("shared part"),
        "violation": tr("part that breaks the constraint"),
        "marker": tr("point used in the measurement"),
    }.get(role or "", tr("other drawing"))


def result_text(view) -> str:
    """What was found, after the requirement: the measured value, or for a yes / no constraint
    whether it holds (its sentence already says what was asked)."""
    if view.error:
        return tr("not measured")
    if isinstance(view.measured, bool):
        return tr("holds") if view.passed else tr("broken")
    return measured_value(view)


def label_text(view) -> str:
    """The requirement, then the result: "#2 F0 is not within 20 m of F2 — broken ✘"; the
    ✔ / ✘ reads in every language."""
    return f"#{view.index + 1} {requirement(view)} — {result_text(view)} {'✔' if view.passed else '✘'}"


def constraint_features(views) -> dict[str, list[tuple[list, BaseGeometry]]]:
    """Rows per geometry class: ([attributes], shapely geometry); each constraint's label sits on
    one part only (its measured part if any). Constraints measured along the same geometry (a
    distance and a disjointness over one shortest line) share one stacked label, so neither hides
    the other."""
    rows: dict[str, list[tuple[list, BaseGeometry]]] = {k: [] for k, _, _ in GEOM_TYPES}
    label_at: dict[bytes, list] = {}
    for v in views:
        parts = [(r, g) for r, g in v.parts for g in explode(g) if not g.is_empty]
        known = [i for i, (r, _) in enumerate(parts) if r in LABEL_ORDER]
        labelled = min(known, key=lambda i: LABEL_ORDER.index(parts[i][0])) if known else None
        for i, (role, geom) in enumerate(parts):
            kind = geom_class(geom)
            if kind is None:
                continue
            attrs = [v.index + 1, v.text, v.measure, role, v.measured_text, bool(v.passed), ""]
            if i == labelled:
                text = label_text(v)
                key = shapely.normalize(geom).wkb
                if key in label_at:
                    label_at[key][6] += "\n" + text
                else:
                    attrs[6] = text
                    label_at[key] = attrs
            rows[kind].append((attrs, geom))
    return rows


def _styles(kind: str, color: str | None) -> list[tuple[str, object]]:
    """(role, symbol) per role of this geometry class; `color` is the verdict's colour, None for
    the roles whose style never changes with it."""
    sym = styles.symbol
    if color is not None:
        return {
            "point": [("measured", sym("point", color, size=2.6))],
            "line": [("measured", sym("line", color, width=1.1))],
            "polygon": [("measured", sym("polygon", color, width=0.6, fill_alpha=60))],
        }[kind]
    ref, shared = styles.REFERENCE_COLOR, styles.SHARED_COLOR
    return {
        "point": [
            ("marker", sym("point", "#333333", size=2.0)),
            ("intersection", sym("point", shared, size=3.6, outline="black")),
            ("violation", sym("point", shared, size=3.6, outline="black")),
            ("reference", sym("point", ref, size=2.4)),
        ],
        "line": [
            ("reference", sym("line", ref, width=0.8)),
            ("intersection", sym("line", shared, width=1.6)),
            ("violation", sym("line", shared, width=1.6)),
        ],
        "polygon": [
            ("intersection", sym("polygon", shared, width=0.8, fill_alpha=140)),
            ("violation", sym("polygon", shared, width=0.8, fill_alpha=140)),
            ("reference", sym("polygon", ref, width=0.6, fill_alpha=0)),
        ],
    }[kind]


def constraint_renderer(
    kind: str, present: set[tuple[str, bool]] | None = None, zones: Collection[tuple[str, int]] = ()
) -> QgsRuleBasedRenderer:
    """One rule per zone (role, constraint number) in that constraint's hue, per fixed-style role
    and per (measured, verdict); only what is present gets a rule, so the legend lists what is on
    the map. Features are drawn passing first, so a failing part is never hidden under a passing
    one."""
    root = QgsRuleBasedRenderer.Rule(None)
    fixed = _styles(kind, None)
    named = [r for r, _ in fixed] + list(VERDICT_ROLES) + list(ZONE_ROLES)
    for zone, number in sorted(zones, key=lambda z: (z[1], ZONE_ROLES.index(z[0]))):
        sym = styles.zone_symbol(kind, zone, styles.constraint_hue(number))
        expr = f'"role" = \'{zone}\' AND "constraint" = {int(number)}'
        root.appendChild(QgsRuleBasedRenderer.Rule(sym, 0, 0, expr, f"#{number} {role_name(zone, kind)}"))

    def wanted(role: str | None, passed: bool | None) -> bool:
        if present is None:
            return True
        return any((r == role if role else r not in named) and passed in (None, p) for r, p in present)

    for fixed_role, sym in fixed:
        if wanted(fixed_role, None):
            rule = QgsRuleBasedRenderer.Rule(
                sym, 0, 0, f"\"role\" = '{fixed_role}'", role_name(fixed_role, kind)
            )
            root.appendChild(rule)
    others = ", ".join(repr(r) for r in named)
    for passed, color in ((True, styles.PASS_COLOR), (False, styles.FAIL_COLOR)):
        cond = '"passed"' if passed else 'NOT "passed"'
        verdict = tr("holds") if passed else tr("broken")
        other = styles.symbol(kind, color, width=0.6, fill_alpha=30)
        for role, sym in [*_styles(kind, color), (None, other)]:
            if not wanted(role, passed):
                continue
            expr = f"{cond} AND \"role\" = '{role}'" if role else f'{cond} AND "role" NOT IN ({others})'
            rule = QgsRuleBasedRenderer.Rule(sym, 0, 0, expr, f"{role_name(role, kind)}: {verdict}")
            root.appendChild(rule)
    renderer = QgsRuleBasedRenderer(root)
    renderer.setOrderBy(QgsFeatureRequest.OrderBy([QgsFeatureRequest.OrderByClause('"passed"', False)]))
    renderer.setOrderByEnabled(True)
    return renderer


def style_constraint_layer(
    layer: QgsVectorLayer, kind: str, present: set[tuple[str, bool]] | None, labels: bool = True
) -> None:
    """The dock's constraint style (also applied to Processing's outputs); `labels`: False where
    the dock places the labels itself (label_layout)."""
    zones = {(f["role"], int(f["constraint"])) for f in layer.getFeatures() if f["role"] in ZONE_ROLES}
    layer.setRenderer(constraint_renderer(kind, present, zones))
    # Placed after F0's label and never over it (QGIS 3.22's "show all labels" would draw a label
    # over F0's, and several times over); one that finds no room is still in the verdict panel.
    styles.set_labels(
        layer,
        '"label"',
        kind,
        size=8.5,
        bold=True,
        priority=styles.CONSTRAINT_LABEL_PRIORITY,
        wrap=styles.LABEL_WRAP_CHARS,
    )
    layer.setLabelsEnabled(labels)


def constraint_layers(instance: Instance, views, group: QgsLayerTreeGroup) -> list[QgsVectorLayer]:
    """The constraint explanation parts, one layer per geometry class."""
    epsg = int(instance["crs"]["epsg"])
    rows = constraint_features(views)
    out = []
    for kind, _, _ in GEOM_TYPES:
        if not rows[kind]:
            continue
        layer = memory_layer(kind, epsg, f"{tr('constraints')} ({styles.kind_name(kind)})", CONSTRAINT_FIELDS)
        feats = []
        for attrs, geom in rows[kind]:
            qf = QgsFeature(layer.fields())
            qf.setAttributes(attrs)
            qf.setGeometry(to_qgs(geom))
            feats.append(qf)
        layer.dataProvider().addFeatures(feats)
        # Labelled by the dock (label_layout), or by QGIS where there is no canvas (scene_view).
        style_constraint_layer(layer, kind, {(a[3], a[5]) for a, _ in rows[kind]}, labels=False)
        out.append(add_to_group(layer, group))
    return out
