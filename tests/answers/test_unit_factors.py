"""The reader's unit table against pint (a maintained units library): every spelling pint also
knows converts by pint's own factor. The table stays ours because pint takes over a second to
load in every process and knows neither "sq m" nor "per km²"."""

from __future__ import annotations

import math

import pint
import pytest

from scoring.answers import numbers

REGISTRY = pint.UnitRegistry()
BASE = {"distance": "meter", "area": "meter ** 2", "angle": "degree"}
# pint's "acre" is the US survey acre; a reply's acre is the international one (since 1959)
PINT_EXPRESSION = {"acre": "43560 * foot ** 2", "acres": "43560 * foot ** 2"}


def _pint_factor(spelling: str, kind: str) -> float | None:
    try:
        quantity = REGISTRY(PINT_EXPRESSION.get(spelling, f"1 * ({spelling})"))
        return float(quantity.to(BASE[kind]).magnitude)
    except (pint.errors.PintError, AttributeError, TypeError, ValueError, AssertionError, SyntaxError):
        return None


def test_every_unit_pint_knows_has_pint_s_factor():
    checked = 0
    for spelling in numbers._UNIT_SPELLINGS:
        kind, factor = numbers._UNITS[numbers._ukey(spelling)]
        if kind not in BASE:
            continue
        expected = _pint_factor(spelling, kind)
        if expected is None:
            continue
        checked += 1
        assert math.isclose(factor, expected, rel_tol=1e-6), (spelling, factor, expected)
    assert checked >= 30


@pytest.mark.parametrize("spelling", ["km", "feet", "nautical_mile", "hectare", "radian", "square_mile"])
def test_pint_knows_the_common_units(spelling):
    assert any(_pint_factor(spelling, kind) is not None for kind in BASE)
