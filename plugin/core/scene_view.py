"""The map side of the dock: one layer-tree group per shown instance (its scene over the muted OSM
context), at most one set of constraint drawings in it, and the canvas framed on them."""

from __future__ import annotations

import contextlib
from pathlib import Path

import shapely
from qgis.core import (
    QgsCoordinateTransform,
    QgsCsException,
    QgsLayerTreeGroup,
    QgsProject,
    QgsRectangle,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QTimer
from shapely.geometry import shape

from scoring.formats.records import Instance

from ..core import keys, label_layout, layers
from ..core.constraint_layers import label_text
from ..utils.i18n import tr

# The constraint drawings may reach this multiple of the features' own frame, no further: a loose
# displacement limit is a disc hundreds of metres wide.
CONSTRAINT_FRAME_CAP = 1.6
# Framing: a margin of this fraction of the frame's larger side on every side, at least
# MIN_PAD_M, and never a frame smaller than MIN_SIDE_M (a lone point or a 2 m kiosk).
MARGIN_FRACTION = 0.08
MIN_PAD_M = 10.0
MIN_SIDE_M = 60.0
SCENE_KEY = "spatialgap/instance"  # on an instance's top group: the instance shown
LABEL_ZOOM_OUT = (1.0, 1.3, 1.7, 2.2)  # frame factors tried until every label finds free room
RELABEL_MS = 300  # after the analyst zooms or pans, the labels are placed again once it settles


class SceneView:
    def __init__(self, iface):
        self.iface = iface
        self.group: QgsLayerTreeGroup | None = None
        self.scene_layers: list[QgsVectorLayer] = []
        self.views: list = []  # the constraint views drawn last (the export's key panel lists them)
        self._constraint_groups: set[str] = set()
        self._context: layers.ContextSource | None = None
        self._context_path: Path | None = None
        self._context_reach = None  # where the drawn context surely covers (shapely, layers' CRS)
        # The drawing whose labels follow the canvas: (instance, views, edited scene, group).
        self._labelled: tuple | None = None
        self._label_layers: list[str] = []
        self._relabel_timer = QTimer()
        self._relabel_timer.setSingleShot(True)
        self._relabel_timer.setInterval(RELABEL_MS)
        self._relabel_timer.timeout.connect(self.relabel)
        canvas = iface.mapCanvas() if iface is not None else None
        if canvas is not None:
            canvas.extentsChanged.connect(self._relabel_timer.start)

    def set_context(self, path: Path | None) -> None:
        """The benchmark's context.geojsonl, read on first use."""
        self._context_path, self._context = path, None

    def context(self) -> layers.ContextSource | None:
        if self._context is None and self._context_path is not None:
            self._context = layers.ContextSource(self._context_path)
        return self._context

    def show(self, inst: Instance) -> list[QgsVectorLayer]:
        """Replace the shown instance by this one; returns every layer added."""
        with keep_clean():
            return self._show(inst)

    def _show(self, inst: Instance) -> list[QgsVectorLayer]:
        self.clear()
        project = QgsProject.instance()
        if not project.mapLayers():
            # An empty project takes its first layer's CRS, as QGIS does for any first layer (it
            # does so only later, in the app: the frame below must be in the right CRS now).
            project.setCrs(layers.crs_of(inst))
        self.group = layers.replace_group(tr("Spatial Gap: {id}").format(id=inst["id"]))
        self.group.setCustomProperty(SCENE_KEY, inst["id"])
        self._constraint_groups = set()
        scene_group = layers.add_group(self.group, tr("scene"))
        added = layers.scene_layers(inst, scene_group, self.context())
        ids = keys.keys_layer(inst, keys.feature_keys(inst), scene_group, tr("feature ids"))
        added += [ids] if ids is not None else []
        context_group = scene_group.findGroup(tr("OSM context"))
        if context_group is not None:
            context_group.setExpanded(False)
        self._context_reach = _scene_box(inst).buffer(layers.ContextSource.MARGIN_M / 2)
        self.scene_layers = [lyr for lyr in added if lyr.fields().indexOf("role") >= 0]
        # The project's CRS is the analyst's: never changed here. The layers carry the instance's
        # CRS and QGIS reprojects them; an empty project takes the first layer's CRS (QGIS's own
        # default behaviour for a new project).
        self.zoom_to(self.scene_layers)
        return added

    def clear(self) -> list[str]:
        """Remove every instance group the plugin drew, this dock's or one left by an earlier
        load of the plugin (a reload), keeping what the user put in them; returns the kept ids."""
        kept: list[str] = []
        root = QgsProject.instance().layerTreeRoot()
        for node in list(root.children()):
            if layers.is_created_group(node) and node.customProperty(SCENE_KEY):
                kept += layers.remove_group(node)
        self.group, self.scene_layers, self._constraint_groups = None, [], set()
        self.views = []
        self._labelled, self._label_layers = None, []
        return kept

    def sub_group(self, name: str) -> QgsLayerTreeGroup:
        """A fresh group of this name on top of the instance's group."""
        assert self.group is not None
        return layers.replace_group(name, self.group)

    def draw_constraints(
        self, inst: Instance, views, edited_scene: dict | None, title: str, zoom: bool = True
    ) -> None:
        """The edited target (if any) beside the ghost of F0, and the constraint drawings."""
        if self.group is None:
            return
        with keep_clean():
            self._draw_constraints(inst, views, edited_scene, title, zoom)

    def _draw_constraints(
        self, inst: Instance, views, edited_scene: dict | None, title: str, zoom: bool
    ) -> None:
        assert self.group is not None
        # One set of constraint drawings at a time: two overlapping sets cannot be read.
        for node in list(self.group.children()):
            if node.name() in self._constraint_groups:
                layers.remove_group(node)
        name = tr("constraints: {title}").format(title=title)
        self._constraint_groups.add(name)
        group = self.sub_group(name)
        edits = []
        if edited_scene is not None:
            edits = layers.edit_layers(
                inst,
                edited_scene,
                group,
                tr("edited {id}: {title}").format(id=inst.get("target", "F0"), title=title),
            )
        self._widen_context(inst, edited_scene)
        drawn = layers.constraint_layers(inst, views, group)
        keys.keys_layer(inst, keys.constraint_keys(views, label_text), group, tr("constraint numbers"))
        self.views = list(views)
        canvas = self.iface.mapCanvas() if self.iface is not None else None
        if canvas is None:  # no canvas to place labels for: QGIS's label engine places them
            for layer in drawn:
                layer.setLabelsEnabled(True)
            return
        # The plugin places every label (label_layout): QGIS's own F0 labels are switched off.
        for layer in self.scene_layers + edits:
            layer.setLabelsEnabled(False)
        # Where a label finds no free room the frame widens (not while the analyst moves F0).
        for factor in LABEL_ZOOM_OUT if zoom else (1.0,):
            if zoom:
                self.zoom_to(self.scene_layers + edits + drawn, self.scene_layers + edits, factor)
            view = canvas_view(canvas, self.scene_layers[0].crs())
            placed = label_layout.place(inst, views, edited_scene, view, label_text)
            if not any(p.fallback for p in placed):
                break
        self._labelled = (inst, views, edited_scene, group)
        self._put_labels(placed)
        self._relabel_timer.stop()  # placed for this very frame

    def _put_labels(self, placed) -> None:
        """The label layers of the current drawing, replacing earlier ones; the edited target
        stays above every drawing, key and leader line of its constraints."""
        assert self._labelled is not None
        inst, _views, _edited, group = self._labelled
        old = [lid for lid in self._label_layers if QgsProject.instance().mapLayer(lid) is not None]
        if old:
            QgsProject.instance().removeMapLayers(old)
        self._label_layers = [lyr.id() for lyr in label_layout.label_layers(inst, placed, group)]
        for node in group.findLayers():
            layer = node.layer()
            if layer.fields().indexOf("state") >= 0 and next(layer.getFeatures())["state"] == "edited":
                group.insertChildNode(0, node.clone())
                group.removeChildNode(node)

    def relabel(self) -> None:
        """Place the drawing's labels again for the frame now shown (after a zoom or a pan)."""
        canvas = self.iface.mapCanvas() if self.iface is not None else None
        if self._labelled is None or canvas is None or not self.scene_layers:
            return
        inst, views, edited_scene, group = self._labelled
        try:
            group.name()
        except RuntimeError:  # the drawing was removed meanwhile
            self._labelled = None
            return
        with keep_clean():
            view = canvas_view(canvas, self.scene_layers[0].crs())
            self._put_labels(label_layout.place(inst, views, edited_scene, view, label_text))

    def _widen_context(self, inst: Instance, edited_scene: dict | None) -> None:
        """An edit that moved F0 beyond the drawn context gets the context around it too (not a
        blank canvas under the moved target)."""
        scene_group = self.group.findGroup(tr("scene")) if self.group is not None else None
        context = self.context()
        if edited_scene is None or scene_group is None or context is None:
            return
        try:
            moved = shape(layers.scene_feature(edited_scene, inst.get("target", "F0"))["geometry"])
        except KeyError:
            return
        if self._context_reach is None or self._context_reach.contains(moved):
            return
        old = scene_group.findGroup(tr("OSM context"))
        if old is not None:
            layers.remove_group(old)
        group = layers.add_group(scene_group, tr("OSM context"))
        context.layers(inst, group, around=moved)
        group.setExpanded(False)
        self._context_reach = _scene_box(inst).union(moved.envelope).envelope

    def zoom_to(self, shown, cap_layers=None, factor: float = 1.0) -> None:
        canvas = self.iface.mapCanvas() if self.iface is not None else None
        if canvas is None or not shown:
            return
        extent = _extent(shown)
        if cap_layers:
            cap = _extent(cap_layers)
            cap.scale(CONSTRAINT_FRAME_CAP)
            extent = extent.intersect(cap)
        extent.scale(factor)
        canvas.setDestinationCrs(QgsProject.instance().crs())
        # Framed in the layers' own metres, then expressed in the canvas's CRS.
        to_canvas = QgsCoordinateTransform(
            shown[0].crs(), canvas.mapSettings().destinationCrs(), QgsProject.instance()
        )
        frame = framed(extent)
        with contextlib.suppress(QgsCsException):  # no valid CRS to go to: the layers' own frame
            frame = to_canvas.transformBoundingBox(frame)
        canvas.setExtent(frame)
        canvas.refresh()
        # QGIS zooms to the full extent of the first layers added to an empty project (the OSM
        # context, 150 m wider on every side) once control returns to the event loop: frame again.
        QTimer.singleShot(0, lambda: _reframe(canvas, frame))


@contextlib.contextmanager
def keep_clean():
    """Browsing is not editing: a project with no unsaved change before showing an instance
    has none after (the drawings are scratch layers the plugin redraws at will)."""
    project = QgsProject.instance()
    was_dirty = project.isDirty()
    try:
        yield
    finally:
        if not was_dirty:
            project.setDirty(False)


def canvas_view(canvas, crs) -> label_layout.CanvasView:
    """The canvas's visible frame in the layers' CRS and its size in pixels (a canvas not yet
    shown reports a tiny size: labels are then placed for a 900 px square)."""
    settings = canvas.mapSettings()
    extent = settings.visibleExtent()
    to_layers = QgsCoordinateTransform(settings.destinationCrs(), crs, QgsProject.instance())
    with contextlib.suppress(QgsCsException):
        extent = to_layers.transformBoundingBox(extent)
    size = settings.outputSize()
    width, height = size.width(), size.height()
    if min(width, height) < 200:
        width = height = 900
        side = max(extent.width(), extent.height())
        centre = extent.center()
        extent = QgsRectangle(
            centre.x() - side / 2, centre.y() - side / 2, centre.x() + side / 2, centre.y() + side / 2
        )
    return label_layout.CanvasView(extent, width, height, settings.outputDpi())


def _reframe(canvas, frame: QgsRectangle) -> None:
    try:
        shown = canvas.extent()
        tight = shown.width() <= frame.width() * 1.01 or shown.height() <= frame.height() * 1.01
        if not (shown.contains(frame) and tight):
            canvas.setExtent(frame)
            canvas.refresh()
    except RuntimeError:  # the canvas is gone (QGIS closing)
        pass


def framed(extent: QgsRectangle) -> QgsRectangle:
    """The extent with a margin proportional to its size (whatever that size), at least MIN_SIDE_M
    wide and high."""
    pad = max(MARGIN_FRACTION * max(extent.width(), extent.height()), MIN_PAD_M)
    cx, cy = extent.center().x(), extent.center().y()
    half_w = max(extent.width() / 2 + pad, MIN_SIDE_M / 2)
    half_h = max(extent.height() / 2 + pad, MIN_SIDE_M / 2)
    return QgsRectangle(cx - half_w, cy - half_h, cx + half_w, cy + half_h)


def _scene_box(inst: Instance):
    return shapely.box(
        *shapely.GeometryCollection([shape(f["geometry"]) for f in inst["scene"]["features"]]).bounds
    )


def _extent(shown) -> QgsRectangle:
    extent = QgsRectangle()
    extent.setMinimal()
    for lyr in shown:
        lyr.updateExtents()
        extent.combineExtentWith(lyr.extent())
    return extent
