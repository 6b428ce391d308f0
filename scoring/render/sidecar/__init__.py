"""A map's companions: sidecar JSON, world file, GDAL .aux.xml."""
