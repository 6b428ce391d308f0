"""Spatial Gap scoring package: OSM extract -> feature pools -> scenes + oracle answers ->
instances -> rendered maps -> model runs -> predictions -> scores -> reports.

Importable and fully usable without QGIS.
"""

__version__ = "0.1.0"
