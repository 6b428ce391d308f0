"""QGIS plugin entry point (GUI only; all geometry logic lives in `scoring`).

The plugin itself is being built (see the plugin issue); this stub keeps the layout real and
lets QGIS load the folder without error.
"""


def classFactory(iface):  # noqa: N802 - QGIS's required name
    from plugin.main import SpatialGapPlugin
    return SpatialGapPlugin(iface)
