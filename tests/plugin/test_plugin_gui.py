"""The plugin loads and unloads cleanly; an instance becomes correctly styled layers."""

from __future__ import annotations

import json
import subprocess
from collections import Counter

from qgis.core import QgsApplication, QgsProject, QgsWkbTypes
from shapely.geometry import shape

import plugin
from plugin.install import deps


def test_plugin_loads_and_unloads(qgis_iface, small_bench):
    p = plugin.classFactory(qgis_iface)
    p.initGui()
    assert QgsApplication.processingRegistry().providerById("spatialgap") is not None
    assert {a.text() for a in p.actions} >= {"Spatial Gap"}
    assert p.dock is None  # built on first use only
    p.toggle_dock(True)
    assert p.dock is not None and not p.dock.isHidden()
    assert p.dock.widget() is not None and p.dock.windowTitle() == "Spatial Gap"
    assert p.dock.open_benchmark(small_bench)
    assert p.dock.list.count() > 0
    # Sending needs an endpoint: enabled only when one is configured.
    assert p.dock.model_panel.send_all_btn.isEnabled() == (p.dock.model_panel.endpoint() is not None)
    p.toggle_dock(False)
    assert p.dock.isHidden()
    p.toggle_dock(True)
    assert not p.dock.isHidden()
    p.unload()
    assert QgsApplication.processingRegistry().providerById("spatialgap") is None
    assert p.dock is None and p.actions == []
    # Loading again after an unload works (QGIS's plugin reloader does exactly this).
    p2 = plugin.classFactory(qgis_iface)
    p2.initGui()
    p2.unload()


def test_missing_dependencies_are_named_with_install_commands(qgis_iface):
    assert deps.missing_dependencies() == []  # the venv has everything
    # QGIS's own Python on this machine lacks some of them: the real check must say which.
    out = subprocess.run(
        [
            "/usr/bin/python3",
            "-c",
            "import sys; sys.path.insert(0, 'plugin/install'); import deps; "
            "print(','.join(m for m, _, _ in deps.missing_dependencies()))",
        ],
        capture_output=True,
        text=True,
        cwd=str(plugin.__path__[0]).rsplit("/", 1)[0],
    )
    assert out.returncode == 0, out.stderr
    missing = [m for m in out.stdout.strip().split(",") if m]
    from plugin.install.missing import MissingDependenciesPlugin

    stand_in = MissingDependenciesPlugin(
        qgis_iface, [e for e in deps.REQUIRED if e[0] in missing] or [deps.REQUIRED[4]]
    )
    text = stand_in.message()
    for module, pip_req, deb in stand_in.missing:
        # shapely: the distributions' package is too old, the plugin's own installer is named.
        assert pip_req in text and (deb in text if module != "shapely" else "Install dependencies" in text)
    stand_in.initGui()
    stand_in.unload()


def test_instance_becomes_styled_layers(dock, small_bench, instances):
    assert dock.open_benchmark(small_bench)
    inst = next(i for i in instances.values() if i["task"] == "edit" and i["relation"] == "M15")
    dock.select_instance(inst["id"])
    group = QgsProject.instance().layerTreeRoot().findGroup(f"Spatial Gap: {inst['id']}")
    assert group is not None
    scene_group = group.findGroup("scene")
    scene_layers = [n.layer() for n in scene_group.findLayers() if n.layer().fields().indexOf("role") >= 0]
    expected = Counter(
        {
            "Point": "point",
            "MultiPoint": "point",
            "LineString": "line",
            "MultiLineString": "line",
            "Polygon": "polygon",
            "MultiPolygon": "polygon",
        }[f["geometry"]["type"]]
        for f in inst["scene"]["features"]
    )
    got = Counter()
    ids = {}
    for lyr in scene_layers:
        kind = {
            QgsWkbTypes.PointGeometry: "point",
            QgsWkbTypes.LineGeometry: "line",
            QgsWkbTypes.PolygonGeometry: "polygon",
        }[lyr.geometryType()]
        got[kind] += lyr.featureCount()
        for f in lyr.getFeatures():
            ids[f["id"]] = (f["role"], f.geometry())
        assert lyr.renderer().type() == "categorizedSymbol" and lyr.renderer().classAttribute().startswith(
            "role"
        )
        # F0's label rule (the other ids are keys); off while an edit's drawing is shown, whose
        # labels the dock places itself (label_layout).
        rules = lyr.labeling().rootRule().children()
        assert not lyr.labelsEnabled() and {r.settings().fieldName for r in rules} == {'"id"'}
        assert lyr.crs().authid() == f"EPSG:{inst['crs']['epsg']}"
    assert got == expected
    assert set(ids) == {f["id"] for f in inst["scene"]["features"]}
    assert ids["F0"][0] == "target" and all(r == "feature" for k, (r, _) in ids.items() if k != "F0")
    # Geometry survives the trip (same coordinates as the scene the model reads).
    f0 = shape(next(f for f in inst["scene"]["features"] if f["id"] == "F0")["geometry"])
    from shapely import wkt

    assert wkt.loads(ids["F0"][1].asWkt()).buffer(0.01).covers(f0)
    # The target is drawn larger than the others.
    categories = scene_layers[0].renderer().categories()
    colors = {c.value(): c.symbol().color().name() for c in categories}
    assert colors["target"] != colors["feature"]
    # Real OSM context under the scene, muted.
    ctx = group.findGroup("OSM context")
    assert ctx is not None and ctx.findLayers()
    assert all(n.layer().opacity() < 1 for n in ctx.findLayers())
    # Selecting another instance replaces the group instead of piling up layers.
    other = next(i for i in instances.values() if i["task"] == "qa")
    dock.select_instance(other["id"])
    assert QgsProject.instance().layerTreeRoot().findGroup(f"Spatial Gap: {inst['id']}") is None
    assert "Reference answer" not in dock.text.toPlainText()
    dock.reveal_btn.setChecked(True)
    assert str(other["answer"]) in dock.text.toPlainText()


def test_filters(dock, small_bench, instances):
    dock.open_benchmark(small_bench)
    assert dock.list.count() == len(instances)
    dock.filters.select("task", "edit")
    dock.filters.select("relation", "D04")
    want = sorted(i["id"] for i in instances.values() if i["task"] == "edit" and i["relation"] == "D04")
    assert sorted(dock.list.item(k).data(0x0100) for k in range(dock.list.count())) == want
    dock.filters.verdict_combo.setCurrentIndex(dock.filters.verdict_combo.findData("correct"))
    assert dock.list.count() == 0  # nothing run yet


def test_exports(dock, small_bench, instances, tmp_path):
    from qgis.PyQt.QtGui import QImage

    from scoring.render import ContextIndex, render_instance

    dock.open_benchmark(small_bench)
    inst = next(i for i in instances.values() if i["task"] == "edit")
    dock.select_instance(inst["id"])
    png = dock.export_benchmark_map(tmp_path / "ui")
    ctx = ContextIndex.from_file(small_bench / "context.geojsonl", inst["crs"]["epsg"])
    assert png.read_bytes() == render_instance(inst, ctx, tmp_path / "headless")["png"].read_bytes()
    canvas = dock.export_canvas(tmp_path / "canvas.png")
    img = QImage(str(canvas))
    assert (img.width(), img.height()) == (1536, 1536)
    # Not a blank image: the scene was drawn.
    colors = {img.pixel(x, y) for x in range(0, 1536, 24) for y in range(0, 1536, 24)}
    assert len(colors) > 3
    # Always a .png, whatever suffix the file dialog left.
    assert dock.export_canvas(tmp_path / "canvas.jpg") == tmp_path / "canvas.png"
    assert dock.export_canvas(tmp_path / "figure") == tmp_path / "figure.png"
    assert QImage(str(tmp_path / "figure.png")).width() == 1536
    # Through a layout: legend (the instance's own layers), scale bar, OSM attribution.
    from qgis.core import QgsLayoutItemLabel, QgsLayoutItemLegend, QgsLayoutItemScaleBar

    from plugin.core.canvas_export import canvas_layout

    layout = canvas_layout(dock.iface.mapCanvas(), 1536, inst["id"], dock.scene.scene_layers)
    items = layout.items()
    legends = [i for i in items if isinstance(i, QgsLayoutItemLegend)]
    assert legends and legends[0].model().rootGroup().findLayers()
    assert any(isinstance(i, QgsLayoutItemScaleBar) for i in items)
    assert any(isinstance(i, QgsLayoutItemLabel) and "OpenStreetMap" in i.text() for i in items)


def test_context_water_is_drawn_as_water_below_land(qgis_new_project, instances, tmp_path):
    """Sea and lakes from context.geojsonl get their own blue layer at the bottom of the context
    group (a grey wash over a harbour would read as land)."""
    from shapely.geometry import box, mapping

    from plugin.core.layers import ContextSource

    inst = next(iter(instances.values()))
    scene = box(*shape(inst["scene"]["features"][0]["geometry"]).bounds)
    sea = scene.buffer(200, join_style=2)
    quay = scene.buffer(20, join_style=2)
    path = tmp_path / "context.geojsonl"
    path.write_text(
        "\n".join(
            json.dumps(f)
            for f in (
                {
                    "type": "Feature",
                    "id": "sea/0",
                    "properties": {"pool": "water", "water": "sea"},
                    "geometry": mapping(sea),
                },
                {
                    "type": "Feature",
                    "id": "way/1",
                    "properties": {"pool": "building"},
                    "geometry": mapping(quay),
                },
            )
        )
        + "\n"
    )
    group = QgsProject.instance().layerTreeRoot().addGroup("ctx")
    layers = ContextSource(path).layers(inst, group)
    names = [n.layer().name() for n in group.findLayers()]
    assert len(layers) == 2 and names[-1].endswith("water")  # water last = drawn underneath
    water = layers[-1]
    assert water.featureCount() == 1 and next(water.getFeatures())["pool"] == "water"
    assert water.renderer().symbol().color().name() == "#c6dbe9"
    assert layers[0].featureCount() == 1 and next(layers[0].getFeatures())["pool"] == "building"
