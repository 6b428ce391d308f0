"""Small QGIS-version shims, translation and icons."""
