"""Minimal plugin object: registers nothing yet and unloads cleanly."""


class SpatialGapPlugin:
    def __init__(self, iface):
        self.iface = iface

    def initGui(self):  # noqa: N802 - QGIS API
        pass

    def unload(self):
        pass
