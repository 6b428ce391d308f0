"""What belongs to the analyst stays as it was: the project's CRS when an instance is shown, and a
plugin layer the analyst made permanent when the instance changes."""

from __future__ import annotations

from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsCoordinateTransform,
    QgsProject,
    QgsVectorFileWriter,
    QgsVectorLayer,
)


def _edits(instances) -> list[dict]:
    return [i for i in instances.values() if i["task"] == "edit"]


def test_showing_an_instance_keeps_the_projects_crs(dock, small_bench, instances):
    project = QgsProject.instance()
    theirs = QgsCoordinateReferenceSystem("EPSG:3067")
    project.setCrs(theirs)
    analyst = QgsVectorLayer("Point?crs=EPSG:3067", "analyst's", "memory")
    project.addMapLayer(analyst)
    inst = _edits(instances)[0]
    assert int(inst["crs"]["epsg"]) != 3067
    dock.open_benchmark(small_bench)
    dock.select_instance(inst["id"])
    assert project.crs().authid() == "EPSG:3067"
    # The scene is still framed: its layers' extent, reprojected, lies inside the canvas.
    canvas = dock.iface.mapCanvas()
    assert canvas.mapSettings().destinationCrs().authid() == "EPSG:3067"
    layer = dock.scene.scene_layers[0]
    to_canvas = QgsCoordinateTransform(layer.crs(), theirs, project)
    assert canvas.extent().contains(to_canvas.transformBoundingBox(layer.extent()))


def test_a_layer_made_permanent_is_never_removed(dock, small_bench, instances, tmp_path):
    project = QgsProject.instance()
    first, second = _edits(instances)[:2]
    dock.open_benchmark(small_bench)
    dock.select_instance(first["id"])
    layer = dock.scene.scene_layers[0]
    # QGIS's "Make Permanent": the features written to a file, the same layer (same id) pointed
    # at it.
    path = str(tmp_path / "kept.gpkg")
    options = QgsVectorFileWriter.SaveVectorOptions()
    options.driverName = "GPKG"
    written = QgsVectorFileWriter.writeAsVectorFormatV3(layer, path, project.transformContext(), options)
    assert written[0] == QgsVectorFileWriter.WriterError.NoError
    layer.setDataSource(path, layer.name(), "ogr")
    kept_id = layer.id()
    dock.select_instance(second["id"])
    assert kept_id in project.mapLayers()
    assert kept_id in {n.layerId() for n in project.layerTreeRoot().findLayers()}


def test_an_empty_project_takes_the_instances_crs_and_frames_the_scene(dock, small_bench, instances):
    project = QgsProject.instance()
    project.setCrs(QgsCoordinateReferenceSystem("EPSG:4326"))  # a new project's default
    inst = _edits(instances)[0]
    dock.open_benchmark(small_bench)
    dock.select_instance(inst["id"])
    assert project.crs().authid() == f"EPSG:{inst['crs']['epsg']}"
    extent = dock.iface.mapCanvas().extent()
    assert extent.contains(dock.scene.scene_layers[0].extent()) and extent.width() < 5000
