"""Machinery of the reference agents registered in scoring.runner.reference_agents:
toolkits (exact GIS tools vs bounding boxes and centroids), question parsers, the parser of
edit instructions back into constraints, and the edit search."""
