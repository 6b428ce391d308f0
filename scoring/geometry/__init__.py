"""Geometry shared by every stage: the city CRS and georeferencing, scenes, the pole of inaccessibility."""
