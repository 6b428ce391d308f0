"""The relation catalogue (28 relations in 4 families). Importing this package registers all, in
catalogue order: family by family, as FAMILIES lists them."""

import importlib

from scoring.relations.base import CATALOGUE, FAMILIES, Relation

MODULES = ("topology", "direction", "metric", "metric_neighbourhood", "ordering", "ordering_roads")
for _module in MODULES:
    importlib.import_module(f"scoring.relations.{_module}")

__all__ = ["CATALOGUE", "FAMILIES", "Relation"]
