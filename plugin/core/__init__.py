"""QGIS glue without widgets: layers, styles, tasks, transport, auth, settings, human sessions."""
