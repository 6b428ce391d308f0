"""The relation catalogue (28 relations in 4 families). Importing this package registers all."""

from scoring.relations import topology  # noqa: F401
from scoring.relations.base import CATALOGUE, FAMILIES, Relation  # noqa: F401

for _family in ("direction", "metric", "ordering"):
    try:
        __import__(f"scoring.relations.{_family}")
    except ModuleNotFoundError as _exc:  # pragma: no cover - during development only
        if _exc.name != f"scoring.relations.{_family}":
            raise
